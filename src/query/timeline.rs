use serde::Serialize;

use crate::model::{MemoryEpisode, Timestamp};

/// A page of the timeline, as `strata timeline --json` prints it.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TimelinePage {
    pub count: usize,
    pub episodes: Vec<MemoryEpisode>,
}

impl TimelinePage {
    /// The page with each episode's text as known at `known_at`.
    pub fn of(episodes: Vec<MemoryEpisode>, known_at: Timestamp) -> Self {
        TimelinePage {
            count: episodes.len(),
            episodes: episodes.iter().map(|e| e.known_at(known_at)).collect(),
        }
    }
}
