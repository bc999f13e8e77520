//! Derived indexes that follow the store: the BM25 text index and the vector index. Both
//! record how far into the store's ingest log they have read, catch up on open, and can be
//! rebuilt from the store at any time; the store stays the only source of truth.

pub mod bm25;
mod bm25_current;
mod error;
pub mod falkordb;
pub mod qdrant;
mod sync;
mod vector_store;
pub mod vectors;
pub mod versions;

pub use error::IndexError;
pub use sync::{
    SyncReport, Synced, TEXT_VERSION, episode_text, store_identity, sync_text, sync_vectors,
};
pub use vector_store::{VectorLocation, VectorStore};
pub use versions::TextVersions;
