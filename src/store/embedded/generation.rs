//! What the store's file cannot vouch for itself: that it is the latest copy. Every write
//! records the generation it moved the store to in a small file beside the store's directory
//! (`DATA/store.generation`), so a store restored from an older backup, or a store file
//! emptied or lost under its indexes, is told apart from a new store: `check` reports the
//! first, and opening refuses the second instead of starting afresh over it.

use std::path::{Path, PathBuf};

use crate::lmdb;
use crate::store::StoreError;

/// The file, in the data directory.
pub const FILE: &str = "store.generation";

/// The store's identity and the last generation a write recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generation {
    pub store_id: String,
    pub generation: u64,
}

pub struct Recorded {
    path: PathBuf,
}

impl Recorded {
    pub fn in_data_dir(dir: &Path) -> Self {
        Recorded {
            path: dir.join(FILE),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What was last recorded; `None` when nothing was (or it cannot be read: this file
    /// only ever adds a check, it never stops a read).
    pub fn read(&self) -> Option<Generation> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        let (id, generation) = text.trim().split_once(' ')?;
        Some(Generation {
            store_id: id.to_string(),
            generation: generation.parse().ok()?,
        })
    }

    /// Records a committed write (the writer still holds its turn, so these only grow).
    /// Written to a new file renamed over the old one; a failure (a full disk) is logged and
    /// leaves the older record, which can only make the check miss, never cry wolf.
    pub fn record(&self, store_id: &str, generation: u64) {
        // A store rolled back keeps the evidence: the record never goes back for it (`check`
        // says so until the record is moved aside).
        if self
            .read()
            .is_some_and(|g| g.store_id == store_id && g.generation >= generation)
        {
            return;
        }
        let fresh = self
            .path
            .with_extension(format!("generation.{}", std::process::id()));
        let written = std::fs::write(&fresh, format!("{store_id} {generation}\n"))
            .and_then(|()| std::fs::rename(&fresh, &self.path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&fresh);
            tracing::warn!(file = %self.path.display(), error = %e, "cannot record the store's generation");
        }
    }
}

/// Indexes built from a store: a text index with a commit, or a vector index with data.
fn built_indexes(dir: &Path) -> Vec<PathBuf> {
    let index = dir.join("index");
    let mut found = Vec::new();
    if index.join("bm25").join("meta.json").is_file() {
        found.push(index.join("bm25"));
    }
    if let Ok(entries) = std::fs::read_dir(&index) {
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if name.to_string_lossy().starts_with("vectors")
                && std::fs::metadata(path.join(lmdb::DATA_FILE)).is_ok_and(|m| m.len() > 0)
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Refuses to open `file` as a new store when it is missing or empty but a store was
/// recorded here (a generation, or indexes built from one): the store was lost, and starting
/// afresh would hide that and let the next catch-up empty the indexes, its last copy.
pub fn refuse_lost_store(dir: &Path, file: &Path, recorded: &Recorded) -> Result<(), StoreError> {
    let state = match std::fs::metadata(file) {
        Ok(m) if m.len() > 0 => return Ok(()),
        Ok(_) => "empty",
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "missing",
        Err(_) => return Ok(()),
    };
    let evidence = match recorded.read() {
        Some(g) if g.generation > 0 => format!(
            "{} records store {} at generation {}",
            recorded.path().display(),
            g.store_id,
            g.generation
        ),
        _ => {
            let indexes = built_indexes(dir);
            if indexes.is_empty() {
                return Ok(());
            }
            let names: Vec<String> = indexes.iter().map(|p| p.display().to_string()).collect();
            format!(
                "recall indexes were built from a store here ({})",
                names.join(", ")
            )
        }
    };
    Err(StoreError::Lost {
        file: file.to_path_buf(),
        state,
        evidence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_generation_reads_back_and_a_lost_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let recorded = Recorded::in_data_dir(dir.path());
        assert_eq!(recorded.read(), None);
        let file = dir.path().join("store").join(lmdb::DATA_FILE);
        refuse_lost_store(dir.path(), &file, &recorded).unwrap();
        recorded.record("abc", 7);
        assert_eq!(
            recorded.read(),
            Some(Generation {
                store_id: "abc".into(),
                generation: 7
            })
        );
        let err = refuse_lost_store(dir.path(), &file, &recorded)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("missing") && err.contains("generation 7"),
            "{err}"
        );
    }
}
