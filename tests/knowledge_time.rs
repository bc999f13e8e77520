//! Two writers that do not conflict both land: knowledge time is stamped when a batch is
//! written, inside the writer's turn, not when its process started. Real processes on both
//! backends: a big ingest still validating while a small one (or an MCP `record_incident`)
//! commits, then commits after it, stamped after it.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{ndjson, record, stderr};
use serde_json::{Value, json};

/// Big enough that validating it takes far longer than a small ingest start to finish.
const BIG: usize = 30_000;

fn big_file(dir: &Path) -> PathBuf {
    let path = dir.join("big.ndjson");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for i in 0..BIG {
        serde_json::to_writer(&mut f, &strata::synthetic::record(i)).unwrap();
        f.write_all(b"\n").unwrap();
    }
    f.flush().unwrap();
    path
}

fn command(data: &Path, store: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.env("STRATA_EMBEDDER", "hash")
        .env_remove("STRATA_STORE")
        .env_remove("STRATA_NOW")
        .env("XDG_CONFIG_HOME", data.join("no-user-config"))
        .arg("--data")
        .arg(data);
    if let Some(url) = store {
        cmd.args(["--store", url]);
    }
    cmd.args(args);
    cmd
}

/// A big ingest, and its stderr lines as they come, each with when it came.
struct Running {
    child: Child,
    lines: mpsc::Receiver<(Instant, String)>,
    seen: Vec<(Instant, String)>,
}

impl Running {
    fn start(data: &Path, store: Option<&str>, file: &Path) -> Running {
        let mut child = command(
            data,
            store,
            &["ingest", "--no-index", file.to_str().unwrap()],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let (tx, lines) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                if tx.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        Running {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (at most a minute) for a line containing `text`; returns when it came.
    fn wait_for(&mut self, text: &str) -> Instant {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some((at, _)) = self.seen.iter().find(|(_, l)| l.contains(text)) {
                return *at;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.seen.push(line),
                Err(_) => panic!("no {text:?} from the big ingest; it said {:?}", self.seen),
            }
        }
    }

    fn finish(mut self) -> (bool, Vec<String>) {
        let status = self.child.wait().unwrap();
        self.seen.extend(self.lines.iter());
        (
            status.success(),
            self.seen.into_iter().map(|(_, l)| l).collect(),
        )
    }
}

fn ingested_at(data: &Path, store: Option<&str>, fp: &str) -> i64 {
    let out = command(data, store, &["facts", fp, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "facts {fp}: {}", stderr(&out));
    let facts: Value = serde_json::from_slice(&out.stdout).unwrap();
    let at = facts["facts"][0]["ingested_at"].as_str().unwrap();
    strata::model::Timestamp::parse(at).unwrap().millis()
}

fn episodes(data: &Path, store: Option<&str>) -> u64 {
    let out = command(data, store, &["stats", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["episodes"]
        .as_u64()
        .unwrap()
}

/// The small write lands while the big ingest validates; the big one lands after it, later
/// in knowledge time; and the store passes its check.
fn big_and_small(store: Option<&str>, small: impl FnOnce(&Path) -> String) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = big_file(dir.path());
    let mut big = Running::start(&data, store, &file);
    big.wait_for("validating");
    let small_fp = small(&data);
    let small_done = Instant::now();
    let writing = big.wait_for("writing");
    let (ok, said) = big.finish();
    assert!(ok, "the big ingest was refused: {said:#?}");
    assert!(
        small_done < writing,
        "the small write must land while the big one still validates, to test anything"
    );
    assert_eq!(episodes(&data, store), BIG as u64 + 1);
    let big_at = ingested_at(&data, store, "SYN-0000000");
    let small_at = ingested_at(&data, store, &small_fp);
    assert!(
        big_at >= small_at,
        "the big batch committed last and is known from then: {big_at} < {small_at}"
    );
    let check = command(&data, store, &["check"]).output().unwrap();
    assert!(check.status.success(), "{}", common::stdout(&check));
}

fn small_ingest(store: Option<&str>) -> impl FnOnce(&Path) -> String {
    move |data: &Path| {
        let file = data.with_file_name("small.ndjson");
        std::fs::write(&file, ndjson(&[record("SMALL-1", "2026-11-01T10:00:00Z")])).unwrap();
        let out = command(
            data,
            store,
            &["ingest", "--no-index", file.to_str().unwrap()],
        )
        .output()
        .unwrap();
        assert!(out.status.success(), "the small ingest: {}", stderr(&out));
        "SMALL-1".to_string()
    }
}

/// `strata mcp` over stdio, spoken to line by line.
struct Mcp {
    child: Child,
    out: BufReader<ChildStdout>,
    id: u64,
}

impl Mcp {
    fn start(data: &Path, store: Option<&str>) -> Mcp {
        let mut child = command(data, store, &["mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp { child, out, id: 0 };
        mcp.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "knowledge-time-test", "version": "1"}}),
        );
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.out.read_line(&mut line).unwrap() > 0,
                "the server hung up"
            );
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == json!(id) {
                return reply;
            }
        }
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn mcp_record(store: Option<&str>) -> impl FnOnce(&Path) -> String {
    move |data: &Path| {
        let mut mcp = Mcp::start(data, store);
        let reply = mcp.call(
            "tools/call",
            json!({"name": "record_incident", "arguments": record("MCP-1", "2026-11-01T10:00:00Z")}),
        );
        assert_eq!(reply["result"]["isError"], json!(false), "{reply}");
        "MCP-1".to_string()
    }
}

#[test]
fn a_small_ingest_lands_while_a_big_one_validates_and_both_land() {
    big_and_small(None, small_ingest(None));
}

#[test]
fn an_mcp_record_lands_while_a_big_ingest_validates_and_both_land() {
    big_and_small(None, mcp_record(None));
}

#[test]
fn on_falkordb_a_small_ingest_lands_while_a_big_one_validates() {
    let url = common::falkordb::graph_url("knowledge_small").to_string();
    big_and_small(Some(&url), small_ingest(Some(&url)));
}

#[test]
fn on_falkordb_an_mcp_record_lands_while_a_big_ingest_validates() {
    let url = common::falkordb::graph_url("knowledge_mcp").to_string();
    big_and_small(Some(&url), mcp_record(Some(&url)));
}
