//! Following the store while the explorer is open. The store's generation counter, one
//! small read, says that another process wrote something; only then are the new episodes
//! listed and the recall indexes brought up to date.

use std::sync::{Arc, Mutex};

use crate::recall::RecallStack;
use crate::store::{MemoryStore, StoreError};

/// New episodes listed per change; a bulk load beyond this marks only its first.
const LISTED_AT_MOST: usize = 1_000;

/// Something landed in the store since the explorer last looked.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub generation: u64,
    /// Fingerprints of the episodes recorded since, in the order the store learned them.
    pub new_episodes: Vec<String>,
}

#[derive(Clone, Copy)]
struct Seen {
    generation: u64,
    episodes: u64,
}

/// Where the store stood when the explorer last looked.
#[derive(Default)]
pub struct Follower {
    seen: Mutex<Option<Seen>>,
}

impl Follower {
    /// The change since the last look, if any. The first look after the store could not be
    /// read counts as a change, so that what failed to load is read again.
    pub fn look(&self, store: &dyn MemoryStore) -> Result<Option<Change>, StoreError> {
        let generation = store.generation()?;
        let mut seen = self
            .seen
            .lock()
            .map_err(|_| StoreError::Internal("the live view's state was poisoned".into()))?;
        let before = *seen;
        if before.is_some_and(|s| s.generation == generation) {
            return Ok(None);
        }
        let episodes = store.stats()?.episodes;
        let new_episodes = match before {
            Some(b) if episodes > b.episodes => {
                let page = store.episodes_since(b.episodes, LISTED_AT_MOST)?;
                // One episode that cannot be read does not stop the view: the rest are listed.
                for (seq, why) in &page.unreadable {
                    tracing::warn!(sequence = seq, error = %why, "live view: an episode cannot be read");
                }
                page.episodes
                    .into_iter()
                    .map(|(_, e)| e.incident_fingerprint)
                    .collect()
            }
            _ => Vec::new(),
        };
        *seen = Some(Seen {
            generation,
            episodes,
        });
        Ok(Some(Change {
            generation,
            new_episodes,
        }))
    }

    /// The generation last seen.
    pub fn generation(&self) -> Option<u64> {
        self.seen.lock().ok().and_then(|s| s.map(|s| s.generation))
    }

    /// Records where the store stands, reporting nothing.
    pub fn start(&self, store: &dyn MemoryStore) {
        if let Err(e) = self.look(store) {
            tracing::warn!(error = %e, "cannot read the store's generation; the first look will reload");
        }
    }
}

/// Recall over the store and the generation its indexes have caught up with. One catch-up
/// runs at a time; a catch-up that finds the indexes current costs one generation read.
pub struct LiveRecall {
    pub stack: RecallStack,
    caught_up: tokio::sync::Mutex<Option<u64>>,
}

/// What one catch-up added, or why it stopped.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CatchUp {
    pub texts: usize,
    pub vectors: usize,
    pub problems: Vec<String>,
}

impl LiveRecall {
    /// `generation`: the store's, read before the stack's indexes caught up on opening.
    pub fn new(stack: RecallStack, generation: Option<u64>) -> Self {
        LiveRecall {
            stack,
            caught_up: tokio::sync::Mutex::new(generation),
        }
    }

    /// The next catch-up reads the store again even if its generation did not move.
    pub async fn forget_caught_up(&self) {
        *self.caught_up.lock().await = None;
    }

    /// Brings the indexes up to the store. It runs as its own task, so a caller that stops
    /// waiting (a recall past its timeout) never leaves it half done.
    pub async fn catch_up(
        self: &Arc<Self>,
        store: Arc<dyn MemoryStore>,
        report: Report,
    ) -> CatchUp {
        let this = self.clone();
        let task = tokio::spawn(async move {
            let Report { mut progress, done } = report;
            let mut caught_up = this.caught_up.lock().await;
            let generation = {
                let store = store.clone();
                tokio::task::spawn_blocking(move || store.generation()).await
            };
            let outcome = match generation {
                Ok(Ok(g)) if *caught_up == Some(g) => CatchUp::default(),
                Ok(Ok(g)) => {
                    let live = this.clone();
                    let synced = tokio::task::spawn_blocking(move || {
                        live.stack.catch_up(store.as_ref(), &mut *progress)
                    })
                    .await;
                    match synced {
                        Ok((sync, problems)) => {
                            if problems.is_empty() {
                                *caught_up = Some(g);
                            }
                            CatchUp {
                                texts: sync.text_indexed,
                                vectors: sync.vectors_embedded,
                                problems,
                            }
                        }
                        Err(e) => CatchUp::failed(e.to_string()),
                    }
                }
                Ok(Err(e)) => CatchUp::failed(e.to_string()),
                Err(e) => CatchUp::failed(e.to_string()),
            };
            done(outcome.clone());
            outcome
        });
        task.await
            .unwrap_or_else(|e| CatchUp::failed(e.to_string()))
    }
}

/// Where a catch-up reports its progress and, at the end, what it did.
pub struct Report {
    pub progress: Box<dyn FnMut(u64, u64) + Send>,
    pub done: Box<dyn FnOnce(CatchUp) + Send>,
}

impl CatchUp {
    fn failed(why: String) -> Self {
        CatchUp {
            problems: vec![format!("index catch-up stopped: {why}")],
            ..CatchUp::default()
        }
    }
}
