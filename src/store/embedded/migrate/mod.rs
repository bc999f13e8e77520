//! Stores written by earlier releases, brought to today's layout when they are opened:
//! schema 1 (one redb file) is copied into schema 2 ([`redb`]), and schema 2 (JSON records)
//! is rewritten as schema 3 ([`compact`]). Each step is one write transaction: every record
//! or none.

pub(super) mod compact;
pub(super) mod redb;
pub(super) mod seal;

use heed::types::Bytes;
use heed::{CommitOrAbort, Database, DatabaseOpener, RwTxn, WithoutTls};

use super::tables::{self, RETIRED, Tables};
use crate::lmdb::{SharedEnv, WriterLock};
use crate::store::StoreError;

/// One migration from schema `from` to `to`, in one write transaction under the writer's turn:
/// `rewrite` runs only if the store is still at `from` (another process may have migrated it
/// meanwhile), and the new schema and a generation are recorded with what it wrote. `false`:
/// there was nothing to do.
fn step(
    shared: &SharedEnv,
    lock: &WriterLock,
    t: &Tables,
    (from, to): (u32, u32),
    rewrite: impl for<'e> FnOnce(
        &DatabaseOpener<'e, WithoutTls>,
        &mut RwTxn<'e>,
    ) -> Result<(), StoreError>,
) -> Result<bool, StoreError> {
    let _turn = lock.acquire(WriterLock::default_wait())?;
    let txn = shared.env.write_txn()?;
    let done = shared.env.create_databases_and_commit(
        txn,
        |dbo, txn| -> Result<CommitOrAbort<(), ()>, StoreError> {
            if tables::schema_of(t, txn)? != Some(from) {
                return Ok(CommitOrAbort::Abort(()));
            }
            rewrite(dbo, txn)?;
            tables::meta_put(t, txn, tables::SCHEMA, &to.to_string())?;
            tables::add_to_counter(t, txn, tables::GENERATION, 1)?;
            Ok(CommitOrAbort::Commit(()))
        },
    )?;
    Ok(matches!(done, CommitOrAbort::Commit(())))
}

/// The two tables schema 2 had besides today's (schema 3 keeps them empty: [`RETIRED`]).
const DRAFTS: &str = RETIRED[0];
const FACT_TIMES: &str = RETIRED[1];

/// The tables of schema 2 (JSON records): today's, and the two it had besides.
pub(super) struct JsonTables<'e> {
    pub t: Tables,
    /// fingerprint -> JSON `EpisodeDraft`
    pub drafts: Database<'e, Bytes, Bytes>,
    /// fact key -> (t_valid, t_invalid, ingested_at, expired_at) ms
    pub fact_times: Database<'e, Bytes, Bytes>,
}

impl<'e> JsonTables<'e> {
    /// Opens (creating if missing) the schema-2 tables inside `txn`.
    pub fn create(
        t: Tables,
        dbo: &DatabaseOpener<'e, WithoutTls>,
        txn: &mut RwTxn<'e>,
    ) -> Result<Self, heed::Error> {
        Ok(JsonTables {
            t,
            drafts: dbo.create_database(txn, Some(DRAFTS))?,
            fact_times: dbo.create_database(txn, Some(FACT_TIMES))?,
        })
    }

    pub fn by_name(&self, name: &str) -> Option<Database<'e, Bytes, Bytes>> {
        match name {
            DRAFTS => Some(self.drafts),
            FACT_TIMES => Some(self.fact_times),
            other => self.t.by_name(other).map(|t| t.raw()),
        }
    }
}
