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
    run_client_with(python, args, &[])
}

/// The client, with `env` set for it (STRATA_TEST_TOKEN, STRATA_TEST_CA).
fn client_output(
    python: &Path,
    args: &[&str],
    env: &[(&str, &dyn AsRef<std::ffi::OsStr>)],
) -> std::process::Output {
    let mut client = Command::new(python);
    client.arg(client_script()).args(args);
    for (name, value) in env {
        client.env(name, value);
    }
    client.output().unwrap()
}

fn run_client_with(
    python: &Path,
    args: &[&str],
    env: &[(&str, &dyn AsRef<std::ffi::OsStr>)],
) -> Value {
    let out = client_output(python, args, env);
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
    /// Everything the server wrote on stderr so far.
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl HttpServer {
    fn start(data: &Path) -> HttpServer {
        Self::start_with(data, &[])
    }

    /// The server, with `env` set for it.
    fn start_with(data: &Path, env: &[(&str, &str)]) -> HttpServer {
        Self::spawn(data, &["--http", "127.0.0.1:0"], env)
    }

    /// `strata mcp ARGS` with `env` set for it, once it listens.
    fn spawn(data: &Path, args: &[&str], env: &[(&str, &str)]) -> HttpServer {
        let child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .env("STRATA_EMBEDDER", "hash")
            .env_remove("STRATA_MCP_TOKEN")
            .envs(env.iter().copied())
            .arg("--data")
            .arg(data)
            .args(["--now", NOW, "mcp"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Owned by the guard first, so that any failure below kills and reaps it.
        let mut server = HttpServer {
            child,
            url: String::new(),
            stderr: Default::default(),
        };
        let stderr = server.child.stderr.take().unwrap();
        let seen = server.stderr.clone();
        // Drained to the end on its own thread: a closed pipe would fail the server's next
        // line on stderr.
        let (lines, seen_lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Ok(mut seen) = seen.lock() {
                    seen.push_str(&line);
                    seen.push('\n');
                }
                let _ = lines.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(120);
        while let Ok(line) =
            seen_lines.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if let Some(url) = line.strip_prefix("strata mcp: listening on ") {
                server.url = url.trim().to_string();
                return server;
            }
        }
        panic!(
            "the server did not listen in time:\n{}",
            server.stderr.lock().unwrap()
        );
    }

    /// The server on `addr` with [`token_file`]'s tokens (kept in the directory returned).
    fn with_token_file(data: &Path, addr: &str) -> (tempfile::TempDir, HttpServer) {
        let secrets = tempfile::tempdir().unwrap();
        let tokens = token_file(secrets.path());
        let args = ["--http", addr, "--token-file", tokens.to_str().unwrap()];
        (secrets, HttpServer::spawn(data, &args, &[]))
    }

    /// 127.0.0.1:PORT of the server, whatever address it listens on.
    fn loopback(&self) -> String {
        let port = self
            .url
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next())
            .unwrap();
        format!("127.0.0.1:{port}")
    }

    /// SIGTERM, and what it wrote on stderr once it has exited (its log is flushed then).
    fn stop(mut self) -> String {
        common::signal(self.child.id(), "TERM");
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the server ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
        // The reader thread sees the pipe close right after the exit.
        std::thread::sleep(Duration::from_millis(200));
        self.stderr.lock().unwrap().clone()
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
fn the_http_transport_refuses_an_address_off_loopback_without_a_token() {
    let data = tempfile::tempdir().unwrap();
    let out = common::strata_command(data.path(), &["mcp", "--http", "0.0.0.0:0"])
        .env_remove("STRATA_MCP_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(
        err.contains("not a loopback address")
            && err.contains("--token-file")
            && err.contains("STRATA_MCP_TOKEN"),
        "{err}"
    );
}

const RO_TOKEN: &str = "ro-7f3a9c2e5b8d4f1a6c0e";
const RW_TOKEN: &str = "rw-2b9e4d7a1c6f3e8b5a0d";
const WRONG_TOKEN: &str = "no-5e1c8a3f7b2d9e4c6a1f";

/// A token file (mode 600) with a read-only token and a read-write one.
fn token_file(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("tokens");
    std::fs::write(
        &path,
        format!("# the team's tokens\n{RO_TOKEN} ro dashboards\n\n{RW_TOKEN} rw agent\n"),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// One HTTP/1.1 request on its own connection: the status and the whole response.
fn http_request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String) {
    use std::io::{Read, Write};
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
    .to_string();
    let body = if method == "POST" {
        body
    } else {
        String::new()
    };
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response:?}"));
    (status, response)
}

#[test]
fn off_loopback_a_request_without_the_right_token_gets_401_and_no_token_reaches_the_log() {
    let data = store_with_incident_a(&[]);
    let (_secrets, server) = HttpServer::with_token_file(data.path(), "0.0.0.0:0");
    assert!(server.url.starts_with("http://0.0.0.0:"), "{}", server.url);
    let addr = server.loopback();
    let wrong = format!("Bearer {WRONG_TOKEN}");
    let shouted = format!("Bearer {}", RW_TOKEN.to_uppercase());
    let refused: [(&str, &[(&str, &str)]); 5] = [
        ("POST", &[]),
        ("POST", &[("Authorization", &wrong)]),
        ("POST", &[("Authorization", &shouted)]),
        ("POST", &[("Authorization", "Basic YWdlbnQ6c2VjcmV0")]),
        ("GET", &[]),
    ];
    for (method, headers) in refused {
        let path = if method == "GET" { "/metrics" } else { "/mcp" };
        let (status, response) = http_request(&addr, method, path, headers);
        assert_eq!(status, 401, "{method} {path} {headers:?}:\n{response}");
        let lower = response.to_lowercase();
        assert!(
            lower.contains("www-authenticate: bearer realm=\"strata\""),
            "{response}"
        );
        assert!(!response.contains(WRONG_TOKEN) && !response.contains(RW_TOKEN));
    }
    let (_, wrong_answer) = http_request(&addr, "POST", "/mcp", &[("Authorization", &wrong)]);
    assert!(
        wrong_answer.contains("error=\"invalid_token\""),
        "{wrong_answer}"
    );

    // A read-only token reads the metrics.
    let ro = format!("Bearer {RO_TOKEN}");
    let (status, metrics) = http_request(&addr, "GET", "/metrics", &[("Authorization", &ro)]);
    assert_eq!(status, 200, "{metrics}");
    assert!(metrics.contains("strata_episodes 1"), "{metrics}");

    let stderr = server.stop();
    assert!(stderr.contains("2 bearer tokens accepted"), "{stderr}");
    assert!(stderr.contains("no TLS off loopback"), "{stderr}");
    let log = std::fs::read_to_string(data.path().join("strata.log")).unwrap();
    let refusals: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("401 Unauthorized"))
        .collect();
    assert_eq!(refusals.len(), 6, "one line a refusal:\n{log}");
    assert!(
        refusals.iter().all(|l| l.contains("peer=127.0.0.1:")),
        "{log}"
    );
    assert_eq!(
        refusals
            .iter()
            .filter(|l| l.contains("a bearer token this server does not accept"))
            .count(),
        3,
        "{log}"
    );
    assert!(
        refusals
            .iter()
            .any(|l| l.contains("no Authorization header") && l.contains("/metrics"))
    );
    for secret in [
        WRONG_TOKEN,
        RO_TOKEN,
        RW_TOKEN,
        &RW_TOKEN.to_uppercase(),
        "YWdlbnQ6c2VjcmV0",
    ] {
        assert!(!log.contains(secret), "{secret} in the log:\n{log}");
        assert!(!stderr.contains(secret), "{secret} on stderr:\n{stderr}");
    }
}

#[test]
fn a_read_only_token_reads_and_is_refused_record_incident() {
    let Some(python) = python() else {
        eprintln!("skipped: no Python MCP client (run scripts/install-mcp-client)");
        return;
    };
    let data = store_with_incident_a(&[]);
    let (_secrets, server) = HttpServer::with_token_file(data.path(), "127.0.0.1:0");
    let summary = run_client_with(
        &python,
        &["http", &server.url, "read-only"],
        &[("STRATA_TEST_TOKEN", &RO_TOKEN)],
    );
    let refused = &summary["refused"];
    assert_eq!(refused["code"], -32600, "{summary}");
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("record_incident")
            && message.contains("\"dashboards\" is read-only")
            && message.contains("nothing was written"),
        "{message}"
    );
    assert_eq!(refused["data"]["role"], "ro", "{summary}");
    assert!(!refused.to_string().contains(RO_TOKEN));
    assert_eq!(summary["recall"], json!(["INC-A"]), "{summary}");
    assert_eq!(summary["timeline"], json!(["INC-A"]), "{summary}");
    let stderr = server.stop();
    // Nothing was written: the store still holds INC-A alone.
    let out = common::strata(data.path(), &["--now", NOW, "lineage", "INC-B", "--json"]);
    assert!(!out.status.success(), "INC-B was recorded");
    let log = std::fs::read_to_string(data.path().join("strata.log")).unwrap();
    assert!(
        log.contains("refused a write to a read-only token") && log.contains("by=\"dashboards\""),
        "{log}"
    );
    assert!(!log.contains(RO_TOKEN) && !stderr.contains(RO_TOKEN));
}

#[test]
fn over_tls_with_a_generated_certificate_a_read_write_token_runs_the_whole_scenario() {
    let Some(python) = python() else {
        eprintln!("skipped: no Python MCP client (run scripts/install-mcp-client)");
        return;
    };
    let data = store_with_incident_a(&[]);
    let secrets = tempfile::tempdir().unwrap();
    // A team's CA, and the server's certificate it signed (served with the chain).
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "strata team CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let server_key = KeyPair::generate().unwrap();
    let server_cert =
        CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
            .unwrap()
            .signed_by(&server_key, &issuer)
            .unwrap();
    let ca = secrets.path().join("ca.pem");
    let cert = secrets.path().join("cert.pem");
    let key = secrets.path().join("key.pem");
    std::fs::write(&ca, ca_cert.pem()).unwrap();
    std::fs::write(&cert, server_cert.pem() + &ca_cert.pem()).unwrap();
    std::fs::write(&key, server_key.serialize_pem()).unwrap();
    // The token from the environment this time: read-write.
    let server = HttpServer::spawn(
        data.path(),
        &[
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
        &[("STRATA_MCP_TOKEN", RW_TOKEN)],
    );
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );
    let scenario = ["http", server.url.as_str(), "scenario"];
    // The wrong token is refused at the HTTP layer, before any MCP; the client hanging up on
    // the refusal leaves the server running (a TLS write to a reset socket once ended it).
    let refused = client_output(
        &python,
        &scenario,
        &[("STRATA_TEST_TOKEN", &WRONG_TOKEN), ("STRATA_TEST_CA", &ca)],
    );
    assert!(!refused.status.success(), "{}", common::stdout(&refused));
    let summary = run_client_with(
        &python,
        &scenario,
        &[("STRATA_TEST_TOKEN", &RW_TOKEN), ("STRATA_TEST_CA", &ca)],
    );
    check_summary(&summary);
    // Plain HTTP on the TLS port gets no answer.
    let plain = std::net::TcpStream::connect(server.loopback()).map(|mut s| {
        use std::io::{Read, Write};
        let _ = s.set_read_timeout(Some(Duration::from_secs(15)));
        let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
        answer
    });
    assert!(
        !String::from_utf8_lossy(&plain.unwrap()).contains("strata_"),
        "metrics over plain HTTP"
    );
    let stderr = server.stop();
    let log = std::fs::read_to_string(data.path().join("strata.log")).unwrap();
    assert!(log.contains("by=\"env\""), "{log}");
    assert!(
        log.contains("401 Unauthorized")
            && log.contains("a bearer token this server does not accept"),
        "the wrong token's refusal is logged:\n{log}"
    );
    assert!(!log.contains(RW_TOKEN) && !log.contains(WRONG_TOKEN));
    assert!(!stderr.contains(RW_TOKEN) && !stderr.contains(WRONG_TOKEN));
}

#[test]
fn a_token_file_other_users_may_read_is_refused_saying_why() {
    use std::os::unix::fs::PermissionsExt;
    let data = tempfile::tempdir().unwrap();
    let secrets = tempfile::tempdir().unwrap();
    let tokens = token_file(secrets.path());
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o644)).unwrap();
    let serve = |tokens: &Path| {
        common::strata_command(
            data.path(),
            &[
                "mcp",
                "--http",
                "0.0.0.0:0",
                "--token-file",
                tokens.to_str().unwrap(),
            ],
        )
        .env_remove("STRATA_MCP_TOKEN")
        .output()
        .unwrap()
    };
    let out = serve(&tokens);
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(
        err.contains(tokens.to_str().unwrap())
            && err.contains("other users")
            && err.contains("mode 644")
            && err.contains("chmod 600"),
        "{err}"
    );
    // A line that is not `TOKEN ro|rw NAME` is named, and its token is not repeated.
    std::fs::write(
        &tokens,
        format!("{RO_TOKEN} ro dashboards\n{RW_TOKEN} admin agent\n"),
    )
    .unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = serve(&tokens);
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(
        err.contains(&format!("{}:2:", tokens.display()))
            && err.contains("`ro` (read-only) or `rw`"),
        "{err}"
    );
    assert!(!err.contains(RW_TOKEN) && !err.contains(RO_TOKEN), "{err}");
    // A certificate that is not one is named too.
    let out = common::strata_command(
        data.path(),
        &[
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            tokens.to_str().unwrap(),
            "--tls-key",
            tokens.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(
        err.contains("the TLS certificate") && err.contains("no certificate"),
        "{err}"
    );
    assert!(!err.contains(RW_TOKEN), "{err}");
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
