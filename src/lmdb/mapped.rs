//! Where this process maps each LMDB file. LMDB hands back values as slices of its map and
//! trusts its pages to say where they are: a garbled page can point a value past the end of
//! the file, and reading there ends the process with SIGBUS. A value is checked to lie inside
//! the file before anything reads it ([`Mapped::holds`]); and a fatal signal that still comes
//! can name the file whose map it hit ([`find`]), which is why the table is a fixed array of
//! atomics a signal handler may read.

use std::cell::UnsafeCell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

const SLOTS: usize = 64;
const PATH_BYTES: usize = 480;

/// One mapped file: its address range in this process, and the file's length as last seen.
pub struct Mapped {
    claimed: AtomicBool,
    start: AtomicUsize,
    end: AtomicUsize,
    file_len: AtomicU64,
    path_len: AtomicUsize,
    path: UnsafeCell<[u8; PATH_BYTES]>,
}

// SAFETY: `path` is written only by the thread that claimed the slot, before `start` and `end`
// are published with Release; readers read it after an Acquire load of `end` says it is set.
unsafe impl Sync for Mapped {}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Mapped = Mapped {
    claimed: AtomicBool::new(false),
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    file_len: AtomicU64::new(0),
    path_len: AtomicUsize::new(0),
    path: UnsafeCell::new([0; PATH_BYTES]),
};

static TABLE: [Mapped; SLOTS] = [EMPTY; SLOTS];

/// Records that `file` (`len` bytes now) is mapped over `ranges`; `None` when every slot is
/// taken (values of that file are then not checked against its length).
pub fn register(file: &Path, ranges: &[(usize, usize)], len: u64) -> Option<&'static Mapped> {
    let start = ranges.iter().map(|r| r.0).min()?;
    let end = ranges.iter().map(|r| r.0 + r.1).max()?;
    let slot = TABLE.iter().find(|s| {
        s.claimed
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    })?;
    let bytes = file.as_os_str().as_encoded_bytes();
    let n = bytes.len().min(PATH_BYTES);
    // SAFETY: the slot was just claimed by this thread and is not published yet.
    unsafe { (&mut *slot.path.get())[..n].copy_from_slice(&bytes[..n]) };
    slot.path_len.store(n, Ordering::Relaxed);
    slot.file_len.store(len, Ordering::Relaxed);
    slot.start.store(start, Ordering::Release);
    slot.end.store(end, Ordering::Release);
    Some(slot)
}

/// The mapped file whose range holds `addr`, for a signal handler.
pub fn find(addr: usize) -> Option<&'static Mapped> {
    TABLE.iter().find(|s| {
        let end = s.end.load(Ordering::Acquire);
        end != 0 && s.start.load(Ordering::Relaxed) <= addr && addr < end
    })
}

/// Every mapped file, for a signal that carries no address.
pub fn all() -> impl Iterator<Item = &'static Mapped> {
    TABLE.iter().filter(|s| s.end.load(Ordering::Acquire) != 0)
}

impl Mapped {
    /// Whether `bytes` can be read without faulting: inside the file when they lie in its
    /// map, or not in the map at all (a page a write transaction holds in memory).
    pub fn holds(&self, bytes: &[u8]) -> bool {
        let at = bytes.as_ptr() as usize;
        let (start, end) = (
            self.start.load(Ordering::Relaxed),
            self.end.load(Ordering::Relaxed),
        );
        if at < start || at >= end {
            return true;
        }
        let Some(last) = (at - start).checked_add(bytes.len()) else {
            return false;
        };
        let last = last as u64;
        if last <= self.file_len.load(Ordering::Relaxed) {
            return true;
        }
        // The file grows as writers append: look again before calling it damaged.
        use std::os::unix::ffi::OsStrExt;
        match std::fs::metadata(Path::new(std::ffi::OsStr::from_bytes(self.path()))) {
            Ok(m) => {
                self.file_len.store(m.len(), Ordering::Relaxed);
                last <= m.len()
            }
            Err(_) => false,
        }
    }

    /// Where in the file `addr` is, when it lies in this map.
    pub fn offset_of(&self, addr: usize) -> Option<usize> {
        let start = self.start.load(Ordering::Relaxed);
        (addr >= start && addr < self.end.load(Ordering::Relaxed)).then(|| addr - start)
    }

    /// The file's path as bytes (async-signal-safe: no allocation).
    pub fn path(&self) -> &[u8] {
        let n = self.path_len.load(Ordering::Relaxed).min(PATH_BYTES);
        // SAFETY: written before the slot was published, and not again until released.
        unsafe { &(&*self.path.get())[..n] }
    }

    /// The file is no longer mapped.
    pub fn release(&self) {
        self.end.store(0, Ordering::Release);
        self.start.store(0, Ordering::Release);
        self.claimed.store(false, Ordering::Release);
    }
}
