//! Idempotent merge, supersession without deletion, the as-of predicate on both axes, lineage.

mod common;

use common::*;
use serde_json::json;
use strata::model::{AsOf, FactState};
use strata::query::{facts_as_of, lineage};
use strata::store::MemoryStore;

#[test]
fn reingesting_the_same_records_changes_nothing() {
    let (_d, store) = temp_store();
    let records = vec![
        record("INC-1", "2026-01-01T10:00:00Z"),
        record("INC-2", "2026-01-02T10:00:00Z"),
    ];
    let first = ingest_at(&store, &records, "2026-01-03T00:00:00Z").unwrap();
    assert_eq!(first.new_episodes, 2);
    assert_eq!(
        first.new_entities, 3,
        "authelia is shared, two change entities"
    );
    let before = store.stats().unwrap();
    let again = ingest_at(&store, &records, "2026-02-01T00:00:00Z").unwrap();
    assert_eq!(again.new_episodes, 0);
    assert_eq!(again.unchanged_episodes, 2);
    assert_eq!(again.new_facts, 0);
    assert_eq!(store.stats().unwrap(), before);
    let e = store.episode("INC-1").unwrap().unwrap();
    assert_eq!(
        e.ingested_at,
        ts("2026-01-03T00:00:00Z"),
        "first knowledge time is kept"
    );
}

#[test]
fn entities_are_deduplicated_across_episodes() {
    let (_d, store) = temp_store();
    ingest_at(
        &store,
        &[
            record("INC-1", "2026-01-01T10:00:00Z"),
            record("INC-2", "2026-01-05T10:00:00Z"),
        ],
        "2026-01-06T00:00:00Z",
    )
    .unwrap();
    let authelia = "service:authelia".parse().unwrap();
    let facts = store.entity_facts(&authelia).unwrap();
    assert_eq!(facts.len(), 2);
    assert_eq!(store.stats().unwrap().entities, 3);
}

#[test]
fn supersession_closes_the_interval_and_never_deletes() {
    let (_d, store) = temp_store();
    ingest_at(
        &store,
        &[record("INC-1", "2026-01-01T10:00:00Z")],
        "2026-01-01T13:00:00Z",
    )
    .unwrap();
    let before = store.stats().unwrap();
    let report = ingest_at(
        &store,
        &[supersede("INC-2", "2026-02-01T10:00:00Z", "INC-1")],
        "2026-02-01T13:00:00Z",
    )
    .unwrap();
    assert_eq!(report.closed_facts, 1);
    assert_eq!(report.new_supersessions, 1);
    let after = store.stats().unwrap();
    assert!(after.mentions >= before.mentions && after.resolved_by >= before.resolved_by);
    assert_eq!(
        after.mentions + after.resolved_by,
        before.mentions + before.resolved_by + 2
    );
    assert_eq!(after.supersedes, 1);
    assert_eq!(after.invalidated_edges, 1);

    let closed = store
        .facts("INC-1")
        .unwrap()
        .into_iter()
        .find(|f| f.entity.entity_ref == "cfg-INC-1")
        .unwrap();
    assert_eq!(closed.t_invalid, Some(ts("2026-02-01T10:00:00Z")));
    assert_eq!(closed.expired_at, Some(ts("2026-02-01T13:00:00Z")));
    assert_eq!(closed.superseded_by.as_deref(), Some("INC-2"));
    assert!(store.check().unwrap().is_consistent());
}

#[test]
fn as_of_boundaries_on_both_axes() {
    let (_d, store) = temp_store();
    ingest_at(
        &store,
        &[record("INC-1", "2026-01-01T10:00:00Z")],
        "2026-01-01T13:00:00Z",
    )
    .unwrap();
    ingest_at(
        &store,
        &[supersede("INC-2", "2026-02-01T10:00:00Z", "INC-1")],
        "2026-02-03T00:00:00Z",
    )
    .unwrap();
    let state = |v: &str, k: &str| {
        facts_as_of(
            &store,
            "INC-1",
            AsOf {
                valid_at: ts(v),
                known_at: ts(k),
            },
        )
        .ok()
        .and_then(|r| r.facts.into_iter().find(|f| f.entity_ref == "cfg-INC-1"))
        .map(|f| (f.state, f.t_invalid, f.superseded_by))
    };
    let late = "2026-12-01T00:00:00Z";
    // Valid axis, with full knowledge.
    assert_eq!(
        state("2026-01-01T09:59:59.999Z", late).unwrap().0,
        FactState::NotYetValid
    );
    assert_eq!(
        state("2026-01-01T10:00:00Z", late).unwrap().0,
        FactState::Valid
    );
    assert_eq!(
        state("2026-02-01T09:59:59.999Z", late).unwrap().0,
        FactState::Valid
    );
    let closed = state("2026-02-01T10:00:00Z", late).unwrap();
    assert_eq!(closed.0, FactState::Invalidated);
    assert_eq!(closed.1, Some(ts("2026-02-01T10:00:00Z")));
    assert_eq!(closed.2.as_deref(), Some("INC-2"));
    // Knowledge axis: before ingest the fact is not returned at all.
    assert!(state("2026-01-01T12:00:00Z", "2026-01-01T12:59:59.999Z").is_none());
    assert_eq!(
        state("2026-01-01T12:00:00Z", "2026-01-01T13:00:00Z")
            .unwrap()
            .0,
        FactState::Valid
    );
    // The invalidation counts only once recorded.
    let unknown = state("2026-02-02T00:00:00Z", "2026-02-02T23:59:59.999Z").unwrap();
    assert_eq!(unknown, (FactState::Valid, None, None));
    assert_eq!(
        state("2026-02-02T00:00:00Z", "2026-02-03T00:00:00Z")
            .unwrap()
            .0,
        FactState::Invalidated
    );
}

#[test]
fn explicit_edge_interval_is_half_open() {
    let (_d, store) = temp_store();
    let mut r = record("INC-1", "2026-01-01T10:00:00Z");
    r["mentions"] = json!([{"entity_type": "host", "entity_ref": "node-a",
        "t_valid": "2026-01-01T11:00:00Z", "t_invalid": "2026-01-01T12:00:00Z"}]);
    ingest_at(&store, &[r], "2026-01-02T00:00:00Z").unwrap();
    let at = |v: &str| {
        facts_as_of(
            &store,
            "INC-1",
            AsOf {
                valid_at: ts(v),
                known_at: ts("2026-01-03T00:00:00Z"),
            },
        )
        .unwrap()
        .facts
        .into_iter()
        .find(|f| f.entity_ref == "node-a")
        .unwrap()
        .state
    };
    assert_eq!(at("2026-01-01T10:59:59Z"), FactState::NotYetValid);
    assert_eq!(at("2026-01-01T11:00:00Z"), FactState::Valid);
    assert_eq!(at("2026-01-01T11:59:59.999Z"), FactState::Valid);
    assert_eq!(at("2026-01-01T12:00:00Z"), FactState::Invalidated);
}

#[test]
fn reinvalidating_at_another_time_is_an_error_naming_both_times() {
    let (_d, store) = temp_store();
    ingest_at(
        &store,
        &[record("INC-1", "2026-01-01T10:00:00Z")],
        "2026-01-01T13:00:00Z",
    )
    .unwrap();
    ingest_at(
        &store,
        &[supersede("INC-2", "2026-02-01T10:00:00Z", "INC-1")],
        "2026-02-02T00:00:00Z",
    )
    .unwrap();
    let before = store.stats().unwrap();
    let err = ingest_at(
        &store,
        &[supersede("INC-3", "2026-03-01T10:00:00Z", "INC-1")],
        "2026-03-02T00:00:00Z",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("test.ndjson:1: supersedes[0].t_invalid"),
        "{err}"
    );
    assert!(
        err.contains("2026-02-01T10:00:00Z") && err.contains("2026-03-01T10:00:00Z"),
        "{err}"
    );
    assert_eq!(
        store.stats().unwrap(),
        before,
        "the rejected batch wrote nothing"
    );
    assert!(store.episode("INC-3").unwrap().is_none());
}

#[test]
fn lineage_walks_backwards_and_forwards() {
    let (_d, store) = temp_store();
    ingest_at(
        &store,
        &[record("INC-1", "2026-01-01T10:00:00Z")],
        "2026-01-02T00:00:00Z",
    )
    .unwrap();
    ingest_at(
        &store,
        &[supersede("INC-2", "2026-02-01T10:00:00Z", "INC-1")],
        "2026-02-02T00:00:00Z",
    )
    .unwrap();
    ingest_at(
        &store,
        &[supersede("INC-3", "2026-03-01T10:00:00Z", "INC-2")],
        "2026-03-02T00:00:00Z",
    )
    .unwrap();
    let middle = lineage(&store, "INC-2", ts("2026-12-01T00:00:00Z")).unwrap();
    assert_eq!(middle.backwards.len(), 1);
    assert_eq!(middle.backwards[0].prior, "INC-1");
    assert_eq!(middle.backwards[0].entity_ref, "cfg-INC-1");
    assert_eq!(middle.backwards[0].closed_at, ts("2026-02-01T10:00:00Z"));
    assert_eq!(middle.forwards.len(), 1);
    assert_eq!(middle.forwards[0].episode, "INC-3");

    let newest = lineage(&store, "INC-3", ts("2026-12-01T00:00:00Z")).unwrap();
    let chain: Vec<_> = newest
        .backwards
        .iter()
        .map(|l| (l.prior.as_str(), l.depth))
        .collect();
    assert_eq!(chain, vec![("INC-2", 1), ("INC-1", 2)]);
    assert!(newest.forwards.is_empty());

    // As known before INC-3 was recorded, INC-2 had not been superseded yet.
    let earlier = lineage(&store, "INC-2", ts("2026-03-01T23:59:59Z")).unwrap();
    assert!(earlier.forwards.is_empty());
}

#[test]
fn supersession_target_may_come_later_in_the_same_batch() {
    let (_d, store) = temp_store();
    let report = ingest_at(
        &store,
        &[
            supersede("INC-2", "2026-02-01T10:00:00Z", "INC-1"),
            record("INC-1", "2026-01-01T10:00:00Z"),
        ],
        "2026-02-02T00:00:00Z",
    )
    .unwrap();
    assert_eq!((report.new_episodes, report.new_supersessions), (2, 1));
}

#[test]
fn knowledge_time_never_moves_backwards() {
    let (_d, store) = temp_store();
    ingest_at(
        &store,
        &[record("INC-1", "2026-01-01T10:00:00Z")],
        "2026-06-01T00:00:00Z",
    )
    .unwrap();
    let err = ingest_at(
        &store,
        &[record("INC-2", "2026-01-02T10:00:00Z")],
        "2026-05-01T00:00:00Z",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("test.ndjson:1: ingested_at: knowledge time 2026-05-01T00:00:00Z is before 2026-06-01T00:00:00Z"),
        "{err}"
    );
    assert!(store.episode("INC-2").unwrap().is_none());
    // Re-ingesting what is already known writes nothing, so any --now is fine.
    let again = ingest_at(
        &store,
        &[record("INC-1", "2026-01-01T10:00:00Z")],
        "2026-05-01T00:00:00Z",
    )
    .unwrap();
    assert_eq!(again.unchanged_episodes, 1);
    ingest_at(
        &store,
        &[record("INC-2", "2026-01-02T10:00:00Z")],
        "2026-06-01T00:00:00Z",
    )
    .unwrap();
}
