//! LMDB environments shared by every Strata process on one machine: readers never wait
//! (each read is an MVCC snapshot), writers take turns through [`WriterLock`], which waits a
//! bounded time and then names the process ahead of it.
//!
//! One process opens an environment once (LMDB forbids opening it twice); handles to the
//! same directory share it through a registry of the environments open in this process.
//! A file is checked against its meta pages before it is mapped ([`meta`]), every value ends
//! in a checksum ([`seal`]), and every value is checked to lie inside the file before it is
//! read ([`mapped`]): LMDB itself trusts its pages.

pub mod fatal;
pub mod mapped;
pub mod meta;
pub mod seal;
mod writer_lock;

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, Weak};

use heed::{Env, EnvFlags, EnvOpenOptions, RoTxn, WithoutTls};

pub use mapped::Mapped;
pub use writer_lock::{LockError, WaitObserver, WriterGuard, WriterLock, observe_waits};

/// Address space reserved for a store; the file grows only as data is written.
const MAP_SIZE: usize = 1 << 40;
const MAX_DBS: u32 = 32;
/// Concurrent read transactions across every process on the environment.
const MAX_READERS: u32 = 1024;
/// LMDB's data file in an environment's directory.
pub const DATA_FILE: &str = "data.mdb";

/// An open environment and whether this process may write to it.
pub struct SharedEnv {
    pub env: Env<WithoutTls>,
    /// The directory is on a read-only filesystem (or not writable by us).
    pub read_only: bool,
    pub dir: PathBuf,
    /// Where this process maps the store file (see `release_mapped_pages`).
    map_ranges: Vec<(usize, usize)>,
    /// The map, for checking that a value lies inside the file before it is read.
    pub mapped: Option<&'static Mapped>,
    /// The writers' turn file. A process that cannot write has no slot in LMDB's reader
    /// table, so writers would not know which pages it still reads: it holds this file
    /// shared while it reads ([`Self::read_txn`]), and writers wait for it.
    turn_file: PathBuf,
}

impl Drop for SharedEnv {
    fn drop(&mut self) {
        if let Some(m) = self.mapped {
            m.release();
        }
    }
}

/// A read transaction, with the writers' turn file held shared for as long as it lasts
/// when this process reads without a slot in LMDB's reader table.
pub struct Snapshot<'e> {
    txn: RoTxn<'e, WithoutTls>,
    _turn: Option<File>,
}

impl<'e> std::ops::Deref for Snapshot<'e> {
    type Target = RoTxn<'e, WithoutTls>;

    fn deref(&self) -> &Self::Target {
        &self.txn
    }
}

/// How long a reader without a slot in LMDB's reader table waits for a writer to finish.
const READER_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

impl SharedEnv {
    /// Drops this process's mapping of the store file's pages. They stay in the page cache
    /// and fault back in on the next read (the map is read-only and shared, so nothing is
    /// lost); without this a long write keeps every page it ever read resident, and a big
    /// ingest's RSS grows with the store instead of with its own work.
    pub fn release_mapped_pages(&self) {
        for &(start, len) in &self.map_ranges {
            // SAFETY: the range is LMDB's own mapping of the store file, shared and never
            // written through (no WRITEMAP), so dropping its pages only costs a refault.
            let rc = unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
            if rc != 0 {
                tracing::debug!(error = %std::io::Error::last_os_error(), "madvise on the store map failed");
            }
        }
    }

    /// A read transaction. Without a slot in LMDB's reader table (a read-only open), the
    /// writers' turn file is held shared until it ends, waiting a bounded time for a writer
    /// ahead; a turn file that is missing means no writer ever ran.
    pub fn read_txn(&self) -> Result<Snapshot<'_>, heed::Error> {
        let turn = if self.read_only {
            shared_turn(&self.turn_file)?
        } else {
            None
        };
        Ok(Snapshot {
            txn: self.env.read_txn()?,
            _turn: turn,
        })
    }

    /// Whether `bytes`, a value LMDB returned, lies where it can be read.
    pub fn holds(&self, bytes: &[u8]) -> bool {
        self.mapped.is_none_or(|m| m.holds(bytes))
    }
}

fn shared_turn(path: &Path) -> Result<Option<File>, heed::Error> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(heed::Error::Io(e)),
    };
    let started = std::time::Instant::now();
    loop {
        match file.try_lock_shared() {
            Ok(()) => return Ok(Some(file)),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < READER_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(heed::Error::Io(std::io::Error::other(format!(
                    "a writer held {} for {READER_WAIT:?}; this process reads without a slot \
                     in LMDB's reader table (it cannot write there), so it waits for writers",
                    path.display()
                ))));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(heed::Error::Io(e)),
        }
    }
}

/// Where this process maps `file`, as (start, length). LMDB keeps its map's
/// address to itself (mdb_env_info gives it only for a fixed map), so the kernel's list of
/// this process's mappings says; the map is made once, when the environment opens.
fn map_ranges(file: &Path) -> Vec<(usize, usize)> {
    let Ok(file) = std::fs::canonicalize(file) else {
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
    /// The file is not what its meta pages say: mapping it would crash the process.
    #[error(transparent)]
    Damaged(#[from] meta::Damage),
}

/// Opens (creating if needed) the environment in `dir`, or returns the one this process
/// already has open there. A directory we cannot write opens read-only. `turn_file` names
/// the file in `dir` its writers take turns on ([`WriterLock`]). The data file is checked
/// against its meta pages first: a damaged one is refused, never mapped.
pub fn open(dir: &Path, turn_file: &str) -> Result<Arc<SharedEnv>, OpenError> {
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
    meta::check(&key.join(DATA_FILE))?;
    let shared = Arc::new(open_env(&key, turn_file)?);
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

fn open_env(dir: &Path, turn_file: &str) -> Result<SharedEnv, OpenError> {
    // SAFETY: the files are only ever opened through this registry in this process, and
    // other processes use LMDB's own lock file; nothing truncates or rewrites them.
    let attempt = |flags: EnvFlags| unsafe {
        let mut o = options();
        o.flags(flags);
        o.open(dir)
    };
    let shared = |env: Env<WithoutTls>, read_only: bool| {
        let file = dir.join(DATA_FILE);
        let map_ranges = map_ranges(&file);
        let len = std::fs::metadata(&file).map_or(0, |m| m.len());
        SharedEnv {
            env,
            read_only,
            dir: dir.to_path_buf(),
            mapped: mapped::register(&file, &map_ranges, len),
            map_ranges,
            turn_file: dir.join(turn_file),
        }
    };
    // The previous handle of this process may still be closing: retry briefly.
    for _ in 0..50 {
        match attempt(EnvFlags::empty()) {
            Ok(env) => {
                env.clear_stale_readers()?;
                return Ok(shared(env, false));
            }
            Err(heed::Error::EnvAlreadyOpened) => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(heed::Error::Io(e)) if is_read_only_error(&e) => {
                // LMDB reads a read-only filesystem without its lock file, but needs to write
                // the lock file of a store it may not write: it then reads without one, and
                // `read_txn` keeps writers out instead.
                let env = match attempt(EnvFlags::READ_ONLY) {
                    Err(heed::Error::Io(e)) if is_read_only_error(&e) => {
                        attempt(EnvFlags::READ_ONLY | EnvFlags::NO_LOCK)?
                    }
                    other => other?,
                };
                return Ok(shared(env, true));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(heed::Error::EnvAlreadyOpened.into())
}

/// Whether LMDB refused because the file's pages are not what they should be.
pub fn is_damage(e: &heed::Error) -> bool {
    use heed::MdbError as M;
    matches!(
        e,
        heed::Error::Mdb(
            M::PageNotFound
                | M::Corrupted
                | M::Invalid
                | M::VersionMismatch
                | M::CursorFull
                | M::Incompatible
        )
    )
}

pub fn is_read_only_error(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::EROFS)
        || e.raw_os_error() == Some(libc::EACCES)
        || e.kind() == std::io::ErrorKind::ReadOnlyFilesystem
        || e.kind() == std::io::ErrorKind::PermissionDenied
}
