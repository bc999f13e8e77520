//! Corrections: what a reviewer says about memory after it was written. Each is new knowledge
//! recorded at its own knowledge time K2: it ends the knowledge interval of the version it
//! replaces and starts a new one, so as of any K before K2 every read answers as it did.
//!
//! [`parse`] reads the NDJSON of `strata correct`, [`plan`] checks a batch against the store
//! and works out the versions it writes (the same rules and words on every backend), and a
//! store's [`crate::store::MemoryStore::correct`] writes the plan atomically.

pub mod check;
mod parse;
mod plan;

use serde::{Deserialize, Serialize};

use crate::model::{EntityKey, Relation, Timestamp};
use crate::store::KnowledgeTime;

pub use parse::{parse_file, parse_line, parse_text};
pub use plan::{CorrectionReader, FactRef, Plan, plan};

/// Which supersession: `episode` closed `prior`'s facts about the entity.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SupersessionRef {
    pub episode: String,
    pub prior: String,
    pub entity_type: String,
    pub entity_ref: String,
}

impl SupersessionRef {
    pub fn entity(&self) -> EntityKey {
        EntityKey {
            entity_type: self.entity_type.clone(),
            entity_ref: self.entity_ref.clone(),
        }
    }
}

impl std::fmt::Display for SupersessionRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?} superseding {:?} about {}|{}",
            self.episode, self.prior, self.entity_type, self.entity_ref
        )
    }
}

/// New text for an episode; a field left out keeps its current text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EpisodeCorrection {
    pub incident_fingerprint: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_nl: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution_nl: Option<String>,
}

/// A new valid interval for a fact; a bound left out keeps its current value, and
/// `"t_invalid": null` reopens the fact.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FactCorrection {
    pub episode: String,
    pub relation: Relation,
    pub entity_type: String,
    pub entity_ref: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_valid: Option<Timestamp>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    #[schemars(with = "Option<Timestamp>")]
    pub t_invalid: Option<Option<Timestamp>>,
}

/// A field that is present, even as `null`, is `Some`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<Timestamp>>, D::Error> {
    Option::<Timestamp>::deserialize(d).map(Some)
}

/// One correction, in the shape of a line of `strata correct`'s input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Correction {
    RetractSupersession(SupersessionRef),
    ConfirmSupersession(SupersessionRef),
    CorrectEpisode(EpisodeCorrection),
    CorrectFact(FactCorrection),
}

impl Correction {
    pub const KINDS: [&'static str; 4] = [
        "retract_supersession",
        "confirm_supersession",
        "correct_episode",
        "correct_fact",
    ];

    pub fn kind(&self) -> &'static str {
        match self {
            Correction::RetractSupersession(_) => Self::KINDS[0],
            Correction::ConfirmSupersession(_) => Self::KINDS[1],
            Correction::CorrectEpisode(_) => Self::KINDS[2],
            Correction::CorrectFact(_) => Self::KINDS[3],
        }
    }

    /// What it is about, in words.
    pub fn target(&self) -> String {
        match self {
            Correction::RetractSupersession(s) | Correction::ConfirmSupersession(s) => {
                format!("supersession {s}")
            }
            Correction::CorrectEpisode(e) => format!("episode {:?}", e.incident_fingerprint),
            Correction::CorrectFact(f) => format!(
                "{:?}'s {} fact about {}|{}",
                f.episode, f.relation, f.entity_type, f.entity_ref
            ),
        }
    }
}

/// Who made a write: an agent, a person, or an import.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum WriteOrigin {
    Agent,
    #[default]
    Human,
    Import,
}

impl WriteOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            WriteOrigin::Agent => "agent",
            WriteOrigin::Human => "human",
            WriteOrigin::Import => "import",
        }
    }
}

/// A line of `strata correct`: the correction, why, and who says so.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CorrectionLine {
    #[serde(flatten)]
    pub correction: Correction,
    pub reason: String,
    pub by: String,
}

/// A correction with where it came from (`file:line`, for error messages).
#[derive(Clone, Debug, PartialEq)]
pub struct CorrectionItem {
    pub origin: String,
    pub line: CorrectionLine,
}

/// Written atomically: all corrections or none, at one knowledge time.
#[derive(Clone, Debug)]
pub struct CorrectionBatch {
    pub items: Vec<CorrectionItem>,
    pub at: KnowledgeTime,
    pub origin: WriteOrigin,
}

/// A correction as the store recorded it: the log that review and `strata changes` read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CorrectionRecord {
    /// Its place in the store's log of corrections (from 1).
    pub sequence: u64,
    pub recorded_at: Timestamp,
    pub origin: WriteOrigin,
    #[serde(flatten)]
    pub line: CorrectionLine,
}

/// What a batch of corrections changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CorrectReport {
    pub corrections: usize,
    pub retracted: usize,
    pub confirmed: usize,
    pub episodes_corrected: usize,
    pub facts_corrected: usize,
    /// Facts valid again because the supersession that closed them was retracted.
    pub facts_reopened: usize,
    /// Facts closed again because a retracted supersession was confirmed.
    pub facts_reclosed: usize,
    /// The knowledge time the batch was recorded at.
    #[schemars(with = "Option<Timestamp>")]
    pub recorded_at: Option<Timestamp>,
}
