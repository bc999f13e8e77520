//! Versions along knowledge time. A correction recorded at K2 ends the knowledge interval of
//! the version it replaces and starts a new one; the first version of a record is the record
//! as written. A read as of K takes the latest version whose `known_from` is at or before K,
//! so as of any K before the first correction a record reads exactly as it was written.

use serde::{Deserialize, Serialize};

use super::{FactEdge, MemoryEpisode, Supersession, Timestamp};

/// A fact's valid interval and closing as recorded from `known_from` on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FactVersion {
    pub known_from: Timestamp,
    pub t_valid: Timestamp,
    pub t_invalid: Option<Timestamp>,
    pub expired_at: Option<Timestamp>,
    pub superseded_by: Option<String>,
}

/// An episode's text as recorded from `known_from` on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpisodeVersion {
    pub known_from: Timestamp,
    pub summary_nl: String,
    pub resolution_nl: String,
}

/// A reviewer's verdict on a supersession.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Confirmed,
    Retracted,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Confirmed => "confirmed",
            Verdict::Retracted => "retracted",
        }
    }
}

/// A verdict, who gave it, why, and when it was recorded: a supersession's version from
/// `recorded_at` on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Review {
    pub verdict: Verdict,
    pub recorded_at: Timestamp,
    pub by: String,
    pub reason: String,
}

/// The latest of `versions` (in knowledge-time order) known at `known_at`.
fn latest_known<T>(versions: &[T], known_at: Timestamp, from: fn(&T) -> Timestamp) -> Option<&T> {
    versions.iter().rev().find(|v| from(v) <= known_at)
}

impl FactEdge {
    /// The fact as known at `known_at`: as written, or as its latest correction known then
    /// left it. The result carries no versions.
    pub fn known_at(&self, known_at: Timestamp) -> std::borrow::Cow<'_, FactEdge> {
        match latest_known(&self.versions, known_at, |v| v.known_from) {
            None if self.versions.is_empty() => std::borrow::Cow::Borrowed(self),
            None => std::borrow::Cow::Owned(FactEdge {
                versions: Vec::new(),
                ..self.clone()
            }),
            Some(v) => std::borrow::Cow::Owned(FactEdge {
                t_valid: v.t_valid,
                t_invalid: v.t_invalid,
                expired_at: v.expired_at,
                superseded_by: v.superseded_by.clone(),
                versions: Vec::new(),
                ..self.clone()
            }),
        }
    }

    /// The latest version of the fact, the one a new correction replaces.
    pub fn current(&self) -> FactVersion {
        self.versions.last().cloned().unwrap_or(FactVersion {
            known_from: self.ingested_at,
            t_valid: self.t_valid,
            t_invalid: self.t_invalid,
            expired_at: self.expired_at,
            superseded_by: self.superseded_by.clone(),
        })
    }
}

/// Each fact as known at `known_at`.
pub fn facts_known_at(facts: &[FactEdge], known_at: Timestamp) -> Vec<FactEdge> {
    facts
        .iter()
        .map(|f| f.known_at(known_at).into_owned())
        .collect()
}

impl MemoryEpisode {
    /// The episode as known at `known_at` (its text as corrected by then); no versions.
    pub fn known_at(&self, known_at: Timestamp) -> MemoryEpisode {
        let mut out = MemoryEpisode {
            versions: Vec::new(),
            ..self.clone()
        };
        if let Some(v) = latest_known(&self.versions, known_at, |v| v.known_from) {
            out.summary_nl = v.summary_nl.clone();
            out.resolution_nl = v.resolution_nl.clone();
        }
        out
    }

    /// Whether a correction known at `known_at` changed the episode's text.
    pub fn corrected_at(&self, known_at: Timestamp) -> bool {
        latest_known(&self.versions, known_at, |v| v.known_from).is_some()
    }

    /// The latest version of the text, the one a new correction replaces.
    pub fn current(&self) -> EpisodeVersion {
        self.versions.last().cloned().unwrap_or(EpisodeVersion {
            known_from: self.ingested_at,
            summary_nl: self.summary_nl.clone(),
            resolution_nl: self.resolution_nl.clone(),
        })
    }
}

impl Supersession {
    /// The latest review recorded by `known_at`.
    pub fn review_at(&self, known_at: Timestamp) -> Option<&Review> {
        latest_known(&self.reviews, known_at, |r| r.recorded_at)
    }

    /// Whether the supersession stands at `known_at`: known, and not retracted by then.
    pub fn stands_at(&self, known_at: Timestamp) -> bool {
        self.ingested_at <= known_at
            && self
                .review_at(known_at)
                .is_none_or(|r| r.verdict != Verdict::Retracted)
    }

    /// When the supersession's latest version began.
    pub fn latest_known_from(&self) -> Timestamp {
        self.reviews
            .last()
            .map_or(self.ingested_at, |r| r.recorded_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EntityKey, Provenance, Relation};

    fn ts(s: &str) -> Timestamp {
        Timestamp::parse(s).unwrap()
    }

    #[test]
    fn a_fact_reads_as_written_before_its_first_correction() {
        let closed = FactEdge {
            episode: "A".into(),
            relation: Relation::ResolvedBy,
            entity: EntityKey::new("service", "x").unwrap(),
            t_valid: ts("2026-01-01T00:00:00Z"),
            t_invalid: Some(ts("2026-02-01T00:00:00Z")),
            ingested_at: ts("2026-01-02T00:00:00Z"),
            expired_at: Some(ts("2026-02-02T00:00:00Z")),
            superseded_by: Some("B".into()),
            provenance: Provenance {
                source: "s".into(),
                status: "resolved".into(),
                confidence_score: 1.0,
            },
            versions: vec![FactVersion {
                known_from: ts("2026-03-01T00:00:00Z"),
                t_valid: ts("2026-01-01T00:00:00Z"),
                t_invalid: None,
                expired_at: None,
                superseded_by: None,
            }],
        };
        let before = closed.known_at(ts("2026-02-28T23:59:59.999Z"));
        assert_eq!(before.t_invalid, closed.t_invalid);
        assert_eq!(before.superseded_by.as_deref(), Some("B"));
        assert!(before.versions.is_empty());
        let after = closed.known_at(ts("2026-03-01T00:00:00Z"));
        assert_eq!(after.t_invalid, None);
        assert_eq!(after.superseded_by, None);
        assert_eq!(closed.current().known_from, ts("2026-03-01T00:00:00Z"));
    }
}
