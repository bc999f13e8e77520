//! Read models built from the store: facts and lessons as of a point, lineage chains, timeline
//! pages, and the views the explorer shows ([`views`]).

mod code;
mod facts;
mod lesson;
mod lineage;
mod review;
mod timeline;
pub mod views;

pub use code::{CodeQuery, code_units};
pub use facts::{FactView, FactsReport, facts_as_of};
pub use lesson::lesson_as_of;
pub use lineage::{Lineage, LineageLink, NearestLineage, lineage, lineage_within};
pub use review::{Change, ReviewRow, changes, review};
pub use timeline::TimelinePage;

use crate::model::Timestamp;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("no episode with fingerprint {0:?}")]
    UnknownEpisode(String),
    #[error("no code unit has embedding_ref {0:?}")]
    UnknownCodeUnit(String),
    #[error("episode {fingerprint:?} was not yet known at {known_at} (recorded at {recorded_at})")]
    NotYetKnown {
        fingerprint: String,
        known_at: Timestamp,
        recorded_at: Timestamp,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The episode, if it exists and was already recorded at `as_of.known_at`.
fn known_episode(
    store: &dyn crate::store::MemoryStore,
    fingerprint: &str,
    as_of: &crate::model::AsOf,
) -> Result<crate::model::MemoryEpisode, QueryError> {
    let episode = store
        .episode(fingerprint)?
        .ok_or_else(|| QueryError::UnknownEpisode(fingerprint.to_string()))?;
    if !as_of.knows(episode.ingested_at) {
        return Err(QueryError::NotYetKnown {
            fingerprint: fingerprint.to_string(),
            known_at: as_of.known_at,
            recorded_at: episode.ingested_at,
        });
    }
    Ok(episode.known_at(as_of.known_at))
}
