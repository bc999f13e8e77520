//! A record longer than the bound on one record is refused as soon as it passes the bound,
//! in bounded memory: a file with one 128 MiB line, and the same through a pipe, each refused
//! naming the line, by a process that never held the line. Its own test binary: the peak
//! memory of its children is read from the kernel, and no other test's children may count.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const LINE: usize = 128 << 20;
const BOUND: usize = 1 << 20;

/// The largest resident set any waited-for child of this process reached, in MiB.
fn children_peak_mib() -> u64 {
    // SAFETY: a zeroed rusage is a valid out-parameter for getrusage.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_CHILDREN with a properly sized out-parameter.
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    usage.ru_maxrss as u64 / 1024
}

fn strata(data: &Path, config: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_strata"));
    c.env("STRATA_EMBEDDER", "hash")
        .arg("--data")
        .arg(data)
        .arg("--config")
        .arg(config)
        .args(["--now", "2026-12-01T00:00:00Z"])
        .args(args);
    c
}

#[test]
fn an_overlong_line_is_refused_as_it_passes_the_bound_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, format!("[ingest]\nmax_record_bytes = {BOUND}\n")).unwrap();
    let file = dir.path().join("long.ndjson");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
        writeln!(
            f,
            "{}",
            common::ndjson(&[common::record("OK-1", "2026-11-01T10:00:00Z")])
        )
        .unwrap();
        let chunk = vec![b'a'; 1 << 20];
        for _ in 0..LINE / chunk.len() {
            f.write_all(&chunk).unwrap();
        }
        f.flush().unwrap();
    }

    let out = strata(&data, &config, &["ingest", file.to_str().unwrap()])
        .output()
        .unwrap();
    let said = common::stderr(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("long.ndjson:2") && said.contains(&format!("longer than {BOUND} bytes")),
        "{said}"
    );
    assert!(
        said.contains("nothing from this file was written"),
        "{said}"
    );

    let mut piped = strata(&data, &config, &["ingest", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = piped.stdin.take().unwrap();
    let source = file.clone();
    let feeder = std::thread::spawn(move || {
        // The reader may refuse before the end: a broken pipe then is expected.
        let _ = std::io::copy(&mut std::fs::File::open(source).unwrap(), &mut stdin);
    });
    let out = piped.wait_with_output().unwrap();
    feeder.join().unwrap();
    let said = common::stderr(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("/dev/stdin:2"), "{said}");

    let peak = children_peak_mib();
    assert!(
        peak < (LINE >> 20) as u64 / 2,
        "a child held {peak} MiB reading a {} MiB line",
        LINE >> 20
    );
    let stats = strata(&data, &config, &["stats", "--json"])
        .output()
        .unwrap();
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["episodes"], 0, "a refused file writes nothing");
}
