use std::sync::Arc;

use crate::index::TextVersions;
use crate::index::bm25::Bm25Index;
use crate::recall::confidence::Signals;
use crate::recall::leg::{Leg, LegError, LegHits, LegQuery, RecallLeg, StoreEpisodes};

/// BM25 over the text index, each episode by its text as known at the query's K; says so
/// when the index lags the store.
pub struct Bm25Leg {
    index: Arc<Bm25Index>,
    store: Arc<StoreEpisodes>,
    versions: Arc<TextVersions>,
}

impl Bm25Leg {
    pub fn new(
        index: Arc<Bm25Index>,
        store: Arc<StoreEpisodes>,
        versions: Arc<TextVersions>,
    ) -> Self {
        Bm25Leg {
            index,
            store,
            versions,
        }
    }
}

impl RecallLeg for Bm25Leg {
    fn leg(&self) -> Leg {
        Leg::Bm25
    }

    /// Which documents corrected texts replaced is read now, not by the first search.
    fn catch_up(&self) -> Result<(), LegError> {
        let upto = self
            .index
            .corrections_read()
            .map_err(LegError::from_display)?;
        self.index
            .read_replaced(&self.versions, upto)
            .map_err(LegError::from_display)
    }

    fn search(&self, q: &LegQuery) -> Result<LegHits, LegError> {
        let upto = self
            .index
            .corrections_read()
            .map_err(LegError::from_display)?;
        let hits = super::current_versions(&self.versions, q, upto, |limit| {
            self.index
                .search_current(&q.text, &q.as_of, limit, (&self.versions, upto))
        })
        .map_err(LegError::from_display)?;
        Ok(LegHits {
            scores: hits.iter().map(|(_, s)| f64::from(*s)).collect(),
            fingerprints: hits.into_iter().map(|(fp, _)| fp).collect(),
            signals: Signals::Scores,
            embed_ms: None,
            note: None,
            lag: self.store.lag(self.index.len()),
        })
    }
}
