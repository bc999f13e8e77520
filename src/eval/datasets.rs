use std::collections::BTreeSet;

use crate::demo::LabelledQuery;
use crate::model::{Relation, Timestamp};
use crate::store::WriteBatch;

pub const POSTMORTEM_RULE: &str = "a past postmortem is related to a query postmortem when it \
    concluded (and was known) before the query incident began, shares at least one root-cause \
    label other than 'unknown', and shares at least one service; the query is the incident's \
    title and summary with its services as entities, at its start time; postmortems with no \
    related past one are not queries";

/// Derives the postmortem labelled set from an imported batch (see [`POSTMORTEM_RULE`]).
pub fn postmortem_labels(batch: &WriteBatch) -> Vec<LabelledQuery> {
    struct Pm<'a> {
        fp: &'a str,
        summary: &'a str,
        start: Timestamp,
        known: Timestamp,
        concluded: Timestamp,
        causes: BTreeSet<&'a str>,
        services: BTreeSet<&'a str>,
    }
    let pms: Vec<Pm<'_>> = batch
        .items
        .iter()
        .map(|item| {
            let d = &item.draft;
            let refs = |t: &str| -> BTreeSet<&str> {
                d.facts
                    .iter()
                    .filter(|f| f.relation == Relation::Mentions && f.entity.entity_type == t)
                    .map(|f| f.entity.entity_ref.as_str())
                    .collect()
            };
            Pm {
                fp: &d.incident_fingerprint,
                summary: &d.summary_nl,
                start: d.t_valid,
                known: item.ingested_at.fixed().unwrap_or(d.concluded_at),
                concluded: d.concluded_at,
                causes: refs("root_cause")
                    .into_iter()
                    .filter(|c| !c.starts_with("unknown"))
                    .collect(),
                services: refs("service"),
            }
        })
        .collect();
    let mut labels = Vec::new();
    for q in &pms {
        let mut related: Vec<&Pm<'_>> = pms
            .iter()
            .filter(|p| {
                p.fp != q.fp
                    && p.concluded < q.start
                    && p.known <= q.start
                    && !p.causes.is_disjoint(&q.causes)
                    && !p.services.is_disjoint(&q.services)
            })
            .collect();
        if related.is_empty() {
            continue;
        }
        related.sort_by(|a, b| b.concluded.cmp(&a.concluded).then_with(|| a.fp.cmp(b.fp)));
        let Ok(at) = q.start.to_datetime() else {
            continue;
        };
        labels.push(LabelledQuery {
            id: q.fp.to_string(),
            fault_class: q.causes.iter().next().map_or("", |c| c).to_string(),
            query: q.summary.to_string(),
            entities: q.services.iter().map(|s| format!("service:{s}")).collect(),
            at,
            expected: related.iter().map(|p| p.fp.to_string()).collect(),
        });
    }
    labels.sort_by(|a, b| a.id.cmp(&b.id));
    labels
}
