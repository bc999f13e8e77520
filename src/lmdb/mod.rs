//! LMDB environments shared by every Strata process on one machine: readers never wait
//! (each read is an MVCC snapshot), writers take turns through [`WriterLock`], which waits a
//! bounded time and then names the process ahead of it.
//!
//! One process opens an environment once (LMDB forbids opening it twice); handles to the
//! same directory share it through a registry of the environments open in this process.

mod writer_lock;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, OnceLock, Weak};

use heed::{Env, EnvFlags, EnvOpenOptions, WithoutTls};

pub use writer_lock::{LockError, WriterGuard, WriterLock};

/// Address space reserved for a store; the file grows only as data is written.
const MAP_SIZE: usize = 1 << 40;
const MAX_DBS: u32 = 32;
/// Concurrent read transactions across every process on the environment.
const MAX_READERS: u32 = 1024;

/// An open environment and whether this process may write to it.
pub struct SharedEnv {
    pub env: Env<WithoutTls>,
    /// The directory is on a read-only filesystem (or not writable by us).
    pub read_only: bool,
    pub dir: PathBuf,
    /// Where this process maps the store file, found once (see `release_mapped_pages`).
    map_ranges: OnceLock<Vec<(usize, usize)>>,
}

impl SharedEnv {
    /// Drops this process's mapping of the store file's pages. They stay in the page cache
    /// and fault back in on the next read (the map is read-only and shared, so nothing is
    /// lost); without this a long write keeps every page it ever read resident, and a big
    /// ingest's RSS grows with the store instead of with its own work.
    pub fn release_mapped_pages(&self) {
        for &(start, len) in self.map_ranges.get_or_init(|| map_ranges(&self.dir)) {
            // SAFETY: the range is LMDB's own mapping of the store file, shared and never
            // written through (no WRITEMAP), so dropping its pages only costs a refault.
            let rc = unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
            if rc != 0 {
                tracing::debug!(error = %std::io::Error::last_os_error(), "madvise on the store map failed");
            }
        }
    }
}

/// Where this process maps `dir`'s store file, as (start, length). LMDB keeps its map's
/// address to itself (mdb_env_info gives it only for a fixed map), so the kernel's list of
/// this process's mappings says; the map is made once, when the environment opens.
fn map_ranges(dir: &Path) -> Vec<(usize, usize)> {
    let Ok(file) = std::fs::canonicalize(dir.join("data.mdb")) else {
        return Vec::new();
    };
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return Vec::new();
    };
    maps.lines()
        .filter_map(|line| {
            // address perms offset dev inode path, the path being the rest of the line.
            let mut fields = line.splitn(6, ' ');
            let (range, path) = (fields.next()?, fields.nth(4)?);
            if Path::new(path.trim_start()) != file {
                return None;
            }
            let (start, end) = range.split_once('-')?;
            let start = usize::from_str_radix(start, 16).ok()?;
            let end = usize::from_str_radix(end, 16).ok()?;
            Some((start, end - start))
        })
        .collect()
}

static OPEN: LazyLock<Mutex<HashMap<PathBuf, Weak<SharedEnv>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Lmdb(#[from] heed::Error),
}

/// Opens (creating if needed) the environment in `dir`, or returns the one this process
/// already has open there. A directory we cannot write opens read-only.
pub fn open(dir: &Path) -> Result<Arc<SharedEnv>, OpenError> {
    match std::fs::create_dir_all(dir) {
        Ok(()) => {}
        Err(e) if dir.is_dir() && is_read_only_error(&e) => {}
        Err(e) => return Err(e.into()),
    }
    let key = dir.canonicalize()?;
    let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(shared) = open.get(&key).and_then(Weak::upgrade) {
        return Ok(shared);
    }
    let shared = Arc::new(open_env(&key)?);
    open.retain(|_, w| w.strong_count() > 0);
    open.insert(key, Arc::downgrade(&shared));
    Ok(shared)
}

fn options() -> EnvOpenOptions<WithoutTls> {
    let mut options = EnvOpenOptions::new().read_txn_without_tls();
    options
        .map_size(MAP_SIZE)
        .max_dbs(MAX_DBS)
        .max_readers(MAX_READERS);
    options
}

fn open_env(dir: &Path) -> Result<SharedEnv, OpenError> {
    // SAFETY: the files are only ever opened through this registry in this process, and
    // other processes use LMDB's own lock file; nothing truncates or rewrites them.
    let attempt = |flags: EnvFlags| unsafe {
        let mut o = options();
        o.flags(flags);
        o.open(dir)
    };
    // The previous handle of this process may still be closing: retry briefly.
    for _ in 0..50 {
        match attempt(EnvFlags::empty()) {
            Ok(env) => {
                env.clear_stale_readers()?;
                return Ok(SharedEnv {
                    env,
                    read_only: false,
                    dir: dir.to_path_buf(),
                    map_ranges: OnceLock::new(),
                });
            }
            Err(heed::Error::EnvAlreadyOpened) => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(heed::Error::Io(e)) if is_read_only_error(&e) => {
                let env = attempt(EnvFlags::READ_ONLY)?;
                return Ok(SharedEnv {
                    env,
                    read_only: true,
                    dir: dir.to_path_buf(),
                    map_ranges: OnceLock::new(),
                });
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(heed::Error::EnvAlreadyOpened.into())
}

pub fn is_read_only_error(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::EROFS)
        || e.raw_os_error() == Some(libc::EACCES)
        || e.kind() == std::io::ErrorKind::ReadOnlyFilesystem
        || e.kind() == std::io::ErrorKind::PermissionDenied
}
