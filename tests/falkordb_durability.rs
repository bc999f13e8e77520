//! Durable servers: what FalkorDB acknowledged is there after the server restarts, and a
//! server that keeps nothing on disk is named, once, before anyone trusts it.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::falkordb::Server;
use common::{ndjson, record, stderr};

const NOW: &str = "2026-06-01T00:00:00Z";

fn strata(data: &Path, port: u16, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .env("STRATA_EMBEDDER", "hash")
        .env_remove("STRATA_STORE")
        .arg("--data")
        .arg(data)
        .args(["--now", NOW])
        .args(["--store", &format!("falkordb://127.0.0.1:{port}/durable")])
        .args(args)
        .output()
        .unwrap()
}

fn episodes(data: &Path, port: u16) -> u64 {
    let out = strata(data, port, &["stats", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stats: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    stats["episodes"].as_u64().unwrap()
}

#[test]
fn every_acknowledged_batch_is_there_after_the_server_restarts() {
    let scratch = tempfile::tempdir().unwrap();
    let server_dir = scratch.path().join("falkordb");
    std::fs::create_dir_all(&server_dir).unwrap();
    let data = scratch.path().join("data");
    let mut server = Server::start_durable(&server_dir);
    for batch in 0..3 {
        let records: Vec<_> = (0..200)
            .map(|i| record(&format!("DUR-{batch}-{i:03}"), "2026-02-01T00:00:00Z"))
            .collect();
        let file = scratch.path().join(format!("batch-{batch}.ndjson"));
        std::fs::write(&file, ndjson(&records)).unwrap();
        let out = strata(
            &data,
            server.port,
            &["ingest", "--no-index", file.to_str().unwrap()],
        );
        assert!(out.status.success(), "batch {batch}: {}", stderr(&out));
    }
    assert!(
        !stderr(&strata(&data, server.port, &["stats"])).contains("keeps nothing on disk"),
        "a durable server was reported as keeping nothing"
    );
    assert_eq!(episodes(&data, server.port), 600);

    server.stop();
    let server = Server::start_durable(&server_dir);
    assert_eq!(
        episodes(&data, server.port),
        600,
        "acknowledged batches lost"
    );
    let check = strata(&data, server.port, &["check"]);
    assert!(check.status.success(), "strata check: {}", stderr(&check));
}

#[test]
fn a_server_that_keeps_nothing_on_disk_is_named_once_on_stderr() {
    let server = Server::start(None);
    let data = tempfile::tempdir().unwrap();
    let out = strata(data.path(), server.port, &["stats"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.matches("keeps nothing on disk").count(), 1, "{err}");
    assert!(err.contains("appendonly no"), "{err}");
    // The address itself is redacted on the terminal, as every IP address is.
    assert!(err.contains("FalkorDB at "), "{err}");
}
