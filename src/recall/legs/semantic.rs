use std::sync::Arc;
use std::time::Instant;

use crate::embed::Embedder;
use crate::index::{TextVersions, VectorStore};
use crate::recall::Warming;
use crate::recall::confidence::Signals;
use crate::recall::leg::{Leg, LegError, LegHits, LegQuery, RecallLeg, StoreEpisodes};

/// kNN over episode embeddings, each episode by its text as known at the query's K; the
/// query embedding is timed on its own. While a first
/// embedding of the memory runs in the background it answers nothing, saying how far it got;
/// an index that lags the store answers from what it holds and says how far behind it is.
pub struct SemanticLeg {
    embedder: Arc<dyn Embedder>,
    index: Arc<dyn VectorStore>,
    warming: Arc<Warming>,
    store: Arc<StoreEpisodes>,
    versions: Arc<TextVersions>,
}

impl SemanticLeg {
    pub fn new(
        embedder: Arc<dyn Embedder>,
        index: Arc<dyn VectorStore>,
        warming: Arc<Warming>,
        store: Arc<StoreEpisodes>,
        versions: Arc<TextVersions>,
    ) -> Self {
        SemanticLeg {
            embedder,
            index,
            warming,
            store,
            versions,
        }
    }
}

impl RecallLeg for SemanticLeg {
    fn leg(&self) -> Leg {
        Leg::Semantic
    }

    fn search(&self, q: &LegQuery) -> Result<LegHits, LegError> {
        if let Some(why) = self.warming.reason() {
            return Err(LegError::Failed(why));
        }
        let t0 = Instant::now();
        let vector = self
            .embedder
            .embed(&q.text)
            .map_err(LegError::from_display)?;
        let embed_ms = t0.elapsed().as_secs_f64() * 1e3;
        q.check_deadline()?;
        let upto = self
            .index
            .corrections_searched()
            .map_err(LegError::from_display)?;
        let hits = super::current_versions(&self.versions, q, upto, |limit| {
            Ok(self
                .index
                .search(&vector, &q.as_of, limit)?
                .into_iter()
                .map(|h| (h.fingerprint, h.score))
                .collect())
        })
        .map_err(LegError::from_display)?;
        let scores: Vec<f64> = hits.iter().map(|(_, s)| f64::from(*s)).collect();
        let lag = match self.index.count() {
            Ok(held) => self.store.lag(held as u64),
            Err(e) => Some(format!("cannot count its vectors: {e}")),
        };
        Ok(LegHits {
            signals: Signals::Scores,
            fingerprints: hits.into_iter().map(|(fp, _)| fp).collect(),
            scores,
            embed_ms: Some(embed_ms),
            note: Some(self.embedder.label()),
            lag,
        })
    }
}
