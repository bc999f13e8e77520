//! The standard legs over the embedded indexes and any [`crate::store::MemoryStore`].

mod bm25;
mod graph;
mod semantic;
mod unavailable;

pub use bm25::Bm25Leg;
pub use graph::GraphLeg;
pub use semantic::SemanticLeg;
pub use unavailable::UnavailableLeg;
