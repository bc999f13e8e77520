//! The default backend: an LMDB environment in the data directory (`DATA/store/`). Any
//! number of processes open it at once: each read is a consistent MVCC snapshot that never
//! waits for a writer, and writers take turns through a lock file (a bounded wait, then an
//! error naming the process ahead). A commit is atomic and durable, so an acknowledged batch
//! survives `kill -9` and an interrupted one leaves no trace.

mod check;
mod keys;
mod migrate;
mod read;
mod records;
mod sizes;
mod tables;
mod write;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use heed::{CommitOrAbort, RoTxn, RwTxn, WithoutTls};

use super::StoreError;
use crate::lmdb::{self, SharedEnv, WriterLock};
pub use sizes::TableSize;
pub(crate) use tables::new_store_id;
use tables::{SCHEMA_JSON, SCHEMA_VERSION, Tables};

/// The store's directory inside the data directory.
pub const STORE_DIR: &str = "store";
/// The single-process store of Strata before schema 2, migrated on open.
pub const LEGACY_FILE: &str = "strata.redb";

pub struct EmbeddedStore {
    shared: Arc<SharedEnv>,
    tables: Tables,
    lock: WriterLock,
    path: PathBuf,
}

impl EmbeddedStore {
    /// Opens (creating if needed) the store in the data directory `dir`. A store of the old
    /// single-file layout there is migrated first; the old file is kept beside it.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let path = dir.join(STORE_DIR);
        let shared = lmdb::open(&path).map_err(|e| StoreError::Open {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let lock = WriterLock::new(path.join("writer.lock"));
        let read_only = || StoreError::ReadOnly {
            path: path.clone(),
            what: "create the store".into(),
        };
        let tables = match Tables::open(&shared.env)? {
            Some(t) => t,
            None if shared.read_only => return Err(read_only()),
            None => {
                let _turn = lock.acquire(WriterLock::default_wait())?;
                match Tables::open(&shared.env)? {
                    Some(t) => t,
                    None => Tables::create(&shared.env)?,
                }
            }
        };
        let schema = || -> Result<Option<String>, StoreError> {
            let txn = shared.env.read_txn().map_err(backend)?;
            tables::meta_get(&tables, &txn, tables::SCHEMA)
        };
        if schema()?.is_none() {
            if shared.read_only {
                return Err(read_only());
            }
            initialize(&shared, &lock, &tables, dir)?;
        }
        if schema()? == Some(SCHEMA_JSON.to_string()) {
            if shared.read_only {
                return Err(StoreError::ReadOnly {
                    path: path.clone(),
                    what: "migrate the store to compact records (open it once with write access)"
                        .into(),
                });
            }
            migrate::compact::to_compact(&shared, &lock, &tables)?;
        }
        let store = EmbeddedStore {
            shared,
            tables,
            lock,
            path,
        };
        store.check_schema()?;
        Ok(store)
    }

    /// The store's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this process can only read (the data directory is not writable).
    pub fn read_only(&self) -> bool {
        self.shared.read_only
    }

    pub(super) fn read(&self) -> Result<RoTxn<'_, WithoutTls>, StoreError> {
        self.shared.env.read_txn().map_err(backend)
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
        let mut txn = self.shared.env.write_txn().map_err(backend)?;
        let (out, changed) = body(&mut txn, &self.tables)?;
        if changed {
            tables::add_to_counter(&self.tables, &mut txn, tables::GENERATION, 1)?;
            txn.commit().map_err(|e| self.write_failed(e))?;
        }
        Ok(out)
    }

    /// A commit that failed: on a full disk LMDB reports a short write as EIO, so the free
    /// space is looked up to say which it was.
    fn write_failed(&self, e: heed::Error) -> StoreError {
        StoreError::WriteFailed {
            path: self.path.clone(),
            free_bytes: free_bytes(&self.path),
            message: e.to_string(),
        }
    }

    fn check_schema(&self) -> Result<(), StoreError> {
        let txn = self.read()?;
        let found = tables::meta_get(&self.tables, &txn, tables::SCHEMA)?;
        match found.as_deref().map(str::parse::<u32>) {
            Some(Ok(SCHEMA_VERSION)) => Ok(()),
            Some(Ok(newer)) if newer > SCHEMA_VERSION => Err(StoreError::NewerSchema {
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
            if tables::meta_get(t, txn, tables::SCHEMA)?.is_some() {
                return Ok(CommitOrAbort::Abort(()));
            }
            let schema = if migrated {
                SCHEMA_JSON
            } else {
                SCHEMA_VERSION
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

/// Bytes free to an unprivileged writer on the filesystem holding `path`.
fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `stat` a properly sized out-parameter.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut stat) };
    (rc == 0).then(|| (stat.f_bavail as u64).saturating_mul(stat.f_frsize as u64))
}

pub(crate) fn backend(e: heed::Error) -> StoreError {
    StoreError::Local(e)
}
