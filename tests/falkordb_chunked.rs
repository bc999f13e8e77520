//! Files too large for one FalkorDB query: checked whole against the graph, then written in
//! chunks under a `StrataIngest` marker. A 100,000-record file ingests without a timeout; a
//! writer killed, or a server paused, part way leaves a partial ingest that is reported as
//! such (never as success), that `strata check` names, and that running the same file again
//! completes, idempotently.

mod common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::falkordb::Server;
use common::signal;
use common::{stderr, stdout};

const NOW: &str = "2026-12-01T00:00:00Z";

fn command(data: &Path, url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.env("STRATA_EMBEDDER", "hash")
        .env_remove("STRATA_STORE")
        .arg("--data")
        .arg(data)
        .args(["--now", NOW, "--store", url])
        .args(args);
    cmd
}

fn run(data: &Path, url: &str, args: &[&str]) -> Output {
    command(data, url, args).output().unwrap()
}

/// `n` synthetic records (every few superseding an earlier one) as an NDJSON file.
fn synthetic_file(dir: &Path, n: usize) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["synthesize", "--episodes", &n.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let file = dir.join(format!("synthetic-{n}.ndjson"));
    std::fs::write(&file, &out.stdout).unwrap();
    file.to_str().unwrap().to_string()
}

fn stats(data: &Path, url: &str) -> serde_json::Value {
    let out = run(data, url, &["stats", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn ingest_report(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "ingest failed: {}{}",
        stdout(out),
        stderr(out)
    );
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()[0].clone()
}

/// The chunks the marker says were written, once it exists.
fn chunks_written(url: &strata::store::falkordb::FalkorUrl) -> Option<i64> {
    let reply = common::falkordb::raw_query(url, "MATCH (i:StrataIngest) RETURN i.written");
    let redis::Value::Array(parts) = reply else {
        return None;
    };
    let redis::Value::Array(rows) = parts.get(1)? else {
        return None;
    };
    let redis::Value::Array(row) = rows.first()? else {
        return None;
    };
    match row.first()? {
        redis::Value::Int(n) => Some(*n),
        _ => None,
    }
}

fn wait_for_chunks(url: &strata::store::falkordb::FalkorUrl, child: &mut Child, at_least: i64) {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if chunks_written(url).is_some_and(|n| n >= at_least) {
            return;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the ingest ended before {at_least} chunks were written"
        );
        assert!(Instant::now() < deadline, "no chunk written in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn spawn_ingest(data: &Path, url: &str, file: &str) -> Child {
    command(data, url, &["ingest", "--no-index", "--json", file])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_100k_record_file_ingests_on_falkordb_in_chunks() {
    let server = Server::start(None);
    let url = format!("falkordb://127.0.0.1:{}/big", server.port);
    let dir = tempfile::tempdir().unwrap();
    let file = synthetic_file(dir.path(), 100_000);
    let started = Instant::now();
    let report = ingest_report(&run(
        dir.path(),
        &url,
        &["ingest", "--no-index", "--json", &file],
    ));
    eprintln!(
        "100,000 records into FalkorDB in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(report["new_episodes"], 100_000, "{report}");
    assert_eq!(stats(dir.path(), &url)["episodes"], 100_000);
    let check = run(dir.path(), &url, &["check"]);
    assert!(
        check.status.success(),
        "{}{}",
        stdout(&check),
        stderr(&check)
    );
    // The same file again changes nothing.
    let again = ingest_report(&run(
        dir.path(),
        &url,
        &["ingest", "--no-index", "--json", &file],
    ));
    assert_eq!(again["new_episodes"], 0, "{again}");
    assert_eq!(again["unchanged_episodes"], 100_000, "{again}");
}

#[test]
fn a_writer_killed_part_way_leaves_a_partial_ingest_that_running_the_file_again_completes() {
    let server = Server::start(None);
    let url = format!("falkordb://127.0.0.1:{}/killed", server.port);
    let parsed: strata::store::falkordb::FalkorUrl = url.parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = synthetic_file(dir.path(), 24_000);

    let mut writer = spawn_ingest(dir.path(), &url, &file);
    wait_for_chunks(&parsed, &mut writer, 2);
    signal(writer.id(), "KILL");
    let _ = writer.wait();

    let landed = stats(dir.path(), &url)["episodes"].as_u64().unwrap();
    assert!(
        (4_000..24_000).contains(&landed),
        "whole chunks landed, not the file: {landed}"
    );
    let check = run(dir.path(), &url, &["check"]);
    assert!(
        !check.status.success(),
        "check must name the partial ingest"
    );
    let said = format!("{}{}", stdout(&check), stderr(&check));
    assert!(
        said.contains("is partial") && said.contains("synthetic-24000.ndjson"),
        "{said}"
    );

    let completed = run_again_to_completion(dir.path(), &url, &file, 24_000);
    assert_eq!(
        completed["unchanged_episodes"].as_u64().unwrap(),
        landed,
        "{completed}"
    );
    assert_eq!(stats(dir.path(), &url)["episodes"], 24_000);
}

#[test]
fn a_server_paused_part_way_is_reported_as_partial_never_as_success() {
    let server = Server::start(None);
    let url = format!("falkordb://127.0.0.1:{}/paused", server.port);
    let parsed: strata::store::falkordb::FalkorUrl = url.parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = synthetic_file(dir.path(), 24_000);

    let mut writer = spawn_ingest(dir.path(), &url, &file);
    wait_for_chunks(&parsed, &mut writer, 1);
    signal(server.pid(), "STOP");
    let deadline = Instant::now() + Duration::from_secs(120);
    while writer.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            signal(server.pid(), "CONT");
            let _ = writer.kill();
            panic!("the ingest hung on a paused server");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    signal(server.pid(), "CONT");
    let out = writer.wait_with_output().unwrap();
    assert!(!out.status.success(), "a partial ingest reported success");
    let said = stderr(&out);
    assert!(
        said.contains("partial ingest of") && said.contains("run the same file again"),
        "{said}"
    );
    assert!(!said.contains("committed"), "{said}");

    run_again_to_completion(dir.path(), &url, &file, 24_000);
}

/// Runs the same file again: every one of its `records` is then written or unchanged, and
/// `strata check` finds nothing partial. The ingest report.
fn run_again_to_completion(dir: &Path, url: &str, file: &str, records: u64) -> serde_json::Value {
    let completed = ingest_report(&run(dir, url, &["ingest", "--no-index", "--json", file]));
    assert_eq!(
        completed["new_episodes"].as_u64().unwrap()
            + completed["unchanged_episodes"].as_u64().unwrap(),
        records,
        "{completed}"
    );
    let check = run(dir, url, &["check"]);
    assert!(
        check.status.success(),
        "{}{}",
        stdout(&check),
        stderr(&check)
    );
    completed
}
