use std::path::PathBuf;

use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is refused: nothing was written.
    #[error("{file} line {line}: {message}; nothing was written")]
    Refused {
        file: String,
        line: u64,
        message: String,
    },
    #[error(
        "{store} is not empty ({what}); restore writes only into an empty store (--merge adds \
         to one with ingest's rules)"
    )]
    NotEmpty { store: String, what: String },
    /// After a restore, the store does not read back as the file said.
    #[error(
        "{file} line {line}: the restored store differs: the file has {expected}, the store {found}"
    )]
    Differs {
        file: String,
        line: u64,
        expected: String,
        found: String,
    },
    #[error("cannot export: {0}")]
    Export(String),
    #[error("{0}")]
    Backup(String),
    #[error("vector index: {0}")]
    Vectors(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl TransferError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> TransferError {
        let path = path.into();
        move |source| TransferError::Io { path, source }
    }
}
