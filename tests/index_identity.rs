//! Every derived index knows the store it was built from: an index that came from another
//! store, or that is ahead of its store's log (a store restored from a backup under it), is
//! rebuilt from the store, saying so, and recall never answers with another store's episodes.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

/// Ingests the file (which catches the indexes up) and returns what it said on stderr.
fn ingest(data: &Path, file: &Path, now: &str) -> String {
    let out = strata(data, &["--now", now, "ingest", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    stderr(&out)
}

fn recall(data: &Path, text: &str) -> (Vec<String>, String) {
    let out = strata(
        data,
        &["--now", "2026-12-01T00:00:00Z", "recall", text, "--json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let fps = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["fingerprint"].as_str().unwrap().to_string())
        .collect();
    (fps, stderr(&out))
}

fn records(prefix: &str, words: &str, n: usize) -> String {
    let mut out = Vec::new();
    for i in 0..n {
        let mut r = record(&format!("{prefix}-{i}"), "2026-03-01T00:00:00Z");
        r["summary_nl"] = Value::from(format!("{words} number {i}"));
        out.push(r);
    }
    ndjson(&out)
}

#[test]
fn indexes_copied_from_another_store_are_rebuilt_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let fa = dir.path().join("a.ndjson");
    std::fs::write(&fa, records("ALPHA", "kestrel turbine vibration", 3)).unwrap();
    ingest(&a, &fa, "2026-11-01T00:00:00Z");
    assert!(
        recall(&a, "kestrel turbine vibration")
            .0
            .contains(&"ALPHA-0".to_string())
    );

    // Store B has memory of its own, then gets A's indexes in place of its own (copied over,
    // say). (Indexes with no store at all beside them are refused: the store was lost.)
    let fb = dir.path().join("b.ndjson");
    std::fs::write(&fb, records("BETA", "heron pump cavitation", 2)).unwrap();
    ingest(&b, &fb, "2026-11-01T00:00:00Z");
    std::fs::remove_dir_all(b.join("index")).unwrap();
    copy_dir(&a.join("index"), &b.join("index"));
    let (fps, notes) = recall(&b, "kestrel turbine vibration heron pump cavitation");
    assert!(
        fps.iter().all(|fp| fp.starts_with("BETA-")),
        "store B answered with another store's episodes: {fps:?}"
    );
    assert!(fps.contains(&"BETA-0".to_string()), "{fps:?}");
    assert!(notes.contains("built from another store"), "{notes}");
}

#[test]
fn a_store_restored_under_an_index_that_is_ahead_of_it_gets_it_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let first = dir.path().join("first.ndjson");
    std::fs::write(&first, records("OLD", "osprey valve leak", 5)).unwrap();
    ingest(&data, &first, "2026-11-01T00:00:00Z");
    let backup = dir.path().join("backup");
    copy_dir(&data.join("store"), &backup);
    let more = dir.path().join("more.ndjson");
    std::fs::write(&more, records("LOST", "plover fan stall", 5)).unwrap();
    ingest(&data, &more, "2026-11-02T00:00:00Z");
    assert!(
        recall(&data, "plover fan stall")
            .0
            .contains(&"LOST-0".to_string())
    );

    // The store goes back to the backup; the index stays where it was, ahead of it.
    std::fs::remove_dir_all(data.join("store")).unwrap();
    copy_dir(&backup, &data.join("store"));
    let new = dir.path().join("new.ndjson");
    std::fs::write(&new, records("NEW", "grebe boiler trip", 2)).unwrap();
    ingest(&data, &new, "2026-11-03T00:00:00Z");
    let (fps, _) = recall(&data, "grebe boiler trip plover fan stall");
    assert!(
        fps.contains(&"NEW-0".to_string()),
        "the new episodes are indexed: {fps:?}"
    );
    assert!(
        fps.iter().all(|fp| !fp.starts_with("LOST-")),
        "episodes the store no longer has are gone from the index: {fps:?}"
    );
}

#[test]
fn a_new_text_index_is_not_rebuilt_by_the_next_process() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.ndjson");
    std::fs::write(&file, records("NEW", "quokka ledger stalled", 5)).unwrap();
    let out = strata(
        dir.path(),
        &[
            "--now",
            "2026-11-01T00:00:00Z",
            "ingest",
            "--no-index",
            file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, first) = recall(dir.path(), "quokka ledger");
    assert!(
        first.contains("building the text index for the first time"),
        "{first}"
    );
    for _ in 0..2 {
        let (found, said) = recall(dir.path(), "quokka ledger");
        assert_eq!(found.len(), 5);
        assert!(
            !said.contains("rebuilding"),
            "a second process rebuilt the index: {said}"
        );
    }
}
