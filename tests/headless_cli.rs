//! `strata headless`: scripts fail before running when malformed, expectations fail the
//! run with the screen, and recordings log actions, replies and frames.

mod common;

use std::process::Command;

fn headless(
    data: &std::path::Path,
    script: &str,
    extra: &[&str],
) -> (std::process::Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.tape");
    std::fs::write(&path, script).unwrap();
    let out = dir.path().join("frames");
    let output = Command::new(env!("CARGO_BIN_EXE_strata"))
        .env("STRATA_EMBEDDER", "hash")
        .arg("--data")
        .arg(data)
        .args([
            "--now",
            "2026-12-01T00:00:00Z",
            "headless",
            "--demo",
            "--mask",
            "--script",
        ])
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    (output, dir)
}

#[test]
fn a_malformed_script_fails_before_anything_runs() {
    let data = tempfile::tempdir().unwrap();
    let (out, dir) = headless(
        data.path(),
        "WaitIdle\nSnapshot first\nKey Hyperspace\n",
        &[],
    );
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(
        err.contains("line 3") && err.contains("unknown key"),
        "{err}"
    );
    assert!(
        !dir.path().join("frames").exists(),
        "nothing may run, not even the first snapshot"
    );
    assert!(
        !data.path().join("store").exists(),
        "the store is not even opened"
    );
}

#[test]
fn a_failed_expectation_exits_non_zero_with_the_line_and_the_screen() {
    let data = tempfile::tempdir().unwrap();
    let (out, _dir) = headless(
        data.path(),
        "WaitIdle\nExpect \"Timeline\"\nExpect \"no such words\"\n",
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = common::stderr(&out);
    assert!(
        err.contains("line 3") && err.contains("no such words"),
        "{err}"
    );
    assert!(err.contains("1 Timeline"), "the screen is printed:\n{err}");
}

#[test]
fn snapshots_are_written_as_text_and_svg_and_events_are_recorded() {
    let data = tempfile::tempdir().unwrap();
    let events = data.path().join("events.jsonl");
    let (out, dir) = headless(
        data.path(),
        "WaitIdle\nKey Down 2\nWaitIdle\nAction recall.seed\nWaitIdle\nSnapshot seeded\n",
        &["--events", events.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = std::fs::read_to_string(dir.path().join("frames/seeded.txt")).unwrap();
    assert!(
        text.contains("3 Recall") && text.contains("#1 score"),
        "{text}"
    );
    let svg = std::fs::read_to_string(dir.path().join("frames/seeded.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") || svg.starts_with("<?xml"),
        "{}",
        &svg[..80]
    );
    let log: Vec<serde_json::Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds = |k: &str| log.iter().filter(|e| e["event"] == k).count();
    assert!(
        kinds("action") >= 3 && kinds("reply") >= 3 && kinds("frame") == 6,
        "{log:?}"
    );
    assert!(
        log.iter()
            .any(|e| e["event"] == "action" && e["name"] == "recall.seed" && e["line"] == 4)
    );
    assert!(
        log.iter()
            .any(|e| e["event"] == "reply" && e["kind"] == "recall")
    );
}

#[test]
fn the_explorer_refuses_to_start_without_a_terminal() {
    let data = tempfile::tempdir().unwrap();
    let out = common::strata(data.path(), &[]);
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("needs a terminal"),
        "{}",
        common::stderr(&out)
    );
}

/// Queries run in the query box are kept per store in the data directory, redacted, and
/// come back with ↑ in the next session.
#[test]
fn the_query_history_outlives_the_session_redacted() {
    let data = tempfile::tempdir().unwrap();
    let (out, _dir) = headless(
        data.path(),
        "WaitIdle\nKey 3\nKey i\nType \"login loop for ops@example.com\"\nKey Enter\nWaitIdle\nKey i\nKey Ctrl+u\nType \"disk full\"\nKey Enter\nWaitIdle\n",
        &[],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let file = data.path().join("history").join("embedded.jsonl");
    let kept = std::fs::read_to_string(&file).unwrap();
    assert!(
        !kept.contains("ops@example.com"),
        "redacted when kept:\n{kept}"
    );
    assert_eq!(kept.lines().count(), 2, "{kept}");
    let (out, dir) = headless(
        data.path(),
        "WaitIdle\nKey 3\nKey i\nKey Up\nExpect \"disk full\"\nExpect \"query history 2/2\"\nKey Up\nExpect \"login loop for <email>\"\nSnapshot history\n",
        &[],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let screen = std::fs::read_to_string(dir.path().join("frames/history.txt")).unwrap();
    assert!(!screen.contains("ops@example.com"), "{screen}");
}
