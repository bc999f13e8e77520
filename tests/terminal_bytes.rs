//! No byte of data reaches the terminal raw: control characters and escape sequences in
//! refs, fingerprints, file names and values are shown escaped on stdout and stderr alike.

mod common;

use std::process::Output;

use common::*;
use serde_json::json;

const HOSTILE: &str = "\u{1b}]0;PWNED\u{7}\u{1b}[2J\u{9b}31m\r\u{202e}desrever\u{2066}";

/// What must never reach a terminal raw: control characters (line breaks and tabs of the
/// output itself aside) and the bidirectional overrides and isolates.
fn raw(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn assert_clean(what: &str, out: &Output) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.chars().any(raw),
            "{what}: raw control or bidi character on {stream}: {text:?}"
        );
    }
}

#[test]
fn hostile_strings_in_every_error_path_are_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // The case: one ref, listed twice with different t_valid.
    let mut twice = record("INC-H-1", "2026-01-01T00:00:00Z");
    twice["mentions"] = json!([
        {"entity_type": "service", "entity_ref": HOSTILE, "t_valid": "2026-01-01T00:00:00Z"},
        {"entity_type": "service", "entity_ref": HOSTILE, "t_valid": "2026-01-01T01:00:00Z"}
    ]);
    let file = dir.path().join(format!("in{HOSTILE}.ndjson"));
    std::fs::write(&file, ndjson(&[twice])).unwrap();
    let out = strata(&data, &["ingest", file.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("\\u{1b}]0;PWNED"), "{}", stderr(&out));
    assert_clean("ingest rejection", &out);

    let mut good = record(&format!("INC{HOSTILE}"), "2026-01-01T00:00:00Z");
    good["mentions"] = json!([{"entity_type": "service", "entity_ref": HOSTILE}]);
    good["summary_nl"] = json!(format!("summary {HOSTILE}"));
    let ok = dir.path().join("ok.ndjson");
    std::fs::write(&ok, ndjson(&[good])).unwrap();
    let out = strata(
        &data,
        &[
            "--now",
            "2026-11-01T00:00:00Z",
            "ingest",
            ok.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_clean("ingest", &out);

    let fp = format!("INC{HOSTILE}");
    let entity = format!("service:{HOSTILE}");
    let missing = format!("NOPE{HOSTILE}");
    let runs: Vec<(&str, Vec<&str>)> = vec![
        ("timeline", vec!["timeline"]),
        ("timeline --entity", vec!["timeline", "--entity", &entity]),
        ("facts", vec!["facts", &fp]),
        ("facts of a missing episode", vec!["facts", &missing]),
        ("lineage of a missing episode", vec!["lineage", &missing]),
        ("lesson", vec!["lesson", &fp]),
        ("recall", vec!["recall", HOSTILE, "--entity", &entity]),
        ("bad entity flag", vec!["recall", "x", "--entity", HOSTILE]),
        ("missing file", vec!["ingest", &missing]),
        ("skills", vec!["skills", "--entity", &entity]),
    ];
    for (what, args) in runs {
        let out = strata(&data, &args);
        assert_clean(what, &out);
    }
    let out = strata(&data, &["facts", &fp, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_clean("facts --json", &out);
    let facts: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        facts["facts"][0]["entity_ref"], HOSTILE,
        "JSON keeps the data exactly, escaped as JSON"
    );
    let bad_data = dir.path().join(format!("d{HOSTILE}"));
    std::fs::write(&bad_data, b"not a directory").unwrap();
    assert_clean("a data dir that is a file", &strata(&bad_data, &["stats"]));
}
