//! Memory that moves: the export format (versioned NDJSON), export from any store, restore
//! into any store keeping every time as exported, and online backups of the embedded store.
//! See docs/operations.md, "Backups and moving memory".

pub mod backup;
mod error;
pub mod export;
pub mod format;
mod keys;
pub mod restore;

pub use error::TransferError;
