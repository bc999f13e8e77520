//! `strata mcp` driven by a real MCP client, the Python `mcp` SDK (installed by
//! scripts/install-mcp-client; the test command exports STRATA_TEST_MCP_PYTHON), over stdio
//! and over streamable HTTP; and the explorer, in this process, showing what the client
//! recorded while the server runs.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const NOW: &str = "2026-12-01T00:00:00Z";
const A_KNOWN: &str = "2026-11-25T00:00:00Z";

/// The client's Python, or `None` (the test then says it skipped) when it is not installed.
fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("STRATA_TEST_MCP_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("STRATA_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".local/share/strata")))?;
    let p = home.join("mcp-client/bin/python");
    p.exists().then_some(p)
}

/// A store holding INC-A, recorded by the CLI at A_KNOWN (`store`: `--store URL` and such).
fn store_with_incident_a(store: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let a = json!({
        "incident_fingerprint": "INC-A",
        "summary_nl": "checkout errors: connection pool exhausted under load",
        "resolution_nl": "raised the checkout pool size to 32",
        "concluded_at": "2026-11-20T12:00:00Z",
        "t_valid": "2026-11-20T09:00:00Z",
        "mentions": [{"entity_type": "service", "entity_ref": "checkout"}],
        "resolved_by": [{"entity_type": "change", "entity_ref": "pool-size-32"}],
    });
    let file = dir.path().join("a.ndjson");
    std::fs::write(&file, a.to_string()).unwrap();
    let mut args = store.to_vec();
    args.extend(["--now", A_KNOWN, "ingest", file.to_str().unwrap()]);
    let out = common::strata(dir.path(), &args);
    assert!(out.status.success(), "{}", common::stderr(&out));
    dir
}

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py")
}

fn run_client(python: &Path, args: &[&str]) -> Value {
    let out = Command::new(python)
        .arg(client_script())
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the MCP client failed:\n{}\n{}",
        common::stdout(&out),
        common::stderr(&out)
    );
    let stdout = common::stdout(&out);
    eprintln!("client: {}", stdout.trim());
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no summary from the client ({e}):\n{stdout}"))
}

fn check_summary(summary: &Value) {
    let before: Vec<&str> = summary["recall_before"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    let after: Vec<&str> = summary["recall_after"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(
        before.contains(&"INC-A") && !before.contains(&"INC-B"),
        "{summary}"
    );
    assert!(after.contains(&"INC-B"), "{summary}");
    assert_ne!(summary["fact_state_before"], summary["fact_state_after"]);
}

#[test]
fn a_python_mcp_client_over_stdio_records_recalls_and_reads_as_of() {
    let Some(python) = python() else {
        eprintln!("skipped: no Python MCP client (run scripts/install-mcp-client)");
        return;
    };
    let data = store_with_incident_a(&[]);
    let summary = run_client(
        &python,
        &[
            "stdio",
            env!("CARGO_BIN_EXE_strata"),
            data.path().to_str().unwrap(),
            "scenario",
        ],
    );
    check_summary(&summary);
    // What the client recorded is the CLI's too, in another process.
    let out = common::strata(data.path(), &["--now", NOW, "lineage", "INC-B", "--json"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(common::stdout(&out).contains("INC-A"));
    let log = std::fs::read_to_string(data.path().join("strata.log")).unwrap();
    assert!(
        log.contains("record_incident"),
        "the server logs to the data dir:\n{log}"
    );
}

struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(data: &Path) -> HttpServer {
        Self::start_with(data, &[])
    }

    /// The server, with `env` set for it.
    fn start_with(data: &Path, env: &[(&str, &str)]) -> HttpServer {
        let child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .env("STRATA_EMBEDDER", "hash")
            .envs(env.iter().copied())
            .arg("--data")
            .arg(data)
            .args(["--now", NOW, "mcp", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Owned by the guard first, so that any failure below kills and reaps it.
        let mut server = HttpServer {
            child,
            url: String::new(),
        };
        let stderr = server.child.stderr.take().unwrap();
        // Drained to the end on its own thread: a closed pipe would fail the server's next
        // line on stderr.
        let (lines, seen_lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut seen = String::new();
        while let Ok(line) =
            seen_lines.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            seen.push_str(&line);
            seen.push('\n');
            if let Some(url) = line.strip_prefix("strata mcp: listening on ") {
                server.url = url.trim().to_string();
                return server;
            }
        }
        panic!("the server did not listen in time:\n{seen}");
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn over_http_the_explorer_shows_what_the_client_recorded_while_the_server_runs() {
    let Some(python) = python() else {
        eprintln!("skipped: no Python MCP client (run scripts/install-mcp-client)");
        return;
    };
    let data = store_with_incident_a(&[]);
    let mut explorer = common::explorer(data.path(), 120, 40);
    let first = common::play(&mut explorer, "WaitIdle\n");
    assert!(
        first.contains("INC-A") && !first.contains("INC-B"),
        "{first}"
    );

    let server = HttpServer::start(data.path());
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    let summary = run_client(&python, &["http", &server.url, "scenario"]);
    check_summary(&summary);

    // The server is still running; the explorer follows the store and shows INC-B.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let screen = common::play(&mut explorer, "WaitIdle\n");
        if screen.contains("INC-B") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the explorer never showed INC-B:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(server);
}

/// The value of the sample named `name` whose labels include `labels`, summed over the rest.
fn sample(samples: &Value, name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s["name"] == name
                && labels
                    .iter()
                    .all(|(k, v)| s["labels"][*k].as_str() == Some(*v))
        })
        .map(|s| s["value"].as_f64().unwrap())
        .sum()
}

#[test]
fn in_shadow_mode_a_client_gets_no_results_while_the_counters_and_metrics_move() {
    let Some(python) = python() else {
        eprintln!("skipped: no Python MCP client (run scripts/install-mcp-client)");
        return;
    };
    let data = store_with_incident_a(&[]);
    let server = HttpServer::start_with(data.path(), &[("STRATA_RECALL_MODE", "shadow")]);
    let summary = run_client(&python, &["http", &server.url, "shadow"]);
    // Each recall found INC-A and withheld it.
    assert_eq!(summary["withheld"], json!([1, 1, 1]), "{summary}");
    assert_eq!(
        summary["content_type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let samples = &summary["samples"];
    let shadow_fused = [("mode", "shadow"), ("leg", "fused")];
    assert_eq!(sample(samples, "strata_recall_total", &shadow_fused), 3.0);
    assert_eq!(
        sample(
            samples,
            "strata_recall_total",
            &[("mode", "shadow"), ("leg", "bm25"), ("outcome", "hit")]
        ),
        3.0
    );
    assert_eq!(
        sample(samples, "strata_recall_total", &[("mode", "active")]),
        0.0
    );
    // Hits are counted before they are withheld: one result each time.
    assert_eq!(
        sample(samples, "strata_recall_hits_total", &shadow_fused),
        3.0
    );
    assert_eq!(
        sample(
            samples,
            "strata_recall_latency_seconds_count",
            &shadow_fused
        ),
        3.0
    );
    assert_eq!(
        sample(
            samples,
            "strata_recall_latency_seconds_bucket",
            &[("mode", "shadow"), ("leg", "fused"), ("le", "+Inf")]
        ),
        3.0
    );
    // INC-A was known (2026-11-25) before the recalls' knowledge time (2026-12-01): warm.
    assert_eq!(sample(samples, "strata_warm_ratio", &[]), 1.0);
    assert_eq!(sample(samples, "strata_episodes", &[]), 1.0);
    assert_eq!(
        sample(samples, "strata_index_lag_episodes", &[("index", "bm25")]),
        0.0
    );
    drop(server);

    // The counters outlive the server, and `strata stats` reads them.
    let out = common::strata(data.path(), &["stats", "--json"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let stats: Value = serde_json::from_str(&common::stdout(&out)).unwrap();
    let modes = &stats["recall"]["counters"]["modes"];
    assert_eq!(modes[1]["mode"], "shadow");
    assert_eq!(modes[1]["recalls"], 3, "{stats}");
    assert_eq!(modes[0]["recalls"], 0, "{stats}");
    assert_eq!(stats["recall"]["warm"]["warm"], 3, "{stats}");
}

#[test]
fn the_http_transport_refuses_an_address_off_loopback() {
    let data = tempfile::tempdir().unwrap();
    let out = common::strata(data.path(), &["mcp", "--http", "0.0.0.0:0"]);
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(err.contains("not a loopback address"), "{err}");
}

#[test]
fn on_falkordb_the_same_client_scenario_holds() {
    let Some(python) = python() else {
        eprintln!("skipped: no Python MCP client (run scripts/install-mcp-client)");
        return;
    };
    let graph = format!("mcp_{}", std::process::id());
    let url = format!("falkordb://{}/{graph}", common::falkordb::address());
    let store = ["--store", url.as_str()];
    let data = store_with_incident_a(&store);
    let mut args = vec![
        "stdio",
        env!("CARGO_BIN_EXE_strata"),
        data.path().to_str().unwrap(),
        "scenario",
    ];
    args.extend(store);
    let summary = run_client(&python, &args);
    check_summary(&summary);
    let out = common::strata(data.path(), &["--store", &url, "check"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
}

#[test]
fn recall_fails_open_when_the_vector_server_is_down() {
    let Some(python) = python() else {
        eprintln!("skipped: no Python MCP client (run scripts/install-mcp-client)");
        return;
    };
    let data = store_with_incident_a(&[]);
    let dead = format!("qdrant://127.0.0.1:{}", common::falkordb::free_port());
    let summary = run_client(
        &python,
        &[
            "stdio",
            env!("CARGO_BIN_EXE_strata"),
            data.path().to_str().unwrap(),
            "fail-open",
            "--vectors",
            &dead,
        ],
    );
    assert_eq!(summary["legs"]["bm25"], "ok", "{summary}");
}

#[test]
fn with_vectors_on_qdrant_the_same_client_scenario_holds() {
    let Some(python) = python() else {
        eprintln!("skipped: no Python MCP client (run scripts/install-mcp-client)");
        return;
    };
    let Some(qdrant) = common::qdrant::url() else {
        return;
    };
    let vectors = ["--vectors", qdrant.as_str()];
    let data = store_with_incident_a(&vectors);
    let mut args = vec![
        "stdio",
        env!("CARGO_BIN_EXE_strata"),
        data.path().to_str().unwrap(),
        "scenario",
    ];
    args.extend(vectors);
    check_summary(&run_client(&python, &args));
}

/// On stdio, stdout carries the protocol and nothing else: every line is one JSON-RPC
/// message, whatever the calls do (a recall that indexes, a refused record, an unknown
/// episode, hostile text).
#[test]
fn stdio_stdout_is_protocol_only() {
    use std::io::Write;
    let data = store_with_incident_a(&[]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .env("STRATA_EMBEDDER", "hash")
        .arg("--data")
        .arg(data.path())
        .args(["--now", NOW, "mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let hostile = "it's \"x\"\u{1b}[2J\u{7}\r\n; MATCH (n) DETACH DELETE n";
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "recall", "arguments": {"query": hostile, "entities": ["service:checkout"]}}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
            "name": "record_incident", "arguments": {"incident_fingerprint": hostile}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
            "name": "facts", "arguments": {"fingerprint": hostile}}}),
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
            "name": "recall", "arguments": {"query": "x", "k": "ten"}}}),
        json!({"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {
            "uri": "strata://episode/INC-A"}}),
    ];
    {
        let mut stdin = child.stdin.take().unwrap();
        for m in &messages {
            writeln!(stdin, "{m}").unwrap();
        }
        stdin.flush().unwrap();
        // Answers come before stdin closes: wait for them, then hang up.
        std::thread::sleep(Duration::from_secs(3));
    }
    let out = child.wait_with_output().unwrap();
    let stdout = common::stdout(&out);
    let mut ids = Vec::new();
    for line in stdout.lines() {
        let message: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not JSON-RPC on stdout ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        assert!(!line.contains('\u{1b}'), "a raw escape on stdout: {line:?}");
        if let Some(id) = message["id"].as_i64() {
            ids.push(id);
        }
    }
    ids.sort();
    assert_eq!(
        ids,
        [1, 2, 3, 4, 5, 6, 7],
        "every request answered:\n{stdout}"
    );
}
