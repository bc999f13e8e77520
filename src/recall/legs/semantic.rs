use std::sync::Arc;
use std::time::Instant;

use crate::embed::Embedder;
use crate::index::VectorStore;
use crate::recall::Warming;
use crate::recall::confidence::Signals;
use crate::recall::leg::{Leg, LegError, LegHits, LegQuery, RecallLeg};

/// kNN over episode embeddings; the query embedding is timed on its own. While a first
/// embedding of the memory runs in the background it answers nothing, saying how far it got.
pub struct SemanticLeg {
    embedder: Arc<dyn Embedder>,
    index: Arc<dyn VectorStore>,
    warming: Arc<Warming>,
}

impl SemanticLeg {
    pub fn new(
        embedder: Arc<dyn Embedder>,
        index: Arc<dyn VectorStore>,
        warming: Arc<Warming>,
    ) -> Self {
        SemanticLeg {
            embedder,
            index,
            warming,
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
        let hits = self
            .index
            .search(&vector, &q.as_of, q.limit)
            .map_err(LegError::from_display)?;
        let scores: Vec<f64> = hits.iter().map(|h| f64::from(h.score)).collect();
        Ok(LegHits {
            signals: Signals::Scores,
            fingerprints: hits.into_iter().map(|h| h.fingerprint).collect(),
            scores,
            embed_ms: Some(embed_ms),
            note: Some(self.embedder.label()),
        })
    }
}
