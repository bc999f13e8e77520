//! The read commands' JSON shapes and behaviour through the real binary.

mod common;

use common::*;
use serde_json::{Value, json};

fn seeded() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d");
    let mut r2 = record("INC-2", "2026-02-01T10:00:00Z");
    r2["supersedes"] = json!([{"incident_fingerprint": "INC-1", "entity_type": "change", "entity_ref": "cfg-INC-1"}]);
    let mut r3 = record("INC-3", "2026-03-01T10:00:00Z");
    r3["mentions"] = json!([{"entity_type": "service", "entity_ref": "caddy"}]);
    let file = dir.path().join("in.ndjson");
    std::fs::write(
        &file,
        ndjson(&[record("INC-1", "2026-01-01T10:00:00Z"), r2, r3]),
    )
    .unwrap();
    let out = strata(
        &data,
        &[
            "--now",
            "2026-03-05T00:00:00Z",
            "ingest",
            file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    (dir, data)
}

fn json_of(data: &std::path::Path, args: &[&str]) -> Value {
    let out = strata(data, args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn facts_json_has_the_documented_shape() {
    let (_d, data) = seeded();
    let v = json_of(
        &data,
        &["--now", "2026-04-01T00:00:00Z", "facts", "INC-1", "--json"],
    );
    assert_eq!(v["episode"], "INC-1");
    assert_eq!(v["valid_at"], "2026-04-01T00:00:00Z");
    assert_eq!(v["known_at"], "2026-04-01T00:00:00Z");
    let facts = v["facts"].as_array().unwrap();
    assert_eq!(facts.len(), 2);
    let change = facts
        .iter()
        .find(|f| f["entity_ref"] == "cfg-INC-1")
        .unwrap();
    for key in [
        "relation",
        "entity_type",
        "entity_ref",
        "t_valid",
        "t_invalid",
        "ingested_at",
        "expired_at",
        "state",
        "superseded_by",
    ] {
        assert!(change.get(key).is_some(), "missing {key}");
    }
    assert_eq!(change["relation"], "RESOLVED_BY");
    assert_eq!(change["state"], "invalidated");
    assert_eq!(change["t_invalid"], "2026-02-01T10:00:00Z");
    assert_eq!(change["superseded_by"], "INC-2");

    let before = json_of(
        &data,
        &[
            "facts",
            "INC-1",
            "--valid-at",
            "2026-01-15T00:00:00Z",
            "--known-at",
            "2026-03-05T00:00:00Z",
            "--json",
        ],
    );
    let change = before["facts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["entity_ref"] == "cfg-INC-1")
        .unwrap()
        .clone();
    assert_eq!(change["state"], "valid");
    let not_yet = json_of(
        &data,
        &[
            "facts",
            "INC-1",
            "--valid-at",
            "2025-12-01T00:00:00Z",
            "--json",
        ],
    );
    assert!(
        not_yet["facts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["state"] == "not_yet_valid")
    );
    let early = strata(
        &data,
        &["facts", "INC-1", "--known-at", "2026-03-04T00:00:00Z"],
    );
    assert!(!early.status.success());
    assert!(
        stderr(&early).contains("episode \"INC-1\" was not yet known at 2026-03-04T00:00:00Z (recorded at 2026-03-05T00:00:00Z)"),
        "{}",
        stderr(&early)
    );
}

#[test]
fn unknown_episode_is_a_clear_error() {
    let (_d, data) = seeded();
    let out = strata(&data, &["facts", "INC-404"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no episode with fingerprint \"INC-404\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn timeline_orders_newest_first_and_filters_by_entity() {
    let (_d, data) = seeded();
    let v = json_of(&data, &["timeline", "--json"]);
    let fps: Vec<_> = v["episodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["incident_fingerprint"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(fps, ["INC-3", "INC-2", "INC-1"]);
    let v = json_of(
        &data,
        &[
            "timeline",
            "--entity",
            "service:authelia",
            "--limit",
            "1",
            "--json",
        ],
    );
    assert_eq!(v["count"], 1);
    assert_eq!(v["episodes"][0]["incident_fingerprint"], "INC-2");
    let bad = strata(&data, &["timeline", "--entity", "authelia"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("expected TYPE:REF"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn lineage_and_stats_json() {
    let (_d, data) = seeded();
    let v = json_of(&data, &["lineage", "INC-1", "--json"]);
    assert_eq!(v["forwards"][0]["episode"], "INC-2");
    assert_eq!(v["forwards"][0]["entity_ref"], "cfg-INC-1");
    assert_eq!(v["backwards"].as_array().unwrap().len(), 0);
    let mut s = json_of(&data, &["stats", "--json"]);
    let id = s["store_id"].take();
    assert!(
        uuid::Uuid::parse_str(id.as_str().unwrap_or_default()).is_ok(),
        "store_id is not a UUID: {id}"
    );
    assert!(s["generation"].as_u64().is_some_and(|g| g >= 1), "{s}");
    s.as_object_mut().unwrap().remove("store_id");
    s.as_object_mut().unwrap().remove("generation");
    // Nobody recalled from it: the recall section says so.
    let recall = s.as_object_mut().unwrap().remove("recall").unwrap();
    assert_eq!(recall["mode"], "active", "{recall}");
    assert_eq!(recall["warm"]["readiness"], "no_recalls", "{recall}");
    assert_eq!(recall["counters"]["modes"][0]["recalls"], 0, "{recall}");
    assert_eq!(
        s,
        json!({"episodes": 3, "entities": 5, "mentions": 3, "resolved_by": 3, "supersedes": 1, "invalidated_edges": 1})
    );
    let text = stdout(&strata(&data, &["lineage", "INC-2"]));
    assert!(
        text.contains("INC-2 superseded INC-1: closed change|cfg-INC-1 at 2026-02-01T10:00:00Z"),
        "{text}"
    );
}

#[test]
fn zone_less_now_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let out = strata(dir.path(), &["--now", "2026-01-01T00:00:00", "stats"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("expected an RFC 3339 timestamp with a zone"),
        "{}",
        stderr(&out)
    );
}
