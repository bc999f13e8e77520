use std::path::PathBuf;

/// Why a store call failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The batch contradicts what the store holds; nothing was written.
    #[error("{origin}: {field}: {message}")]
    Rejected {
        origin: String,
        field: String,
        message: String,
    },
    #[error("cannot open the store at {path}: {message}")]
    Open { path: PathBuf, message: String },
    /// The store's file is not what its own pages say: it was not mapped, nothing was read.
    #[error(
        "the store file {file} is damaged: {why}. Nothing was read from it. Restore the store \
         from a backup (stop every Strata process first); `strata check` reports the same"
    )]
    Damaged { file: PathBuf, why: String },
    /// The store's file is missing or empty where a store was recorded.
    #[error(
        "the store file {file} is {state}, but {evidence}: the store was lost, and it is not \
         taken for a new one. Restore it from a backup; or, to start a new store here on \
         purpose, move the data directory's index/ and store.generation aside first"
    )]
    Lost {
        file: PathBuf,
        state: &'static str,
        evidence: String,
    },
    /// Another writer held the store for longer than this one may wait.
    #[error(transparent)]
    Busy(#[from] crate::lmdb::LockError),
    #[error(
        "cannot {what}: the store at {path} is read-only to this process (a read-only \
         filesystem, or files it may not write); it reads, and writes are refused"
    )]
    ReadOnly { path: PathBuf, what: String },
    #[error(
        "the store at {path} was written by a newer Strata ({written_by}, schema version {found}); \
         this Strata {} reads schema version {supported}: upgrade Strata to open it",
        env!("CARGO_PKG_VERSION")
    )]
    NewerSchema {
        path: PathBuf,
        found: u32,
        supported: u32,
        written_by: String,
    },
    /// Other writers changed the store between this writer's checks and its write, every time.
    #[error(
        "gave up writing to {store}: other writers changed it during each of {attempts} attempts \
         to check and write this batch; nothing of it was written (run it again)"
    )]
    Contended { store: String, attempts: u32 },
    /// A commit the filesystem refused; LMDB aborts the transaction, so nothing was stored.
    #[error(
        "cannot write to the store at {path}: {}; nothing of this write was stored ({message})",
        describe_space(*free_bytes)
    )]
    WriteFailed {
        path: PathBuf,
        free_bytes: Option<u64>,
        message: String,
    },
    /// A batch too large for one query stopped part way through its chunks: what was written
    /// stays (it is valid memory), and running the same file again completes it.
    #[error(
        "partial ingest of {file} into {store}: {written} of {chunks} chunks ({records} records) \
         were written before this stopped it: {cause}. Nothing written is lost or wrong; run the \
         same file again to complete it (`strata check` lists partial ingests)"
    )]
    Partial {
        store: String,
        file: String,
        records: usize,
        chunks: usize,
        written: usize,
        cause: String,
    },
    /// The graph server cannot be reached: down, refusing, timing out or dropping the
    /// connection.
    #[error("{server} is unreachable: {source}")]
    Unreachable {
        server: String,
        #[source]
        source: redis::RedisError,
    },
    /// Through Sentinel: a write the primary took but no replica confirmed in time. It is not
    /// acknowledged: a failover now could lose it; sending the same batch again is safe.
    #[error(
        "{server}: the write reached the primary but no replica confirmed it within {waited_ms} ms, \
         so it is not acknowledged (a failover could lose it); send it again: an identical batch \
         changes nothing"
    )]
    NotReplicated { server: String, waited_ms: u64 },
    #[error(
        "{server}: authentication failed ({why}): give them in the store URL \
         (falkordb://USER:PASSWORD@HOST:PORT/GRAPH) or the password in {}",
        crate::store::falkordb::PASSWORD_ENV
    )]
    Authentication { server: String, why: &'static str },
    /// The graph server answered with an error.
    #[error("{server}: {source}")]
    Server {
        server: String,
        #[source]
        source: redis::RedisError,
    },
    /// A reply of a shape this Strata does not read.
    #[error("{server}: unexpected reply: {message}")]
    Malformed { server: String, message: String },
    /// The embedded store's database failed.
    #[error("the local store: {0}{hint}", hint = damage_hint(.0))]
    Local(#[from] heed::Error),
    #[error("{store} keeps no {what}")]
    Unsupported { store: String, what: &'static str },
    #[error("cannot read {file}: {source}")]
    Read {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file} changed while it was being ingested; nothing of it was written (run it again)")]
    Changed { file: String },
    #[error("cannot migrate the store from its earlier format: {0}")]
    Migration(String),
    /// A step inside Strata that cannot go on (a lock poisoned by an earlier panic, a runtime
    /// that would not start).
    #[error("store internal error: {0}")]
    Internal(String),
    #[error("corrupt record in {table} at key {key:?}: {message}")]
    Corrupt {
        table: &'static str,
        key: String,
        message: String,
    },
}

impl StoreError {
    pub fn rejected(
        origin: impl Into<String>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        StoreError::Rejected {
            origin: origin.into(),
            field: field.into(),
            message: message.into(),
        }
    }
}

fn damage_hint(e: &heed::Error) -> &'static str {
    if crate::lmdb::is_damage(e) {
        " (its file is damaged: `strata check` says where; restore the store from a backup)"
    } else {
        ""
    }
}

/// Below this much free space a failed write is put down to a full disk.
pub(crate) const FULL_BELOW_BYTES: u64 = 64 << 20;

/// Bytes free to an unprivileged writer on the filesystem holding `path`.
pub fn free_bytes(path: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statvfs is a valid out-parameter.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `stat` a properly sized out-parameter.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut stat) };
    (rc == 0).then(|| (stat.f_bavail as u64).saturating_mul(stat.f_frsize as u64))
}

/// Whether the filesystem holding `path` is (nearly) full: what a failed write is put down to.
pub fn is_disk_full(path: &std::path::Path) -> bool {
    free_bytes(path).is_some_and(|f| f < FULL_BELOW_BYTES)
}

fn describe_space(free: Option<u64>) -> String {
    match free {
        Some(f) if f < FULL_BELOW_BYTES => format!(
            "no space left on its disk ({} KiB free): free some space and run it again",
            f / 1024
        ),
        Some(f) => format!("the filesystem refused it ({} MiB free)", f >> 20),
        None => "the filesystem refused it".to_string(),
    }
}
