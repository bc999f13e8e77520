//! The validated write set handed to a store: what ingest, import and the demo produce.

use serde::{Deserialize, Serialize};

use crate::model::{EntityKey, FactEdge, Provenance, Relation, Timestamp};

/// A fact edge to write, before the store stamps its knowledge time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FactDraft {
    pub relation: Relation,
    pub entity: EntityKey,
    pub t_valid: Timestamp,
    pub t_invalid: Option<Timestamp>,
}

impl FactDraft {
    /// The fact edge `episode` records, known from `ingested_at`; an interval given closed is
    /// closed as of the same knowledge time.
    pub fn stamp(
        &self,
        episode: &str,
        ingested_at: Timestamp,
        provenance: &Provenance,
    ) -> FactEdge {
        FactEdge {
            episode: episode.to_string(),
            relation: self.relation,
            entity: self.entity.clone(),
            t_valid: self.t_valid,
            t_invalid: self.t_invalid,
            ingested_at,
            expired_at: self.t_invalid.map(|_| ingested_at),
            superseded_by: None,
            provenance: provenance.clone(),
            versions: Vec::new(),
        }
    }
}

/// "This episode closes `prior`'s facts about `entity` at `t_invalid`."
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SupersedeDraft {
    pub prior: String,
    pub entity: EntityKey,
    pub t_invalid: Timestamp,
}

/// One validated incident record: the canonical content of an episode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpisodeDraft {
    pub incident_fingerprint: String,
    pub summary_nl: String,
    pub resolution_nl: String,
    pub concluded_at: Timestamp,
    pub t_valid: Timestamp,
    pub provenance: Provenance,
    pub facts: Vec<FactDraft>,
    pub supersedes: Vec<SupersedeDraft>,
    /// Skills this resolution applied (or taught): each becomes the skill's next version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<crate::learning::SkillDraft>,
}

/// When what a batch writes becomes known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnowledgeTime {
    /// A time given (`--now`, a replay, an evaluation that stamps each record).
    At(Timestamp),
    /// The clock when the batch is written, read inside the writer's turn: of two writers the
    /// first to commit is stamped first, whichever began (or finished validating) first.
    AtCommit,
}

impl KnowledgeTime {
    /// The time recorded for a batch written in a turn that began at `turn_began`.
    pub fn resolve(self, turn_began: Timestamp) -> Timestamp {
        match self {
            KnowledgeTime::At(t) => t,
            KnowledgeTime::AtCommit => turn_began,
        }
    }

    /// The time given, if one was.
    pub fn fixed(self) -> Option<Timestamp> {
        match self {
            KnowledgeTime::At(t) => Some(t),
            KnowledgeTime::AtCommit => None,
        }
    }
}

impl From<Timestamp> for KnowledgeTime {
    fn from(t: Timestamp) -> Self {
        KnowledgeTime::At(t)
    }
}

/// A draft with where it came from (for error messages) and the knowledge time to stamp.
#[derive(Clone, Debug)]
pub struct BatchItem {
    pub origin: String,
    pub draft: EpisodeDraft,
    pub ingested_at: KnowledgeTime,
}

/// Written atomically: all items or none.
#[derive(Clone, Debug, Default)]
pub struct WriteBatch {
    pub items: Vec<BatchItem>,
    /// Code units to record, each with where it came from.
    pub code_units: Vec<(String, crate::learning::CodeUnit)>,
    /// Skill versions to record exactly as given (a restore), each with where it came from:
    /// a version stored with the same content changes nothing, one stored with other content
    /// is refused, and a version is written only after the one before it.
    pub skill_versions: Vec<(String, crate::learning::Skill)>,
    /// Versions of corrected records and the corrections log to record exactly as given (a
    /// restore): numbered after the corrections the store holds.
    pub restored_versions: crate::correct::Plan,
}

/// What a batch changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ApplyReport {
    pub records: usize,
    pub new_episodes: usize,
    pub unchanged_episodes: usize,
    pub new_entities: usize,
    pub new_facts: usize,
    pub closed_facts: usize,
    pub new_supersessions: usize,
    pub new_skill_versions: usize,
    pub new_code_units: usize,
}

impl ApplyReport {
    /// Adds what another part of the same batch did.
    pub fn add(&mut self, other: &ApplyReport) {
        self.records += other.records;
        self.new_episodes += other.new_episodes;
        self.unchanged_episodes += other.unchanged_episodes;
        self.new_entities += other.new_entities;
        self.new_facts += other.new_facts;
        self.closed_facts += other.closed_facts;
        self.new_supersessions += other.new_supersessions;
        self.new_skill_versions += other.new_skill_versions;
        self.new_code_units += other.new_code_units;
    }
}

impl EpisodeDraft {
    /// The first field in which `new` differs from this stored draft, for rejection messages.
    pub fn first_difference(&self, new: &EpisodeDraft) -> &'static str {
        if self.summary_nl != new.summary_nl {
            "summary_nl"
        } else if self.resolution_nl != new.resolution_nl {
            "resolution_nl"
        } else if self.concluded_at != new.concluded_at {
            "concluded_at"
        } else if self.t_valid != new.t_valid {
            "t_valid"
        } else if self.provenance != new.provenance {
            "provenance"
        } else if self.facts != new.facts {
            "mentions/resolved_by"
        } else if self.supersedes != new.supersedes {
            "supersedes"
        } else {
            "skills"
        }
    }
}
