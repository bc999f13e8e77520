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
    /// Another writer held the store for longer than this one may wait.
    #[error(transparent)]
    Busy(#[from] crate::lmdb::LockError),
    #[error("cannot {what}: the store at {path} is on a read-only filesystem (open read-only)")]
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
    #[error("store backend error: {0}")]
    Backend(String),
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
