//! Many processes on one embedded store: real `strata` processes reading and writing the same
//! data directory at once, racing on one fingerprint, killed mid-write, and waiting for
//! each other.

mod common;

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

fn spawn(data: &Path, args: &[&str]) -> Child {
    spawn_with(data, args, &[])
}

fn spawn_with(data: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .env("STRATA_EMBEDDER", "hash")
        .envs(env.iter().copied())
        .arg("--data")
        .arg(data)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn write_file(path: &Path, records: impl IntoIterator<Item = Value>) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for r in records {
        serde_json::to_writer(&mut f, &r).unwrap();
        f.write_all(b"\n").unwrap();
    }
    f.flush().unwrap();
}

/// `n` distinct records whose fingerprints start with `prefix`.
fn padding(prefix: &str, n: usize) -> impl Iterator<Item = Value> + '_ {
    (0..n).map(move |i| {
        let mut r = strata::synthetic::record(i);
        r["incident_fingerprint"] = json!(format!("{prefix}-{i:06}"));
        if let Some(record) = r.as_object_mut() {
            record.remove("supersedes");
        }
        r
    })
}

fn race_record(version: &str) -> Value {
    let service = version.to_lowercase();
    json!({
        "incident_fingerprint": "INC-RACE",
        "summary_nl": version,
        "resolution_nl": format!("resolved {version}"),
        "concluded_at": "2026-05-01T12:00:00Z",
        "t_valid": "2026-05-01T10:00:00Z",
        "mentions": [{"entity_type": "service", "entity_ref": service}],
    })
}

fn stats(data: &Path) -> Value {
    let out = strata(data, &["stats", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn assert_consistent(data: &Path) {
    let out = strata(data, &["check"]);
    assert!(
        out.status.success(),
        "check failed: {}{}",
        stdout(&out),
        stderr(&out)
    );
}

const NOW: &str = "2026-06-01T00:00:00Z";

#[test]
fn two_concurrent_ingests_of_distinct_files_both_land() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (a, b) = (dir.path().join("a.ndjson"), dir.path().join("b.ndjson"));
    write_file(&a, padding("A", 3000));
    write_file(&b, padding("B", 3000));
    let args = |f: &Path| {
        vec![
            "--now".to_string(),
            NOW.to_string(),
            "ingest".to_string(),
            "--no-index".to_string(),
            f.display().to_string(),
        ]
    };
    let (aa, ba) = (args(&a), args(&b));
    let first = spawn(&data, &aa.iter().map(String::as_str).collect::<Vec<_>>());
    let second = spawn(&data, &ba.iter().map(String::as_str).collect::<Vec<_>>());
    for child in [first, second] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(stats(&data)["episodes"], 6000);
    assert_consistent(&data);
}

fn race_once(dir: &Path, trial: usize) -> (Vec<Output>, PathBuf) {
    let data = dir.join(format!("data-{trial}"));
    let files: Vec<PathBuf> = ["A", "B"]
        .iter()
        .map(|v| {
            let path = dir.join(format!("race-{trial}-{v}.ndjson"));
            write_file(
                &path,
                std::iter::once(race_record(v)).chain(padding(&format!("PAD-{v}"), 3000)),
            );
            path
        })
        .collect();
    let children: Vec<Child> = files
        .iter()
        .map(|f| {
            spawn(
                &data,
                &["--now", NOW, "ingest", "--no-index", f.to_str().unwrap()],
            )
        })
        .collect();
    let outputs = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    (outputs, data)
}

#[test]
fn of_two_racing_versions_of_one_fingerprint_exactly_one_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    for trial in 0..20 {
        let (outputs, data) = race_once(dir.path(), trial);
        let accepted: Vec<usize> = (0..2).filter(|&i| outputs[i].status.success()).collect();
        assert_eq!(
            accepted.len(),
            1,
            "trial {trial}: {:?}",
            outputs.iter().map(stderr).collect::<Vec<_>>()
        );
        let winner = ["A", "B"][accepted[0]];
        let loser = &outputs[1 - accepted[0]];
        let refusal = stderr(loser);
        assert!(
            refusal.contains("INC-RACE") && refusal.contains("history is never overwritten"),
            "trial {trial}: {refusal}"
        );
        let facts = strata(&data, &["facts", "INC-RACE", "--json"]);
        let facts: Value = serde_json::from_slice(&facts.stdout).unwrap();
        let refs: Vec<&str> = facts["facts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["entity_ref"].as_str().unwrap())
            .collect();
        assert_eq!(refs, vec![winner.to_lowercase()], "trial {trial}");
        let timeline = strata(&data, &["timeline", "--json", "--limit", "100000"]);
        let timeline: Value = serde_json::from_slice(&timeline.stdout).unwrap();
        let race = timeline["episodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["incident_fingerprint"] == "INC-RACE")
            .unwrap();
        assert_eq!(race["summary_nl"], winner, "trial {trial}");
        assert_eq!(stats(&data)["episodes"], 3001, "trial {trial}");
        assert_consistent(&data);
    }
}

/// Waits until the store's writer lock names `pid` as its holder.
fn wait_for_holder(data: &Path, pid: u32) {
    let lock = data.join("store").join("writer.lock");
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        if std::fs::read_to_string(&lock).is_ok_and(|t| t.starts_with(&format!("pid {pid} "))) {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("pid {pid} never took the writer lock");
}

/// A data directory whose store exists already, so that a writer started on it holds the
/// writer lock only for its batch.
fn created_store(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    assert!(strata(&data, &["stats"]).status.success());
    data
}

fn big_file(dir: &Path, name: &str, n: usize) -> PathBuf {
    let path = dir.join(name);
    write_file(&path, padding(name, n));
    path
}

#[test]
fn readers_never_wait_for_a_writer_and_see_a_whole_batch_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let seed = big_file(dir.path(), "seed", 100);
    assert!(
        strata(
            &data,
            &["--now", NOW, "ingest", "--no-index", seed.to_str().unwrap()]
        )
        .status
        .success()
    );
    let big = big_file(dir.path(), "big", 30_000);
    let writer = spawn(
        &data,
        &["--now", NOW, "ingest", "--no-index", big.to_str().unwrap()],
    );
    wait_for_holder(&data, writer.id());
    let mut seen = Vec::new();
    let mut reads = 0;
    loop {
        let done = Path::new(&format!("/proc/{}", writer.id())).join("stat");
        let running = std::fs::read_to_string(done).is_ok_and(|s| !s.contains(") Z "));
        let out = strata(&data, &["stats", "--json"]);
        assert!(out.status.success(), "a reader failed: {}", stderr(&out));
        let episodes = serde_json::from_slice::<Value>(&out.stdout).unwrap()["episodes"]
            .as_u64()
            .unwrap();
        seen.push(episodes);
        let timeline = strata(&data, &["timeline", "--limit", "5"]);
        assert!(timeline.status.success(), "{}", stderr(&timeline));
        reads += 1;
        if !running {
            break;
        }
    }
    let out = writer.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(reads >= 2, "the readers ran beside the writer");
    assert!(
        seen.iter().all(|&n| n == 100 || n == 30_100),
        "a reader saw part of a batch: {seen:?}"
    );
    assert_eq!(stats(&data)["episodes"], 30_100);
    assert_consistent(&data);
}

#[test]
fn a_writer_killed_mid_batch_leaves_a_sound_store_and_blocks_no_one() {
    let dir = tempfile::tempdir().unwrap();
    let data = created_store(dir.path());
    let big = big_file(dir.path(), "big", 30_000);
    let mut writer = spawn(
        &data,
        &["--now", NOW, "ingest", "--no-index", big.to_str().unwrap()],
    );
    wait_for_holder(&data, writer.id());
    // A reader is reading while the writer dies.
    let reader = spawn(&data, &["timeline", "--limit", "50"]);
    writer.kill().unwrap();
    assert_eq!(writer.wait().unwrap().signal(), Some(9));
    assert!(reader.wait_with_output().unwrap().status.success());
    assert_consistent(&data);
    let episodes = stats(&data)["episodes"].as_u64().unwrap();
    assert!(
        episodes == 0 || episodes == 30_000,
        "all or nothing: {episodes}"
    );
    // The next writer goes straight in: the kernel dropped the dead writer's lock.
    let next = big_file(dir.path(), "next", 10);
    let started = Instant::now();
    let out = strata(
        &data,
        &[
            "--now",
            "2026-06-02T00:00:00Z",
            "ingest",
            "--no-index",
            next.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the next writer was not held up by the dead one"
    );
    assert_eq!(stats(&data)["episodes"].as_u64().unwrap(), episodes + 10);
}

#[test]
fn a_writer_that_waits_past_its_bound_names_the_one_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let data = created_store(dir.path());
    let big = big_file(dir.path(), "big", 40_000);
    let writer = spawn(
        &data,
        &["--now", NOW, "ingest", "--no-index", big.to_str().unwrap()],
    );
    wait_for_holder(&data, writer.id());
    let small = big_file(dir.path(), "small", 5);
    let out = spawn_with(
        &data,
        &[
            "--now",
            NOW,
            "ingest",
            "--no-index",
            small.to_str().unwrap(),
        ],
        &[("STRATA_WRITE_WAIT_MS", "100")],
    )
    .wait_with_output()
    .unwrap();
    let text = stderr(&out);
    let holder_done = writer.wait_with_output().unwrap();
    assert!(holder_done.status.success(), "{}", stderr(&holder_done));
    assert!(!out.status.success(), "the impatient writer gave up");
    assert!(
        text.contains("another Strata process is writing")
            && text.contains("strata")
            && text.contains("ingest")
            && text.contains("gave up after waiting"),
        "{text}"
    );
    assert!(text.contains("pid "), "{text}");
    // It wrote nothing: only the first writer's batch is there.
    assert_eq!(stats(&data)["episodes"], 40_000);
}

#[test]
fn a_store_written_by_a_newer_strata_is_refused_naming_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    assert!(strata(&data, &["stats"]).status.success());
    // As a newer release would write them: sealed with their checksums.
    let sealed = strata::lmdb::seal::sealed;
    raw_lmdb_edit(&data.join("store"), "meta", |meta, txn| {
        meta.put(txn, b"schema_version", &sealed(b"schema_version", b"9"))
            .unwrap();
        meta.put(txn, b"created_by", &sealed(b"created_by", b"strata 9.0.0"))
            .unwrap();
    });
    let out = strata(&data, &["stats"]);
    assert!(!out.status.success());
    let text = stderr(&out);
    assert!(
        text.contains("newer Strata")
            && text.contains("strata 9.0.0")
            && text.contains("schema version 9")
            && text.contains("schema version 4"),
        "{text}"
    );
}
