//! What each table holds on disk: where the store's bytes go.

use serde::Serialize;

use super::tables::{DUPLICATES, PLAIN, Tables};
use super::{EmbeddedStore, backend};
use crate::store::StoreError;

/// One table's rows and the pages its B-tree uses.
#[derive(Clone, Debug, Serialize)]
pub struct TableSize {
    pub table: &'static str,
    pub entries: usize,
    pub bytes: u64,
}

impl EmbeddedStore {
    /// Every table's row count and page bytes, in one snapshot, largest first.
    pub fn table_sizes(&self) -> Result<Vec<TableSize>, StoreError> {
        let txn = self.read()?;
        let mut sizes = Vec::with_capacity(PLAIN.len() + DUPLICATES.len());
        for table in PLAIN.into_iter().chain(DUPLICATES) {
            let Some(db) = Tables::by_name(&self.tables, table) else {
                continue;
            };
            let stat = db.raw().stat(&txn).map_err(backend)?;
            sizes.push(TableSize {
                table,
                entries: stat.entries,
                bytes: stat.non_free_page_size() as u64,
            });
        }
        sizes.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.table.cmp(b.table)));
        Ok(sizes)
    }
}
