//! The default backend: one redb file in the data directory. redb gives ACID transactions
//! with copy-on-write commits, so an acknowledged batch survives `kill -9` and an
//! interrupted one leaves no trace.

mod check;
mod keys;
mod read;
mod tables;
mod write;

use std::path::{Path, PathBuf};

use redb::{Database, DatabaseError, ReadableDatabase, TableError};

use super::StoreError;
use tables::SCHEMA_VERSION;

pub const DB_FILE: &str = "strata.redb";

pub struct EmbeddedStore {
    db: Database,
    path: PathBuf,
}

impl EmbeddedStore {
    /// Opens (creating if needed) the store in `dir`.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        let path = dir.join(DB_FILE);
        let db = Database::builder().create(&path).map_err(|e| match e {
            DatabaseError::DatabaseAlreadyOpen => StoreError::Locked { path: path.clone() },
            other => StoreError::Open {
                path: path.clone(),
                message: other.to_string(),
            },
        })?;
        let store = EmbeddedStore { db, path };
        store.ensure_schema()?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Stores written before lessons existed get one per episode, rendered from the
    /// drafts they were written from.
    fn backfill_lessons(&self) -> Result<(), StoreError> {
        use redb::{ReadableTable, ReadableTableMetadata};
        let read = self.db.begin_read().map_err(backend)?;
        let episodes = read
            .open_table(tables::EPISODES)
            .map_err(backend)?
            .len()
            .map_err(backend)?;
        let lessons = match read.open_table(tables::LESSONS) {
            Ok(t) => t.len().map_err(backend)?,
            Err(TableError::TableDoesNotExist(_)) => 0,
            Err(e) => return Err(backend(e)),
        };
        let skills_missing = matches!(
            read.open_table(tables::SKILLS),
            Err(TableError::TableDoesNotExist(_))
        ) || matches!(
            read.open_table(tables::CODE_UNITS),
            Err(TableError::TableDoesNotExist(_))
        );
        drop(read);
        if lessons == episodes && !skills_missing {
            return Ok(());
        }
        let txn = self.db.begin_write().map_err(backend)?;
        {
            let drafts = txn.open_table(tables::DRAFTS).map_err(backend)?;
            txn.open_table(tables::SKILLS).map_err(backend)?;
            txn.open_table(tables::CODE_UNITS).map_err(backend)?;
            txn.open_multimap_table(tables::SERVICE_CODE)
                .map_err(backend)?;
            let mut table = txn.open_table(tables::LESSONS).map_err(backend)?;
            for row in drafts.iter().map_err(backend)? {
                let (fp, bytes) = row.map_err(backend)?;
                let fp = fp.value();
                if table.get(fp).map_err(backend)?.is_some() {
                    continue;
                }
                let draft: crate::store::EpisodeDraft =
                    read::decode("drafts", fp.as_bytes(), bytes.value())?;
                let lesson = crate::learning::render(
                    fp,
                    &draft.resolution_nl,
                    draft.facts.iter().map(|f| (f.relation, &f.entity)),
                );
                let encoded = serde_json::to_vec(&lesson).map_err(backend)?;
                table.insert(fp, encoded.as_slice()).map_err(backend)?;
            }
        }
        txn.commit().map_err(backend)
    }

    fn ensure_schema(&self) -> Result<(), StoreError> {
        let read = self.db.begin_read().map_err(backend)?;
        match read.open_table(tables::META) {
            Ok(meta) => {
                let version = redb::ReadableTable::get(&meta, "schema_version")
                    .map_err(backend)?
                    .map(|v| v.value().to_string());
                match version.as_deref() {
                    Some(SCHEMA_VERSION) => {
                        drop(meta);
                        drop(read);
                        self.backfill_lessons()
                    }
                    other => Err(StoreError::Open {
                        path: self.path.clone(),
                        message: format!(
                            "schema version {other:?} is not the supported {SCHEMA_VERSION:?}"
                        ),
                    }),
                }
            }
            Err(TableError::TableDoesNotExist(_)) => {
                drop(read);
                tables::create_all(&self.db)
            }
            Err(e) => Err(backend(e)),
        }
    }
}

pub(crate) fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}
