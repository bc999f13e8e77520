//! `strata backup DIR`: a consistent online copy of the embedded store (LMDB's own copy of
//! one read snapshot, compacted) and a manifest. DIR is a data directory: `strata --data DIR`
//! opens it, and its recall indexes are rebuilt from it on first use.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::TransferError;
use crate::model::Timestamp;
use crate::store::MemoryStore;
use crate::store::embedded::EmbeddedStore;

/// The manifest's file in the backup's directory.
pub const MANIFEST: &str = "backup.json";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub strata_version: String,
    /// The data directory backed up.
    pub source: String,
    pub created_at: Timestamp,
    pub store_id: Option<String>,
    /// The copy's generation (every write moves it on by one).
    pub generation: u64,
    pub episodes: u64,
    pub entities: u64,
    pub facts: u64,
    pub supersessions: u64,
    pub bytes: u64,
}

/// Backs up `store` (in data directory `source`) into `dest`, a new or empty directory.
pub fn backup(
    store: &EmbeddedStore,
    source: &Path,
    dest: &Path,
    now: Timestamp,
) -> Result<Manifest, TransferError> {
    if let Ok(mut entries) = std::fs::read_dir(dest)
        && entries.next().is_some()
    {
        return Err(TransferError::Backup(format!(
            "{} is not empty; back up into a new or empty directory",
            dest.display()
        )));
    }
    let bytes = store.copy_compacted(dest)?;
    let copy = EmbeddedStore::open(dest)?;
    let stats = copy.stats()?;
    let manifest = Manifest {
        format: "strata-backup/1".into(),
        strata_version: env!("CARGO_PKG_VERSION").into(),
        source: source.display().to_string(),
        created_at: now,
        store_id: copy.identity()?,
        generation: copy.generation()?,
        episodes: stats.episodes,
        entities: stats.entities,
        facts: stats.mentions + stats.resolved_by,
        supersessions: stats.supersedes,
        bytes,
    };
    let text = serde_json::to_string_pretty(&manifest)
        .map_err(|e| TransferError::Backup(format!("cannot encode the manifest: {e}")))?;
    let path = dest.join(MANIFEST);
    std::fs::write(&path, text + "\n").map_err(TransferError::io(&path))?;
    Ok(manifest)
}
