//! Redaction where text is written (ingest) and again where it is shown (explorer, CLI
//! tables and JSON), even for a store that some other writer filled with raw secrets.

mod common;

use common::{explorer, ingest_at, play, record, stdout, strata, ts};
use strata::redact::Redactor;
use strata::store::MemoryStore;
use strata::store::embedded::EmbeddedStore;

const SECRET_SUMMARY: &str = "Paged alice.ops@example.com; api at 10.20.30.40 answered 401 to Authorization: Bearer sk_live_9f8e7d6c5b4a3210 and redis://admin:hunter2@cache.internal:6379 refused";

#[test]
fn ingest_stores_free_text_redacted() {
    let (_dir, store) = common::temp_store();
    let mut r = record("INC-SECRET", "2026-01-01T00:00:00Z");
    r["summary_nl"] = SECRET_SUMMARY.into();
    r["resolution_nl"] = "rotated the key AKIAIOSFODNN7EXAMPLE and called +1 415 555 0100".into();
    ingest_at(&store, &[r], "2026-02-01T00:00:00Z").unwrap();
    let e = store.episode("INC-SECRET").unwrap().unwrap();
    let redactor = Redactor::new();
    assert!(!redactor.finds_secret(&e.summary_nl), "{}", e.summary_nl);
    assert!(
        !redactor.finds_secret(&e.resolution_nl),
        "{}",
        e.resolution_nl
    );
    assert!(
        e.summary_nl.contains("<email>") && e.summary_nl.contains("<ipv4>"),
        "{}",
        e.summary_nl
    );
    assert!(
        e.resolution_nl.contains("<access-key>"),
        "{}",
        e.resolution_nl
    );
}

/// A store written by another program, with the secrets still in it.
fn raw_store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let mut r = record("INC-RAW", "2026-01-01T00:00:00Z");
    r["summary_nl"] = "placeholder".into();
    let mut prepared = strata::ingest::prepare_text(
        "raw.ndjson",
        &serde_json::to_string(&r).unwrap(),
        ts("2026-02-01T00:00:00Z"),
    )
    .unwrap();
    prepared.batch.items[0].draft.summary_nl = SECRET_SUMMARY.to_string();
    prepared.batch.code_units.push((
        "raw".into(),
        strata::learning::CodeUnit::new("acme/ops", "hosts/10.20.30.40.conf", "authelia"),
    ));
    store.apply(&prepared.batch).unwrap();
    store
        .add_skills(
            &[strata::learning::SkillDraft {
                name: "page-oncall".into(),
                trigger_entities: vec!["service:authelia".parse().unwrap()],
                steps: vec!["call alice.ops@example.com at +1 415 555 0100".into()],
                episodes: Vec::new(),
                applied: None,
                succeeded: None,
                outcome_succeeded: None,
                last_used: None,
            }],
            ts("2026-02-02T00:00:00Z").into(),
        )
        .unwrap();
    assert_eq!(
        store.episode("INC-RAW").unwrap().unwrap().summary_nl,
        SECRET_SUMMARY
    );
    dir
}

#[test]
fn the_cli_redacts_tables_and_json_on_the_way_out() {
    let dir = raw_store();
    let redactor = Redactor::new();
    for args in [
        vec!["timeline"],
        vec!["timeline", "--json"],
        vec!["skills"],
        vec!["skills", "--json"],
        vec!["code", "--service", "authelia", "--json"],
        vec!["recall", "login failing with 401", "--json"],
        vec!["recall", "login failing with 401"],
    ] {
        let out = strata(dir.path(), &args);
        assert!(out.status.success(), "{args:?}: {}", common::stderr(&out));
        let text = stdout(&out);
        assert!(
            text.contains("INC-RAW") || text.contains("page-oncall") || text.contains("acme/ops"),
            "{args:?}: {text}"
        );
        assert!(!redactor.finds_secret(&text), "{args:?} leaked:\n{text}");
        assert!(
            !text.contains("hunter2") && !text.contains("alice.ops"),
            "{text}"
        );
    }
}

#[test]
fn the_explorer_redacts_what_it_draws() {
    let dir = raw_store();
    let mut s = explorer(dir.path(), 200, 50);
    let screen = play(
        &mut s,
        "WaitIdle\nAction select INC-RAW\nWaitIdle\nAction recall.query api answered 401, redis refused\nWaitIdle\nAction focus.lessons\nAction zoom\n",
    );
    assert!(
        screen.contains("skill page-oncall") && screen.contains("call <email>"),
        "{screen}"
    );
    assert!(!Redactor::new().finds_secret(&screen), "leaked:\n{screen}");
    let recall = play(&mut s, "Action zoom\nAction focus.recall\nAction zoom\n");
    assert!(
        recall.contains("files acme/ops:hosts/<ipv4>.conf"),
        "{recall}"
    );
    assert!(!Redactor::new().finds_secret(&recall), "leaked:\n{recall}");
    let screen = play(&mut s, "Action zoom\nAction focus.facts\n");
    assert!(screen.contains("<email>"), "{screen}");
    assert!(!Redactor::new().finds_secret(&screen), "leaked:\n{screen}");
    assert!(!screen.contains("hunter2"));
}

#[test]
fn configured_patterns_are_redacted_at_write_and_on_output() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[redact]\nextra = [{ name = \"ticket\", pattern = \"TICKET-[0-9]+\" }]\n",
    )
    .unwrap();
    let mut r = record("INC-T", "2026-01-01T00:00:00Z");
    r["summary_nl"] = "customer escalation TICKET-48213 about login failures".into();
    let file = dir.path().join("in.ndjson");
    std::fs::write(&file, serde_json::to_string(&r).unwrap()).unwrap();
    let data = dir.path().join("data");
    let cfg = config.to_str().unwrap();
    let out = strata(
        &data,
        &[
            "--config",
            cfg,
            "--now",
            "2026-02-01T00:00:00Z",
            "ingest",
            file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let stored = EmbeddedStore::open(&data)
        .unwrap()
        .episode("INC-T")
        .unwrap()
        .unwrap();
    assert_eq!(
        stored.summary_nl,
        "customer escalation <ticket> about login failures"
    );
    let shown = stdout(&strata(&data, &["--config", cfg, "timeline", "--json"]));
    assert!(
        shown.contains("<ticket>") && !shown.contains("48213"),
        "{shown}"
    );
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[redact]\nextra = [{ name = \"x\", pattern = \"(\" }]\n",
    )
    .unwrap();
    let out = strata(&data, &["--config", bad.to_str().unwrap(), "stats"]);
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("[redact]"),
        "{}",
        common::stderr(&out)
    );
}
