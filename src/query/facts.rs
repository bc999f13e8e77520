use serde::Serialize;

use super::{QueryError, known_episode};
use crate::model::{AsOf, FactEdge, FactState, Timestamp};
use crate::store::MemoryStore;

/// A fact edge as it was known at K, with its state at V.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FactView {
    pub relation: String,
    pub entity_type: String,
    pub entity_ref: String,
    pub t_valid: Timestamp,
    pub t_invalid: Option<Timestamp>,
    pub ingested_at: Timestamp,
    pub expired_at: Option<Timestamp>,
    pub state: FactState,
    pub superseded_by: Option<String>,
    pub source: String,
    pub status: String,
    pub confidence_score: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FactsReport {
    pub episode: String,
    pub valid_at: Timestamp,
    pub known_at: Timestamp,
    pub facts: Vec<FactView>,
}

impl FactView {
    /// The edge as known at `as_of.known_at`: an invalidation recorded later is not shown.
    pub fn of(edge: &FactEdge, as_of: &AsOf) -> Self {
        let edge = &*edge.known_at(as_of.known_at);
        let end = as_of.known_end(edge.t_invalid, edge.expired_at);
        FactView {
            relation: edge.relation.as_str().to_string(),
            entity_type: edge.entity.entity_type.clone(),
            entity_ref: edge.entity.entity_ref.clone(),
            t_valid: edge.t_valid,
            t_invalid: end,
            ingested_at: edge.ingested_at,
            expired_at: end.and(edge.expired_at),
            state: as_of.fact_state(edge),
            superseded_by: end.and(edge.superseded_by.clone()),
            source: edge.provenance.source.clone(),
            status: edge.provenance.status.clone(),
            confidence_score: edge.provenance.confidence_score,
        }
    }
}

/// The episode's fact edges known at K, each with its state at V.
pub fn facts_as_of(
    store: &dyn MemoryStore,
    fingerprint: &str,
    as_of: AsOf,
) -> Result<FactsReport, QueryError> {
    known_episode(store, fingerprint, &as_of)?;
    let facts = store
        .facts(fingerprint)?
        .iter()
        .filter(|f| as_of.knows(f.ingested_at))
        .map(|f| FactView::of(f, &as_of))
        .filter(|v| v.state != FactState::NotYetKnown)
        .collect();
    Ok(FactsReport {
        episode: fingerprint.to_string(),
        valid_at: as_of.valid_at,
        known_at: as_of.known_at,
        facts,
    })
}
