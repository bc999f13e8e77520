use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::falkordb::{FalkorStore, FalkorUrl};
use super::{MemoryStore, StoreError, embedded::EmbeddedStore};

/// Where memory lives: the embedded store in the data directory (the default), or a graph on
/// a FalkorDB server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreLocation {
    Embedded(PathBuf),
    FalkorDb(FalkorUrl),
}

impl StoreLocation {
    /// `url` is `falkordb://[USER:PASSWORD@]HOST:PORT/GRAPH` (`falkordbs://` over TLS); none means the embedded store in `data_dir`.
    pub fn parse(url: Option<&str>, data_dir: &Path) -> Result<Self, StoreError> {
        match url {
            None => Ok(StoreLocation::Embedded(data_dir.to_path_buf())),
            Some(u) => u.parse().map(StoreLocation::FalkorDb).map_err(
                |e: super::falkordb::FalkorUrlError| StoreError::Open {
                    path: PathBuf::from(super::falkordb::mask_credentials(u)),
                    message: e.to_string(),
                },
            ),
        }
    }

    /// Opens the store; a server that is down is an error naming it.
    pub fn open(&self) -> Result<Arc<dyn MemoryStore>, StoreError> {
        Ok(match self {
            StoreLocation::Embedded(dir) => Arc::new(EmbeddedStore::open(dir)?),
            StoreLocation::FalkorDb(url) => Arc::new(FalkorStore::connect(url)?),
        })
    }

    /// Opens the store without waiting for a server: calls fail until it answers, then
    /// reconnect. For the explorer, which must open whatever the server's state.
    pub fn open_lazily(&self) -> Result<Arc<dyn MemoryStore>, StoreError> {
        self.open_lazily_on(None)
    }

    /// [`StoreLocation::open_lazily`], a server's client driven by `runtime` when one is
    /// given (the explorer's, so that one runtime serves every client).
    pub fn open_lazily_on(
        &self,
        runtime: Option<tokio::runtime::Handle>,
    ) -> Result<Arc<dyn MemoryStore>, StoreError> {
        Ok(match self {
            StoreLocation::Embedded(dir) => Arc::new(EmbeddedStore::open(dir)?),
            StoreLocation::FalkorDb(url) => Arc::new(FalkorStore::connect_lazily_on(url, runtime)?),
        })
    }

    /// The explorer's history of recall queries on this store: one file per store.
    pub fn query_history(&self, data_dir: &Path) -> PathBuf {
        let name = match self {
            StoreLocation::Embedded(_) => "embedded".to_string(),
            StoreLocation::FalkorDb(url) => url.slug(),
        };
        data_dir.join("history").join(format!("{name}.jsonl"))
    }

    /// Where the recall counters and the warm signal of this store live: an LMDB environment
    /// of their own, beside the store, one per store (a FalkorDB graph's are this machine's
    /// count of the recalls answered here).
    pub fn telemetry_dir(&self, data_dir: &Path) -> PathBuf {
        let name = match self {
            StoreLocation::Embedded(_) => "embedded".to_string(),
            StoreLocation::FalkorDb(url) => url.slug(),
        };
        data_dir.join("telemetry").join(name)
    }

    /// Where the indexes derived from this store live: one directory per store.
    pub fn index_dir(&self, data_dir: &Path) -> PathBuf {
        match self {
            StoreLocation::Embedded(_) => data_dir.join("index"),
            StoreLocation::FalkorDb(url) => data_dir.join("index").join(url.slug()),
        }
    }
}
