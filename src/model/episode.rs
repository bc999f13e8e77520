use serde::{Deserialize, Serialize};

use super::{Provenance, Timestamp};

/// One concluded incident, keyed by `incident_fingerprint`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MemoryEpisode {
    pub incident_fingerprint: String,
    pub summary_nl: String,
    pub resolution_nl: String,
    pub concluded_at: Timestamp,
    pub t_valid: Timestamp,
    /// Knowledge time: when the store learned of the episode.
    pub ingested_at: Timestamp,
    #[serde(flatten)]
    pub provenance: Provenance,
    /// Corrections of the text, in knowledge-time order ([`MemoryEpisode::known_at`]).
    #[serde(skip)]
    #[schemars(skip)]
    pub versions: Vec<super::EpisodeVersion>,
}
