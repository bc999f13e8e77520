//! One bad clock must not block every writer: a write stamped more than 5 minutes ahead of
//! the machine's clock is refused unless asked for; reads take any `--now`.

mod common;

use common::*;
use strata::model::Timestamp;

#[test]
fn a_write_from_the_future_is_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("one.ndjson");
    std::fs::write(&file, ndjson(&[record("INC-F-1", "2026-01-01T00:00:00Z")])).unwrap();
    let tomorrow = Timestamp::now().plus_millis(24 * 3_600_000).to_rfc3339();

    let out = strata(
        &data,
        &["--now", &tomorrow, "ingest", file.to_str().unwrap()],
    );
    assert!(!out.status.success());
    let text = stderr(&out);
    assert!(
        text.contains(&tomorrow)
            && text.contains("ahead of this machine's clock")
            && text.contains("--allow-future-now"),
        "{text}"
    );
    let stats = strata(&data, &["--now", &tomorrow, "stats", "--json"]);
    assert!(stats.status.success(), "reads take any --now");
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["episodes"], 0, "nothing was written");

    let out = strata(
        &data,
        &[
            "--now",
            &tomorrow,
            "--allow-future-now",
            "ingest",
            file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let in_four_minutes = Timestamp::now().plus_millis(4 * 60_000).to_rfc3339();
    let file2 = dir.path().join("two.ndjson");
    std::fs::write(&file2, ndjson(&[record("INC-F-2", "2026-01-02T00:00:00Z")])).unwrap();
    let other = dir.path().join("other");
    let out = strata(
        &other,
        &["--now", &in_four_minutes, "ingest", file2.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "a clock a little fast is fine: {}",
        stderr(&out)
    );
}
