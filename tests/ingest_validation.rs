//! Every malformed-input case names file, line (or index), field and what was expected,
//! and a file with any error writes nothing.

mod common;

use std::path::Path;

use common::*;
use serde_json::{Value, json};

fn write_file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Ingests a file of `good` then `bad` records; returns stderr after asserting nothing was written.
fn rejected(bad: Value) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = write_file(
        dir.path(),
        "batch.ndjson",
        &format!(
            "{}\n{}\n",
            serde_json::to_string(&record("INC-1", "2026-01-01T10:00:00Z")).unwrap(),
            serde_json::to_string(&bad).unwrap()
        ),
    );
    let out = strata(&data, &["--now", "2026-06-01T00:00:00Z", "ingest", &file]);
    assert!(
        !out.status.success(),
        "expected rejection: {}",
        stdout(&out)
    );
    let stats = strata(&data, &["stats", "--json"]);
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["episodes"], 0, "a rejected file writes nothing");
    assert_eq!(stats["entities"], 0);
    (file, stderr(&out))
}

fn assert_error(bad: Value, expected: &str) {
    let (file, err) = rejected(bad);
    let line = format!("{file}:2: {expected}");
    assert!(
        err.lines().any(|l| l == line),
        "expected line\n  {line}\ngot\n{err}"
    );
    assert!(err.contains("nothing from this file was written"), "{err}");
}

#[test]
fn bad_json_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_file(
        dir.path(),
        "bad.ndjson",
        "{\"incident_fingerprint\": \"INC-1\",\n",
    );
    let out = strata(&dir.path().join("d"), &["ingest", &file]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{file}:1: invalid JSON: expected one record object per line"
        )),
        "{err}"
    );
}

#[test]
fn missing_fingerprint() {
    let mut r = record("INC-2", "2026-01-02T10:00:00Z");
    r.as_object_mut().unwrap().remove("incident_fingerprint");
    assert_error(r, "incident_fingerprint: missing; expected a string");
}

#[test]
fn empty_fingerprint() {
    let r = record("", "2026-01-02T10:00:00Z");
    assert_error(
        r,
        "incident_fingerprint: must not be empty; expected a non-empty string",
    );
}

#[test]
fn zone_less_timestamp() {
    let mut r = record("INC-2", "2026-01-02T10:00:00Z");
    r["concluded_at"] = json!("2026-01-02T12:00:00");
    assert_error(
        r,
        "concluded_at: expected an RFC 3339 timestamp with a zone (e.g. 2026-03-01T12:00:00Z), got \"2026-01-02T12:00:00\"",
    );
}

#[test]
fn unparsable_timestamp() {
    let mut r = record("INC-2", "2026-01-02T10:00:00Z");
    r["t_valid"] = json!("yesterday");
    assert_error(
        r,
        "t_valid: expected an RFC 3339 timestamp with a zone (e.g. 2026-03-01T12:00:00Z), got \"yesterday\"",
    );
}

#[test]
fn t_invalid_not_after_t_valid() {
    let mut r = record("INC-2", "2026-01-02T10:00:00Z");
    r["mentions"] = json!([{"entity_type": "service", "entity_ref": "caddy",
        "t_valid": "2026-01-02T10:00:00Z", "t_invalid": "2026-01-02T10:00:00Z"}]);
    assert_error(
        r,
        "mentions[0].t_invalid: 2026-01-02T10:00:00Z is not after t_valid 2026-01-02T10:00:00Z; expected t_invalid > t_valid",
    );
}

#[test]
fn unknown_supersedes_target() {
    let mut r = record("INC-2", "2026-01-02T10:00:00Z");
    r["supersedes"] =
        json!([{"incident_fingerprint": "INC-404", "entity_type": "change", "entity_ref": "x"}]);
    assert_error(
        r,
        "supersedes[0].incident_fingerprint: unknown episode \"INC-404\": expected a fingerprint already in the store or in this batch",
    );
}

#[test]
fn empty_entity_type_and_ref() {
    let mut r = record("INC-2", "2026-01-02T10:00:00Z");
    r["resolved_by"] = json!([{"entity_type": "", "entity_ref": "cfg-1"}]);
    assert_error(
        r,
        "resolved_by[0].entity_type: must not be empty; expected a non-empty string",
    );
    let mut r = record("INC-2", "2026-01-02T10:00:00Z");
    r["mentions"] = json!([{"entity_type": "service", "entity_ref": ""}]);
    assert_error(
        r,
        "mentions[0].entity_ref: must not be empty; expected a non-empty string",
    );
}

#[test]
fn confidence_out_of_range() {
    let mut r = record("INC-2", "2026-01-02T10:00:00Z");
    r["provenance"]["confidence_score"] = json!(1.5);
    assert_error(
        r,
        "provenance.confidence_score: expected a number in [0, 1], got 1.5",
    );
}

#[test]
fn duplicate_fingerprint_with_different_content() {
    let mut r = record("INC-1", "2026-01-01T10:00:00Z");
    r["summary_nl"] = json!("something else");
    let (file, err) = rejected(r);
    let expected = format!(
        "{file}:2: incident_fingerprint: duplicate fingerprint \"INC-1\" with different content (first at {file}:1); expected each incident once"
    );
    assert!(err.lines().any(|l| l == expected), "{err}");
}

#[test]
fn unknown_field_is_named() {
    let mut r = record("INC-2", "2026-01-02T10:00:00Z");
    r["sumary_nl"] = json!("typo");
    let (_, err) = rejected(r);
    assert!(
        err.contains(":2: sumary_nl: unknown field; expected one of incident_fingerprint"),
        "{err}"
    );
}

#[test]
fn every_error_of_a_file_is_reported() {
    let mut r = record("INC-2", "2026-01-02T10:00:00Z");
    r["provenance"]["confidence_score"] = json!(-0.1);
    r["concluded_at"] = json!("nope");
    let (_, err) = rejected(r);
    assert!(err.contains("provenance.confidence_score"), "{err}");
    assert!(err.contains("concluded_at"), "{err}");
    assert!(err.contains("rejected (2 errors)"), "{err}");
}

#[test]
fn json_array_errors_name_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let mut bad = record("INC-2", "2026-01-02T10:00:00Z");
    bad["provenance"]["confidence_score"] = json!(2);
    let file = write_file(
        dir.path(),
        "batch.json",
        &serde_json::to_string_pretty(&json!([record("INC-1", "2026-01-01T10:00:00Z"), bad]))
            .unwrap(),
    );
    let out = strata(&dir.path().join("d"), &["ingest", &file]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "{file}[1]: provenance.confidence_score: expected a number in [0, 1], got 2"
        )),
        "{err}"
    );
}

#[test]
fn stored_fingerprint_with_different_content_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d");
    let good = write_file(
        dir.path(),
        "a.ndjson",
        &ndjson(&[record("INC-1", "2026-01-01T10:00:00Z")]),
    );
    assert!(strata(&data, &["ingest", &good]).status.success());
    let mut changed = record("INC-1", "2026-01-01T10:00:00Z");
    changed["resolution_nl"] = json!("rewritten history");
    let file = write_file(dir.path(), "b.ndjson", &ndjson(&[changed]));
    let out = strata(&data, &["ingest", &file]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&format!(
            "{file}:1: resolution_nl: episode \"INC-1\" is already stored with different content"
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn ndjson_and_array_ingest_then_reingest_reports_zero_new() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d");
    let a = write_file(
        dir.path(),
        "a.ndjson",
        &format!(
            "{}\n\n",
            ndjson(&[
                record("INC-1", "2026-01-01T10:00:00Z"),
                record("INC-2", "2026-01-02T10:00:00Z")
            ])
        ),
    );
    let b = write_file(
        dir.path(),
        "b.json",
        &serde_json::to_string(&json!([record("INC-3", "2026-01-03T10:00:00Z")])).unwrap(),
    );
    let out = strata(
        &data,
        &["--now", "2026-02-01T00:00:00Z", "ingest", &a, &b, "--json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report[0]["new_episodes"], 2);
    assert_eq!(report[1]["new_episodes"], 1);

    let again = strata(&data, &["--now", "2026-03-01T00:00:00Z", "ingest", &a, &b]);
    assert!(again.status.success());
    let text = stdout(&again);
    assert!(
        text.contains(&format!("{a}: 2 records, 0 new, 2 unchanged")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{b}: 1 records, 0 new, 1 unchanged")),
        "{text}"
    );
}

/// A record with a million mentions is refused at once, naming the field, its size and the
/// bound; the bound comes from the config's `[ingest]`, and within it repeats are found in
/// linear time (200,000 mentions, half of them repeats, fold to 100,000 facts).
#[test]
fn a_record_past_the_per_record_bounds_is_refused_and_the_bounds_are_configurable() {
    let mut huge = record("INC-HUGE", "2026-01-01T10:00:00Z");
    huge["mentions"] = Value::Array(
        (0..1_000_000)
            .map(|i| json!({"entity_type": "host", "entity_ref": format!("h{i}")}))
            .collect(),
    );
    let (_, stderr) = rejected(huge);
    assert!(
        stderr.contains(
            "mentions: 1000000 entries; expected at most 10000 (max_entries in the config's [ingest])"
        ),
        "{stderr}"
    );
    let mut long = record("INC-LONG", "2026-01-01T10:00:00Z");
    long["summary_nl"] = "x".repeat(2 << 20).into();
    let (_, stderr) = rejected(long);
    assert!(
        stderr.contains("summary_nl: 2097152 bytes; expected at most 1048576"),
        "{stderr}"
    );

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[ingest]\nmax_entries = 200000\n").unwrap();
    let mut wide = record("INC-WIDE", "2026-01-01T10:00:00Z");
    wide["mentions"] = Value::Array(
        (0..200_000)
            .map(|i| json!({"entity_type": "host", "entity_ref": format!("h{}", i % 100_000)}))
            .collect(),
    );
    let file = write_file(
        dir.path(),
        "wide.ndjson",
        &serde_json::to_string(&wide).unwrap(),
    );
    let data = dir.path().join("data");
    let out = strata(
        &data,
        &[
            "--config",
            config.to_str().unwrap(),
            "--now",
            "2026-06-01T00:00:00Z",
            "ingest",
            "--no-index",
            &file,
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let facts = strata(
        &data,
        &[
            "--now",
            "2026-06-01T00:00:00Z",
            "facts",
            "INC-WIDE",
            "--json",
        ],
    );
    let json: Value = serde_json::from_slice(&facts.stdout).unwrap();
    let n = json["facts"].as_array().map(Vec::len).unwrap_or_default();
    assert_eq!(n, 100_000 + 1, "{}", common::stderr(&facts));
}

/// Fingerprints, entity types and refs become the embedded store's keys, which are bounded:
/// each may hold 400 bytes (a record at every bound, superseding another, writes), and one
/// byte more is refused naming the field (a 5,000-byte fingerprint once failed in the store
/// with MDB_BAD_VALSIZE, found by tests/fuzz_inputs.rs).
#[test]
fn key_fields_are_bounded_so_that_every_valid_record_can_be_stored() {
    let long = |c: char| c.to_string().repeat(400);
    let mut prior = record(&long('p'), "2026-01-01T10:00:00Z");
    prior["mentions"] = json!([{"entity_type": long('t'), "entity_ref": long('r')}]);
    let mut next = record(&long('n'), "2026-01-02T10:00:00Z");
    next["mentions"] = json!([{"entity_type": long('t'), "entity_ref": long('r')}]);
    next["supersedes"] = json!([{
        "incident_fingerprint": long('p'), "entity_type": long('t'), "entity_ref": long('r')
    }]);
    next["skills"] = json!([{"name": long('s'), "trigger_entities": [format!("{}:{}", long('t'), long('r'))], "steps": ["restart"]}]);
    for r in [&mut prior, &mut next] {
        r["resolved_by"] = json!([{"entity_type": "change", "entity_ref": long('c')}]);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = write_file(dir.path(), "bounds.ndjson", &format!("{prior}\n{next}\n"));
    let data = dir.path().join("data");
    let out = strata(&data, &["--now", "2026-06-01T00:00:00Z", "ingest", &file]);
    assert!(out.status.success(), "{}", common::stderr(&out));

    let (_, err) = rejected(record(&"x".repeat(401), "2026-01-01T10:00:00Z"));
    assert!(
        err.contains(
            "incident_fingerprint: 401 bytes; expected at most 400 (it is part of the store's keys)"
        ),
        "{err}"
    );
    let mut wide = record("INC-WIDE-REF", "2026-01-01T10:00:00Z");
    wide["mentions"] = json!([{"entity_type": "host", "entity_ref": "r".repeat(401)}]);
    let (_, err) = rejected(wide);
    assert!(
        err.contains("mentions[0].entity_ref: entity ref is 401 bytes; expected at most 400"),
        "{err}"
    );
}

/// A file is written in chunks inside one transaction: a refusal from the store in its last
/// record (a stored episode given other content), after thousands of records went in, still
/// writes nothing of it.
#[test]
fn a_refusal_after_many_chunks_writes_nothing_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let first = write_file(
        dir.path(),
        "first.ndjson",
        &serde_json::to_string(&record("INC-KEEP", "2026-01-01T10:00:00Z")).unwrap(),
    );
    let out = strata(
        &data,
        &[
            "--now",
            "2026-06-01T00:00:00Z",
            "ingest",
            "--no-index",
            &first,
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let mut lines: Vec<String> = (0..5_000)
        .map(|i| {
            serde_json::to_string(&record(&format!("INC-BULK-{i:05}"), "2026-02-01T10:00:00Z"))
                .unwrap()
        })
        .collect();
    let mut changed = record("INC-KEEP", "2026-01-01T10:00:00Z");
    changed["summary_nl"] = "a rewritten summary".into();
    lines.push(serde_json::to_string(&changed).unwrap());
    let bulk = write_file(dir.path(), "bulk.ndjson", &lines.join("\n"));
    let out = strata(
        &data,
        &[
            "--now",
            "2026-06-02T00:00:00Z",
            "ingest",
            "--no-index",
            &bulk,
        ],
    );
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(
        err.contains(&format!(
            "{bulk}:5001: summary_nl: episode \"INC-KEEP\" is already stored with different content"
        )),
        "{err}"
    );
    let stats = strata(&data, &["stats", "--json"]);
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(
        stats["episodes"], 1,
        "nothing of the refused file was written"
    );
    let check = strata(&data, &["check"]);
    assert!(check.status.success(), "{}", common::stderr(&check));
}

/// Files are read as bytes, record by record: CRLF line ends are fine, a line that is not
/// UTF-8 is named, and a JSON array with a BOM is read element by element.
#[test]
fn crlf_lines_bad_bytes_and_a_bom_array() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let one = serde_json::to_string(&record("INC-CRLF-1", "2026-01-01T10:00:00Z")).unwrap();
    let two = serde_json::to_string(&record("INC-CRLF-2", "2026-01-02T10:00:00Z")).unwrap();
    let crlf = dir.path().join("crlf.ndjson");
    std::fs::write(&crlf, format!("{one}\r\n\r\n{two}\r\n")).unwrap();
    let crlf = crlf.display().to_string();
    let out = strata(
        &data,
        &[
            "--now",
            "2026-06-01T00:00:00Z",
            "ingest",
            "--no-index",
            &crlf,
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));

    let bad = dir.path().join("bad.ndjson");
    let mut bytes = format!("{one}\n").into_bytes();
    bytes.extend_from_slice(b"{\"incident_fingerprint\": \"\xff\xfe\"}\n");
    std::fs::write(&bad, bytes).unwrap();
    let bad = bad.display().to_string();
    let out = strata(&data, &["--now", "2026-06-01T00:00:00Z", "ingest", &bad]);
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains(&format!("{bad}:2: not UTF-8")),
        "{}",
        common::stderr(&out)
    );

    let three = serde_json::to_string(&record("INC-BOM-3", "2026-01-03T10:00:00Z")).unwrap();
    let array = dir.path().join("array.json");
    std::fs::write(&array, format!("\u{feff}  [\n{three},\n{one}\n]\n")).unwrap();
    let array = array.display().to_string();
    let out = strata(
        &data,
        &[
            "--now",
            "2026-06-01T00:00:00Z",
            "ingest",
            "--no-index",
            &array,
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(
        common::stdout(&out).contains("1 new, 1 unchanged"),
        "{}",
        common::stdout(&out)
    );
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, format!("[\n{three},\n{{\"oops\": ]")).unwrap();
    let broken = broken.display().to_string();
    let out = strata(&data, &["--now", "2026-06-01T00:00:00Z", "ingest", &broken]);
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains(&format!("{broken}:3:"))
            && common::stderr(&out).contains("invalid JSON: expected an array of records"),
        "{}",
        common::stderr(&out)
    );
}

/// A pipe cannot be read twice: it is read whole, as before files were streamed.
#[test]
fn a_pipe_is_ingested_too() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
        .env("STRATA_EMBEDDER", "hash")
        .arg("--data")
        .arg(dir.path().join("data"))
        .args([
            "--now",
            "2026-06-01T00:00:00Z",
            "ingest",
            "--no-index",
            "/dev/stdin",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let line = serde_json::to_string(&record("INC-PIPE", "2026-01-01T10:00:00Z")).unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{line}\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(
        common::stdout(&out).contains("1 new"),
        "{}",
        common::stdout(&out)
    );
}
