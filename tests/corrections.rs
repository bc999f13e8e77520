//! Corrections as new knowledge: as of any K before a correction every answer is byte for
//! byte what it was (checked against the same store built without it, over a grid of (V, K));
//! from its K on the correction holds; refusals name what they refuse; two reviewers racing
//! in two processes: exactly one wins and the other is told who.

mod common;

use common::*;
use serde_json::{Value, json};
use strata::correct::{CorrectionBatch, WriteOrigin, parse_text};
use strata::model::{AsOf, MemoryEpisode, Timestamp};
use strata::query::{TimelinePage, facts_as_of, lesson_as_of, lineage, review};
use strata::store::{KnowledgeTime, MemoryStore, StoreError, TimelineQuery};

pub const EPISODES: [&str; 4] = ["CR-1", "CR-2", "CR-3", "OPS-1"];

/// Every correction at K2 = 2026-02-01.
pub const FIRST: &str = concat!(
    r#"{"retract_supersession": {"episode": "CR-2", "prior": "CR-1", "entity_type": "change", "entity_ref": "cfg-CR-1"}, "reason": "CR-2 fixed another fault", "by": "ana"}"#,
    "\n",
    r#"{"confirm_supersession": {"episode": "CR-3", "prior": "OPS-1", "entity_type": "change", "entity_ref": "cfg-OPS-1"}, "reason": "checked the config history", "by": "ana"}"#,
    "\n",
    r#"{"correct_episode": {"incident_fingerprint": "OPS-1", "summary_nl": "OPS-1: the real cause was an expired certificate"}, "reason": "the summary left out the cause", "by": "ben"}"#,
    "\n",
    r#"{"correct_fact": {"episode": "CR-2", "relation": "MENTIONS", "entity_type": "service", "entity_ref": "authelia", "t_valid": "2026-01-14T00:00:00Z"}, "reason": "the outage began a day earlier", "by": "ben"}"#,
    "\n"
);

/// Corrections of the corrections at K3 = 2026-02-10.
pub const SECOND: &str = concat!(
    r#"{"confirm_supersession": {"episode": "CR-2", "prior": "CR-1", "entity_type": "change", "entity_ref": "cfg-CR-1"}, "reason": "it did replace the fix after all", "by": "cy"}"#,
    "\n",
    r#"{"correct_episode": {"incident_fingerprint": "OPS-1", "resolution_nl": "renewed the certificate"}, "reason": "resolution too", "by": "cy"}"#,
    "\n",
    r#"{"correct_fact": {"episode": "CR-2", "relation": "MENTIONS", "entity_type": "service", "entity_ref": "authelia", "t_invalid": "2026-03-01T00:00:00Z"}, "reason": "authelia was retired", "by": "cy"}"#,
    "\n"
);

pub fn correct_at(
    store: &dyn MemoryStore,
    text: &str,
    at: &str,
) -> Result<strata::correct::CorrectReport, StoreError> {
    let items = parse_text("c.ndjson", text).unwrap();
    store.correct(&CorrectionBatch {
        items,
        at: KnowledgeTime::At(ts(at)),
        origin: WriteOrigin::Human,
    })
}

pub const VALID: [&str; 6] = [
    "2026-01-01T00:00:00Z",
    "2026-01-14T12:00:00Z",
    "2026-01-15T00:00:00Z",
    "2026-01-16T00:00:00Z",
    "2026-02-05T00:00:00Z",
    "2026-03-05T00:00:00Z",
];

pub const KNOWN: [&str; 9] = [
    "2026-01-09T00:00:00Z",
    "2026-01-10T00:00:00Z",
    "2026-01-20T00:00:00Z",
    "2026-01-31T23:59:59.999Z",
    "2026-02-01T00:00:00Z",
    "2026-02-05T00:00:00Z",
    "2026-02-09T23:59:59.999Z",
    "2026-02-10T00:00:00Z",
    "2026-03-05T00:00:00Z",
];

fn text<T: serde::Serialize, E: std::fmt::Display>(r: Result<T, E>) -> String {
    match r {
        Ok(v) => serde_json::to_string(&v).unwrap(),
        Err(e) => format!("error: {e}"),
    }
}

/// Every answer the store gives about these episodes at (V, K), as one text.
pub fn answers(store: &dyn MemoryStore, valid_at: &str, known_at: &str) -> String {
    let as_of = AsOf {
        valid_at: ts(valid_at),
        known_at: ts(known_at),
    };
    let k = as_of.known_at;
    let mut out = Vec::new();
    for fp in EPISODES {
        out.push(text(facts_as_of(store, fp, as_of)));
        out.push(text(lesson_as_of(store, fp, as_of)));
        out.push(text(lineage(store, fp, k)));
    }
    let page = store
        .timeline(&TimelineQuery {
            entity: None,
            known_at: Some(k),
            offset: 0,
            limit: 10,
        })
        .map(|p| TimelinePage::of(p, k));
    out.push(text(page));
    let fps: Vec<String> = EPISODES.iter().map(|s| s.to_string()).collect();
    out.push(format!(
        "{:?}",
        store.supersession_marks(&fps, Some(k)).unwrap()
    ));
    out.push(text(review(store, k, false)));
    let episodes: Vec<MemoryEpisode> = store
        .episodes(&fps)
        .unwrap()
        .into_iter()
        .filter(|e| e.ingested_at <= k)
        .collect();
    let refs: Vec<&MemoryEpisode> = episodes.iter().collect();
    let facts = store.facts_of_episodes(&fps).unwrap();
    let fates = strata::recall::fate::fates(store, &refs, &facts, &as_of).unwrap();
    let mut fates: Vec<_> = fates.into_iter().collect();
    fates.sort_by(|a, b| a.0.cmp(&b.0));
    out.push(format!("{fates:?}"));
    out.join("\n")
}

pub fn grid(store: &dyn MemoryStore) -> Vec<((&'static str, &'static str), String)> {
    let mut out = Vec::new();
    for k in KNOWN {
        for v in VALID {
            out.push(((v, k), answers(store, v, k)));
        }
    }
    out
}

/// The whole check, for any backend: `corrected` and `plain` hold the same seeded memory.
pub fn earlier_answers_never_change(corrected: &dyn MemoryStore, plain: &dyn MemoryStore) {
    seed_superseded(corrected);
    seed_superseded(plain);
    let before = grid(plain);
    assert_eq!(grid(corrected), before, "same memory, same answers");
    let report = correct_at(corrected, FIRST, "2026-02-01T00:00:00Z").unwrap();
    assert_eq!(
        (report.corrections, report.retracted, report.confirmed),
        (4, 1, 1)
    );
    assert_eq!(
        (
            report.episodes_corrected,
            report.facts_corrected,
            report.facts_reopened
        ),
        (1, 1, 1)
    );
    let after_first = grid(corrected);
    let k2 = ts("2026-02-01T00:00:00Z");
    let mut differed = 0;
    for (((v, k), plain_answer), (_, corrected_answer)) in before.iter().zip(&after_first) {
        if ts(k) < k2 {
            assert_eq!(
                corrected_answer, plain_answer,
                "as of V={v} K={k}, before the correction, the answer changed"
            );
        } else if corrected_answer != plain_answer {
            differed += 1;
        }
    }
    assert_eq!(
        differed,
        VALID.len() * 5,
        "from K2 on every answer reflects the corrections"
    );

    // From K2: the retracted supersession's fact is valid again, the lineage says who and why.
    let at = |v: &str, k: &str| AsOf {
        valid_at: ts(v),
        known_at: ts(k),
    };
    let cr1 = facts_as_of(
        corrected,
        "CR-1",
        at("2026-02-05T00:00:00Z", "2026-02-05T00:00:00Z"),
    )
    .unwrap();
    let fix = cr1
        .facts
        .iter()
        .find(|f| f.relation == "RESOLVED_BY")
        .unwrap();
    assert_eq!(fix.state, strata::model::FactState::Valid, "{fix:?}");
    assert_eq!(fix.superseded_by, None);
    let old = facts_as_of(
        corrected,
        "CR-1",
        at("2026-02-05T00:00:00Z", "2026-01-31T23:59:59.999Z"),
    )
    .unwrap();
    assert_eq!(
        old.facts
            .iter()
            .find(|f| f.relation == "RESOLVED_BY")
            .unwrap()
            .state,
        strata::model::FactState::Invalidated
    );
    let chain = lineage(corrected, "CR-1", ts("2026-02-05T00:00:00Z")).unwrap();
    let review = chain.forwards[0].review.as_ref().unwrap();
    assert_eq!(review.verdict, strata::model::Verdict::Retracted);
    assert_eq!(
        (review.by.as_str(), review.reason.as_str()),
        ("ana", "CR-2 fixed another fault")
    );
    let ops = corrected.episode("OPS-1").unwrap().unwrap();
    assert_eq!(
        ops.known_at(ts("2026-01-31T23:59:59.999Z")).summary_nl,
        "OPS-1 summary"
    );
    assert_eq!(
        ops.known_at(k2).summary_nl,
        "OPS-1: the real cause was an expired certificate"
    );
    let cr2 = facts_as_of(
        corrected,
        "CR-2",
        at("2026-01-14T12:00:00Z", "2026-02-05T00:00:00Z"),
    )
    .unwrap();
    assert!(
        cr2.facts
            .iter()
            .any(|f| f.relation == "MENTIONS" && f.state == strata::model::FactState::Valid),
        "the corrected interval begins a day earlier: {cr2:?}"
    );

    // A correction of the correction: a chain of versions; every earlier K stays as it was.
    let report = correct_at(corrected, SECOND, "2026-02-10T00:00:00Z").unwrap();
    assert_eq!((report.confirmed, report.facts_reclosed), (1, 1));
    let after_second = grid(corrected);
    let k3 = ts("2026-02-10T00:00:00Z");
    for (((v, k), first), (_, second)) in after_first.iter().zip(&after_second) {
        if ts(k) < k3 {
            assert_eq!(
                second, first,
                "as of V={v} K={k}, before the second batch, the answer changed"
            );
        }
    }
    let cr1 = facts_as_of(
        corrected,
        "CR-1",
        at("2026-02-05T00:00:00Z", "2026-03-05T00:00:00Z"),
    )
    .unwrap();
    assert_eq!(
        cr1.facts
            .iter()
            .find(|f| f.relation == "RESOLVED_BY")
            .unwrap()
            .state,
        strata::model::FactState::Invalidated,
        "confirmed again: closed again"
    );
    let ops = corrected.episode("OPS-1").unwrap().unwrap().known_at(k3);
    assert_eq!(
        (ops.summary_nl.as_str(), ops.resolution_nl.as_str()),
        (
            "OPS-1: the real cause was an expired certificate",
            "renewed the certificate"
        )
    );
    let log = corrected.corrections().unwrap();
    assert_eq!(log.len(), 7);
    assert_eq!(
        log.iter().map(|c| c.sequence).collect::<Vec<_>>(),
        (1..=7).collect::<Vec<_>>()
    );
    assert!(
        corrected.check().unwrap().is_consistent(),
        "{:?}",
        corrected.check().unwrap().problems
    );
}

/// Refusals name what they refuse, and a refused batch writes nothing.
pub fn refusals_name_what_they_refuse(store: &dyn MemoryStore) {
    seed_superseded(store);
    let refuse = |text: &str, at: &str| correct_at(store, text, at).unwrap_err().to_string();
    let missing = refuse(
        r#"{"retract_supersession": {"episode": "CR-2", "prior": "OPS-1", "entity_type": "change", "entity_ref": "cfg-OPS-1"}, "reason": "r", "by": "ana"}"#,
        "2026-02-01T00:00:00Z",
    );
    assert!(
        missing.contains(r#"no supersession "CR-2" superseding "OPS-1" about change|cfg-OPS-1"#),
        "{missing}"
    );
    let before = grid(store);
    // One good line and one bad: nothing is written.
    let half = refuse(
        &format!(
            "{}\n{}",
            FIRST.lines().next().unwrap(),
            r#"{"correct_episode": {"incident_fingerprint": "NOPE", "summary_nl": "x"}, "reason": "r", "by": "ana"}"#
        ),
        "2026-02-01T00:00:00Z",
    );
    assert!(
        half.starts_with("c.ndjson:2: correct_episode: no episode \"NOPE\""),
        "{half}"
    );
    assert_eq!(grid(store), before, "a refused batch writes nothing");
    assert!(store.corrections().unwrap().is_empty());
    correct_at(store, FIRST.lines().next().unwrap(), "2026-02-01T00:00:00Z").unwrap();
    let again = refuse(FIRST.lines().next().unwrap(), "2026-02-02T00:00:00Z");
    assert!(
        again.contains(
            "was already retracted by ana at 2026-02-01T00:00:00Z (CR-2 fixed another fault)"
        ),
        "{again}"
    );
    let past = refuse(FIRST.lines().nth(1).unwrap(), "2026-01-25T00:00:00Z");
    assert!(
        past.contains("a correction in the past is refused"),
        "{past}"
    );
    let same = refuse(
        r#"{"correct_episode": {"incident_fingerprint": "CR-1", "summary_nl": "CR-1 summary"}, "reason": "r", "by": "ana"}"#,
        "2026-02-03T00:00:00Z",
    );
    assert!(same.contains("already says that"), "{same}");
    let backwards = refuse(
        r#"{"correct_fact": {"episode": "CR-1", "relation": "MENTIONS", "entity_type": "service", "entity_ref": "authelia", "t_invalid": "2025-12-01T00:00:00Z"}, "reason": "r", "by": "ana"}"#,
        "2026-02-03T00:00:00Z",
    );
    assert!(backwards.contains("correct_fact.t_invalid"), "{backwards}");
}

#[test]
fn earlier_answers_never_change_on_the_embedded_store() {
    let (_a, corrected) = temp_store();
    let (_b, plain) = temp_store();
    earlier_answers_never_change(&corrected, &plain);
}

#[test]
fn refusals_on_the_embedded_store() {
    let (_d, store) = temp_store();
    refusals_name_what_they_refuse(&store);
}

#[test]
fn strata_correct_locates_errors_and_records_a_batch() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let records = data.join("r.ndjson");
    std::fs::write(
        &records,
        ndjson(&[
            record("CR-1", "2026-01-01T00:00:00Z"),
            supersede("CR-2", "2026-01-15T00:00:00Z", "CR-1"),
        ]),
    )
    .unwrap();
    let o = strata(
        data,
        &[
            "--now",
            "2026-01-20T00:00:00Z",
            "ingest",
            records.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let bad = data.join("bad.ndjson");
    std::fs::write(
        &bad,
        concat!(
            r#"{"retract_supersession": {"episode": "CR-2", "prior": "CR-1", "entity_type": "change", "entity_ref": "cfg-CR-1"}, "reason": "wrong"}"#,
            "\n"
        ),
    )
    .unwrap();
    let o = strata(
        data,
        &[
            "--now",
            "2026-02-01T00:00:00Z",
            "correct",
            bad.to_str().unwrap(),
        ],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("bad.ndjson:1: by: is missing"),
        "{}",
        stderr(&o)
    );
    let good = data.join("good.ndjson");
    std::fs::write(&good, FIRST.lines().next().unwrap()).unwrap();
    let o = strata(
        data,
        &[
            "--now",
            "2026-02-01T00:00:00Z",
            "correct",
            good.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("1 corrections recorded at 2026-02-01T00:00:00Z: 1 retracted"),
        "{}",
        stdout(&o)
    );
    let o = strata(data, &["--now", "2026-02-02T00:00:00Z", "lineage", "CR-1"]);
    assert!(
        stdout(&o).contains("retracted by ana at 2026-02-01T00:00:00Z: CR-2 fixed another fault"),
        "{}",
        stdout(&o)
    );
    let o = strata(data, &["--now", "2026-02-02T00:00:00Z", "review", "--json"]);
    let rows: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows[0]["verdict"], "retracted");
    assert_eq!(rows[0]["prior_summary"], "CR-1 summary");
    let o = strata(
        data,
        &[
            "--now",
            "2026-02-02T00:00:00Z",
            "review",
            "--unreviewed",
            "--json",
        ],
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&o.stdout).unwrap(),
        json!([])
    );
    let o = strata(
        data,
        &[
            "--now",
            "2026-02-02T00:00:00Z",
            "changes",
            "--since",
            "2026-01-19T00:00:00Z",
            "--json",
        ],
    );
    let changes: Value = serde_json::from_slice(&o.stdout).unwrap();
    let kinds: Vec<&str> = changes
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "episode",
            "episode",
            "supersession",
            "invalidation",
            "retract_supersession"
        ]
    );
    assert_eq!(changes[4]["origin"], "human");
    assert_eq!(changes[4]["by"], "ana");
    let o = strata(
        data,
        &[
            "--now",
            "2026-02-02T00:00:00Z",
            "changes",
            "--since",
            "2026-01-25T00:00:00Z",
            "--until",
            "2026-01-31T00:00:00Z",
            "--json",
        ],
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&o.stdout).unwrap(),
        json!([])
    );
}

/// Two reviewers retract the same supersession at once, from two processes: exactly one
/// wins; the other is told who got there first. `store`: extra arguments naming the store.
fn two_reviewers_race(data: &std::path::Path, store: &[&str]) {
    let records = data.join("r.ndjson");
    std::fs::write(
        &records,
        ndjson(&[
            record("CR-1", "2026-01-01T00:00:00Z"),
            supersede("CR-2", "2026-01-15T00:00:00Z", "CR-1"),
        ]),
    )
    .unwrap();
    let args = |rest: &[&str]| -> Vec<String> {
        store.iter().chain(rest).map(|s| s.to_string()).collect()
    };
    let run = |rest: &[&str]| {
        let a = args(rest);
        strata(data, &a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let o = run(&[
        "--now",
        "2026-01-20T00:00:00Z",
        "ingest",
        "--no-index",
        records.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = |by: &str| {
        format!(
            r#"{{"retract_supersession": {{"episode": "CR-2", "prior": "CR-1", "entity_type": "change", "entity_ref": "cfg-CR-1"}}, "reason": "wrong", "by": "{by}"}}"#
        )
    };
    for by in ["ana", "ben"] {
        std::fs::write(data.join(format!("{by}.ndjson")), line(by)).unwrap();
    }
    let spawn = |by: &str| {
        let file = data.join(format!("{by}.ndjson"));
        let a = args(&["correct", file.to_str().unwrap()]);
        strata_command(data, &a.iter().map(String::as_str).collect::<Vec<_>>())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn("ana"), spawn("ben"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let (winner, loser, lost) = match (a.status.success(), b.status.success()) {
        (true, false) => ("ana", "ben", b),
        (false, true) => ("ben", "ana", a),
        other => panic!(
            "expected exactly one winner, got {other:?}: {} / {}",
            stderr(&a),
            stderr(&b)
        ),
    };
    assert!(
        stderr(&lost).contains(&format!("was already retracted by {winner} at")),
        "{loser} was not told who won: {}",
        stderr(&lost)
    );
    let o = run(&["review", "--json"]);
    let rows: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows[0]["review"]["by"], winner);
    assert_eq!(rows.as_array().unwrap().len(), 1);
}

#[test]
fn two_reviewers_at_once_exactly_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    two_reviewers_race(dir.path(), &[]);
}

#[test]
fn two_reviewers_at_once_exactly_one_wins_on_falkordb() {
    let dir = tempfile::tempdir().unwrap();
    let url = common::falkordb::graph_url("race").to_string();
    two_reviewers_race(dir.path(), &["--store", &url]);
}

#[test]
fn earlier_answers_never_change_on_falkordb() {
    let corrected = common::falkordb::store("corrected");
    let plain = common::falkordb::store("plain");
    earlier_answers_never_change(&corrected, &plain);
}

#[test]
fn refusals_on_falkordb() {
    refusals_name_what_they_refuse(&common::falkordb::store("refusals"));
}

#[test]
fn strata_check_verifies_version_intervals() {
    let (_d, store) = temp_store();
    seed_superseded(&store);
    correct_at(&store, FIRST, "2026-02-01T00:00:00Z").unwrap();
    let report = store.check().unwrap();
    assert!(report.is_consistent(), "{:?}", report.problems);
    let _ = Timestamp::MAX;
}

/// The MCP tool `correct_memory` takes the same shapes as `strata correct`: recorded as the
/// agent's, refused with the words the CLI uses.
#[test]
fn an_agent_corrects_over_mcp() {
    use std::io::{BufRead, BufReader, Write};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let records = data.join("r.ndjson");
    std::fs::write(
        &records,
        ndjson(&[
            record("CR-1", "2026-01-01T00:00:00Z"),
            supersede("CR-2", "2026-01-15T00:00:00Z", "CR-1"),
        ]),
    )
    .unwrap();
    let o = strata(
        data,
        &[
            "--now",
            "2026-01-20T00:00:00Z",
            "ingest",
            "--no-index",
            records.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mut child = strata_command(data, &["--now", "2026-02-01T00:00:00Z", "mcp"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let retract: Value = serde_json::from_str(FIRST.lines().next().unwrap()).unwrap();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "correct_memory", "arguments": retract}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "correct_memory", "arguments": retract}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "correct_memory", "arguments": {"correct_episode": {"incident_fingerprint": "CR-1"}, "reason": "r", "by": "bot"}}}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answers = std::collections::BTreeMap::new();
    for m in &messages {
        writeln!(stdin, "{m}").unwrap();
        stdin.flush().unwrap();
        if m.get("id").is_none() {
            continue;
        }
        let line = lines.next().unwrap().unwrap();
        let reply: Value = serde_json::from_str(&line).unwrap();
        answers.insert(reply["id"].as_i64().unwrap(), reply);
    }
    drop(stdin);
    child.wait().unwrap();
    let first = &answers[&2]["result"];
    assert_ne!(first["isError"], true, "{first}");
    assert_eq!(first["structuredContent"]["retracted"], 1, "{first}");
    let again = answers[&3]["result"].to_string();
    assert!(
        again.contains("was already retracted by ana at 2026-02-01T00:00:00Z"),
        "{again}"
    );
    let shapeless = answers[&4]["result"].to_string();
    assert!(
        shapeless.contains("expected summary_nl, resolution_nl or both"),
        "{shapeless}"
    );
    let o = strata(
        data,
        &[
            "--now",
            "2026-02-02T00:00:00Z",
            "changes",
            "--since",
            "2026-02-01T00:00:00Z",
            "--json",
        ],
    );
    let changes: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(changes[0]["origin"], "agent", "{changes}");
}

/// A graph leg that stays open (the explorer's, the MCP server's) walks a retracted
/// supersession's facts as valid from the retraction on, and as closed before it.
fn a_live_graph_leg_follows_corrections(store: std::sync::Arc<dyn MemoryStore>) {
    use strata::recall::legs::GraphLeg;
    use strata::recall::{LegQuery, RecallLeg};
    seed_superseded(store.as_ref());
    let leg = GraphLeg::new(store.clone());
    let search = |k: &str| {
        leg.search(&LegQuery {
            text: String::new(),
            entities: vec!["change:cfg-CR-1".parse().unwrap()],
            as_of: AsOf {
                valid_at: ts("2026-02-05T00:00:00Z"),
                known_at: ts(k),
            },
            limit: 10,
            deadline: None,
        })
        .unwrap()
        .fingerprints
    };
    assert!(search("2026-02-05T00:00:00Z").is_empty(), "closed by CR-2");
    correct_at(store.as_ref(), FIRST, "2026-02-01T00:00:00Z").unwrap();
    // What the engine does before each recall: bring the leg up to the store.
    leg.catch_up().unwrap();
    let found = search("2026-02-05T00:00:00Z");
    assert_eq!(
        found.first().map(String::as_str),
        Some("CR-1"),
        "valid again from K2: {found:?}"
    );
    assert!(
        search("2026-01-31T00:00:00Z").is_empty(),
        "as it was before K2"
    );
}

#[test]
fn a_live_graph_leg_follows_corrections_on_the_embedded_store() {
    let (_d, store) = temp_store();
    a_live_graph_leg_follows_corrections(std::sync::Arc::new(store));
}

#[test]
fn a_live_graph_leg_follows_corrections_on_falkordb() {
    a_live_graph_leg_follows_corrections(std::sync::Arc::new(common::falkordb::store("live_leg")));
}

/// A graph leg whose links of a hub are cached patches just the corrected fact's links: as
/// of K2 on, NEW-1's mention of authelia begins later than the query's V; as of before K2 it
/// does not. (NEW-1 is in no lineage, so the walk reaches it through that mention only.)
fn a_live_graph_leg_follows_a_corrected_fact(store: std::sync::Arc<dyn MemoryStore>) {
    use strata::recall::legs::GraphLeg;
    use strata::recall::{LegQuery, RecallLeg};
    seed_superseded(store.as_ref());
    ingest_at(
        store.as_ref(),
        &[record("NEW-1", "2026-01-03T00:00:00Z")],
        "2026-01-21T00:00:00Z",
    )
    .unwrap();
    let leg = GraphLeg::new(store.clone());
    leg.catch_up().unwrap();
    let search = |k: &str| {
        let mut found = leg
            .search(&LegQuery {
                text: String::new(),
                entities: vec!["service:authelia".parse().unwrap()],
                as_of: AsOf {
                    valid_at: ts("2026-01-15T12:00:00Z"),
                    known_at: ts(k),
                },
                limit: 10,
                deadline: None,
            })
            .unwrap()
            .fingerprints;
        found.sort();
        found
    };
    // Reads authelia's links into the leg's cache.
    assert_eq!(
        search("2026-02-05T00:00:00Z"),
        ["CR-1", "CR-2", "NEW-1", "OPS-1"]
    );
    let fact = r#"{"correct_fact": {"episode": "NEW-1", "relation": "MENTIONS", "entity_type": "service", "entity_ref": "authelia", "t_valid": "2026-01-16T00:00:00Z"}, "reason": "it began later", "by": "ben"}"#;
    correct_at(store.as_ref(), fact, "2026-02-01T00:00:00Z").unwrap();
    // A text correction besides, which changes no link.
    let text = FIRST.lines().nth(2).unwrap();
    correct_at(store.as_ref(), text, "2026-02-02T00:00:00Z").unwrap();
    leg.catch_up().unwrap();
    assert_eq!(search("2026-02-05T00:00:00Z"), ["CR-1", "CR-2", "OPS-1"]);
    assert_eq!(
        search("2026-01-31T00:00:00Z"),
        ["CR-1", "CR-2", "NEW-1", "OPS-1"],
        "as before K2"
    );
}

#[test]
fn a_live_graph_leg_follows_a_corrected_fact_on_the_embedded_store() {
    let (_d, store) = temp_store();
    a_live_graph_leg_follows_a_corrected_fact(std::sync::Arc::new(store));
}

#[test]
fn a_live_graph_leg_follows_a_corrected_fact_on_falkordb() {
    a_live_graph_leg_follows_a_corrected_fact(std::sync::Arc::new(common::falkordb::store(
        "live_fact",
    )));
}

/// On FalkorDB the log after a sequence is read from there on, not whole: a record before
/// it that no longer decodes is not read.
#[test]
fn falkordb_reads_the_corrections_after_a_sequence_only() {
    let url = common::falkordb::graph_url("corrections_after");
    let store = strata::store::falkordb::FalkorStore::connect(&url).unwrap();
    seed_superseded(&store);
    correct_at(&store, FIRST, "2026-02-01T00:00:00Z").unwrap();
    let all = store.corrections_since(0, 10).unwrap();
    assert_eq!(all.len(), 4);
    let page = store.corrections_since(1, 2).unwrap();
    assert_eq!(page, all[1..3]);
    common::falkordb::raw_query(
        &url,
        "MATCH (c:MemoryCorrection {sequence: 1}) SET c.body = 'not json'",
    );
    assert!(
        store.corrections_since(0, 10).is_err(),
        "the first record is read"
    );
    assert_eq!(store.corrections_since(1, 10).unwrap(), all[1..]);
}
