//! The FalkorDB backend: the same memory graph on a server, spoken to over the Redis wire with
//! `GRAPH.QUERY` and constant, parameterised Cypher (see [`cypher`]). Labels, relationship
//! types and property names are exactly the memory model's, so a graph another agent wrote with
//! the same schema reads as-is.

pub(crate) mod cypher;
mod guard;
mod params;
mod primary;
mod read;
mod rows;
mod url;
mod versions;
mod write;

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::runtime::Handle;

use crate::client_runtime::ClientRuntime;
use crate::store::StoreError;
pub use params::Param;
use rows::Rows;
pub use url::{
    DEFAULT_PRIMARY_NAME, FalkorUrl, FalkorUrlError, PASSWORD_ENV, Password, SentinelSet,
    mask_credentials,
};
// The graph's own vector index (`crate::index::falkordb`) reaches the graph through these:
// the connection, the constant Cypher (its queries stay with every other), and query counts.
pub(crate) use read::count;

/// How long one query may take before the call fails (the connection then reconnects).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);
/// Every query carries this server-side TIMEOUT, under the client's response timeout, so a
/// query that runs away is stopped (a write, rolled back whole) by the server too. It counts
/// from when the query starts to run: a write queued behind others, or held by a stopped
/// server, can still land after the client gave up; such an ingest reports failure, and its
/// rerun finds the batch whole and changes nothing.
const SERVER_TIMEOUT_MS: u64 = 9_000;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

pub struct FalkorStore {
    url: FalkorUrl,
    // Dropped before the runtime its connection runs on.
    primary: std::sync::Arc<primary::Primary>,
    runtime: ClientRuntime,
    /// Indexes are created once per process, on the first call that reaches the server.
    schema_ready: AtomicBool,
    /// Where the last `episodes_since` page ended, so the next page continues by key instead
    /// of skipping from the start.
    ingest_cursor: Mutex<Option<IngestCursor>>,
}

/// An episode's place in the ingest log: its ordinal and its (ingest_seq, ingested_at,
/// fingerprint) key.
#[derive(Clone)]
struct IngestCursor {
    ordinal: u64,
    seq: i64,
    ingested_at: i64,
    fingerprint: String,
}

fn internal(e: impl std::fmt::Display) -> StoreError {
    StoreError::Internal(e.to_string())
}

fn internal_poisoned() -> StoreError {
    internal("the ingest cursor's lock was poisoned by an earlier panic")
}

impl FalkorStore {
    /// Connects now; a server that is down is an error naming the address.
    pub fn connect(url: &FalkorUrl) -> Result<Self, StoreError> {
        Self::connect_on(url, None)
    }

    /// [`FalkorStore::connect`], its connection driven by `runtime` when one is given.
    pub fn connect_on(url: &FalkorUrl, runtime: Option<Handle>) -> Result<Self, StoreError> {
        let store = Self::connect_lazily_on(url, runtime)?;
        store.ensure_schema()?;
        Ok(store)
    }

    /// Connects on first use, so a caller can start while the server is down; every call
    /// fails until it is back, then reconnects.
    pub fn connect_lazily(url: &FalkorUrl) -> Result<Self, StoreError> {
        Self::connect_lazily_on(url, None)
    }

    /// [`FalkorStore::connect_lazily`] on the runtime given, or on one of its own.
    pub fn connect_lazily_on(url: &FalkorUrl, runtime: Option<Handle>) -> Result<Self, StoreError> {
        let runtime = ClientRuntime::start("strata-falkordb", runtime)
            .map_err(|e| internal(format!("cannot start the FalkorDB client's runtime: {e}")))?;
        if url.tls {
            tls::install_crypto();
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let open_failed = |e: redis::RedisError| StoreError::Open {
            path: url.to_string().into(),
            message: e.to_string(),
        };
        let primary = if url.sentinel.is_some() {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            let (url_, config_) = (url.clone(), config.clone());
            runtime.handle().spawn(async move {
                let _ = tx.send(primary::Primary::through_sentinel(&url_, config_).await);
            });
            rx.recv()
                .map_err(|_| internal("the FalkorDB connection task stopped"))?
                .map_err(|e| StoreError::Unreachable {
                    server: format!("FalkorDB at {}", url.address()),
                    source: e,
                })?
        } else {
            let client = url
                .connection_info()
                .and_then(redis::Client::open)
                .map_err(open_failed)?;
            let _guard = runtime.handle().enter();
            primary::Primary::direct(client, config).map_err(open_failed)?
        };
        Ok(FalkorStore {
            url: url.clone(),
            runtime,
            primary: std::sync::Arc::new(primary),
            schema_ready: AtomicBool::new(false),
            ingest_cursor: Mutex::new(None),
        })
    }

    /// Through Sentinel, the server requests go to now.
    pub(crate) fn primary_address(&self) -> Option<String> {
        self.primary.address()
    }

    /// How errors name the server.
    fn server(&self) -> String {
        match self.primary.address() {
            Some(primary) => format!("FalkorDB at {primary} ({})", self.url.address()),
            None => format!("FalkorDB at {}", self.url.address()),
        }
    }

    pub fn url(&self) -> &FalkorUrl {
        &self.url
    }

    fn unreachable(&self, e: &redis::RedisError) -> StoreError {
        if is_authentication_failure(e) {
            let why = if e.code() == Some("NOAUTH") {
                "the server wants a password and none was given"
            } else {
                "the server refused the user and password"
            };
            StoreError::Authentication {
                server: self.server(),
                why,
            }
        } else if e.is_io_error()
            || e.is_timeout()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
        {
            StoreError::Unreachable {
                server: self.server(),
                source: e.clone(),
            }
        } else {
            StoreError::Server {
                server: self.server(),
                source: e.clone(),
            }
        }
    }

    fn send(&self, cmd: redis::Cmd) -> Result<redis::Value, StoreError> {
        self.send_with(move |mut connection| {
            let cmd = cmd.clone();
            async move { cmd.query_async::<redis::Value>(&mut connection).await }
        })
    }

    /// Runs one request on the store's runtime and waits for it on this thread (never from
    /// inside an async task: store calls run on blocking threads). Through Sentinel, a request
    /// that finds the primary gone asks the Sentinels where it is now and is sent once more.
    fn send_with<F, Fut>(&self, request: F) -> Result<redis::Value, StoreError>
    where
        F: Fn(ConnectionManager) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = redis::RedisResult<redis::Value>> + Send + 'static,
    {
        let request = std::sync::Arc::new(request);
        let mut reply = self.send_once(request.clone());
        if let Err(StoreError::Unreachable { source, .. } | StoreError::Server { source, .. }) =
            &reply
            && self.primary.is_sentinel()
            && primary::lost_primary(source)
            && self.follow_primary().is_ok()
        {
            reply = self.send_once(request);
        }
        reply
    }

    fn send_once<F, Fut>(&self, request: std::sync::Arc<F>) -> Result<redis::Value, StoreError>
    where
        F: Fn(ConnectionManager) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = redis::RedisResult<redis::Value>> + Send + 'static,
    {
        let connection = self
            .primary
            .connection()
            .ok_or_else(|| internal("the FalkorDB connection's lock was poisoned"))?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.runtime.handle().spawn(async move {
            let reply = request(connection).await;
            let _ = tx.send(reply);
        });
        match rx.recv() {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => {
                if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() {
                    // The server that comes back may be a fresh one: its indexes are checked
                    // again (without them FalkorDB answers some of our queries with null rows).
                    self.schema_ready.store(false, Ordering::Release);
                }
                Err(self.unreachable(&e))
            }
            Err(_) => Err(internal("the FalkorDB connection task stopped")),
        }
    }

    /// Through Sentinel: connects to the server the Sentinels name as the primary now.
    fn follow_primary(&self) -> Result<(), StoreError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let primary = self.primary.clone();
        self.runtime.handle().spawn(async move {
            let _ = tx.send(primary.follow().await);
        });
        match rx.recv() {
            Ok(Ok(())) => {
                self.schema_ready.store(false, Ordering::Release);
                tracing::info!(graph = %self.url, "reconnected to the primary Sentinel names");
                Ok(())
            }
            Ok(Err(e)) => Err(self.unreachable(&e)),
            Err(_) => Err(internal("the FalkorDB connection task stopped")),
        }
    }

    /// Through Sentinel, after a write: waits until a replica has it, so a failover that
    /// promotes the replica keeps it; a write no replica confirmed is refused as not
    /// acknowledged (an identical retry changes nothing).
    fn wait_for_replica(&self) -> Result<(), StoreError> {
        if !self.primary.is_sentinel() {
            return Ok(());
        }
        let waited = u64::try_from(primary::REPLICA_WAIT.as_millis()).unwrap_or(u64::MAX);
        let mut cmd = redis::cmd("WAIT");
        cmd.arg(1).arg(waited);
        let replicas: i64 = redis::from_redis_value(self.send(cmd)?)
            .map_err(|e| rows::malformed(format!("WAIT: {e}")))?;
        if replicas < 1 && self.connected_replicas()? > 0 {
            return Err(StoreError::NotReplicated {
                server: self.server(),
                waited_ms: waited,
            });
        }
        Ok(())
    }

    /// How many replicas the primary has now. With none (the replica was promoted and the old
    /// primary is not back yet) there is nothing to wait for: the write stands on the primary
    /// alone, as the server's own `min-replicas-to-write` allows or refuses.
    fn connected_replicas(&self) -> Result<u64, StoreError> {
        let mut cmd = redis::cmd("INFO");
        cmd.arg("replication");
        let info: String = redis::from_redis_value(self.send(cmd)?)
            .map_err(|e| rows::malformed(format!("INFO replication: {e}")))?;
        let replicas = info
            .lines()
            .find_map(|l| l.strip_prefix("connected_slaves:"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0);
        if replicas == 0 {
            tracing::warn!(graph = %self.url, "the primary has no replica: writes stand on it alone");
        }
        Ok(replicas)
    }

    /// Runs a constant Cypher template with parameters.
    pub(crate) fn query(
        &self,
        template: &'static str,
        params: &[(&'static str, Param)],
    ) -> Result<Rows, StoreError> {
        if !self.schema_ready.load(Ordering::Acquire) {
            self.ensure_schema()?;
        }
        self.run(template, params)
    }

    /// Runs a write query inside MULTI/EXEC, so FalkorDB runs it whole on the server's main
    /// thread: nothing else commits between its reads and its writes. (Outside a transaction,
    /// two write queries on one graph interleave their reads with each other's commits.)
    pub(crate) fn query_exclusively(
        &self,
        template: &'static str,
        params: &[(&'static str, Param)],
    ) -> Result<Rows, StoreError> {
        if !self.schema_ready.load(Ordering::Acquire) {
            self.ensure_schema()?;
        }
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("GRAPH.QUERY")
            .arg(&self.url.graph)
            .arg(params::with_params(template, params))
            .arg("TIMEOUT")
            .arg(SERVER_TIMEOUT_MS);
        let reply = self.send_with(move |mut connection| {
            let pipe = pipe.clone();
            async move { pipe.query_async::<redis::Value>(&mut connection).await }
        })?;
        let reply = match reply {
            redis::Value::Array(mut replies) if replies.len() == 1 => replies.remove(0),
            other => other,
        };
        let rows = self.rows(template, reply)?;
        self.wait_for_replica()?;
        Ok(rows)
    }

    fn run(
        &self,
        template: &'static str,
        params: &[(&'static str, Param)],
    ) -> Result<Rows, StoreError> {
        let text = params::with_params(template, params);
        let mut cmd = redis::cmd("GRAPH.QUERY");
        cmd.arg(&self.url.graph)
            .arg(text)
            .arg("TIMEOUT")
            .arg(SERVER_TIMEOUT_MS);
        let reply = self.send(cmd)?;
        self.rows(template, reply)
    }

    /// Runs a read query for the reply's compact form (every value with its type), for the
    /// values the verbose form prints lossily: a vector's numbers. Returns the rows.
    pub(crate) fn query_compact(
        &self,
        template: &'static str,
        params: &[(&'static str, Param)],
    ) -> Result<Vec<redis::Value>, StoreError> {
        if !self.schema_ready.load(Ordering::Acquire) {
            self.ensure_schema()?;
        }
        let mut cmd = redis::cmd("GRAPH.RO_QUERY");
        cmd.arg(&self.url.graph)
            .arg(params::with_params(template, params))
            .arg("--compact")
            .arg("TIMEOUT")
            .arg(SERVER_TIMEOUT_MS);
        match self.send(cmd)? {
            redis::Value::Array(parts) if parts.len() >= 3 => match parts.into_iter().nth(1) {
                Some(redis::Value::Array(rows)) => Ok(rows),
                other => Err(rows::malformed(format!("expected rows, got {other:?}"))),
            },
            redis::Value::Array(_) => Ok(Vec::new()),
            other => Err(rows::malformed(format!(
                "expected a result set, got {other:?}"
            ))),
        }
    }

    fn rows(&self, template: &'static str, reply: redis::Value) -> Result<Rows, StoreError> {
        Rows::from_reply(reply).map_err(|e| match e {
            StoreError::Malformed { message, .. } => StoreError::Malformed {
                server: self.server(),
                message: format!(
                    "{message} (query: {})",
                    template.split_whitespace().collect::<Vec<_>>().join(" ")
                ),
            },
            other => other,
        })
    }

    /// Reads the server's persistence settings: with neither the append-only file nor RDB
    /// snapshots on, every acknowledged write is gone after a restart.
    pub fn persistence_warning(&self) -> Option<String> {
        let mut cmd = redis::cmd("CONFIG");
        cmd.arg("GET").arg("appendonly").arg("save");
        // A flat array of pairs over RESP2, a map over RESP3; CONFIG renamed or refused (a
        // managed server) cannot tell.
        let settings: std::collections::HashMap<String, String> =
            redis::from_redis_value(self.send(cmd).ok()?).ok()?;
        let (appendonly, save) = (settings.get("appendonly")?, settings.get("save")?);
        let durable = appendonly.eq_ignore_ascii_case("yes") || !save.trim().is_empty();
        (!durable).then(|| {
            format!(
                "FalkorDB at {} keeps nothing on disk (appendonly {appendonly}, save \"{save}\"): a \
                 server restart loses every write; run it with --appendonly yes --appendfsync everysec \
                 (scripts/falkordb does)",
                self.url.address()
            )
        })
    }

    /// Every indexed property: (label or relationship type, property, RANGE or VECTOR).
    pub(crate) fn indexed(&self) -> Result<BTreeSet<(String, String, String)>, StoreError> {
        self.run(cypher::LIST_INDEXES, &[])?
            .decode(|r| Ok((r.string(0)?, r.string(1)?, r.string(2)?)))
            .map(|v| v.into_iter().collect())
    }

    /// Creates the range indexes the queries rely on, where missing.
    fn ensure_schema(&self) -> Result<(), StoreError> {
        let have = self.indexed()?;
        for (label, properties, create) in cypher::INDEXES {
            if properties
                .iter()
                .all(|p| have.contains(&(label.to_string(), p.to_string(), "RANGE".to_string())))
            {
                continue;
            }
            if let Err(e) = self.run(create, &[]) {
                // Another process created it meanwhile, or indexed part of it already.
                if !e.to_string().contains("already indexed") {
                    return Err(e);
                }
            }
        }
        self.schema_ready.store(true, Ordering::Release);
        Ok(())
    }
}

/// A refused AUTH, or a server that wants one and was given none.
fn is_authentication_failure(e: &redis::RedisError) -> bool {
    e.kind() == redis::ErrorKind::AuthenticationFailed
        || matches!(e.code(), Some("NOAUTH" | "WRONGPASS"))
}

mod tls {
    /// TLS connections need a process-wide crypto provider; ring is the one already built
    /// in. Installing it twice, or after another part of the process did, changes nothing.
    pub(super) fn install_crypto() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
