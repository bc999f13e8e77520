//! The memory model: episodes, entities, fact edges and supersession, on two time axes.

mod asof;
mod edge;
mod entity;
mod episode;
mod time;
mod version;

pub use asof::{AsOf, FactState};
pub use edge::{FactEdge, Provenance, Relation, Supersession};
pub use entity::{EntityKey, EntityKeyError, MAX_KEY_BYTES, MemoryEntity};
pub use episode::{FINGERPRINT_RESERVED, MemoryEpisode, fingerprint_problem};
pub use time::{TimeError, Timestamp};
pub use version::{EpisodeVersion, FactVersion, Review, Verdict, facts_known_at};
