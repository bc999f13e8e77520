//! Recall: given an incident context, the related past incidents and why each ranked where it
//! did. Three independent, fail-open legs (semantic kNN, BM25, graph BFS) fused by RRF.
//!
//! No LLM sits on this path, by construction: the legs see memory through
//! [`crate::store::MemoryStore`], the indexes, and [`crate::embed::Embedder`], whose only
//! operation turns text into a vector. Nothing here can reach a text-generation client.

mod brief;
pub mod confidence;
pub mod dictionary;
mod engine;
pub mod fate;
pub mod fusion;
mod leg;
pub mod legs;
mod mode;
mod open;
mod response;
mod warming;

pub use confidence::{Confidence, Evidence};
pub use engine::{
    DEFAULT_LEG_LIMIT, DEFAULT_TIMEOUT, LegRun, RecallEngine, RecallRequest, Recalled,
};
pub use fate::{Resolver, StalePolicy, Successor, Superseded};
pub use fusion::{FusionPolicy, LegWeights, OrderKey};
pub use leg::{ChoiceError, Leg, LegError, LegHits, LegQuery, LegSet, RecallLeg, StoreEpisodes};
pub use mode::RecallMode;
pub use open::{RecallStack, StackOptions};
pub use response::{
    LegReport, LegReports, LegStatus, RecallResponse, RecallResult, SkillSuggestion,
};
pub use warming::Warming;
