//! Quotes, Cypher, control characters and non-Latin text are data: stored and read back
//! byte-identical, and the terminal never interprets them.

mod common;

use common::*;
use serde_json::json;
use strata::store::MemoryStore;

const HOSTILE: &[&str] = &[
    "quote\"d 'single' `back`",
    "\"}) DETACH DELETE n //",
    "MATCH (n) DETACH DELETE n; --",
    "back\\slash \\\\ \\u0041",
    "new\nline\r\ttab",
    "bell\u{7} escape\u{1b}[31mred\u{1b}[0m",
    "日本語のサービス Ωμέγα عربى",
    "pipe|and:colon",
];

#[test]
fn hostile_strings_round_trip_byte_identical() {
    let (_d, store) = temp_store();
    let mut records = Vec::new();
    for (i, s) in HOSTILE.iter().enumerate() {
        let mut r = record(&format!("{s}#{i}"), "2026-01-01T10:00:00Z");
        r["summary_nl"] = json!(s);
        r["resolution_nl"] = json!(s);
        r["mentions"] = json!([{"entity_type": "service", "entity_ref": s}]);
        records.push(r);
    }
    ingest_at(&store, &records, "2026-01-02T00:00:00Z").unwrap();
    for (i, s) in HOSTILE.iter().enumerate() {
        let fp = format!("{s}#{i}");
        let e = store.episode(&fp).unwrap().unwrap();
        assert_eq!(e.incident_fingerprint, fp);
        assert_eq!(e.summary_nl, *s);
        assert_eq!(e.resolution_nl, *s);
        let facts = store.facts(&fp).unwrap();
        assert!(facts.iter().any(|f| f.entity.entity_ref == *s));
        let by_entity = store
            .entity_facts(&strata::model::EntityKey::new("service", *s).unwrap())
            .unwrap();
        assert_eq!(by_entity.len(), 1);
    }
    assert_eq!(store.stats().unwrap().episodes, HOSTILE.len() as u64);
    assert!(store.check().unwrap().is_consistent());
}

#[test]
fn terminal_output_escapes_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = record("INC-\u{1b}[2J", "2026-01-01T10:00:00Z");
    r["summary_nl"] = json!("line\nbreak \u{1b}[31m");
    let file = dir.path().join("h.ndjson");
    std::fs::write(&file, ndjson(&[r])).unwrap();
    let data = dir.path().join("d");
    assert!(
        strata(&data, &["ingest", file.to_str().unwrap()])
            .status
            .success()
    );
    let out = strata(&data, &["timeline"]);
    let text = stdout(&out);
    assert!(!text.contains('\u{1b}'), "{text:?}");
    assert!(
        text.contains("INC-\\u{1b}[2J") && text.contains("line\\nbreak"),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&strata(&data, &["timeline", "--json"]).stdout).unwrap();
    assert_eq!(json["episodes"][0]["summary_nl"], "line\nbreak \u{1b}[31m");
}

#[test]
fn nul_is_refused_with_a_clear_error() {
    let (_d, store) = temp_store();
    let r = record("INC-\u{0}", "2026-01-01T10:00:00Z");
    let err = ingest_at(&store, &[r], "2026-01-02T00:00:00Z")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("incident_fingerprint: contains a NUL character"),
        "{err}"
    );
}

/// U+001F keys a corrected text in the indexes (a fingerprint, U+001F, `v`, a time): a
/// fingerprint holding it could pass for another episode's corrected text, so it is refused,
/// naming the field, for an episode and for a prior it supersedes.
#[test]
fn the_index_version_separator_is_refused_in_fingerprints() {
    let (_d, store) = temp_store();
    let shadow = "INC-1\u{1f}v1767261600000";
    let err = ingest_at(
        &store,
        &[record(shadow, "2026-01-01T10:00:00Z")],
        "2026-01-02T00:00:00Z",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("incident_fingerprint: contains U+001F (unit separator)"),
        "{err}"
    );
    let err = ingest_at(
        &store,
        &[supersede("INC-2", "2026-01-01T10:00:00Z", shadow)],
        "2026-01-02T00:00:00Z",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("supersedes[0].incident_fingerprint: contains U+001F"),
        "{err}"
    );
    assert_eq!(store.stats().unwrap().episodes, 0);
}
