//! A real FalkorDB for tests: the server `scripts/test` started (`STRATA_TEST_FALKORDB=HOST:PORT`),
//! or one this process starts from the binaries `scripts/install-falkordb` installed.

use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use strata::store::falkordb::{FalkorStore, FalkorUrl};

/// A FalkorDB process owned by the test; killed on drop.
pub struct Server {
    pub port: u16,
    child: Option<Child>,
    log: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

fn install_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("STRATA_FALKORDB_DIR") {
        return PathBuf::from(d);
    }
    let data = std::env::var_os("STRATA_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_DATA_HOME").map(|d| PathBuf::from(d).join("strata")))
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".local/share/strata")
        });
    data.join("falkordb")
}

pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The server's stdout and stderr, appended to `falkordb.log` in its directory.
fn log_file(dir: &std::path::Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("falkordb.log"))
        .unwrap()
}

/// Whether the process `pid` is the one listening on loopback `port`: the listening socket's
/// inode in /proc/net/tcp is among the process's open files. (Asking the server would need
/// its password or its TLS.)
fn serves(port: u16, pid: u32) -> bool {
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
        return false;
    };
    let local = format!("0100007F:{port:04X}");
    let Some(inode) = table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // local_address, state 0A = LISTEN, inode is the tenth field.
        (fields.get(1) == Some(&local.as_str()) && fields.get(3) == Some(&"0A"))
            .then(|| fields.get(9).map(|i| i.to_string()))
            .flatten()
    }) else {
        return false;
    };
    let socket = format!("socket:[{inode}]");
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy() == socket))
}

impl Server {
    /// Starts FalkorDB on `port` (a free one when None).
    pub fn start(port: Option<u16>) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let mut server = Self::spawn(port, dir.path(), &["--save", "", "--appendonly", "no"]);
        server._dir = Some(dir);
        server
    }

    /// Starts FalkorDB on a free port with extra server arguments (e.g. `--requirepass`).
    pub fn start_with(args: &[&str]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let mut all = vec!["--save", "", "--appendonly", "no"];
        all.extend_from_slice(args);
        let mut server = Self::spawn(None, dir.path(), &all);
        server._dir = Some(dir);
        server
    }

    /// Starts FalkorDB as `scripts/falkordb` does (append-only file, fsync every second) with
    /// its files in `dir`, which outlives it: start it again on `dir` to restart it.
    pub fn start_durable(dir: &std::path::Path) -> Server {
        Self::spawn(
            None,
            dir,
            &["--appendonly", "yes", "--appendfsync", "everysec"],
        )
    }

    /// Starts FalkorDB on the files in `dir` (a `dump.rdb` there is loaded), saving nothing
    /// on its own.
    pub fn start_on_rdb(dir: &std::path::Path) -> Server {
        Self::spawn(None, dir, &["--save", "", "--appendonly", "no"])
    }

    /// Stops the server the way an operator does (SIGTERM: it flushes and exits).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill").arg(c.id().to_string()).status();
            let _ = c.wait();
        }
    }

    fn spawn(port: Option<u16>, dir: &std::path::Path, persistence: &[&str]) -> Server {
        let bin = install_dir();
        assert!(
            bin.join("redis-server").is_file(),
            "FalkorDB is not installed in {}: run scripts/install-falkordb (scripts/test does)",
            bin.display()
        );
        // A free port can be taken by another test's server between our probe and its bind:
        // that server would answer our connects. Ready means this child answers, by its pid.
        for _ in 0..5 {
            let port = port.unwrap_or_else(free_port);
            let mut child = Command::new(bin.join("redis-server"))
                .args([
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--loadmodule",
                ])
                .arg(bin.join("falkordb.so"))
                .args(persistence)
                .arg("--dir")
                .arg(dir)
                .stdout(log_file(dir))
                .stderr(log_file(dir))
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                if serves(port, child.id()) {
                    return Server {
                        port,
                        child: Some(child),
                        log: dir.join("falkordb.log"),
                        _dir: None,
                    };
                }
                assert!(
                    Instant::now() < deadline,
                    "FalkorDB did not start on {port}"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("FalkorDB exited at start five times (ports taken?)");
    }

    /// Whether the server process is still running, and what it logged.
    pub fn health(&mut self) -> (bool, String) {
        let running = self
            .child
            .as_mut()
            .is_some_and(|c| c.try_wait().ok().flatten().is_none());
        (
            running,
            std::fs::read_to_string(&self.log).unwrap_or_default(),
        )
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The suite's shared server address.
pub fn address() -> String {
    static SHARED: OnceLock<(String, Option<Server>)> = OnceLock::new();
    let (addr, _) = SHARED.get_or_init(|| match std::env::var("STRATA_TEST_FALKORDB") {
        Ok(addr) if !addr.is_empty() => (addr, None),
        _ => {
            let server = Server::start(None);
            if let Some(pid) = server.child.as_ref().map(Child::id) {
                super::stop_with_this_process(pid);
            }
            (format!("127.0.0.1:{}", server.port), Some(server))
        }
    });
    addr.clone()
}

/// A fresh, empty graph on the shared server, unique to this call.
pub fn graph_url(name: &str) -> FalkorUrl {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!(
        "falkordb://{}/test_{name}_{}_{n}",
        address(),
        std::process::id()
    )
    .parse()
    .unwrap()
}

pub fn store(name: &str) -> FalkorStore {
    FalkorStore::connect(&graph_url(name)).unwrap()
}

/// Runs raw Cypher on a graph, as another program would.
pub fn raw_query(url: &FalkorUrl, cypher: &str) -> redis::Value {
    let client = redis::Client::open(url.connection_info().unwrap()).unwrap();
    let mut c = client.get_connection().unwrap();
    redis::cmd("GRAPH.QUERY")
        .arg(&url.graph)
        .arg(cypher)
        .query(&mut c)
        .unwrap()
}

/// Waits until the server at `addr` stops answering a PING within 100 ms, which it does only
/// while its main thread runs a write (Strata's writes run in MULTI/EXEC there, while reads
/// run on worker threads): proof that a write is in flight. `false` when `gave_up` says to stop
/// first (the writer finished) or `bound` passes.
pub fn wait_until_writing(
    addr: &str,
    gave_up: &mut dyn FnMut() -> bool,
    bound: std::time::Duration,
) -> bool {
    let client = redis::Client::open(format!("redis://{addr}/")).unwrap();
    let mut con = client
        .get_connection_with_timeout(std::time::Duration::from_secs(2))
        .unwrap();
    con.set_read_timeout(Some(std::time::Duration::from_millis(100)))
        .unwrap();
    let deadline = std::time::Instant::now() + bound;
    while std::time::Instant::now() < deadline {
        if gave_up() {
            return false;
        }
        match redis::cmd("PING").query::<String>(&mut con) {
            Ok(_) => std::thread::sleep(std::time::Duration::from_millis(1)),
            Err(e) if e.is_timeout() => return true,
            Err(e) => panic!("probing {addr}: {e}"),
        }
    }
    false
}
