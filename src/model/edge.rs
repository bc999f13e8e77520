use std::fmt;

use serde::{Deserialize, Serialize};

use super::{EntityKey, Timestamp};

/// The fact relations from an episode to an entity.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
pub enum Relation {
    #[serde(rename = "MENTIONS")]
    Mentions,
    #[serde(rename = "RESOLVED_BY")]
    ResolvedBy,
}

impl Relation {
    pub const ALL: [Relation; 2] = [Relation::Mentions, Relation::ResolvedBy];

    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Mentions => "MENTIONS",
            Relation::ResolvedBy => "RESOLVED_BY",
        }
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Provenance {
    pub source: String,
    pub status: String,
    pub confidence_score: f64,
}

/// A `MENTIONS` or `RESOLVED_BY` edge with both time axes.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct FactEdge {
    pub episode: String,
    pub relation: Relation,
    pub entity: EntityKey,
    pub t_valid: Timestamp,
    pub t_invalid: Option<Timestamp>,
    pub ingested_at: Timestamp,
    /// Knowledge time at which the invalidation was recorded.
    pub expired_at: Option<Timestamp>,
    /// The episode whose supersession closed this fact, if one did.
    pub superseded_by: Option<String>,
    pub provenance: Provenance,
    /// Corrections of the interval after the first version, in knowledge-time order
    /// ([`FactEdge::known_at`] reads the one known at K).
    #[serde(skip)]
    pub versions: Vec<super::FactVersion>,
}

/// A `SUPERSEDES` lineage edge: `episode` replaced `prior`'s fact about `entity`.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Supersession {
    pub episode: String,
    pub prior: String,
    pub entity: EntityKey,
    /// Valid time at which the prior's fact was closed.
    pub t_valid: Timestamp,
    pub t_invalid: Option<Timestamp>,
    pub ingested_at: Timestamp,
    pub expired_at: Option<Timestamp>,
    pub provenance: Provenance,
    /// Reviewers' verdicts, in knowledge-time order.
    #[serde(skip)]
    pub reviews: Vec<super::Review>,
}

/// As derived, with `versions` shown only when there are some.
impl fmt::Debug for FactEdge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("FactEdge");
        d.field("episode", &self.episode)
            .field("relation", &self.relation)
            .field("entity", &self.entity)
            .field("t_valid", &self.t_valid)
            .field("t_invalid", &self.t_invalid)
            .field("ingested_at", &self.ingested_at)
            .field("expired_at", &self.expired_at)
            .field("superseded_by", &self.superseded_by)
            .field("provenance", &self.provenance);
        if !self.versions.is_empty() {
            d.field("versions", &self.versions);
        }
        d.finish()
    }
}

/// As derived, with `reviews` shown only when there are some.
impl fmt::Debug for Supersession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Supersession");
        d.field("episode", &self.episode)
            .field("prior", &self.prior)
            .field("entity", &self.entity)
            .field("t_valid", &self.t_valid)
            .field("t_invalid", &self.t_invalid)
            .field("ingested_at", &self.ingested_at)
            .field("expired_at", &self.expired_at)
            .field("provenance", &self.provenance);
        if !self.reviews.is_empty() {
            d.field("reviews", &self.reviews);
        }
        d.finish()
    }
}
