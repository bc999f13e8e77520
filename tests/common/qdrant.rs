//! A real Qdrant for tests: the server `scripts/test` started
//! (`STRATA_TEST_QDRANT=qdrant://HOST:PORT`), or one this process starts from
//! `../shared/bin/qdrant` (or `STRATA_QDRANT_BIN`). Without either, the Qdrant tests skip,
//! saying so once on stderr.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A Qdrant process owned by the test; killed on drop. Restartable on the same ports and
/// storage.
pub struct Server {
    pub http_port: u16,
    pub grpc_port: u16,
    child: Option<Child>,
    dir: tempfile::TempDir,
}

pub fn binary() -> Option<PathBuf> {
    let bin = std::env::var_os("STRATA_QDRANT_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| super::shared_dir().join("bin/qdrant"));
    bin.is_file().then_some(bin)
}

impl Server {
    /// Starts Qdrant on free ports, or None when there is no binary.
    pub fn start() -> Option<Server> {
        binary()?;
        let mut server = Server {
            http_port: super::falkordb::free_port(),
            grpc_port: super::falkordb::free_port(),
            child: None,
            dir: tempfile::tempdir().unwrap(),
        };
        server.restart();
        Some(server)
    }

    pub fn url(&self) -> String {
        format!("qdrant://127.0.0.1:{}", self.grpc_port)
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Where the server keeps its snapshots (a snapshot recovers from a file there).
    pub fn snapshots_dir(&self) -> PathBuf {
        self.dir.path().join("snapshots")
    }

    /// Starts the process (again) on the same ports and storage and waits for its HTTP root.
    pub fn restart(&mut self) {
        self.kill();
        let dir = self.dir.path();
        let log = std::fs::File::create(dir.join("qdrant.log")).unwrap();
        let child = Command::new(binary().unwrap())
            .current_dir(dir)
            .env("QDRANT__SERVICE__HOST", "127.0.0.1")
            .env("QDRANT__SERVICE__HTTP_PORT", self.http_port.to_string())
            .env("QDRANT__SERVICE__GRPC_PORT", self.grpc_port.to_string())
            .env("QDRANT__STORAGE__STORAGE_PATH", dir.join("storage"))
            .env("QDRANT__STORAGE__SNAPSHOTS_PATH", dir.join("snapshots"))
            .env("QDRANT__TELEMETRY_DISABLED", "true")
            .env("QDRANT__LOG_LEVEL", "WARN")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while !http_root_answers(self.http_port) {
            assert!(
                Instant::now() < deadline,
                "Qdrant did not start on {}: {}",
                self.http_port,
                std::fs::read_to_string(dir.join("qdrant.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGSTOP (true) or SIGCONT (false).
    pub fn pause(&self, stop: bool) {
        let signal = if stop { "-STOP" } else { "-CONT" };
        let ok = Command::new("kill")
            .args([signal, &self.pid().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {signal}");
        if stop {
            // The signal is delivered asynchronously: a request sent right after `kill`
            // could still be answered. Wait until every thread of the server has stopped.
            let pid = self.pid();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while !all_threads_stopped(pid) {
                assert!(
                    std::time::Instant::now() < deadline,
                    "Qdrant ({pid}) did not stop"
                );
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }
}

/// Whether every thread of `pid` is stopped (state `T` in /proc).
fn all_threads_stopped(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.filter_map(Result::ok).all(|task| {
        std::fs::read_to_string(task.path().join("stat")).is_ok_and(|stat| {
            // The state follows the command name, which is in parentheses.
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .is_some_and(|state| state == "T" || state == "t")
        })
    })
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.is_some() {
            self.pause(false);
        }
        self.kill();
    }
}

fn http_root_answers(port: u16) -> bool {
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    if s.write_all(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    std::io::Read::read_exact(&mut s, &mut head).is_ok()
        && head.starts_with(b"HTTP/1.")
        && &head[9..12] == b"200"
}

/// The suite's shared server URL, or None (after saying so once) when there is no Qdrant.
pub fn url() -> Option<String> {
    static SHARED: OnceLock<Option<(String, Option<Server>)>> = OnceLock::new();
    let shared = SHARED.get_or_init(|| match std::env::var("STRATA_TEST_QDRANT") {
        // scripts/test found no binary.
        Ok(url) if url == "none" => None,
        Ok(url) if !url.is_empty() => Some((url, None)),
        _ => match Server::start() {
            Some(server) => {
                // Statics are never dropped: a watcher stops the server when this process ends.
                let _ = Command::new("sh")
                    .arg("-c")
                    .arg(format!(
                        "while kill -0 {} 2>/dev/null; do sleep 0.5; done; kill {}",
                        std::process::id(),
                        server.pid()
                    ))
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn();
                Some((server.url(), Some(server)))
            }
            None => None,
        },
    });
    shared.as_ref().map(|(url, _)| url.clone())
}

/// Says, once per test process and past the test harness's capture, that Qdrant tests skip.
pub fn skipping(test: &str) {
    static SAID: OnceLock<()> = OnceLock::new();
    SAID.get_or_init(|| {
        let _ = writeln!(
            std::io::stderr(),
            "Qdrant tests skipped (first: {test}): no STRATA_TEST_QDRANT and no binary at \
             ../shared/bin/qdrant (or STRATA_QDRANT_BIN)"
        );
    });
}

/// Another program's view of the server: the plain client, for inspecting and tampering.
pub struct Raw {
    runtime: tokio::runtime::Runtime,
    client: qdrant_client::Qdrant,
}

impl Raw {
    pub fn new(url: &str) -> Raw {
        let http = url.replace("qdrant://", "http://");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = qdrant_client::Qdrant::from_url(&http)
            .skip_compatibility_check()
            .build()
            .unwrap();
        Raw { runtime, client }
    }

    pub fn info(&self, collection: &str) -> qdrant_client::qdrant::CollectionInfo {
        self.runtime
            .block_on(self.client.collection_info(collection))
            .unwrap()
            .result
            .unwrap()
    }

    pub fn exists(&self, collection: &str) -> bool {
        self.runtime
            .block_on(self.client.collection_exists(collection))
            .unwrap()
    }

    pub fn create(
        &self,
        collection: &str,
        dimension: u64,
        distance: qdrant_client::qdrant::Distance,
    ) {
        use qdrant_client::qdrant::{CreateCollectionBuilder, VectorParamsBuilder};
        self.runtime
            .block_on(
                self.client.create_collection(
                    CreateCollectionBuilder::new(collection)
                        .vectors_config(VectorParamsBuilder::new(dimension, distance)),
                ),
            )
            .unwrap();
    }

    pub fn delete_points(&self, collection: &str, fingerprints: &[&str]) {
        use qdrant_client::qdrant::{DeletePointsBuilder, PointsIdsList};
        let ids = fingerprints
            .iter()
            .map(|f| strata::index::qdrant::point_id(f).to_string().into())
            .collect();
        self.runtime
            .block_on(
                self.client.delete_points(
                    DeletePointsBuilder::new(collection)
                        .points(PointsIdsList { ids })
                        .wait(true),
                ),
            )
            .unwrap();
    }
}
