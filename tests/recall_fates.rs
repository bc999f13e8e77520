//! Recall says what still holds: each result carries its resolution and fixes, the later
//! episodes that superseded them and the fix that holds now, as of the recall's (V, K); the
//! stale policies and the brief. The demo memory's INC-0274 fix was superseded by INC-0289
//! (recorded 2026-10-29T12:44Z).

mod common;

use common::*;
use serde_json::Value;

const QUERY: &str = "Grafana SSO broken after a caddy route change";

fn demo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let seeded = strata(
        dir.path(),
        &[
            "--embedder",
            "hash",
            "--now",
            "2026-12-01T00:00:00Z",
            "demo",
        ],
    );
    assert!(seeded.status.success(), "{}", stderr(&seeded));
    dir
}

fn recall(dir: &std::path::Path, extra: &[&str]) -> Value {
    let args = [
        &[
            "--embedder",
            "hash",
            "--now",
            "2026-12-01T00:00:00Z",
            "recall",
            QUERY,
            "--json",
            "--timeout-ms",
            "30000",
        ],
        extra,
    ]
    .concat();
    let out = strata(dir, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn result<'a>(r: &'a Value, fp: &str) -> Option<&'a Value> {
    r["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["fingerprint"] == fp)
}

#[test]
fn a_superseded_result_says_what_superseded_it_and_what_holds_now() {
    let dir = demo();
    let marked = recall(dir.path(), &[]);
    assert_eq!(marked["stale"], "mark");
    let r = result(&marked, "INC-0274").expect("INC-0274 is recalled");
    assert!(r["resolution"].as_str().unwrap().contains("pr-5059"), "{r}");
    let fixes = r["resolved_by"].as_array().unwrap();
    assert!(
        fixes
            .iter()
            .any(|f| f["entity"] == "change:pr-5059" && f["state"] == "valid"),
        "{r}"
    );
    assert!(
        fixes.iter().any(|f| f["state"] == "invalidated"
            && f["t_invalid"].as_str().unwrap().starts_with("2026-10-29")),
        "the closed fix says when it ended: {r}"
    );
    let by = &r["superseded_by"][0];
    assert_eq!(by["episode"], "INC-0289", "{r}");
    assert!(by["entity"].as_str().unwrap().starts_with("config_key:"));
    assert!(
        by["known_at"]
            .as_str()
            .unwrap()
            .starts_with("2026-10-29T12:44")
    );
    let now = &r["current_successor"];
    assert_eq!(now["fingerprint"], "INC-0289");
    assert!(
        now["resolved_by"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e == "change:pr-5178"),
        "{now}"
    );
    // A result nothing superseded says so with an empty list and no successor.
    let current = marked["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["fingerprint"] == "INC-0300")
        .expect("INC-0300 is recalled");
    assert_eq!(current["superseded_by"], Value::Array(Vec::new()));
    assert!(current.get("current_successor").is_none());

    // The brief names the supersession and the fix that holds now.
    let brief = marked["brief"].as_str().unwrap();
    let line = brief
        .lines()
        .find(|l| l.starts_with("INC-0274 (2026-09-24)"))
        .unwrap_or_else(|| panic!("{brief}"));
    assert!(
        line.contains("fixed by change:pr-5059")
            && line.contains("was superseded 2026-10-29 by INC-0289 (change:pr-5178")
            && line.ends_with("which holds now."),
        "{line}"
    );
    assert!(brief.chars().count() <= 1200);

    // keep: ranked alike, no word of supersession.
    let kept = recall(dir.path(), &["--stale", "keep"]);
    let order = |r: &Value| -> Vec<String> {
        r["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["fingerprint"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(order(&kept), order(&marked));
    assert!(
        result(&kept, "INC-0274")
            .unwrap()
            .get("superseded_by")
            .is_none()
    );
    assert!(!kept["brief"].as_str().unwrap().contains("superseded"));

    // follow: the successor comes directly after the result it succeeds.
    let followed = recall(dir.path(), &["--stale", "follow"]);
    let fps = order(&followed);
    let at = fps.iter().position(|f| f == "INC-0274").unwrap();
    assert_eq!(fps[at + 1], "INC-0289", "{fps:?}");
    let placed = &followed["results"][at + 1];
    assert_eq!(placed["follows"], "INC-0274");
    assert_eq!(placed["decided_by"], "successor");
    assert_eq!(fps.len(), 10, "still the top k");
}

#[test]
fn before_the_supersession_was_known_there_is_nothing_to_mark() {
    let dir = demo();
    let before = recall(
        dir.path(),
        &[
            "--known-at",
            "2026-10-29T12:43:00Z",
            "--valid-at",
            "2026-12-01T00:00:00Z",
        ],
    );
    let r = result(&before, "INC-0274").expect("INC-0274 is recalled");
    assert_eq!(r["superseded_by"], Value::Array(Vec::new()), "{r}");
    assert!(r.get("current_successor").is_none());
    assert!(
        r["resolved_by"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["state"] == "valid"),
        "as known then, every fix held: {r}"
    );
    assert!(!before["brief"].as_str().unwrap().contains("superseded"));
}

#[test]
fn the_brief_is_bounded_and_plain() {
    let dir = demo();
    let out = strata(
        dir.path(),
        &[
            "--embedder",
            "hash",
            "--now",
            "2026-12-01T00:00:00Z",
            "recall",
            QUERY,
            "--brief",
            "--stale",
            "follow",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("the current successor of INC-0274"), "{text}");
    assert!(text.lines().count() <= 6, "{text}");
    assert!(!text.contains('\u{1b}'));
}
