//! One recall as the counters see it: each leg's outcome, hit count and latency, the fused
//! answer's, and whether it was warm. Built from the answer's numbers alone.

use serde::Serialize;

use crate::recall::{Leg, LegStatus, RecallMode, RecallResponse};

/// What a counter counts: one leg, or the fused answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Lane {
    Semantic,
    Bm25,
    Graph,
    Fused,
}

impl Lane {
    pub const ALL: [Lane; 4] = [Lane::Semantic, Lane::Bm25, Lane::Graph, Lane::Fused];

    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Semantic => "semantic",
            Lane::Bm25 => "bm25",
            Lane::Graph => "graph",
            Lane::Fused => "fused",
        }
    }

    pub fn of(leg: Leg) -> Lane {
        match leg {
            Leg::Semantic => Lane::Semantic,
            Leg::Bm25 => Lane::Bm25,
            Leg::Graph => Lane::Graph,
        }
    }
}

/// How one query went on one lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It answered with at least one hit.
    Hit,
    /// It answered with none.
    Empty,
    Timeout,
    Failed,
}

impl Outcome {
    pub const ALL: [Outcome; 4] = [
        Outcome::Hit,
        Outcome::Empty,
        Outcome::Timeout,
        Outcome::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Hit => "hit",
            Outcome::Empty => "empty",
            Outcome::Timeout => "timeout",
            Outcome::Failed => "failed",
        }
    }

    fn of(status: LegStatus, hits: usize) -> Option<Outcome> {
        match status {
            LegStatus::Ok | LegStatus::Behind if hits > 0 => Some(Outcome::Hit),
            LegStatus::Ok | LegStatus::Behind => Some(Outcome::Empty),
            LegStatus::Timeout => Some(Outcome::Timeout),
            LegStatus::Failed => Some(Outcome::Failed),
            LegStatus::Disabled => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LegObservation {
    pub outcome: Outcome,
    pub hits: usize,
    pub latency_ms: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    pub mode: RecallMode,
    /// Each leg that ran, by [`Leg::index`]; `None` for a leg switched off.
    pub legs: [Option<LegObservation>; 3],
    /// The fused answer: results (before any were withheld) and the whole recall's time.
    pub fused: LegObservation,
    /// Its fused top k held an episode known before the query's knowledge time.
    pub warm: bool,
    /// When it was answered (wall clock, ms since the epoch).
    pub at_ms: i64,
}

impl Observation {
    /// `response` as answered, before a shadow recall withheld its results.
    pub fn of(response: &RecallResponse, warm: bool) -> Observation {
        let leg = |leg: Leg| {
            let report = response.legs.get(leg);
            Outcome::of(report.status, report.hits).map(|outcome| LegObservation {
                outcome,
                hits: report.hits,
                latency_ms: report.latency_ms,
            })
        };
        let results = response.results.len();
        Observation {
            mode: response.mode,
            legs: Leg::ALL.map(leg),
            fused: LegObservation {
                outcome: if results > 0 {
                    Outcome::Hit
                } else {
                    Outcome::Empty
                },
                hits: results,
                latency_ms: response.latency_ms,
            },
            warm,
            at_ms: chrono::Utc::now().timestamp_millis(),
        }
    }

    /// Each lane that ran and how it went.
    pub fn lanes(&self) -> impl Iterator<Item = (Lane, LegObservation)> + '_ {
        Leg::ALL
            .into_iter()
            .filter_map(|leg| self.legs[leg.index()].map(|o| (Lane::of(leg), o)))
            .chain(std::iter::once((Lane::Fused, self.fused)))
    }
}
