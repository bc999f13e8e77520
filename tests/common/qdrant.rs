//! A real Qdrant for tests: the server `scripts/test` started
//! (`STRATA_TEST_QDRANT=qdrant://HOST:PORT`), or one this process starts from
//! `../shared/bin/qdrant` (or `STRATA_QDRANT_BIN`). Without either, the Qdrant tests skip,
//! saying so once on stderr.

use std::io::Write;
use std::sync::Arc;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use strata::embed::HashEmbedder;
use strata::index::VectorLocation;
use strata::model::AsOf;
use strata::recall::{
    FusionPolicy, LegSet, RecallRequest, RecallResponse, RecallStack, StackOptions,
};
use strata::store::MemoryStore;
use strata::store::embedded::EmbeddedStore;

/// A Qdrant process owned by the test; killed on drop. Restartable on the same ports and
/// storage.
pub struct Server {
    pub http_port: u16,
    pub grpc_port: u16,
    /// The peer-to-peer port, for a peer of a cluster.
    pub p2p_port: Option<u16>,
    /// The p2p port of the peer this one joined on its first start.
    bootstrap: Option<u16>,
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
        Self::launch(false, None)
    }

    /// Starts a peer of a cluster (`cluster.enabled`): the first peer of a new cluster when
    /// `bootstrap` is None, else one joining the peer whose p2p port it names.
    pub fn start_peer(bootstrap: Option<u16>) -> Option<Server> {
        Self::launch(true, bootstrap)
    }

    fn launch(cluster: bool, bootstrap: Option<u16>) -> Option<Server> {
        binary()?;
        let mut server = Server {
            http_port: super::falkordb::free_port(),
            grpc_port: super::falkordb::free_port(),
            p2p_port: cluster.then(super::falkordb::free_port),
            bootstrap,
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
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("qdrant.log"))
            .unwrap();
        let mut command = Command::new(binary().unwrap());
        if let Some(p2p) = self.p2p_port {
            command
                .env("QDRANT__CLUSTER__ENABLED", "true")
                .env("QDRANT__CLUSTER__P2P__PORT", p2p.to_string())
                .args(["--uri", &format!("http://127.0.0.1:{p2p}")]);
            // A restarted peer finds its cluster in its own storage.
            if let Some(first) = self.bootstrap.take() {
                command.args(["--bootstrap", &format!("http://127.0.0.1:{first}")]);
            }
        }
        let child = command
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

/// Three Qdrant peers on loopback forming one cluster, each killed on drop.
pub struct Cluster {
    pub peers: Vec<Server>,
}

impl Cluster {
    /// Starts the first peer, then two joining it; None when there is no binary.
    pub fn start() -> Option<Cluster> {
        let first = Server::start_peer(None)?;
        let p2p = first.p2p_port;
        let mut peers = vec![first];
        for _ in 0..2 {
            peers.push(Server::start_peer(p2p)?);
        }
        let cluster = Cluster { peers };
        cluster.wait_for_peers(3);
        Some(cluster)
    }

    /// Waits until the first peer's `/cluster` lists `n` peers.
    pub fn wait_for_peers(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let body = http_get(self.peers[0].http_port, "/cluster").unwrap_or_default();
            let listed = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["result"]["peers"].as_object().map(|p| p.len()));
            if listed == Some(n) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the cluster never listed {n} peers: {body}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The body of a GET on the loopback HTTP API, or None when it does not answer 200.
pub fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = String::new();
    std::io::Read::read_to_string(&mut s, &mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200")
        .then(|| body.to_string())
        .or_else(|| head.starts_with("HTTP/1.0 200").then(|| body.to_string()))
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
                super::stop_with_this_process(server.pid());
                Some((server.url(), Some(server)))
            }
            None => None,
        },
    });
    shared.as_ref().map(|(url, _)| url.clone())
}

/// A three-peer cluster shared by this test process (its first peer's URL), or None when
/// there is no binary.
pub fn cluster_url() -> Option<String> {
    static SHARED: OnceLock<Option<Cluster>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let cluster = Cluster::start()?;
            for peer in &cluster.peers {
                super::stop_with_this_process(peer.pid());
            }
            Some(cluster)
        })
        .as_ref()
        .map(|c| c.peers[0].url())
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

    /// Where the collection's shards and their copies are, as the peer asked sees it.
    pub fn cluster_info(
        &self,
        collection: &str,
    ) -> qdrant_client::qdrant::CollectionClusterInfoResponse {
        self.runtime
            .block_on(self.client.collection_cluster_info(collection))
            .unwrap()
    }

    /// The exact point count.
    pub fn count(&self, collection: &str) -> u64 {
        use qdrant_client::qdrant::CountPointsBuilder;
        self.runtime
            .block_on(
                self.client
                    .count(CountPointsBuilder::new(collection).exact(true)),
            )
            .unwrap()
            .result
            .unwrap()
            .count
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

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

pub fn request(text: &str, entities: &[&str], at: &str) -> RecallRequest {
    RecallRequest {
        exclude: Vec::new(),
        text: text.into(),
        entities: entities.iter().map(|e| e.parse().unwrap()).collect(),
        as_of: AsOf::now(super::ts(at)),
        k: 10,
        legs: LegSet::ALL,
        fusion: FusionPolicy::Rrf,
        stale: Default::default(),
    }
}

pub fn demo_store(dir: &std::path::Path) -> Arc<dyn MemoryStore> {
    let store = EmbeddedStore::open(&dir.join("store")).unwrap();
    strata::demo::seed(&store).unwrap();
    Arc::new(store)
}

/// A recall stack on Qdrant. Legs' success is asserted, not timed: a generous timeout (a test
/// that times a leg out sets its own).
pub fn stack(store: Arc<dyn MemoryStore>, index_dir: &std::path::Path, url: &str) -> RecallStack {
    let mut s = RecallStack::open(
        store,
        Ok(Arc::new(HashEmbedder::default())),
        &StackOptions {
            index_dir: index_dir.into(),
            sync: true,
            vectors: VectorLocation::Qdrant(url.into()),
            runtime: None,
        },
        &mut |_, _| {},
    );
    s.engine.timeout = Duration::from_secs(30);
    s
}

pub fn store_id(store: &dyn MemoryStore) -> String {
    store
        .identity()
        .unwrap()
        .expect("a written store has an identity")
}

pub fn fingerprints(r: &RecallResponse) -> Vec<String> {
    r.results.iter().map(|x| x.fingerprint.clone()).collect()
}
