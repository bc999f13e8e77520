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
    #[error("the store at {path} is in use by another Strata process (only one may hold it)")]
    Locked { path: PathBuf },
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
