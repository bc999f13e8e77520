use serde::{Deserialize, Serialize};

use super::{Provenance, Timestamp};

/// The one character a fingerprint may not hold: the derived indexes key a corrected text
/// by its episode's fingerprint, this, and when the version begins
/// ([`crate::index::versions::version_key`]), so a fingerprint holding it could pass for
/// another episode's corrected text. Every other character (control characters included)
/// is data.
pub const FINGERPRINT_RESERVED: char = '\u{1f}';

/// Why `fingerprint` cannot name an episode, if it cannot (beyond its length, which every
/// key shares: [`super::MAX_KEY_BYTES`]).
pub fn fingerprint_problem(fingerprint: &str) -> Option<&'static str> {
    fingerprint.contains(FINGERPRINT_RESERVED).then_some(
        "contains U+001F (unit separator), which the indexes reserve to key a corrected \
         text; expected a fingerprint without it",
    )
}

/// One concluded incident, keyed by `incident_fingerprint`.
#[derive(Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// As derived, with `versions` shown only when there are some: an uncorrected episode prints
/// as it always has.
impl std::fmt::Debug for MemoryEpisode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("MemoryEpisode");
        d.field("incident_fingerprint", &self.incident_fingerprint)
            .field("summary_nl", &self.summary_nl)
            .field("resolution_nl", &self.resolution_nl)
            .field("concluded_at", &self.concluded_at)
            .field("t_valid", &self.t_valid)
            .field("ingested_at", &self.ingested_at)
            .field("provenance", &self.provenance);
        if !self.versions.is_empty() {
            d.field("versions", &self.versions);
        }
        d.finish()
    }
}
