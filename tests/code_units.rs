//! The code↔graph join: code units ingested from `code_units` records, joined to services,
//! point ids and episodes.

mod common;

use common::{record, stderr, stdout, strata};
use serde_json::{Value, json};
use strata::learning::code::embedding_ref;

fn ingest(dir: &std::path::Path, lines: &[Value]) -> std::process::Output {
    let file = dir.join(format!("in-{}.ndjson", fastrand_suffix(lines)));
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&file, text.join("\n")).unwrap();
    strata(
        dir,
        &[
            "--now",
            "2026-03-01T00:00:00Z",
            "ingest",
            file.to_str().unwrap(),
        ],
    )
}

fn fastrand_suffix(lines: &[Value]) -> usize {
    lines.iter().map(|l| l.to_string().len()).sum()
}

#[test]
fn code_units_join_services_point_ids_and_episodes() {
    let dir = tempfile::tempdir().unwrap();
    let units = json!({"code_units": [
        {"repo": "acme/auth", "path": "src/session.rs", "service": "authelia"},
        {"repo": "acme/auth", "path": "config/authelia.yml", "service": "authelia"},
        {"repo": "acme/edge", "path": "Caddyfile", "service": "caddy"}
    ]});
    let out = ingest(
        dir.path(),
        &[units.clone(), record("INC-1", "2026-01-01T00:00:00Z")],
    );
    assert!(out.status.success(), "{}", stderr(&out));

    let by_service: Vec<Value> = serde_json::from_slice(
        &strata(dir.path(), &["code", "--service", "authelia", "--json"]).stdout,
    )
    .unwrap();
    let paths: Vec<&str> = by_service
        .iter()
        .map(|u| u["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 2, "{by_service:?}");
    assert!(paths.contains(&"src/session.rs") && paths.contains(&"config/authelia.yml"));

    let point = embedding_ref("acme/auth", "src/session.rs");
    assert_eq!(
        point, "c114cc27-7563-5b1f-b932-edcd52dc828b",
        "uuid5(NAMESPACE_URL, repo|path)"
    );
    let back: Vec<Value> =
        serde_json::from_slice(&strata(dir.path(), &["code", "--ref", &point, "--json"]).stdout)
            .unwrap();
    assert_eq!(back[0]["service"], "authelia");
    assert_eq!(back[0]["embedding_ref"], point.as_str());

    // INC-1 mentions service:authelia (see common::record), not caddy.
    let of_episode: Vec<Value> = serde_json::from_slice(
        &strata(
            dir.path(),
            &[
                "--now",
                "2026-12-01T00:00:00Z",
                "code",
                "--episode",
                "INC-1",
                "--json",
            ],
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(of_episode.len(), 2);
    assert!(of_episode.iter().all(|u| u["service"] == "authelia"));

    let again = ingest(dir.path(), &[units]);
    assert!(again.status.success(), "{}", stderr(&again));
    let missing = strata(
        dir.path(),
        &["code", "--ref", "00000000-0000-5000-8000-000000000000"],
    );
    assert!(!missing.status.success());
    assert!(stderr(&missing).contains("no code unit"));
}

#[test]
fn a_second_owner_or_a_bad_unit_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = ingest(
        dir.path(),
        &[
            json!({"code_units": [{"repo": "acme/auth", "path": "src/session.rs", "service": "authelia"}]}),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = ingest(
        dir.path(),
        &[
            record("INC-9", "2026-01-01T00:00:00Z"),
            json!({"code_units": [{"repo": "acme/auth", "path": "src/session.rs", "service": "caddy"}]}),
        ],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("already recorded as owned by service \"authelia\""),
        "{}",
        stderr(&out)
    );
    assert!(
        !stdout(&strata(dir.path(), &["timeline"])).contains("INC-9"),
        "the rejected batch wrote no episode either"
    );
    let out = ingest(
        dir.path(),
        &[
            json!({"code_units": [{"repo": "acme|auth", "path": "", "service": "x", "owner": "me"}]}),
        ],
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(":1") && err.contains("code_units[0].path"),
        "{err}"
    );
    assert!(
        err.contains("code_units[0].owner") && err.contains("unknown field"),
        "{err}"
    );
}
