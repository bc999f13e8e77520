//! Faults with real servers and a real disk: FalkorDB killed, and paused with SIGSTOP, in the
//! middle of an ingest and of a recall; the data directory's filesystem full in the middle of
//! an ingest. Each must give a clear error or a degraded leg, leave nothing partial, and work
//! again once the fault is gone, without restarting anything of Strata's.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::falkordb::Server;
use common::signal;
use common::{ndjson, record, stderr, stdout};
use strata::embed::HashEmbedder;
use strata::index::VectorLocation;
use strata::model::AsOf;
use strata::recall::{FusionPolicy, LegSet, LegStatus, RecallRequest, RecallStack, StackOptions};
use strata::store::falkordb::{FalkorStore, FalkorUrl};

const NOW: &str = "2026-12-01T00:00:00Z";
const RECORDS: usize = 3000;
/// Records of a file whose write a fault must land in the middle of: one query (under the
/// chunked threshold) that keeps the server busy long enough to be seen in flight.
const IN_FLIGHT: usize = 9_000;

fn command(data: &Path, store: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.env("STRATA_EMBEDDER", "hash")
        .env_remove("STRATA_STORE")
        .arg("--data")
        .arg(data)
        .args(["--now", NOW]);
    if let Some(url) = store {
        cmd.args(["--store", url]);
    }
    cmd.args(args);
    cmd
}

fn run(data: &Path, store: Option<&str>, args: &[&str]) -> Output {
    command(data, store, args).output().unwrap()
}

fn big_file(dir: &Path, prefix: &str) -> String {
    file_of(dir, prefix, RECORDS)
}

fn file_of(dir: &Path, prefix: &str, n: usize) -> String {
    let records: Vec<_> = (0..n)
        .map(|i| {
            let mut r = record(&format!("{prefix}-{i:05}"), "2026-11-01T10:00:00Z");
            r["summary_nl"] = format!("{prefix} incident {i}: the connection pool ran dry").into();
            r
        })
        .collect();
    let file = dir.join(format!("{prefix}.ndjson"));
    std::fs::write(&file, ndjson(&records)).unwrap();
    file.to_str().unwrap().to_string()
}

fn episodes(data: &Path, store: Option<&str>) -> u64 {
    let out = run(data, store, &["stats", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stats: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    stats["episodes"].as_u64().unwrap()
}

fn check_passes(data: &Path, store: Option<&str>) {
    let out = run(data, store, &["check"]);
    assert!(
        out.status.success(),
        "strata check: {}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// Waits for the child, at most `bound`; a child still running then is a hang.
fn wait_bounded(mut child: Child, bound: Duration) -> Output {
    let deadline = Instant::now() + bound;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running after {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// An ingest of `file` into the graph at `url` on the server at `port`, started and then
/// followed until its batch is being written: its stderr said `writing`, and the server's
/// main thread is busy with the write (a PING goes unanswered). The fault lands then.
fn ingest_until_writing(
    data: &Path,
    url: &str,
    port: u16,
    file: &str,
) -> (Child, std::thread::JoinHandle<String>) {
    let mut child = command(data, Some(url), &["ingest", "--no-index", file])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "the ingest ended before writing: {said}"
        );
        said.push_str(&line);
        if line.trim_end().ends_with("writing") {
            break;
        }
    }
    let writing = common::falkordb::wait_until_writing(
        &format!("127.0.0.1:{port}"),
        &mut || child.try_wait().unwrap().is_some(),
        Duration::from_secs(60),
    );
    assert!(writing, "the batch was never seen in flight: {said}");
    // The rest of what it says, for the caller.
    let rest = std::thread::spawn(move || {
        let _ = std::io::Read::read_to_string(&mut err, &mut said);
        said
    });
    (child, rest)
}

/// What an ingest that met a fault in the middle of its write may say: it failed, saying
/// which server and never that it committed; and the store holds the file whole or not at
/// all.
fn whole_or_nothing(out: &Output, landed: u64, what: &str) {
    let said = stderr(out);
    assert!(
        !out.status.success(),
        "{what}: a fault in the middle of the write, and the ingest reported success: {said}"
    );
    assert!(
        landed == 0 || landed == IN_FLIGHT as u64,
        "{what}: {landed} of {IN_FLIGHT} episodes landed"
    );
}

#[test]
fn falkordb_paused_in_the_middle_of_an_ingest() {
    for trial in 0..2 {
        let mut server = Server::start_with(&[]);
        let scratch = tempfile::tempdir().unwrap();
        let data = scratch.path().join("data");
        let url = format!("falkordb://127.0.0.1:{}/paused", server.port);
        let file = file_of(scratch.path(), "PAUSE", IN_FLIGHT);
        let (child, said) = ingest_until_writing(&data, &url, server.port, &file);
        signal(server.pid(), "STOP");
        let mut out = wait_bounded(child, Duration::from_secs(120));
        out.stderr = said.join().unwrap().into_bytes();
        signal(server.pid(), "CONT");
        let (running, log) = server.health();
        assert!(
            running,
            "trial {trial}: FalkorDB exited while paused:\n{log}"
        );
        let landed = episodes(&data, Some(&url));
        whole_or_nothing(&out, landed, &format!("trial {trial}"));
        if !out.status.success() {
            let said = stderr(&out);
            assert!(
                said.contains("unreachable") || said.contains("timed out"),
                "trial {trial}: {said}"
            );
        }
        let again = run(&data, Some(&url), &["ingest", "--no-index", &file]);
        assert!(again.status.success(), "rerun: {}", stderr(&again));
        assert_eq!(episodes(&data, Some(&url)), IN_FLIGHT as u64);
        check_passes(&data, Some(&url));
    }
}

#[test]
fn falkordb_killed_in_the_middle_of_an_ingest() {
    for trial in 0..2 {
        let scratch = tempfile::tempdir().unwrap();
        let server_dir = scratch.path().join("falkordb");
        std::fs::create_dir_all(&server_dir).unwrap();
        let mut server = Server::start_durable(&server_dir);
        let data = scratch.path().join("data");
        let url = format!("falkordb://127.0.0.1:{}/killed", server.port);
        let file = file_of(scratch.path(), "KILL", IN_FLIGHT);
        let (child, said) = ingest_until_writing(&data, &url, server.port, &file);
        server.kill();
        let mut out = wait_bounded(child, Duration::from_secs(120));
        out.stderr = said.join().unwrap().into_bytes();
        let server = Server::start_durable(&server_dir);
        let url = format!("falkordb://127.0.0.1:{}/killed", server.port);
        let landed = episodes(&data, Some(&url));
        whole_or_nothing(&out, landed, &format!("trial {trial}"));
        assert_eq!(
            landed, 0,
            "trial {trial}: killed before its write finished, nothing of it is on disk"
        );
        let again = run(&data, Some(&url), &["ingest", "--no-index", &file]);
        assert!(again.status.success(), "rerun: {}", stderr(&again));
        assert_eq!(episodes(&data, Some(&url)), IN_FLIGHT as u64);
        check_passes(&data, Some(&url));
    }
}

/// One process keeps its recall stack across the pause, as the explorer does: the graph leg
/// fails open within its bound while the server is stopped, and answers again by itself.
#[test]
fn falkordb_paused_in_the_middle_of_a_recall() {
    let server = Server::start_with(&[]);
    let url: FalkorUrl = format!("falkordb://127.0.0.1:{}/recall", server.port)
        .parse()
        .unwrap();
    let store = Arc::new(FalkorStore::connect(&url).unwrap());
    strata::demo::seed(store.as_ref()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut stack = RecallStack::open(
        store.clone(),
        Ok(Arc::new(HashEmbedder::default())),
        &StackOptions {
            index_dir: dir.path().into(),
            sync: true,
            vectors: VectorLocation::Local,
            runtime: None,
        },
        &mut |_, _| {},
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let q = RecallRequest {
        exclude: Vec::new(),
        text: "pgbouncer pool exhausted".into(),
        entities: vec!["service:pgbouncer".parse().unwrap()],
        as_of: AsOf::now(common::ts(NOW)),
        k: 10,
        legs: LegSet::ALL,
        fusion: FusionPolicy::Rrf,
        stale: Default::default(),
    };
    // Legs' success is asserted, not timed: a generous bound, but for the paused recall,
    // whose graph leg must time out (still eight times the default).
    stack.engine.timeout = Duration::from_secs(30);
    let before = runtime.block_on(stack.engine.recall(&q));
    assert_eq!(before.legs.graph.status, LegStatus::Ok);

    stack.engine.timeout = Duration::from_secs(2);
    signal(server.pid(), "STOP");
    let started = Instant::now();
    let paused = runtime.block_on(stack.engine.recall(&q));
    let took = started.elapsed();
    signal(server.pid(), "CONT");
    assert_ne!(
        paused.legs.graph.status,
        LegStatus::Ok,
        "the graph leg fails open"
    );
    assert!(
        paused.legs.graph.error.is_some(),
        "and says why: {:?}",
        paused.legs.graph
    );
    assert_eq!(paused.legs.bm25.status, LegStatus::Ok, "local legs answer");
    assert_eq!(paused.legs.semantic.status, LegStatus::Ok);
    assert!(!paused.results.is_empty());
    // The legs, the results' details and the skill suggestions each wait at most the bound.
    assert!(
        took <= stack.engine.timeout * 3 + Duration::from_secs(2),
        "the recall waited {took:?}, past the leg bound {:?}",
        stack.engine.timeout
    );
    stack.engine.timeout = Duration::from_secs(30);

    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let after = runtime.block_on(stack.engine.recall(&q));
        if after.legs.graph.status == LegStatus::Ok {
            let fps = |r: &strata::recall::RecallResponse| {
                r.results
                    .iter()
                    .map(|x| x.fingerprint.clone())
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                fps(&after),
                fps(&before),
                "the same ranking once it is back"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the graph leg did not come back: {:?}",
            after.legs.graph
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A small tmpfs mounted for the test; unmounted on drop.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(megabytes: u32) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Fills `path`'s filesystem until fewer than `leave` bytes are free.
fn fill(path: &Path, leave: u64) -> std::path::PathBuf {
    use std::io::Write;
    let filler = path.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let chunk = vec![0x5au8; 64 * 1024];
    loop {
        let free = free_bytes(path);
        if free <= leave {
            break;
        }
        let n = ((free - leave) as usize).min(chunk.len());
        if f.write_all(&chunk[..n]).is_err() {
            break;
        }
    }
    let _ = f.sync_all();
    filler
}

fn free_bytes(path: &Path) -> u64 {
    let out = Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .unwrap()
}

/// A data directory on a small tmpfs, holding one episode, and a scratch directory beside it;
/// `None` (the test says it is skipped) where no tmpfs can be mounted.
fn small_disk_with_one_episode(test: &str) -> Option<(SmallDisk, tempfile::TempDir, PathBuf)> {
    let Some(disk) = SmallDisk::mount(128) else {
        common::skip(test, "cannot mount a tmpfs here (needs root)");
        return None;
    };
    let scratch = tempfile::tempdir().unwrap();
    let data = disk.path().join("data");
    let first = scratch.path().join("first.ndjson");
    std::fs::write(
        &first,
        ndjson(&[record("DISK-FIRST", "2026-11-01T10:00:00Z")]),
    )
    .unwrap();
    let ok = run(&data, None, &["ingest", first.to_str().unwrap()]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    Some((disk, scratch, data))
}

#[test]
fn a_full_disk_in_the_middle_of_an_ingest() {
    let Some((disk, scratch, data)) =
        small_disk_with_one_episode("a_full_disk_in_the_middle_of_an_ingest")
    else {
        return;
    };

    let filler = fill(disk.path(), 256 * 1024);
    let file = big_file(scratch.path(), "DISK");
    let full = run(&data, None, &["ingest", &file]);
    let said = stderr(&full);
    assert!(
        !full.status.success(),
        "an ingest on a full disk fails: {said}"
    );
    assert!(
        said.contains("no space left on its disk"),
        "it says the disk is full: {said}"
    );
    assert!(!said.contains("committed"), "{said}");

    std::fs::remove_file(&filler).unwrap();
    assert_eq!(
        episodes(&data, None),
        1,
        "nothing of the failed file landed"
    );
    check_passes(&data, None);
    let again = run(&data, None, &["ingest", &file]);
    assert!(
        again.status.success(),
        "once there is room: {}",
        stderr(&again)
    );
    assert_eq!(episodes(&data, None), 1 + RECORDS as u64);
    check_passes(&data, None);
    let recall = run(&data, None, &["recall", "DISK incident 7", "--json"]);
    assert!(recall.status.success(), "{}", stderr(&recall));
}

/// The disk fills while the recall indexes catch up: `strata index` fails saying "no space
/// left on" the index it could not write, loses nothing, and once there is room the next run
/// catches every index up, whole.
#[test]
fn a_full_disk_while_the_indexes_catch_up() {
    let Some((disk, scratch, data)) =
        small_disk_with_one_episode("a_full_disk_while_the_indexes_catch_up")
    else {
        return;
    };
    let file = big_file(scratch.path(), "LAG");
    let ingested = run(&data, None, &["ingest", "--no-index", &file]);
    assert!(ingested.status.success(), "{}", stderr(&ingested));

    let filler = fill(disk.path(), 64 * 1024);
    let full = run(&data, None, &["index"]);
    let said = stderr(&full);
    assert!(!full.status.success(), "index on a full disk: {said}");
    assert!(
        said.contains("no space left on") && said.contains(data.to_str().unwrap()),
        "it says the disk is full, and where: {said}"
    );
    let recall = run(&data, None, &["recall", "LAG incident 7", "--json"]);
    assert!(recall.status.success(), "{}", stderr(&recall));
    let lagging: serde_json::Value = serde_json::from_slice(&recall.stdout).unwrap();
    assert!(
        ["semantic", "bm25"]
            .iter()
            .any(|leg| lagging["legs"][leg]["status"] != "ok"),
        "a leg whose index missed the catch-up does not say ok: {}",
        lagging["legs"]
    );

    std::fs::remove_file(&filler).unwrap();
    let again = run(&data, None, &["index", "--json"]);
    assert!(
        again.status.success(),
        "once there is room: {}",
        stderr(&again)
    );
    let report: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    let total = 1 + RECORDS as u64;
    assert_eq!(report["text_documents"], total, "{report}");
    assert_eq!(report["vectors"], total, "{report}");
    let recall = run(&data, None, &["recall", "LAG incident 7", "--json"]);
    let caught_up: serde_json::Value = serde_json::from_slice(&recall.stdout).unwrap();
    for leg in ["semantic", "bm25", "graph"] {
        assert_eq!(
            caught_up["legs"][leg]["status"], "ok",
            "{leg}: {}",
            caught_up["legs"]
        );
    }
    check_passes(&data, None);
}
