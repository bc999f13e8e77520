//! The default backend: an LMDB environment in the data directory (`DATA/store/`). Any
//! number of processes open it at once: each read is a consistent MVCC snapshot that never
//! waits for a writer, and writers take turns through a lock file (a bounded wait, then an
//! error naming the process ahead). A commit is atomic and durable, so an acknowledged batch
//! survives `kill -9` and an interrupted one leaves no trace.

mod check;
mod generation;
mod keys;
mod migrate;
mod read;
mod records;
mod sizes;
mod table;
mod tables;
mod versions;
mod write;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use heed::{CommitOrAbort, RwTxn};

use super::StoreError;
use crate::lmdb::{self, SharedEnv, Snapshot, WriterLock};
pub use sizes::TableSize;
pub(crate) use tables::new_store_id;
use tables::{SCHEMA_COMPACT, SCHEMA_JSON, SCHEMA_VERSION, Tables};

/// The store's directory inside the data directory.
pub const STORE_DIR: &str = "store";
/// The single-process store of Strata before schema 2, migrated on open.
pub const LEGACY_FILE: &str = "strata.redb";
/// The file writers take turns on, in the store's directory.
const WRITER_LOCK: &str = "writer.lock";

pub struct EmbeddedStore {
    shared: Arc<SharedEnv>,
    tables: Tables,
    lock: WriterLock,
    path: PathBuf,
    /// Where each write records the generation it moved the store to, outside the store's
    /// own file, so that a store rolled back to an older copy is caught by `check`.
    generation: generation::Recorded,
}

impl EmbeddedStore {
    /// Opens (creating if needed) the store in the data directory `dir`. A store of the old
    /// single-file layout there is migrated first; the old file is kept beside it. A store
    /// file that is damaged, or missing where a store was recorded, is refused: never
    /// mapped, never taken for a new store.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let path = dir.join(STORE_DIR);
        let generation = generation::Recorded::in_data_dir(dir);
        generation::refuse_lost_store(dir, &path.join(lmdb::DATA_FILE), &generation)?;
        let shared = lmdb::open(&path, WRITER_LOCK).map_err(|e| match e {
            lmdb::OpenError::Damaged(damage) => StoreError::Damaged {
                file: path.join(lmdb::DATA_FILE),
                why: damage.to_string(),
            },
            other => StoreError::Open {
                path: path.clone(),
                message: other.to_string(),
            },
        })?;
        let lock = WriterLock::new(path.join(WRITER_LOCK));
        let read_only = || StoreError::ReadOnly {
            path: path.clone(),
            what: "create the store".into(),
        };
        let mut tables = match Tables::open(&shared)? {
            Some(t) => t,
            None if shared.read_only => return Err(read_only()),
            None => {
                let _turn = lock.acquire(WriterLock::default_wait())?;
                match Tables::open(&shared)? {
                    Some(t) => t,
                    None => Tables::create(&shared)?,
                }
            }
        };
        let schema = || -> Result<Option<u32>, StoreError> {
            let txn = shared.read_txn().map_err(backend)?;
            tables::schema_of(&tables, &txn)
        };
        if schema()?.is_none() {
            if shared.read_only {
                return Err(read_only());
            }
            initialize(&shared, &lock, &tables, dir)?;
        }
        if schema()? == Some(SCHEMA_JSON) {
            if shared.read_only {
                return Err(StoreError::ReadOnly {
                    path: path.clone(),
                    what: "migrate the store to compact records (open it once with write access)"
                        .into(),
                });
            }
            migrate::compact::to_compact(&shared, &lock, &tables.unsealed())?;
        }
        if schema()? == Some(SCHEMA_COMPACT) {
            if shared.read_only {
                // Read as it is, without checksums, until a process that can write seals it.
                tables = tables.unsealed();
            } else {
                migrate::seal::to_sealed(&shared, &lock, &tables)?;
            }
        }
        let store = EmbeddedStore {
            shared,
            tables,
            lock,
            path,
            generation,
        };
        store.check_schema()?;
        Ok(store)
    }

    /// Copies the store, compacted, into the data directory `dest` (which must hold no store)
    /// from one read snapshot: other processes go on reading and writing, and the copy holds
    /// every batch committed before the snapshot and nothing of one after it. The copy's
    /// generation is recorded beside it, so it opens and checks as a store of its own right.
    /// Returns the copy's size in bytes.
    pub fn copy_compacted(&self, dest: &Path) -> Result<u64, StoreError> {
        let dir = dest.join(STORE_DIR);
        let file = dir.join(lmdb::DATA_FILE);
        if file.exists() {
            return Err(StoreError::Open {
                path: file,
                message: "a store is already there; back up into a new directory".into(),
            });
        }
        std::fs::create_dir_all(&dir).map_err(|e| StoreError::Open {
            path: dir.clone(),
            message: e.to_string(),
        })?;
        // The copy reads every page through the map: dropping the mapped pages as it goes
        // keeps the process's resident set small at any store size (they stay in the page
        // cache).
        let copied = std::thread::scope(|s| {
            let (copying, done) = std::sync::mpsc::channel::<()>();
            s.spawn(move || {
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    done.recv_timeout(std::time::Duration::from_millis(10))
                {
                    self.shared.release_mapped_pages();
                }
            });
            let copied = self
                .shared
                .env
                .copy_to_path(&file, heed::CompactionOption::Enabled);
            drop(copying);
            copied
        })
        .map_err(backend)?;
        copied.sync_all().map_err(|e| StoreError::Open {
            path: file.clone(),
            message: e.to_string(),
        })?;
        let bytes = copied.metadata().map(|m| m.len()).unwrap_or(0);
        drop(copied);
        let copy = EmbeddedStore::open(dest)?;
        let id = crate::store::MemoryStore::identity(&copy)?;
        let generation = crate::store::MemoryStore::generation(&copy)?;
        if let Some(id) = id {
            copy.generation.record(&id, generation);
        }
        Ok(bytes)
    }

    /// The store's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this process can only read (the data directory is not writable).
    pub fn read_only(&self) -> bool {
        self.shared.read_only
    }

    pub(super) fn read(&self) -> Result<Snapshot<'_>, StoreError> {
        self.shared.read_txn().map_err(backend)
    }

    /// Runs `body` in a write transaction, after the writers ahead of this one, and commits
    /// it, with the generation bumped when `body` says it changed something; an error
    /// writes nothing.
    pub(super) fn write<T>(
        &self,
        what: &str,
        body: impl FnOnce(&mut RwTxn, &Tables) -> Result<(T, bool), StoreError>,
    ) -> Result<T, StoreError> {
        if self.shared.read_only {
            return Err(StoreError::ReadOnly {
                path: self.path.clone(),
                what: what.to_string(),
            });
        }
        let _turn = self.lock.acquire(WriterLock::default_wait())?;
        let mut txn = self
            .shared
            .env
            .write_txn()
            .map_err(|e| self.write_failed(e))?;
        let (out, changed) = body(&mut txn, &self.tables)?;
        if changed {
            tables::add_to_counter(&self.tables, &mut txn, tables::GENERATION, 1)?;
            let generation = tables::counter(&self.tables, &txn, tables::GENERATION)?;
            let id = tables::meta_get(&self.tables, &txn, tables::STORE_ID)?;
            txn.commit().map_err(|e| self.write_failed(e))?;
            // Still this writer's turn: the generations recorded only ever grow.
            if let Some(id) = id {
                self.generation.record(&id, generation);
            }
        }
        Ok(out)
    }

    /// A commit that failed: on a full disk LMDB reports a short write as EIO, so the free
    /// space is looked up to say which it was.
    fn write_failed(&self, e: heed::Error) -> StoreError {
        StoreError::WriteFailed {
            path: self.path.clone(),
            free_bytes: crate::store::free_bytes(&self.path),
            message: e.to_string(),
        }
    }

    fn check_schema(&self) -> Result<(), StoreError> {
        let txn = self.read()?;
        match tables::schema_of(&self.tables, &txn)? {
            Some(SCHEMA_VERSION) => Ok(()),
            Some(SCHEMA_COMPACT) if self.shared.read_only => Ok(()),
            Some(newer) if newer > SCHEMA_VERSION => Err(StoreError::NewerSchema {
                path: self.path.clone(),
                found: newer,
                supported: SCHEMA_VERSION,
                written_by: tables::meta_get(&self.tables, &txn, tables::CREATED_BY)?
                    .unwrap_or_else(|| "an unknown version".into()),
            }),
            other => Err(StoreError::Open {
                path: self.path.clone(),
                message: format!("schema version {other:?} is not the supported {SCHEMA_VERSION}"),
            }),
        }
    }
}

/// Records a new store's schema and identity, once: the writer lock makes a second process
/// that raced here find it done. A legacy store found in `data_dir` is copied in, in the same
/// transaction, as schema 2, which [`EmbeddedStore::open`] then migrates like any other.
fn initialize(
    shared: &SharedEnv,
    lock: &WriterLock,
    t: &Tables,
    data_dir: &Path,
) -> Result<(), StoreError> {
    let _turn = lock.acquire(WriterLock::default_wait())?;
    let legacy = data_dir.join(LEGACY_FILE);
    let migrated = legacy.is_file();
    let txn = shared.env.write_txn().map_err(backend)?;
    let done = shared.env.create_databases_and_commit(
        txn,
        |dbo, txn| -> Result<CommitOrAbort<(), ()>, StoreError> {
            if tables::schema_of(t, txn)?.is_some() {
                return Ok(CommitOrAbort::Abort(()));
            }
            // A legacy store is copied in as schema 2, whose values carry no checksums.
            let unsealed = t.unsealed();
            let (schema, t) = if migrated {
                (SCHEMA_JSON, &unsealed)
            } else {
                (SCHEMA_VERSION, t)
            };
            tables::meta_put(t, txn, tables::SCHEMA, &schema.to_string())?;
            tables::meta_put(t, txn, tables::STORE_ID, &tables::new_store_id())?;
            tables::meta_put(
                t,
                txn,
                tables::CREATED_BY,
                concat!("strata ", env!("CARGO_PKG_VERSION")),
            )?;
            if migrated {
                let json = migrate::JsonTables::create(*t, dbo, txn)?;
                migrate::redb::from_redb(&legacy, txn, &json)?;
            }
            Ok(CommitOrAbort::Commit(()))
        },
    )?;
    if migrated && matches!(done, CommitOrAbort::Commit(())) {
        let kept = data_dir.join(format!("{LEGACY_FILE}.migrated"));
        std::fs::rename(&legacy, &kept).map_err(|e| StoreError::Open {
            path: legacy.clone(),
            message: format!("migrated, but cannot move the old file aside: {e}"),
        })?;
        tracing::info!(from = %legacy.display(), kept = %kept.display(), "migrated the store to the shared layout");
    }
    Ok(())
}

pub(crate) fn backend(e: heed::Error) -> StoreError {
    StoreError::Local(e)
}
