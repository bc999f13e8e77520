use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::confidence::Signals;
use crate::model::{AsOf, EntityKey};

/// The three independent recall legs.
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
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Leg {
    Semantic,
    Bm25,
    Graph,
}

impl Leg {
    pub const ALL: [Leg; 3] = [Leg::Semantic, Leg::Bm25, Leg::Graph];

    pub fn as_str(self) -> &'static str {
        match self {
            Leg::Semantic => "semantic",
            Leg::Bm25 => "bm25",
            Leg::Graph => "graph",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Leg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A leg, leg set, fusion policy or weight that does not parse, and what was expected.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ChoiceError {
    #[error("unknown leg {0:?}; expected semantic, bm25 or graph")]
    UnknownLeg(String),
    #[error("expected at least one of semantic, bm25, graph")]
    NoLeg,
    #[error("unknown fusion {0:?}; expected rrf, seed, weighted or adaptive")]
    UnknownFusion(String),
    #[error("{0:?}: expected LEG=WEIGHT, e.g. bm25=0.5")]
    WeightSyntax(String),
    #[error("{0:?}: the weight is not a number")]
    WeightNotANumber(String),
    #[error("weight of the {leg} leg is {weight}; expected a finite number ≥ 0")]
    WeightOutOfRange { leg: Leg, weight: f64 },
    #[error("every leg weight is 0; expected at least one above 0")]
    AllWeightsZero,
}

impl FromStr for Leg {
    type Err = ChoiceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "semantic" => Ok(Leg::Semantic),
            "bm25" => Ok(Leg::Bm25),
            "graph" => Ok(Leg::Graph),
            other => Err(ChoiceError::UnknownLeg(other.to_string())),
        }
    }
}

/// Which legs run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LegSet([bool; 3]);

impl LegSet {
    pub const ALL: LegSet = LegSet([true; 3]);

    pub fn of(legs: &[Leg]) -> Self {
        let mut set = [false; 3];
        for l in legs {
            set[l.index()] = true;
        }
        LegSet(set)
    }

    pub fn contains(&self, leg: Leg) -> bool {
        self.0[leg.index()]
    }

    /// The set with `leg` switched on or off.
    pub fn with(mut self, leg: Leg, on: bool) -> Self {
        self.0[leg.index()] = on;
        self
    }

    pub fn legs(&self) -> Vec<Leg> {
        Leg::ALL.into_iter().filter(|l| self.contains(*l)).collect()
    }

    /// Every non-empty combination, singles first: for the evaluation.
    pub fn combinations() -> Vec<LegSet> {
        let mut all: Vec<LegSet> = (1u8..8)
            .map(|bits| LegSet([bits & 1 != 0, bits & 2 != 0, bits & 4 != 0]))
            .collect();
        all.sort_by_key(|s| (s.legs().len(), s.legs()));
        all
    }

    pub fn name(&self) -> String {
        self.legs()
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join("+")
    }
}

impl FromStr for LegSet {
    type Err = ChoiceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let legs = s
            .split([',', '+'])
            .filter(|p| !p.trim().is_empty())
            .map(Leg::from_str)
            .collect::<Result<Vec<_>, _>>()?;
        if legs.is_empty() {
            return Err(ChoiceError::NoLeg);
        }
        Ok(LegSet::of(&legs))
    }
}

/// What every leg is asked.
#[derive(Clone, Debug)]
pub struct LegQuery {
    pub text: String,
    pub entities: Vec<EntityKey>,
    pub as_of: AsOf,
    pub limit: usize,
    /// When the engine stops waiting: a leg still working then stops at its next check
    /// instead of running on unheard. `None`: no deadline.
    pub deadline: Option<std::time::Instant>,
}

impl LegQuery {
    /// An error once the deadline has passed, for a leg to return at a check point.
    pub fn check_deadline(&self) -> Result<(), LegError> {
        match self.deadline {
            Some(d) if std::time::Instant::now() >= d => Err(LegError::Deadline),
            _ => Ok(()),
        }
    }
}

/// A leg's ranked fingerprints, best first.
#[derive(Clone, Debug, Default)]
pub struct LegHits {
    pub fingerprints: Vec<String>,
    /// Each fingerprint's score on the leg's own scale (cosine, BM25, shared seeds), in the
    /// same order.
    pub scores: Vec<f64>,
    /// What the leg knows of the query beyond its scores, for its confidence.
    pub signals: Signals,
    /// Time spent embedding the query, for the semantic leg.
    pub embed_ms: Option<f64>,
    /// What the leg worked from, e.g. the graph seeds.
    pub note: Option<String>,
    /// Why its answer is short of the store, when it is: its index lags the store (`behind
    /// N episodes`) or is being rebuilt. The leg still answers from what it holds.
    pub lag: Option<String>,
}

/// How many episodes the store held when the indexes last caught up: what an index-backed leg
/// compares its index with, without asking the store anything on the recall's path (a leg
/// stays independent of a store server that is down or paused).
#[derive(Debug, Default)]
pub struct StoreEpisodes(std::sync::atomic::AtomicU64);

impl StoreEpisodes {
    pub fn set(&self, episodes: u64) {
        self.0.store(episodes, std::sync::atomic::Ordering::Relaxed);
    }

    /// What an index holding `held` episodes says of itself: `behind N episodes`, or nothing.
    pub fn lag(&self, held: u64) -> Option<String> {
        lag_of(held, self.0.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// What an index-backed leg says when its index holds fewer episodes than the store.
fn lag_of(held: u64, total: u64) -> Option<String> {
    (held < total).then(|| {
        format!(
            "behind {} episodes: its index holds {held} of the store's {total} \
             (`strata index` catches it up)",
            total - held
        )
    })
}

/// A leg's failure: it contributes nothing and says why.
#[derive(Debug, thiserror::Error)]
pub enum LegError {
    #[error("{0}")]
    Failed(String),
    /// It stopped at the engine's deadline: the engine reports it as timed out.
    #[error("stopped at the deadline: the engine no longer waits for it")]
    Deadline,
}

impl LegError {
    pub fn from_display(e: impl fmt::Display) -> Self {
        LegError::Failed(e.to_string())
    }
}

/// One recall leg. Implementations read memory; they have no way to generate text.
pub trait RecallLeg: Send + Sync {
    fn leg(&self) -> Leg;
    fn search(&self, query: &LegQuery) -> Result<LegHits, LegError>;

    /// Brings what the leg keeps of the store (an index, a dictionary, cached links) up to
    /// it, off the recall deadline: a search uses what the leg kept as of its last catch-up
    /// and never waits for one. Legs that keep nothing have nothing to do.
    fn catch_up(&self) -> Result<(), LegError> {
        Ok(())
    }

    /// Reads ahead what the first searches would otherwise read (the graph leg's hub links),
    /// for a process that will answer many of them.
    fn warm(&self) -> Result<(), LegError> {
        Ok(())
    }
}
