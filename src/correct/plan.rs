//! The rules every backend applies to a batch of corrections, and their refusals, in one
//! place: from what the store holds now, the versions the batch writes.

use std::collections::HashMap;

use super::{
    CorrectReport, Correction, CorrectionBatch, CorrectionItem, CorrectionRecord, SupersessionRef,
};
use crate::model::{
    EntityKey, EpisodeVersion, FactEdge, FactVersion, MemoryEpisode, Relation, Review,
    Supersession, Timestamp, Verdict,
};
use crate::store::StoreError;

/// Which fact: an episode's relation to an entity.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FactRef {
    pub episode: String,
    pub relation: Relation,
    pub entity: EntityKey,
}

/// What a plan reads: records with every version they have.
pub trait CorrectionReader {
    fn episode(&self, fingerprint: &str) -> Result<Option<MemoryEpisode>, StoreError>;
    fn facts(&self, fingerprint: &str) -> Result<Vec<FactEdge>, StoreError>;
    fn supersession(&self, s: &SupersessionRef) -> Result<Option<Supersession>, StoreError>;
}

/// What a batch writes, all at `recorded_at`.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub recorded_at: Option<Timestamp>,
    /// The log entries, without their sequence (the store numbers them).
    pub records: Vec<CorrectionRecord>,
    pub episode_versions: Vec<(String, EpisodeVersion)>,
    pub fact_versions: Vec<(FactRef, FactVersion)>,
    pub reviews: Vec<(SupersessionRef, Review)>,
    pub report: CorrectReport,
}

fn refused(item: &CorrectionItem, message: String) -> StoreError {
    StoreError::rejected(&item.origin, item.line.correction.kind(), message)
}

/// Checks every correction of `batch` against the store as `reader` sees it, at knowledge
/// time `at` (after `high_water`, the latest the store has recorded), and returns what to
/// write; the first refusal writes nothing.
pub fn plan(
    reader: &dyn CorrectionReader,
    batch: &CorrectionBatch,
    at: Timestamp,
    high_water: Option<Timestamp>,
) -> Result<Plan, StoreError> {
    let mut p = Plan {
        recorded_at: Some(at),
        ..Plan::default()
    };
    p.report.recorded_at = Some(at);
    if let Some(high) = high_water
        && at < high
    {
        let origin = batch.items.first().map_or("corrections", |i| &i.origin);
        return Err(StoreError::rejected(
            origin,
            "recorded_at",
            format!(
                "a correction is recorded at the current knowledge time; {at} is before {high}, \
                 the latest the store has recorded, and a correction in the past is refused ({})",
                match batch.at {
                    crate::store::KnowledgeTime::At(_) => "correct with a later --now",
                    crate::store::KnowledgeTime::AtCommit =>
                        "this machine's clock is behind the one that wrote it",
                }
            ),
        ));
    }
    // Which line of the batch changed each target already.
    let mut touched: HashMap<String, String> = HashMap::new();
    let mut fact_touched: HashMap<FactRef, String> = HashMap::new();
    for item in &batch.items {
        let c = &item.line.correction;
        let target = c.target();
        if let Some(line) = touched.get(&target) {
            return Err(refused(
                item,
                format!(
                    "{target} is already corrected by {line} of this batch; one correction of a record per batch"
                ),
            ));
        }
        touched.insert(target.clone(), item.origin.clone());
        let review = |verdict| Review {
            verdict,
            recorded_at: at,
            by: item.line.by.clone(),
            reason: item.line.reason.clone(),
        };
        match c {
            Correction::RetractSupersession(s) | Correction::ConfirmSupersession(s) => {
                let verdict = if matches!(c, Correction::RetractSupersession(_)) {
                    Verdict::Retracted
                } else {
                    Verdict::Confirmed
                };
                let stored = reader.supersession(s)?.ok_or_else(|| {
                    refused(
                        item,
                        format!("no supersession {s} is in the store: expected one that `strata lineage {}` lists", s.episode),
                    )
                })?;
                if let Some(last) = stored.reviews.last()
                    && last.verdict == verdict
                {
                    return Err(refused(
                        item,
                        format!(
                            "supersession {s} was already {} by {} at {} ({}); nothing to change",
                            verdict.as_str(),
                            last.by,
                            last.recorded_at,
                            last.reason
                        ),
                    ));
                }
                after(item, &target, stored.latest_known_from(), at)?;
                // A retraction reopens the prior's facts this supersession closed; a
                // confirmation after a retraction closes them again as they were.
                let reinstating = stored
                    .reviews
                    .last()
                    .is_some_and(|r| r.verdict == Verdict::Retracted);
                for fact in reader.facts(&s.prior)? {
                    if fact.entity != s.entity()
                        || fact.superseded_by.as_deref() != Some(&s.episode)
                    {
                        continue;
                    }
                    let current = fact.current();
                    let next = match verdict {
                        Verdict::Retracted if current.t_invalid.is_some() => FactVersion {
                            known_from: at,
                            t_valid: current.t_valid,
                            t_invalid: None,
                            expired_at: None,
                            superseded_by: None,
                        },
                        Verdict::Confirmed if reinstating && current.t_invalid.is_none() => {
                            FactVersion {
                                known_from: at,
                                t_valid: current.t_valid,
                                t_invalid: fact.t_invalid,
                                expired_at: Some(at),
                                superseded_by: fact.superseded_by.clone(),
                            }
                        }
                        _ => continue,
                    };
                    let key = FactRef {
                        episode: fact.episode.clone(),
                        relation: fact.relation,
                        entity: fact.entity.clone(),
                    };
                    after(item, &target, current.known_from, at)?;
                    fact_touched.insert(key.clone(), item.origin.clone());
                    match verdict {
                        Verdict::Retracted => p.report.facts_reopened += 1,
                        Verdict::Confirmed => p.report.facts_reclosed += 1,
                    }
                    p.fact_versions.push((key, next));
                }
                match verdict {
                    Verdict::Retracted => p.report.retracted += 1,
                    Verdict::Confirmed => p.report.confirmed += 1,
                }
                p.reviews.push((s.clone(), review(verdict)));
            }
            Correction::CorrectEpisode(e) => {
                let stored = reader.episode(&e.incident_fingerprint)?.ok_or_else(|| {
                    refused(
                        item,
                        format!("no episode {:?} is in the store", e.incident_fingerprint),
                    )
                })?;
                let current = stored.current();
                after(item, &target, current.known_from, at)?;
                let next = EpisodeVersion {
                    known_from: at,
                    summary_nl: e.summary_nl.clone().unwrap_or(current.summary_nl.clone()),
                    resolution_nl: e
                        .resolution_nl
                        .clone()
                        .unwrap_or(current.resolution_nl.clone()),
                };
                if next.summary_nl == current.summary_nl
                    && next.resolution_nl == current.resolution_nl
                {
                    return Err(refused(
                        item,
                        format!(
                            "episode {:?} already says that; nothing to correct",
                            e.incident_fingerprint
                        ),
                    ));
                }
                p.report.episodes_corrected += 1;
                p.episode_versions
                    .push((e.incident_fingerprint.clone(), next));
            }
            Correction::CorrectFact(f) => {
                let entity = EntityKey {
                    entity_type: f.entity_type.clone(),
                    entity_ref: f.entity_ref.clone(),
                };
                let key = FactRef {
                    episode: f.episode.clone(),
                    relation: f.relation,
                    entity: entity.clone(),
                };
                if let Some(line) = fact_touched.get(&key) {
                    return Err(refused(
                        item,
                        format!(
                            "{target} is already changed by {line} of this batch; one change of a fact per batch"
                        ),
                    ));
                }
                let stored = reader
                    .facts(&f.episode)?
                    .into_iter()
                    .find(|x| x.relation == f.relation && x.entity == entity)
                    .ok_or_else(|| refused(item, format!("no fact {target} is in the store")))?;
                let current = stored.current();
                after(item, &target, current.known_from, at)?;
                let mut next = FactVersion {
                    known_from: at,
                    ..current.clone()
                };
                if let Some(t) = f.t_valid {
                    next.t_valid = t;
                }
                match f.t_invalid {
                    Some(Some(t)) if current.t_invalid != Some(t) => {
                        next.t_invalid = Some(t);
                        next.expired_at = Some(at);
                    }
                    Some(None) => {
                        next.t_invalid = None;
                        next.expired_at = None;
                        next.superseded_by = None;
                    }
                    _ => {}
                }
                if let Some(end) = next.t_invalid
                    && end <= next.t_valid
                {
                    return Err(StoreError::rejected(
                        &item.origin,
                        "correct_fact.t_invalid",
                        format!(
                            "{end} is not after t_valid {}: expected a valid interval that ends after it begins",
                            next.t_valid
                        ),
                    ));
                }
                if (next.t_valid, next.t_invalid) == (current.t_valid, current.t_invalid) {
                    return Err(refused(
                        item,
                        format!("{target} already has that valid interval; nothing to correct"),
                    ));
                }
                fact_touched.insert(key.clone(), item.origin.clone());
                p.report.facts_corrected += 1;
                p.fact_versions.push((key, next));
            }
        }
        p.report.corrections += 1;
        p.records.push(CorrectionRecord {
            sequence: 0,
            recorded_at: at,
            origin: batch.origin,
            line: item.line.clone(),
        });
    }
    Ok(p)
}

/// A new version must begin after the one it replaces.
fn after(
    item: &CorrectionItem,
    target: &str,
    current_from: Timestamp,
    at: Timestamp,
) -> Result<(), StoreError> {
    if at <= current_from {
        return Err(StoreError::rejected(
            &item.origin,
            "recorded_at",
            format!(
                "{target} was last recorded at {current_from}; a correction at {at} would not come \
                 after it (knowledge time only moves forward: correct it with a later --now)"
            ),
        ));
    }
    Ok(())
}
