use serde::Serialize;

use crate::model::MemoryEpisode;

/// A page of the timeline, as `strata timeline --json` prints it.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TimelinePage {
    pub count: usize,
    pub episodes: Vec<MemoryEpisode>,
}

impl TimelinePage {
    pub fn of(episodes: Vec<MemoryEpisode>) -> Self {
        TimelinePage {
            count: episodes.len(),
            episodes,
        }
    }
}
