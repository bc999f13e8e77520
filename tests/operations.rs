//! Operating recall: the counters every process on one memory shares (real `strata mcp`
//! processes recalling at once), shadow mode through `strata recall`, and what the log, the
//! metrics and the spans may say about a recall: counts and times, never a byte of a query,
//! a summary or a fingerprint.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use serde_json::{Value, json};

const NOW: &str = "2026-12-01T00:00:00Z";
const KNOWN: &str = "2026-11-25T00:00:00Z";

/// A store of a few incidents about one service, recorded at KNOWN, indexes caught up.
fn store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let records: Vec<Value> = ["INC-ZEBRA-41", "INC-ZEBRA-42", "INC-ZEBRA-43"]
        .iter()
        .enumerate()
        .map(|(i, fp)| {
            json!({
                "incident_fingerprint": fp,
                "summary_nl": format!("quagga checkout pool exhausted under load, case {i}"),
                "resolution_nl": format!("raised the quagga pool to {}", 32 + i),
                "concluded_at": format!("2026-11-2{i}T12:00:00Z"),
                "t_valid": format!("2026-11-2{i}T09:00:00Z"),
                "mentions": [{"entity_type": "service", "entity_ref": "checkout"}],
                "resolved_by": [{"entity_type": "change", "entity_ref": format!("pool-{i}")}],
            })
        })
        .collect();
    let file = dir.path().join("records.ndjson");
    std::fs::write(&file, common::ndjson(&records)).unwrap();
    let out = common::strata(
        dir.path(),
        &["--now", KNOWN, "ingest", file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let out = common::strata(dir.path(), &["index"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    dir
}

/// `strata mcp` over stdio, spoken to in raw JSON-RPC lines.
struct McpProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl McpProcess {
    fn start(data: &Path, env: &[(&str, &str)]) -> McpProcess {
        let mut child = common::strata_command(data, &["--now", NOW, "mcp"])
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = McpProcess {
            child,
            stdin,
            stdout,
        };
        mcp.send(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "tests/operations.rs", "version": "0"},
            },
        }));
        let init = mcp.answer();
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next answer to a request (notifications skipped).
    fn answer(&mut self) -> Value {
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server closed its output"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id").is_some() {
                return message;
            }
        }
    }

    fn recall(&mut self, id: u64, query: &str) -> Value {
        self.send(&recall_request(id, query));
        let answer = self.answer();
        assert_eq!(answer["id"], id, "{answer}");
        answer["result"]["structuredContent"].clone()
    }

    /// Closes its input and waits for it to end (it writes its last counts first).
    fn finish(mut self) {
        self.stdin.take();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "strata mcp exited with {status}");
    }
}

impl Drop for McpProcess {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn recall_request(id: u64, query: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "recall", "arguments": {"query": query, "k": 3}},
    })
}

fn stats(data: &Path) -> Value {
    let out = common::strata(data, &["stats", "--json"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    serde_json::from_str(&common::stdout(&out)).unwrap()
}

/// `mode`'s counts in `strata stats --json`.
fn mode_counts<'a>(stats: &'a Value, mode: &str) -> &'a Value {
    stats["recall"]["counters"]["modes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mode"] == mode)
        .unwrap()
}

fn lane<'a>(mode: &'a Value, lane: &str) -> &'a Value {
    mode["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["lane"] == lane)
        .unwrap()
}

#[test]
fn two_servers_recalling_at_once_lose_no_increment() {
    const PER_PROCESS: u64 = 500;
    let data = store();
    let queries = [
        "quagga checkout pool exhausted",
        "checkout under load",
        "nothing like this was ever seen",
    ];
    let mut servers: Vec<McpProcess> = (0..2)
        .map(|_| McpProcess::start(data.path(), &[]))
        .collect();
    // Every request is written before any answer is read, on a thread per server, so both
    // processes recall (and count) at the same time.
    let results: Vec<u64> = std::thread::scope(|scope| {
        let runs: Vec<_> = servers
            .iter_mut()
            .map(|server| {
                scope.spawn(move || {
                    let mut stdin = server.stdin.take().unwrap();
                    let writer = std::thread::spawn(move || {
                        for id in 1..=PER_PROCESS {
                            let query = queries[(id % 3) as usize];
                            writeln!(stdin, "{}", recall_request(id, query)).unwrap();
                        }
                        stdin
                    });
                    let mut results = 0;
                    for _ in 0..PER_PROCESS {
                        let answer = server.answer();
                        let content = &answer["result"]["structuredContent"];
                        assert_eq!(content["mode"], "active", "{answer}");
                        results += content["results"].as_array().unwrap().len() as u64;
                    }
                    server.stdin = Some(writer.join().unwrap());
                    results
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for server in servers {
        server.finish();
    }

    let stats = stats(data.path());
    let active = mode_counts(&stats, "active");
    assert_eq!(active["recalls"], 2 * PER_PROCESS, "{stats}");
    assert_eq!(mode_counts(&stats, "shadow")["recalls"], 0, "{stats}");
    for leg in ["semantic", "bm25", "graph", "fused"] {
        let counts = lane(active, leg);
        assert_eq!(counts["queries"], 2 * PER_PROCESS, "{leg}: {counts}");
        assert_eq!(
            counts["latency"]["count"],
            2 * PER_PROCESS,
            "{leg}: {counts}"
        );
        let outcomes = ["with_hits", "empty", "timeouts", "failures"]
            .map(|o| counts[o].as_u64().unwrap())
            .iter()
            .sum::<u64>();
        assert_eq!(outcomes, 2 * PER_PROCESS, "{leg}: {counts}");
    }
    // Every result handed out was counted, once.
    assert_eq!(
        lane(active, "fused")["hits"],
        results.iter().sum::<u64>(),
        "{stats}"
    );
    // The window holds the newest 200 of them.
    let warm = &stats["recall"]["warm"];
    assert_eq!(warm["recalls"], 200, "{warm}");
    assert_eq!(warm["window"], 200, "{warm}");
}

#[test]
fn a_shadow_recall_hands_back_nothing_and_is_counted() {
    let data = store();
    let query = "quagga checkout pool exhausted";
    let out = common::strata(
        data.path(),
        &[
            "--now",
            NOW,
            "--recall-mode",
            "shadow",
            "recall",
            "--json",
            query,
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let answer: Value = serde_json::from_str(&common::stdout(&out)).unwrap();
    assert_eq!(answer["mode"], "shadow", "{answer}");
    assert_eq!(answer["results"], json!([]), "{answer}");
    assert_eq!(answer["withheld"], 3, "{answer}");
    assert!(!answer.to_string().contains("ZEBRA"), "{answer}");
    assert_eq!(answer["legs"]["bm25"]["status"], "ok", "{answer}");

    // The same from the environment and from the config, in words.
    let out = common::strata_command(data.path(), &["--now", NOW, "recall", query])
        .env("STRATA_RECALL_MODE", "shadow")
        .output()
        .unwrap();
    let text = common::stdout(&out);
    assert!(
        text.contains("mode shadow: 3 results withheld") && !text.contains("ZEBRA"),
        "{text}"
    );
    let config = data.path().join("strata.toml");
    std::fs::write(&config, "[recall]\nmode = \"shadow\"\nwarm_window = 4\n").unwrap();
    let out = common::strata_command(data.path(), &["--now", NOW, "recall", "--json", query])
        .env("STRATA_CONFIG", &config)
        .output()
        .unwrap();
    let answer: Value = serde_json::from_str(&common::stdout(&out)).unwrap();
    assert_eq!(answer["mode"], "shadow", "{answer}");
    // The flag beats the config.
    let out = common::strata_command(
        data.path(),
        &[
            "--now",
            NOW,
            "--recall-mode",
            "active",
            "recall",
            "--json",
            query,
        ],
    )
    .env("STRATA_CONFIG", &config)
    .output()
    .unwrap();
    let answer: Value = serde_json::from_str(&common::stdout(&out)).unwrap();
    assert_eq!(answer["mode"], "active", "{answer}");
    assert_eq!(answer["results"].as_array().unwrap().len(), 3, "{answer}");

    let stats = stats(data.path());
    assert_eq!(mode_counts(&stats, "shadow")["recalls"], 3, "{stats}");
    assert_eq!(mode_counts(&stats, "active")["recalls"], 1, "{stats}");
    // Withheld results are counted as found: the fused lane saw 3 per recall.
    assert_eq!(lane(mode_counts(&stats, "shadow"), "fused")["hits"], 9);

    // Four recalls fill the configured window of 4: every one found an incident known
    // before it was asked, so the memory looks ready.
    let out = common::strata_command(data.path(), &["warm", "--json"])
        .env("STRATA_CONFIG", &config)
        .output()
        .unwrap();
    let warm: Value = serde_json::from_str(&common::stdout(&out)).unwrap();
    assert_eq!(warm["mode"], "shadow", "{warm}");
    assert_eq!(warm["warm"]["readiness"], "ready", "{warm}");
    assert_eq!(
        (
            warm["warm"]["recalls"].as_u64(),
            warm["warm"]["warm"].as_u64()
        ),
        (Some(4), Some(4))
    );
    assert!(
        warm["verdict"]
            .as_str()
            .unwrap()
            .contains("strata eval --gate"),
        "{warm}"
    );

    // Asked as of a knowledge time before anything was recorded, recall finds nothing
    // known: a cold recall, and the window says so.
    let out = common::strata(
        data.path(),
        &[
            "--now",
            NOW,
            "recall",
            "--known-at",
            "2026-11-01T00:00:00Z",
            query,
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let out = common::strata_command(data.path(), &["warm"])
        .env("STRATA_CONFIG", &config)
        .output()
        .unwrap();
    let verdict = common::stdout(&out);
    assert!(
        verdict.contains("ready to go active: 3 of the last 4 recalls (75%)"),
        "{verdict}"
    );
}

/// Every query carries a secret, a Cypher injection, control characters or a marker.
const HOSTILE_QUERIES: [&str; 3] = [
    "password=hunter2-QX7 token ghp_R2d2C3poBB8Lk9Xx0AaZzYy1234567890abc quagga",
    "it's \"quoted\"'; MATCH (n) DETACH DELETE n // $param \u{1b}[2J\u{1b}]0;title\u{7} checkout",
    "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY ünïcödé 🚨 \u{202e} pool",
];

/// Pieces of the queries and of what recall found, none of which may appear.
const FORBIDDEN: [&str; 13] = [
    "hunter2",
    "ghp_R2d2",
    "quoted",
    "DETACH",
    "$param",
    "\u{1b}",
    "AKIAIOSFODNN7",
    "wJalrXUtnFEMI",
    "ünïcödé",
    "🚨",
    "ZEBRA",
    "quagga",
    "exhausted",
];

fn assert_clean(what: &str, text: &str) {
    assert_free_of(what, text, &FORBIDDEN);
}

fn assert_free_of(what: &str, text: &str, forbidden: &[&str]) {
    for piece in forbidden {
        assert!(!text.contains(piece), "{what} holds {piece:?}:\n{text}");
    }
}

#[test]
fn no_byte_of_a_query_or_an_answer_reaches_the_log_the_metrics_or_the_spans() {
    let data = store();
    let log = data.path().join("strata.log");
    // Ingesting logged what it wrote; from here on only recalls are logged.
    std::fs::remove_file(&log).ok();
    // At trace level everything Strata logs is kept (the MCP SDK's own debug logging, which
    // carries whole requests, is held back unless STRATA_LOG names it).
    let everything = [("STRATA_LOG", "trace")];
    for (i, query) in HOSTILE_QUERIES.iter().enumerate() {
        let mode = if i % 2 == 0 { "active" } else { "shadow" };
        let out = common::strata_command(
            data.path(),
            &["--now", NOW, "--recall-mode", mode, "recall", query],
        )
        .envs(everything)
        .output()
        .unwrap();
        assert!(out.status.success(), "{}", common::stderr(&out));
    }
    for mode in ["active", "shadow"] {
        let mut server = McpProcess::start(
            data.path(),
            &[("STRATA_LOG", "trace"), ("STRATA_RECALL_MODE", mode)],
        );
        for (id, query) in HOSTILE_QUERIES.iter().enumerate() {
            let answer = server.recall(id as u64 + 1, query);
            assert_eq!(answer["mode"], mode, "{answer}");
        }
        server.finish();
    }

    let logged = std::fs::read_to_string(&log).unwrap();
    // The spans were logged, with their counts: the check below looks where they are.
    let spans: Vec<&str> = logged
        .lines()
        .filter(|l| l.contains("recall answered"))
        .collect();
    assert_eq!(spans.len(), 3 + 2 * 3, "{logged}");
    for span in &spans {
        assert!(
            span.contains("recall{mode=")
                && span.contains("bm25_hits=")
                && span.contains("results="),
            "{span}"
        );
    }
    assert_clean("the log", &logged);

    let out = common::strata(data.path(), &["metrics"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let metrics = common::stdout(&out);
    assert!(
        metrics.contains("strata_recall_total{mode=\"shadow\",leg=\"fused\",outcome=\"hit\"}"),
        "{metrics}"
    );
    assert_clean("the metrics", &metrics);
    for command in [["stats", "--json"], ["warm", "--json"]] {
        let out = common::strata(data.path(), &command);
        assert_clean(command[0], &common::stdout(&out));
    }
    // What the counters keep on disk holds none of it either (binary files: an escape byte
    // proves nothing there).
    let texts: Vec<&str> = FORBIDDEN.into_iter().filter(|p| p.len() > 1).collect();
    for entry in std::fs::read_dir(data.path().join("telemetry/embedded")).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let found: Vec<&&str> = texts
            .iter()
            .filter(|p| bytes.windows(p.len()).any(|w| w == p.as_bytes()))
            .collect();
        assert!(found.is_empty(), "{} holds {found:?}", path.display());
    }
}

/// An OTLP/HTTP collector on loopback: it decodes every export it is sent (protobuf, as a
/// collector does) and keeps the requests' paths, bodies and decoded spans.
struct Collector {
    address: String,
    received: std::sync::Arc<std::sync::Mutex<Vec<Export>>>,
}

struct Export {
    path: String,
    content_type: String,
    body: Vec<u8>,
    spans: Vec<opentelemetry_proto::tonic::trace::v1::Span>,
    resource: String,
}

impl Collector {
    fn start() -> Collector {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let shared = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let shared = shared.clone();
                std::thread::spawn(move || serve(stream, &shared));
            }
        });
        Collector { address, received }
    }

    fn exports(&self) -> std::sync::MutexGuard<'_, Vec<Export>> {
        self.received.lock().unwrap()
    }
}

/// Answers every request on one connection (the exporter keeps it alive) with an empty
/// `ExportTraceServiceResponse`.
fn serve(stream: std::net::TcpStream, received: &std::sync::Mutex<Vec<Export>>) {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use prost::Message;
    use std::io::Read;

    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line.split(' ').nth(1).unwrap_or("").to_string();
        let (mut length, mut content_type) = (0usize, String::new());
        loop {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse().unwrap(),
                "content-type" => content_type = value.trim().to_string(),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
        let resource = format!("{:?}", request.resource_spans.first().map(|r| &r.resource));
        let spans = request
            .resource_spans
            .into_iter()
            .flat_map(|r| r.scope_spans)
            .flat_map(|s| s.spans)
            .collect();
        received.lock().unwrap().push(Export {
            path,
            content_type,
            body,
            spans,
            resource,
        });
        writer
            .write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n",
            )
            .unwrap();
    }
}

fn attribute<'a>(
    span: &'a opentelemetry_proto::tonic::trace::v1::Span,
    key: &str,
) -> Option<&'a opentelemetry_proto::tonic::common::v1::any_value::Value> {
    span.attributes
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

#[test]
fn spans_reach_an_otlp_collector_with_counts_only_and_only_when_asked() {
    use opentelemetry_proto::tonic::common::v1::any_value::Value as Attr;

    let data = store();
    let collector = Collector::start();
    // Off by default: a recall with no endpoint configured sends nothing.
    let out = common::strata_command(data.path(), &["--now", NOW, "recall", "quagga pool"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(
        collector.exports().len(),
        0,
        "sent with no endpoint configured"
    );

    // From the config file, by `strata recall` processes, one per query.
    let config = data.path().join("otlp.toml");
    std::fs::write(
        &config,
        format!("[telemetry]\notlp_endpoint = \"{}\"\n", collector.address),
    )
    .unwrap();
    for (i, query) in HOSTILE_QUERIES.iter().enumerate() {
        let mode = if i % 2 == 0 { "active" } else { "shadow" };
        let out = common::strata_command(
            data.path(),
            &["--now", NOW, "--recall-mode", mode, "recall", query],
        )
        .env("STRATA_CONFIG", &config)
        .output()
        .unwrap();
        assert!(out.status.success(), "{}", common::stderr(&out));
    }
    // From the environment, by an MCP server answering several recalls.
    let mut server = McpProcess::start(
        data.path(),
        &[("STRATA_OTLP_ENDPOINT", collector.address.as_str())],
    );
    for (id, query) in HOSTILE_QUERIES.iter().enumerate() {
        server.recall(id as u64 + 1, query);
    }
    server.finish();

    let exports = collector.exports();
    let spans: Vec<_> = exports.iter().flat_map(|e| &e.spans).collect();
    assert_eq!(
        spans.len(),
        2 * HOSTILE_QUERIES.len(),
        "one span per recall"
    );
    for export in exports.iter() {
        assert_eq!(export.path, "/v1/traces");
        assert_eq!(export.content_type, "application/x-protobuf");
        assert!(export.resource.contains("strata"), "{}", export.resource);
    }
    for span in &spans {
        assert_eq!(span.name, "recall");
        assert!(
            matches!(attribute(span, "mode"), Some(Attr::StringValue(m)) if m == "active" || m == "shadow"),
            "{span:?}"
        );
        for counted in [
            "k",
            "entities",
            "semantic_hits",
            "bm25_hits",
            "graph_hits",
            "results",
        ] {
            assert!(
                matches!(attribute(span, counted), Some(Attr::IntValue(_))),
                "{counted} in {span:?}"
            );
        }
        for timed in ["semantic_ms", "bm25_ms", "graph_ms", "ms"] {
            assert!(
                matches!(attribute(span, timed), Some(Attr::DoubleValue(_))),
                "{timed} in {span:?}"
            );
        }
        assert!(span.events.is_empty(), "events went out: {span:?}");
        assert_clean("a span", &format!("{span:?}"));
    }
    let texts: Vec<&str> = FORBIDDEN.into_iter().filter(|p| p.len() > 1).collect();
    for export in exports.iter() {
        let found: Vec<&&str> = texts
            .iter()
            .filter(|p| export.body.windows(p.len()).any(|w| w == p.as_bytes()))
            .collect();
        assert!(found.is_empty(), "an export holds {found:?}");
    }
}

#[test]
fn an_otlp_endpoint_that_is_not_an_http_address_is_refused_naming_the_key() {
    let data = store();
    let out = common::strata_command(data.path(), &["--now", NOW, "recall", "quagga"])
        .env("STRATA_OTLP_ENDPOINT", "127.0.0.1:4317")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(
        err.contains("otlp_endpoint") && err.contains("expected an http:// or https:// address"),
        "{err}"
    );
}

/// The explorer's screen after `script`, on `data`, with `args` before the command.
fn explorer_screen(data: &Path, args: &[&str], script: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let tape = dir.path().join("session.tape");
    std::fs::write(&tape, format!("WaitIdle\n{script}Snapshot screen\n")).unwrap();
    let frames = dir.path().join("frames");
    let mut all = vec!["--now", NOW];
    all.extend(args);
    all.extend(["headless", "--size", "200x50", "--script"]);
    let out = common::strata_command(data, &all)
        .arg(&tape)
        .arg("--out")
        .arg(&frames)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    std::fs::read_to_string(frames.join("screen.txt")).unwrap()
}

#[test]
fn the_explorer_marks_the_mode_and_the_warm_signal_in_its_status_bar() {
    let data = store();
    // Active, and nobody has recalled yet: nothing to say.
    let screen = explorer_screen(data.path(), &[], "");
    assert!(!screen.contains("recall active"), "{screen}");
    // Shadow: said, with no signal yet; the explorer's own recall shows its results, and is
    // not counted.
    let shadow = ["--recall-mode", "shadow"];
    let screen = explorer_screen(data.path(), &shadow, "Action recall.seed\nWaitIdle\n");
    assert!(screen.contains("│ recall shadow · warm –"), "{screen}");
    assert!(screen.contains("recalled 2 incidents like"), "{screen}");
    assert_eq!(mode_counts(&stats(data.path()), "shadow")["recalls"], 0);
    for _ in 0..2 {
        let out = common::strata(
            data.path(),
            &[
                "--now",
                NOW,
                "--recall-mode",
                "shadow",
                "recall",
                "quagga pool",
            ],
        );
        assert!(out.status.success(), "{}", common::stderr(&out));
    }
    let screen = explorer_screen(data.path(), &shadow, "");
    assert!(screen.contains("│ recall shadow · warm 100%"), "{screen}");
    // Back in active mode, the signal recorded in shadow stays in view.
    let screen = explorer_screen(data.path(), &[], "");
    assert!(screen.contains("│ recall active · warm 100%"), "{screen}");
}
