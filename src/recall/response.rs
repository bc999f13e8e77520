use serde::Serialize;

use super::confidence::Confidence;
use super::fate::{Resolver, StalePolicy, Successor, Superseded};
use super::fusion::{FusionPolicy, LegWeights, OrderKey, PerLeg};
use super::leg::Leg;
use super::mode::RecallMode;
use crate::model::{EntityKey, Timestamp};

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum LegStatus {
    Ok,
    /// It answered from an index that lags the store (or is being rebuilt): its results
    /// count, and `error` says how far behind it is.
    Behind,
    Failed,
    Timeout,
    Disabled,
}

impl LegStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            LegStatus::Ok => "ok",
            LegStatus::Behind => "behind",
            LegStatus::Failed => "failed",
            LegStatus::Timeout => "timeout",
            LegStatus::Disabled => "disabled",
        }
    }

    /// Whether the leg's results were fused.
    pub fn answered(self) -> bool {
        matches!(self, LegStatus::Ok | LegStatus::Behind)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LegReport {
    pub status: LegStatus,
    pub hits: usize,
    pub latency_ms: f64,
    pub error: Option<String>,
    /// Query embedding time (semantic leg), included in `latency_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How sure the leg was of its ranking for this query, and from what evidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<Confidence>,
    /// The weight its reciprocal ranks counted with under the policy (0: it abstained).
    pub weight: f64,
}

impl LegReport {
    pub fn disabled() -> Self {
        LegReport {
            status: LegStatus::Disabled,
            hits: 0,
            latency_ms: 0.0,
            error: None,
            embed_ms: None,
            note: None,
            confidence: None,
            weight: 0.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LegReports {
    pub semantic: LegReport,
    pub bm25: LegReport,
    pub graph: LegReport,
}

impl LegReports {
    pub fn get(&self, leg: Leg) -> &LegReport {
        match leg {
            Leg::Semantic => &self.semantic,
            Leg::Bm25 => &self.bm25,
            Leg::Graph => &self.graph,
        }
    }

    pub fn get_mut(&mut self, leg: Leg) -> &mut LegReport {
        match leg {
            Leg::Semantic => &mut self.semantic,
            Leg::Bm25 => &mut self.bm25,
            Leg::Graph => &mut self.graph,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RecallResult {
    pub position: usize,
    pub fingerprint: String,
    pub legs_hit: usize,
    pub rrf_score: f64,
    pub concluded_at: Timestamp,
    pub summary: String,
    /// How the incident was resolved.
    pub resolution: String,
    /// The entities that resolved it, each with its state at (V, K).
    pub resolved_by: Vec<Resolver>,
    /// The later episodes that superseded its facts, as known at K; absent under the `keep`
    /// stale policy, which does not look.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<Vec<Superseded>>,
    /// When superseded: the episode at the end of the chain, whose fix holds now (ranked or
    /// not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current_successor: Option<Successor>,
    /// Placed here by the `follow` stale policy, as the current successor of this episode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follows: Option<String>,
    pub per_leg: PerLeg,
    /// The ordering key that placed this result below the one before it.
    pub decided_by: Option<OrderKey>,
}

impl RecallResult {
    /// A later episode superseded one of its facts, as known at K.
    pub fn is_superseded(&self) -> bool {
        self.superseded_by.as_ref().is_some_and(|s| !s.is_empty())
    }
}

/// A skill suggested because results share its trigger entities; most matches first.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SkillSuggestion {
    pub name: String,
    pub version: u32,
    pub steps: usize,
    pub applied: u32,
    pub succeeded: u32,
    /// The trigger entities the results share, as `TYPE:REF`.
    pub shared: Vec<String>,
    /// Positions (1-based) of the results that share them.
    pub results: Vec<usize>,
    /// Shared trigger entities summed over those results: the suggestion's rank.
    pub matches: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RecallResponse {
    pub query: String,
    pub entities: Vec<String>,
    pub valid_at: Timestamp,
    pub known_at: Timestamp,
    pub k: usize,
    pub fusion: FusionPolicy,
    pub stale: StalePolicy,
    /// The legs' configured weights (under `weighted`; `adaptive` scales them by each leg's
    /// confidence: each leg's report says the weight it counted with).
    pub weights: LegWeights,
    pub embedder: String,
    pub legs: LegReports,
    pub results: Vec<RecallResult>,
    /// Skills whose trigger entities the results share.
    pub skills: Vec<SkillSuggestion>,
    /// The top results in a few plain lines for an agent: when each concluded, what it was,
    /// what fixed it, and what superseded that fix and holds now.
    pub brief: String,
    /// Wall time of the whole recall, legs in parallel.
    pub latency_ms: f64,
    /// `shadow`: the legs ran and the recall was recorded, but its results were withheld.
    pub mode: RecallMode,
    /// How many results a shadow recall held back (0 when active).
    pub withheld: usize,
}

impl RecallResponse {
    /// The answer a shadow recall hands back: the legs' status, hit counts and latency, and
    /// how many results it held back, with nothing drawn from memory (no results, skills,
    /// brief or graph seeds).
    pub fn withhold(mut self) -> Self {
        self.mode = RecallMode::Shadow;
        self.withheld = self.results.len();
        self.results.clear();
        self.skills.clear();
        self.brief = format!(
            "shadow mode: {} results withheld (recall is being watched before it is handed out)",
            self.withheld
        );
        for leg in Leg::ALL {
            self.legs.get_mut(leg).note = None;
        }
        self
    }

    /// This answer as recall in `mode` hands it out: withheld in shadow mode.
    pub fn handed_out(self, mode: RecallMode) -> Self {
        match mode {
            RecallMode::Active => self,
            RecallMode::Shadow => self.withhold(),
        }
    }

    /// The answer when recall itself cannot run (no store): every asked leg failed, saying why.
    pub fn unavailable(request: &super::engine::RecallRequest, why: &str) -> Self {
        let report = |leg: super::leg::Leg| {
            if request.legs.contains(leg) {
                LegReport {
                    status: LegStatus::Failed,
                    error: Some(why.to_string()),
                    ..LegReport::disabled()
                }
            } else {
                LegReport::disabled()
            }
        };
        RecallResponse {
            query: request.text.clone(),
            entities: request.entities.iter().map(EntityKey::flag_form).collect(),
            valid_at: request.as_of.valid_at,
            known_at: request.as_of.known_at,
            k: request.k,
            fusion: request.fusion,
            stale: request.stale,
            weights: LegWeights::default(),
            embedder: String::new(),
            legs: LegReports {
                semantic: report(super::leg::Leg::Semantic),
                bm25: report(super::leg::Leg::Bm25),
                graph: report(super::leg::Leg::Graph),
            },
            results: Vec::new(),
            skills: Vec::new(),
            brief: String::new(),
            latency_ms: 0.0,
            mode: RecallMode::default(),
            withheld: 0,
        }
    }
}
