//! The skill store: versions that supersede without deletion, skills accreting from
//! resolutions, validation that writes nothing on error, and recall suggesting skills.

mod common;

use common::{ingest_at, record, stderr, stdout, strata, temp_store, ts};
use serde_json::{Value, json};
use strata::learning::skill::current;
use strata::store::MemoryStore;

const SKILL: &str = r#"{"name":"reload-session-secret","trigger_entities":["service:authelia","cause:secret-rotated"],"steps":["restart authelia","flush sessions in redis"],"applied":3,"succeeded":2,"last_used":"2026-01-01T00:00:00Z"}"#;

#[test]
fn versions_supersede_without_deletion_and_read_as_of() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("skills.ndjson");
    std::fs::write(&file, SKILL).unwrap();
    let f = file.to_str().unwrap();
    let out = strata(
        dir.path(),
        &["--now", "2026-02-01T00:00:00Z", "skill", "add", f],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("1 new versions"), "{}", stdout(&out));
    let again = strata(
        dir.path(),
        &["--now", "2026-02-02T00:00:00Z", "skill", "add", f],
    );
    assert!(
        stdout(&again).contains("0 new versions"),
        "same content, no new version"
    );

    std::fs::write(
        &file,
        SKILL.replace(
            "\"flush sessions in redis\"",
            "\"flush sessions\",\"verify a login\"",
        ),
    )
    .unwrap();
    let out = strata(
        dir.path(),
        &["--now", "2026-03-01T00:00:00Z", "skill", "add", f],
    );
    assert!(stdout(&out).contains("1 new versions"), "{}", stdout(&out));

    let list = |extra: &[&str]| -> Vec<Value> {
        let mut args = vec!["skills", "--json"];
        args.extend_from_slice(extra);
        serde_json::from_slice(&strata(dir.path(), &args).stdout).unwrap()
    };
    let now = list(&[]);
    assert_eq!(now.len(), 1);
    assert_eq!(now[0]["version"], 2);
    assert_eq!(now[0]["steps"].as_array().unwrap().len(), 3);
    let before = list(&["--known-at", "2026-02-15T00:00:00Z"]);
    assert_eq!(before[0]["version"], 1, "v2 was not yet recorded");
    assert_eq!(list(&["--all"]).len(), 2, "nothing deleted");
    assert_eq!(list(&["--entity", "service:authelia"]).len(), 1);
    assert!(list(&["--entity", "service:caddy"]).is_empty());
}

#[test]
fn a_bad_skill_file_names_line_and_field_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("skills.ndjson");
    let bad = format!(
        "{SKILL}\n{}\n{}\n",
        r#"{"name":"x","trigger_entities":["authelia"],"steps":["a"]}"#,
        r#"{"name":"y","trigger_entities":["service:a"],"steps":[],"applied":1,"succeeded":2}"#
    );
    std::fs::write(&file, bad).unwrap();
    let out = strata(dir.path(), &["skill", "add", file.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(":2") && err.contains("trigger_entities[0]") && err.contains("TYPE:REF"),
        "{err}"
    );
    assert!(err.contains(":3") && err.contains("steps"), "{err}");
    assert!(err.contains("more than applied"), "{err}");
    let listed: Vec<Value> =
        serde_json::from_slice(&strata(dir.path(), &["skills", "--json"]).stdout).unwrap();
    assert!(listed.is_empty(), "a rejected file writes nothing");
}

#[test]
fn skills_accrete_from_resolutions_in_the_ingest_format() {
    let (_dir, store) = temp_store();
    let mut a = record("INC-A", "2026-01-01T00:00:00Z");
    a["skills"] = json!([{"name": "reload", "trigger_entities": ["service:authelia"], "steps": ["restart authelia"]}]);
    let mut b = record("INC-B", "2026-02-01T00:00:00Z");
    b["skills"] = json!([{"name": "reload", "succeeded": false}]);
    ingest_at(&store, &[a], "2026-01-02T00:00:00Z").unwrap();
    ingest_at(&store, &[b], "2026-02-02T00:00:00Z").unwrap();
    let versions = store.skills().unwrap();
    assert_eq!(versions.len(), 2);
    let now = current(&versions, ts("2026-12-01T00:00:00Z"));
    let s = &now[0];
    assert_eq!((s.version, s.applied, s.succeeded), (2, 2, 1));
    assert_eq!(s.episodes, ["INC-A", "INC-B"]);
    assert_eq!(
        s.steps,
        ["restart authelia"],
        "inherited from the version it supersedes"
    );
    assert_eq!(s.last_used, Some(ts("2026-02-01T02:00:00Z")));
    let mut bad = record("INC-C", "2026-03-01T00:00:00Z");
    bad["skills"] = json!([{"name": "reload", "succeeded": "yes"}]);
    let err = ingest_at(&store, &[bad], "2026-03-02T00:00:00Z")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("skills[0].succeeded") && err.contains("true or false"),
        "{err}"
    );
    assert_eq!(
        store.skills().unwrap().len(),
        2,
        "the rejected record wrote no skill"
    );
}

#[test]
fn recall_suggests_skills_whose_triggers_the_results_share() {
    let dir = tempfile::tempdir().unwrap();
    assert!(strata(dir.path(), &["demo"]).status.success());
    let out = strata(
        dir.path(),
        &[
            "--now",
            "2026-12-01T00:00:00Z",
            "recall",
            "users stuck in a login loop after the session secret rotated",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let skills = r["skills"].as_array().unwrap();
    assert!(!skills.is_empty(), "{r}");
    assert_eq!(
        skills[0]["name"], "runbook-auth-session-secret-rotated",
        "{skills:?}"
    );
    assert!(
        skills[0]["shared"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e == "cause:auth-session-secret-rotated")
    );
    let early = strata(
        dir.path(),
        &[
            "--now",
            "2026-12-01T00:00:00Z",
            "recall",
            "login loop after the session secret rotated",
            "--known-at",
            "2024-12-01T00:00:00Z",
            "--json",
        ],
    );
    let r: Value = serde_json::from_slice(&early.stdout).unwrap();
    assert!(
        r["skills"].as_array().unwrap().is_empty(),
        "no skill was known then: {r}"
    );
}

#[test]
fn guards_on_skill_versions() {
    let (_dir, store) = temp_store();
    // A first version from an episode needs triggers and steps.
    let mut a = record("INC-A", "2026-01-01T00:00:00Z");
    a["skills"] = json!([{"name": "typo"}]);
    let err = ingest_at(&store, &[a], "2026-01-02T00:00:00Z")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("first version needs trigger_entities and steps"),
        "{err}"
    );
    assert!(store.skills().unwrap().is_empty());
    // Knowledge time only moves forward.
    ingest_at(
        &store,
        &[record("INC-B", "2026-02-01T00:00:00Z")],
        "2026-02-02T00:00:00Z",
    )
    .unwrap();
    let draft: strata::learning::SkillDraft = serde_json::from_str(
        r#"{"name":"x","trigger_entities":[{"entity_type":"service","entity_ref":"a"}],"steps":["s"],"applied":1,"succeeded":1}"#,
    )
    .unwrap();
    let err = store
        .add_skills(
            std::slice::from_ref(&draft),
            ts("2026-01-01T00:00:00Z").into(),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("knowledge time only moves forward"), "{err}");
    assert_eq!(
        store
            .add_skills(&[draft], ts("2026-03-01T00:00:00Z").into())
            .unwrap(),
        1
    );
    // succeeded never exceeds applied.
    let more: strata::learning::SkillDraft =
        serde_json::from_str(r#"{"name":"x","succeeded":5}"#).unwrap();
    store
        .add_skills(&[more], ts("2026-03-02T00:00:00Z").into())
        .unwrap();
    let now = current(&store.skills().unwrap(), ts("2026-12-01T00:00:00Z"));
    assert_eq!((now[0].applied, now[0].succeeded), (1, 1));
}
