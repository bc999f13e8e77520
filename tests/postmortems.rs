//! The importer over the real public postmortems in ../shared/data/postmortems.

mod common;

use common::*;
use serde_json::Value;
use strata::import::postmortems;
use strata::model::AsOf;
use strata::query::facts_as_of;
use strata::store::{MemoryStore, TimelineQuery};

fn postmortem_dir() -> std::path::PathBuf {
    let dir = shared_dir().join("data/postmortems");
    assert!(
        dir.is_dir(),
        "the shared postmortems are missing at {}",
        dir.display()
    );
    dir
}

#[test]
fn imports_the_real_postmortems_and_reports_skips() {
    let (_d, store) = temp_store();
    let now = ts("2026-06-01T00:00:00Z");
    let report = postmortems::import_dir(&store, &postmortem_dir(), now).unwrap();
    assert_eq!(report.files, 35);
    assert_eq!(report.records_seen, 356);
    assert_eq!(report.applied.new_episodes + report.skipped.len(), 356);
    assert!(report.applied.new_episodes >= 350, "{:?}", report.skipped);
    for s in &report.skipped {
        assert!(!s.reason.is_empty() && !s.id.is_empty());
    }
    assert!(store.check().unwrap().is_consistent());

    // Services, providers and root-cause labels became shared entities.
    let config = "root_cause:internal causes/software bugs/config"
        .parse()
        .unwrap();
    let config_facts = store.entity_facts(&config).unwrap();
    assert!(config_facts.len() >= 100, "{}", config_facts.len());
    let aws = store
        .entity_facts(&"provider:aws".parse().unwrap())
        .unwrap();
    assert!(!aws.is_empty());

    let newest = store
        .timeline(&TimelineQuery {
            limit: 1,
            ..TimelineQuery::default()
        })
        .unwrap();
    assert!(
        newest[0].concluded_at.to_rfc3339().starts_with("2021"),
        "{:?}",
        newest[0]
    );
    let facts = facts_as_of(&store, &newest[0].incident_fingerprint, AsOf::now(now)).unwrap();
    assert!(facts.facts.iter().any(|f| f.entity_type == "service"));

    let again =
        postmortems::import_dir(&store, &postmortem_dir(), ts("2026-07-01T00:00:00Z")).unwrap();
    assert_eq!(again.applied.new_episodes, 0);
}

#[test]
fn import_command_prints_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let pm = postmortem_dir();
    let out = strata(
        dir.path(),
        &["import", "postmortems", pm.to_str().unwrap(), "--json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["records_seen"], 356);
    assert!(report["skipped"].is_array());
}

#[test]
fn messy_records_are_skipped_with_a_reason_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("messy.json"),
        r#"{
          "x-1": {"title": "Only a title", "time": "13/45/2020"},
          "x-2": {"summary": "no time at all"},
          "x-3": {"title": "", "summary": "", "time": "01/02/2020"},
          "x-4": "not an object",
          "x-5": {"title": "Fine", "time": "1/2/2020", "service name": ["Storage"], "duration": "n/a",
                  "root cause": {"label": [{"layer-1": "unknown"}]}, "mitigation": null}
        }"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("broken.json"), "{ not json").unwrap();
    let (_d, store) = temp_store();
    let report = postmortems::import_dir(&store, dir.path(), ts("2026-01-01T00:00:00Z")).unwrap();
    assert_eq!(report.applied.new_episodes, 1);
    let reasons: Vec<_> = report
        .skipped
        .iter()
        .map(|s| format!("{}: {}", s.id, s.reason))
        .collect();
    assert_eq!(reasons.len(), 5, "{reasons:?}");
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("x-1: time: expected MM/DD/YYYY")),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r.starts_with("x-2: time: missing")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("x-3: no title or summary")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("x-4: expected an object")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("*: not an object of postmortems")),
        "{reasons:?}"
    );
    let facts = store.facts("x-5").unwrap();
    assert!(facts.iter().any(|f| f.entity.entity_ref == "Storage"));
}
