//! Kill the real binary with SIGKILL in the middle of a large ingest and reopen the store.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;
use strata::store::MemoryStore;
use strata::store::embedded::EmbeddedStore;

const PER_FILE: usize = 20_000;

fn write_synthetic(path: &std::path::Path, start: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in start..start + PER_FILE {
        serde_json::to_writer(&mut f, &strata::synthetic::record(i)).unwrap();
        f.write_all(b"\n").unwrap();
    }
    f.flush().unwrap();
}

#[test]
fn sigkill_mid_batch_leaves_a_consistent_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let files: Vec<_> = (0..3)
        .map(|n| {
            let p = dir.path().join(format!("part{n}.ndjson"));
            write_synthetic(&p, n * PER_FILE);
            p
        })
        .collect();

    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .arg("--data")
        .arg(&data)
        .args(["--now", "2026-06-01T00:00:00Z", "ingest", "--no-index"])
        .args(&files)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    // Kill as soon as the second file starts its write transaction.
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line.starts_with("[2/3]") && line.ends_with("writing") {
            break;
        }
    }
    assert!(
        seen.iter()
            .any(|l| l.starts_with("[1/3]") && l.contains("committed")),
        "{seen:?}"
    );
    // The second file's write transaction is open exactly while its writer holds the store's
    // writer lock: wait until it does, so the kill lands in the middle of that write.
    let lock = std::fs::File::open(data.join("store/writer.lock")).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match lock.try_lock_shared() {
            Ok(()) => {
                lock.unlock().unwrap();
                assert!(
                    child.try_wait().unwrap().is_none(),
                    "ingest ended before its second write began"
                );
                assert!(
                    std::time::Instant::now() < deadline,
                    "the second write never began"
                );
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Err(std::fs::TryLockError::WouldBlock) => break,
            Err(std::fs::TryLockError::Error(e)) => panic!("{e}"),
        }
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "killed by SIGKILL");

    let store = EmbeddedStore::open(&data).unwrap();
    let report = store.check().unwrap();
    assert!(report.is_consistent(), "{:?}", report.problems);
    let episodes = store.stats().unwrap().episodes as usize;
    assert_eq!(
        episodes, PER_FILE,
        "the batch killed in the middle of its write left nothing"
    );
    for i in [0, PER_FILE - 1] {
        assert!(store.episode(&format!("SYN-{i:07}")).unwrap().is_some());
    }
    drop(store);

    let out = strata(&data, &["check", "--json"]);
    assert!(out.status.success(), "{}", stdout(&out));
    let rerun = strata(
        &data,
        &[
            "--now",
            "2026-06-02T00:00:00Z",
            "ingest",
            "--no-index",
            "--json",
        ]
        .iter()
        .copied()
        .chain(files.iter().map(|f| f.to_str().unwrap()))
        .collect::<Vec<_>>(),
    );
    assert!(rerun.status.success(), "{}", stderr(&rerun));
    let report: Value = serde_json::from_slice(&rerun.stdout).unwrap();
    assert_eq!(
        report[0]["new_episodes"], 0,
        "the acknowledged batch survived"
    );
    let stats: Value = serde_json::from_slice(&strata(&data, &["stats", "--json"]).stdout).unwrap();
    assert_eq!(stats["episodes"], 3 * PER_FILE);
    assert!(strata(&data, &["check"]).status.success());
}
