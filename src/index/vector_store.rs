use std::path::Path;
use std::sync::Arc;

use super::IndexError;
use super::falkordb::FalkorVectors;
use super::qdrant::{QdrantTarget, QdrantVectors};
use super::vectors::{Scored, VectorIndex, VectorRow};
use crate::lmdb::WriterGuard;
use crate::model::AsOf;
use crate::store::StoreLocation;
use crate::store::falkordb::FalkorUrl;

/// Where the semantic leg's episode vectors live. Each records its model and dimension and
/// refuses an embedder of another.
pub trait VectorStore: Send + Sync {
    /// For status lines: which index, where.
    fn describe(&self) -> String;
    /// How many episodes have a vector (corrected texts' vectors are not counted).
    fn count(&self) -> Result<usize, IndexError>;
    /// The store ingest sequence read up to.
    fn watermark(&self) -> Result<u64, IndexError>;
    /// Upserts rows (by fingerprint) and advances the watermark.
    fn append(&self, rows: &[VectorRow], watermark: u64) -> Result<(), IndexError>;
    /// The store's correction log read up to ([`super::versions`]).
    fn corrections_read(&self) -> Result<u64, IndexError>;
    /// What a search filters corrected texts by: [`Self::corrections_read`], or, where that
    /// is a request to a server, what it said at this process's last catch-up (a search
    /// never waits on a second request).
    fn corrections_searched(&self) -> Result<u64, IndexError> {
        self.corrections_read()
    }
    /// Adds the vectors of corrected texts (keyed by [`super::versions::version_key`], known
    /// from the version's knowledge time) and advances the correction log's watermark.
    fn append_versions(&self, rows: &[VectorRow], corrections: u64) -> Result<(), IndexError>;
    /// Cosine kNN over vectors known at K and begun by V: best first, ties by key (a
    /// corrected text's vector is named by its version key, [`super::versions`]).
    fn search(&self, query: &[f32], as_of: &AsOf, limit: usize) -> Result<Vec<Scored>, IndexError>;
    /// Held while catching up, so that two processes never embed the same episodes; `None`
    /// where the backend needs no such turn-taking.
    fn catch_up_guard(&self) -> Result<Option<WriterGuard>, IndexError> {
        Ok(None)
    }
    /// Empties the index so that it is rebuilt from the store (of identity `store_id`).
    fn clear(&self, store_id: &str) -> Result<(), IndexError>;
    /// Why the index was emptied when it opened, to be rebuilt from the store.
    fn rebuilt(&self) -> Option<String> {
        None
    }
    /// Rows a catch-up may hand [`VectorStore::append`] at once: a local index commits a
    /// large batch in one transaction; a server takes requests of bounded size.
    fn append_at_most(&self) -> usize {
        256
    }
    /// Which of `fingerprints` have no vector stored yet (all of them where the backend
    /// cannot tell cheaply): catch-up embeds only these.
    fn missing(&self, fingerprints: &[&str]) -> Result<Vec<String>, IndexError> {
        Ok(fingerprints.iter().map(|f| f.to_string()).collect())
    }
    /// The stored vector of each of `fingerprints`, `None` where there is none (what
    /// `strata export --with-vectors` carries).
    fn stored_vectors(&self, fingerprints: &[&str]) -> Result<Vec<Option<Vec<f32>>>, IndexError> {
        let _ = fingerprints;
        Err(IndexError::Vectors {
            path: self.describe().into(),
            message: "cannot read its vectors back: export --with-vectors reads the local \
                      vector index (--vectors local), Qdrant or FalkorDB's"
                .into(),
        })
    }
}

/// `--vectors`: a local index in the data directory (the default), Qdrant, or the FalkorDB
/// graph's own vector index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum VectorLocation {
    #[default]
    Local,
    Qdrant(QdrantTarget),
    FalkorDb(FalkorUrl),
}

impl VectorLocation {
    /// `qdrant://HOST:PORT` (`qdrants://` over TLS), or `falkordb` (the store's graph, which must then be on FalkorDB).
    pub fn parse(url: Option<&str>, store: &StoreLocation) -> Result<Self, IndexError> {
        let bad = |message: String| IndexError::Vectors {
            path: crate::store::falkordb::mask_credentials(url.unwrap_or_default()).into(),
            message,
        };
        match url {
            None | Some("local") => Ok(VectorLocation::Local),
            Some(u) if u.starts_with("qdrant://") || u.starts_with("qdrants://") => {
                super::qdrant::check_url(u).map_err(|e| bad(e.to_string()))?;
                Ok(VectorLocation::Qdrant(u.into()))
            }
            Some("falkordb") => match store {
                StoreLocation::FalkorDb(graph) => Ok(VectorLocation::FalkorDb(graph.clone())),
                StoreLocation::Embedded(_) => Err(bad(
                    "--vectors falkordb uses the graph's own vector index: it needs --store falkordb://HOST:PORT/GRAPH".into(),
                )),
            },
            Some(other) => Err(bad(format!(
                "expected qdrant://HOST:PORT (qdrants:// over TLS), falkordb or local, got {:?}",
                crate::store::falkordb::mask_credentials(other)
            ))),
        }
    }

    /// Opens the vectors of the store whose identity is `store_id` (see
    /// [`crate::store::MemoryStore::identity`]); `None` when the store could not say.
    pub fn open(
        &self,
        index_dir: &Path,
        model: &str,
        dimension: usize,
        store_id: Option<&str>,
        runtime: Option<tokio::runtime::Handle>,
    ) -> Result<Arc<dyn VectorStore>, IndexError> {
        Ok(match self {
            VectorLocation::Local => {
                Arc::new(VectorIndex::open(index_dir, model, dimension, store_id)?)
            }
            VectorLocation::Qdrant(target) => {
                let store_id = store_id.ok_or_else(|| IndexError::Vectors {
                    path: target.url.as_str().into(),
                    message: "the store cannot say which it is, so its collection is unknown"
                        .into(),
                })?;
                Arc::new(QdrantVectors::open_at(
                    target, model, dimension, store_id, runtime,
                )?)
            }
            VectorLocation::FalkorDb(url) => {
                Arc::new(FalkorVectors::open(url, model, dimension, runtime)?)
            }
        })
    }
}

impl VectorStore for VectorIndex {
    fn append_at_most(&self) -> usize {
        16_384
    }
    fn describe(&self) -> String {
        format!("local {} index", self.model())
    }
    fn count(&self) -> Result<usize, IndexError> {
        Ok(self.len().saturating_sub(self.versions()? as usize))
    }
    fn corrections_read(&self) -> Result<u64, IndexError> {
        VectorIndex::corrections_read(self)
    }
    fn append_versions(&self, rows: &[VectorRow], corrections: u64) -> Result<(), IndexError> {
        VectorIndex::append_versions(self, rows, corrections)
    }
    fn watermark(&self) -> Result<u64, IndexError> {
        VectorIndex::watermark(self)
    }
    fn append(&self, rows: &[VectorRow], watermark: u64) -> Result<(), IndexError> {
        VectorIndex::append(self, rows, watermark)
    }
    fn search(&self, query: &[f32], as_of: &AsOf, limit: usize) -> Result<Vec<Scored>, IndexError> {
        VectorIndex::search(self, query, as_of, limit)
    }
    fn catch_up_guard(&self) -> Result<Option<WriterGuard>, IndexError> {
        VectorIndex::catch_up_guard(self).map(Some)
    }
    fn clear(&self, store_id: &str) -> Result<(), IndexError> {
        VectorIndex::clear(self, store_id)
    }
    fn rebuilt(&self) -> Option<String> {
        self.rebuilt.clone()
    }
    fn stored_vectors(&self, fingerprints: &[&str]) -> Result<Vec<Option<Vec<f32>>>, IndexError> {
        VectorIndex::stored_vectors(self, fingerprints)
    }
    fn missing(&self, fingerprints: &[&str]) -> Result<Vec<String>, IndexError> {
        let mut missing = Vec::new();
        for f in fingerprints {
            if !self.contains(f)? {
                missing.push(f.to_string());
            }
        }
        Ok(missing)
    }
}

impl VectorStore for QdrantVectors {
    fn describe(&self) -> String {
        format!("Qdrant collection {}", self.collection())
    }
    fn count(&self) -> Result<usize, IndexError> {
        Ok(self.len()?.saturating_sub(self.versions()? as usize))
    }
    fn corrections_read(&self) -> Result<u64, IndexError> {
        QdrantVectors::corrections_read(self)
    }
    fn corrections_searched(&self) -> Result<u64, IndexError> {
        Ok(self.corrections_seen())
    }
    fn append_versions(&self, rows: &[VectorRow], corrections: u64) -> Result<(), IndexError> {
        QdrantVectors::append_versions(self, rows, corrections)
    }
    fn watermark(&self) -> Result<u64, IndexError> {
        QdrantVectors::watermark(self)
    }
    fn append(&self, rows: &[VectorRow], watermark: u64) -> Result<(), IndexError> {
        QdrantVectors::append(self, rows, watermark)
    }
    fn search(&self, query: &[f32], as_of: &AsOf, limit: usize) -> Result<Vec<Scored>, IndexError> {
        QdrantVectors::search(self, query, as_of, limit)
    }
    fn clear(&self, _store_id: &str) -> Result<(), IndexError> {
        QdrantVectors::clear(self)
    }
    fn rebuilt(&self) -> Option<String> {
        self.rebuilt.clone()
    }
    fn missing(&self, fingerprints: &[&str]) -> Result<Vec<String>, IndexError> {
        QdrantVectors::missing(self, fingerprints)
    }
    fn stored_vectors(&self, fingerprints: &[&str]) -> Result<Vec<Option<Vec<f32>>>, IndexError> {
        QdrantVectors::stored_vectors(self, fingerprints)
    }
}
