//! The reviewer's views: every supersession with its evidence and verdict ([`review`]), and
//! what memory learned between two knowledge times ([`changes`]).

use std::collections::HashMap;

use serde::Serialize;

use super::QueryError;
use crate::correct::{CorrectionRecord, WriteOrigin};
use crate::model::{MemoryEpisode, Review, Supersession, Timestamp};
use crate::store::MemoryStore;

const PAGE: usize = 1024;

/// One supersession with what a reviewer needs to judge it.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ReviewRow {
    pub episode: String,
    pub prior: String,
    pub entity_type: String,
    pub entity_ref: String,
    /// Valid time the prior's fact was closed at.
    pub closed_at: Timestamp,
    /// Knowledge time the supersession was recorded at.
    pub recorded_at: Timestamp,
    /// The superseding episode's summary, and the prior's, as known at K.
    pub episode_summary: String,
    pub prior_summary: String,
    /// Who wrote the supersession (the superseding episode's provenance).
    pub source: String,
    pub status: String,
    pub confidence_score: f64,
    /// `unreviewed`, `confirmed` or `retracted`, as known at K.
    pub verdict: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
}

/// Every episode and every supersession known, read page by page from the ingest log.
fn walk_log(
    store: &dyn MemoryStore,
    mut each: impl FnMut(&MemoryEpisode, Vec<Supersession>) -> Result<(), QueryError>,
) -> Result<(), QueryError> {
    let mut cursor = 0;
    loop {
        let page = store.episodes_since(cursor, PAGE)?;
        if page.last <= cursor {
            return Ok(());
        }
        for (_, e) in &page.episodes {
            each(e, store.supersedes(&e.incident_fingerprint)?)?;
        }
        cursor = page.last;
    }
}

/// Supersessions known at `known_at` in knowledge-time order (then by key), each with both
/// episodes' summaries and its verdict; `unreviewed`: only those without one.
pub fn review(
    store: &dyn MemoryStore,
    known_at: Timestamp,
    unreviewed: bool,
) -> Result<Vec<ReviewRow>, QueryError> {
    let mut lineage = Vec::new();
    let mut summaries: HashMap<String, String> = HashMap::new();
    walk_log(store, |e, edges| {
        if e.ingested_at <= known_at {
            let e = e.known_at(known_at);
            summaries.insert(e.incident_fingerprint.clone(), e.summary_nl.clone());
            lineage.extend(
                edges
                    .into_iter()
                    .filter(|s| s.ingested_at <= known_at)
                    .map(|s| (s, e.provenance.clone())),
            );
        }
        Ok(())
    })?;
    let mut rows: Vec<ReviewRow> = lineage
        .into_iter()
        .filter_map(|(s, provenance)| {
            let review = s.review_at(known_at).cloned();
            if unreviewed && review.is_some() {
                return None;
            }
            Some(ReviewRow {
                episode_summary: summaries.get(&s.episode).cloned().unwrap_or_default(),
                prior_summary: summaries.get(&s.prior).cloned().unwrap_or_default(),
                verdict: review
                    .as_ref()
                    .map_or("unreviewed", |r| r.verdict.as_str())
                    .to_string(),
                review,
                closed_at: s.t_valid,
                recorded_at: s.ingested_at,
                entity_type: s.entity.entity_type,
                entity_ref: s.entity.entity_ref,
                episode: s.episode,
                prior: s.prior,
                source: provenance.source,
                status: provenance.status,
                confidence_score: provenance.confidence_score,
            })
        })
        .collect();
    rows.sort_by(|a, b| {
        (
            a.recorded_at,
            &a.episode,
            &a.prior,
            &a.entity_type,
            &a.entity_ref,
        )
            .cmp(&(
                b.recorded_at,
                &b.episode,
                &b.prior,
                &b.entity_type,
                &b.entity_ref,
            ))
    });
    Ok(rows)
}

/// One thing memory learned.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Change {
    /// Knowledge time it was recorded at.
    pub at: Timestamp,
    /// `episode`, `invalidation`, `supersession`, or a correction's kind
    /// (`retract_supersession`, `confirm_supersession`, `correct_episode`, `correct_fact`).
    pub kind: String,
    /// What it is about, in words.
    pub target: String,
    /// Who made the write (`agent`, `human`, `import`), where the store recorded it:
    /// corrections record it; episodes written before it was recorded name their source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<WriteOrigin>,
    /// The episode's provenance source, for episodes, invalidations and supersessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

fn kind_order(kind: &str) -> u8 {
    match kind {
        "episode" => 0,
        "supersession" => 1,
        "invalidation" => 2,
        _ => 3,
    }
}

/// Everything recorded at knowledge times in `since..=until`, in knowledge-time order.
pub fn changes(
    store: &dyn MemoryStore,
    since: Timestamp,
    until: Timestamp,
) -> Result<Vec<Change>, QueryError> {
    let within = |t: Timestamp| since <= t && t <= until;
    let mut out = Vec::new();
    walk_log(store, |e, edges| {
        if within(e.ingested_at) {
            out.push(Change {
                at: e.ingested_at,
                kind: "episode".into(),
                target: format!("episode {:?}", e.incident_fingerprint),
                origin: None,
                source: Some(e.provenance.source.clone()),
                by: None,
                reason: None,
            });
        }
        for s in edges.into_iter().filter(|s| within(s.ingested_at)) {
            out.push(Change {
                at: s.ingested_at,
                kind: "supersession".into(),
                target: format!(
                    "{:?} superseded {:?} about {}",
                    s.episode, s.prior, s.entity
                ),
                origin: None,
                source: Some(s.provenance.source.clone()),
                by: None,
                reason: None,
            });
        }
        if since <= until {
            for f in store.facts(&e.incident_fingerprint)? {
                if let (Some(end), Some(recorded)) = (f.t_invalid, f.expired_at)
                    && within(recorded)
                {
                    out.push(Change {
                        at: recorded,
                        kind: "invalidation".into(),
                        target: format!(
                            "{:?}'s {} fact about {} closed at {end}{}",
                            f.episode,
                            f.relation,
                            f.entity,
                            f.superseded_by
                                .as_ref()
                                .map(|by| format!(" by {by:?}"))
                                .unwrap_or_default()
                        ),
                        origin: None,
                        source: Some(f.provenance.source.clone()),
                        by: None,
                        reason: None,
                    });
                }
            }
        }
        Ok(())
    })?;
    for c in store.corrections()? {
        if within(c.recorded_at) {
            out.push(of_correction(&c));
        }
    }
    out.sort_by(|a, b| {
        (a.at, kind_order(&a.kind), &a.target).cmp(&(b.at, kind_order(&b.kind), &b.target))
    });
    Ok(out)
}

fn of_correction(c: &CorrectionRecord) -> Change {
    Change {
        at: c.recorded_at,
        kind: c.line.correction.kind().to_string(),
        target: c.line.correction.target(),
        origin: Some(c.origin),
        source: None,
        by: Some(c.line.by.clone()),
        reason: Some(c.line.reason.clone()),
    }
}
