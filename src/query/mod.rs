//! Read models built from the store: facts and lessons as of a point, lineage chains.

mod facts;
mod lesson;
mod lineage;

pub use facts::{FactView, FactsReport, facts_as_of};
pub use lesson::lesson_as_of;
pub use lineage::{Lineage, LineageLink, lineage};

use crate::model::Timestamp;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error("no episode with fingerprint {0:?}")]
    UnknownEpisode(String),
    #[error("episode {fingerprint:?} was not yet known at {known_at} (recorded at {recorded_at})")]
    NotYetKnown {
        fingerprint: String,
        known_at: Timestamp,
        recorded_at: Timestamp,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
}
