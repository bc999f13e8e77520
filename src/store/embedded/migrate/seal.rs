//! Schema 3 (compact records) to schema 4 (the same records, each value sealed with a
//! checksum of its key and bytes, [`crate::lmdb::seal`]), in one write transaction: every value
//! of every table is rewritten, or none is. The writer lock is held throughout.

use std::ops::Bound;

use heed::RwTxn;

use crate::lmdb::{SharedEnv, WriterLock, seal};
use crate::store::StoreError;
use crate::store::embedded::table::Table;
use crate::store::embedded::tables::{SCHEMA_COMPACT, SCHEMA_VERSION, Tables};

/// Rows read before they are written back: bounds the memory the migration holds at once.
const CHUNK: usize = 8_192;

/// Seals every value of a schema-3 store; `false` when another process already did.
pub(in crate::store::embedded) fn to_sealed(
    shared: &SharedEnv,
    lock: &WriterLock,
    t: &Tables,
) -> Result<bool, StoreError> {
    super::step(
        shared,
        lock,
        t,
        (SCHEMA_COMPACT, SCHEMA_VERSION),
        |_, txn| {
            let mut rows = 0;
            for table in t.all() {
                rows += seal_table(shared, txn, table)?;
            }
            tracing::info!(
                rows,
                "sealed every record with a checksum (schema {SCHEMA_VERSION})"
            );
            Ok(())
        },
    )
}

/// Rewrites every value of `table` sealed, a chunk of whole keys at a time (an index's
/// duplicates of one key stay in one chunk); returns the rows rewritten.
fn seal_table(shared: &SharedEnv, txn: &mut RwTxn, table: Table) -> Result<u64, StoreError> {
    let db = table.raw();
    let mut after: Option<Vec<u8>> = None;
    let mut sealed = 0;
    loop {
        let mut chunk: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(CHUNK);
        {
            let lower = match &after {
                Some(key) => Bound::Excluded(key.as_slice()),
                None => Bound::Unbounded,
            };
            for row in db.range(txn, &(lower, Bound::Unbounded))? {
                let (key, value) = row?;
                if chunk.len() >= CHUNK && chunk.last().is_some_and(|(k, _)| k != key) {
                    break;
                }
                chunk.push((key.to_vec(), value.to_vec()));
            }
        }
        let Some((last, _)) = chunk.last() else {
            return Ok(sealed);
        };
        after = Some(last.clone());
        for (key, value) in chunk {
            let with_sum = seal::sealed(&key, &value);
            if db.delete_one_duplicate(txn, &key, &value)? {
                db.put(txn, &key, &with_sum)?;
            } else {
                return Err(StoreError::Migration(format!(
                    "cannot seal the store's records: a row of {} vanished while it was rewritten",
                    table.name()
                )));
            }
            sealed += 1;
        }
        shared.release_mapped_pages();
    }
}
