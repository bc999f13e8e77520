use std::path::PathBuf;

use crate::embed::EmbedError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(
        "the vector index at {path} holds {found_model} vectors of {found_dimension} dimensions, \
         but the embedder is {model} with {dimension}; use the matching --embedder or move the \
         index aside to rebuild it"
    )]
    EmbedderMismatch {
        path: PathBuf,
        found_model: String,
        found_dimension: usize,
        model: String,
        dimension: usize,
    },
    #[error("vector of {got} dimensions for an index of {expected}")]
    Dimension { expected: usize, got: usize },
    #[error("vector index {path}: {message}")]
    Vectors { path: PathBuf, message: String },
    /// The index's files are damaged: it is moved aside and rebuilt from the store by the
    /// next `strata index` or recall that can write there.
    #[error(
        "the {what} index {path} is damaged ({message}); the next `strata index` or recall \
         moves it aside and rebuilds it from the store"
    )]
    Damaged {
        what: &'static str,
        path: PathBuf,
        message: String,
    },
    #[error("text index {path}: {message}")]
    Text { path: PathBuf, message: String },
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl IndexError {
    /// Whether the index's own files are at fault (and rebuilding it from the store heals it).
    pub fn is_damage(&self) -> bool {
        matches!(self, IndexError::Damaged { .. })
    }
}
