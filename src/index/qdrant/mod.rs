//! The Qdrant backend of the vector index: one collection per store and embedding model on a
//! Qdrant server (gRPC). The collection records its model, dimension, store and watermark in
//! its own metadata, so every process and machine using it agrees on how far it has read.
//! It stands in for [`VectorIndex`](super::vectors::VectorIndex) with the same synchronous
//! calls.
//!
//! Each point carries `incident_fingerprint`, `concluded_at`, `ingested_at` and `t_valid`
//! (epoch ms) in its payload; the last two drive the as-of filter, which runs in Qdrant.
//!
//! On a cluster the collection is made with the [`QdrantLayout`] of `[qdrant]` (by default
//! one shard per peer, two copies of each, a write acknowledged by one), so that it keeps
//! answering and taking writes with one peer down.

mod collection;
mod endpoint;
mod layout;

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use qdrant_client::qdrant::{
    CountPointsBuilder, CreateCollection, CreateCollectionBuilder,
    CreateFieldIndexCollectionBuilder, Distance, FieldType, GetPointsBuilder,
    HnswConfigDiffBuilder, PayloadIncludeSelector, PointId, PointStruct, QueryPointsBuilder,
    SearchParamsBuilder, UpdateCollection, UpdateCollectionBuilder, UpsertPointsBuilder,
    VectorParamsBuilder, WriteOrdering, WriteOrderingType,
};
use qdrant_client::{Qdrant, QdrantError};

use super::IndexError;
use super::vectors::{Scored, VectorRow, dot};
use crate::model::AsOf;
use collection::{FILTERED, FINGERPRINT, Recorded};
pub use collection::{collection_name, point_id};
pub use endpoint::API_KEY_ENV;
pub use layout::{LayoutError, MAX_DEFAULT_SHARDS, QdrantLayout};

/// `--vectors qdrant://…` and the layout (`[qdrant]`) of the collection made there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QdrantTarget {
    pub url: String,
    pub layout: QdrantLayout,
}

impl From<&str> for QdrantTarget {
    fn from(url: &str) -> Self {
        QdrantTarget {
            url: url.to_string(),
            layout: QdrantLayout::default(),
        }
    }
}

impl From<String> for QdrantTarget {
    fn from(url: String) -> Self {
        QdrantTarget {
            url,
            layout: QdrantLayout::default(),
        }
    }
}

/// Whether `url` is a Qdrant location this index can use, without connecting; the error says
/// what was expected.
pub fn check_url(url: &str) -> Result<(), EndpointError> {
    parse_url(url).map(drop)
}
use crate::client_runtime::ClientRuntime;
use endpoint::parse_url;
pub use endpoint::{DEFAULT_PORT, EndpointError};

/// HNSW graph degree (Qdrant's default) and build beam (twice the default), noted here
/// because the recall@10 measured in the README rests on them.
pub const HNSW_M: u64 = 16;
pub const HNSW_EF_CONSTRUCT: u64 = 200;
/// Search beam; at least the number of candidates asked for.
pub const HNSW_EF: u64 = 512;
/// Candidates asked for beyond `limit`, so that rescoring them exactly (as the local index
/// scores) settles ties and near-ties at the cut the same way.
const EXTRA_CANDIDATES: usize = 8;
/// Tries of a write that failed in a way another try may not (a peer just went down, a
/// replica being marked dead, a connection reset).
const WRITE_ATTEMPTS: u32 = 4;
/// Searches allowed to wait on the server at once, however healthy it looks: more fail at once
/// instead of piling up blocked workers.
const SEARCHES_IN_FLIGHT: usize = 64;
/// A search waiting this long means the server has stopped answering (a healthy one answers in
/// milliseconds, even under a team's load): new searches then fail at once while it waits,
/// instead of piling up behind it.
const STALLED_AFTER: Duration = Duration::from_millis(500);

#[derive(Clone, Copy, Debug)]
struct Timeouts {
    connect: Duration,
    request: Duration,
    /// Bounds a whole call, including the client's one reconnect-and-retry.
    call: Duration,
    /// Bounds a search: well past a loopback search, short enough that a stopped server
    /// holds a worker only briefly.
    search: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(2),
            request: Duration::from_secs(5),
            call: Duration::from_secs(12),
            search: Duration::from_secs(2),
        }
    }
}

fn describe(e: &QdrantError) -> String {
    match e {
        QdrantError::ResponseError { status }
            if matches!(
                status.code(),
                tonic::Code::Unauthenticated | tonic::Code::PermissionDenied
            ) =>
        {
            format!(
                "authentication failed ({}): check the API key in {API_KEY_ENV}",
                status.message()
            )
        }
        QdrantError::ResponseError { status } => {
            format!("{} ({:?})", status.message(), status.code())
        }
        other => other.to_string(),
    }
}

/// Whether a failed write may succeed when sent again: not when the request itself was refused.
fn retryable(e: &QdrantError) -> bool {
    match e {
        QdrantError::ResponseError { status } => !matches!(
            status.code(),
            tonic::Code::InvalidArgument
                | tonic::Code::NotFound
                | tonic::Code::AlreadyExists
                | tonic::Code::Unauthenticated
                | tonic::Code::PermissionDenied
                | tonic::Code::Unimplemented
                | tonic::Code::OutOfRange
        ),
        _ => true,
    }
}

fn sort_hits(hits: &mut [Scored]) {
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.fingerprint.cmp(&b.fingerprint))
    });
}

/// Counts a search in flight for as long as it lives.
/// The searches waiting on the server, by when each was sent (ids grow with time, so the
/// first is the oldest).
#[derive(Default)]
struct Searching {
    waiting: std::sync::Mutex<Waiting>,
}

#[derive(Default)]
struct Waiting {
    next: u64,
    sent: std::collections::BTreeMap<u64, Instant>,
}

impl Searching {
    /// Counts a search in, or says why it may not be sent now.
    fn enter(&self) -> Result<InFlight<'_>, String> {
        let mut waiting = self
            .waiting
            .lock()
            .map_err(|_| "the search counter's lock was poisoned".to_string())?;
        if let Some((_, oldest)) = waiting.sent.first_key_value()
            && oldest.elapsed() >= STALLED_AFTER
        {
            return Err(format!(
                "{} earlier searches are still waiting on Qdrant, one for {} ms; not sending another",
                waiting.sent.len(),
                oldest.elapsed().as_millis()
            ));
        }
        if waiting.sent.len() >= SEARCHES_IN_FLIGHT {
            return Err(format!(
                "{} earlier searches are still waiting on Qdrant; not sending another",
                waiting.sent.len()
            ));
        }
        let id = waiting.next;
        waiting.next += 1;
        waiting.sent.insert(id, Instant::now());
        Ok(InFlight {
            searching: self,
            id,
        })
    }
}

struct InFlight<'a> {
    searching: &'a Searching,
    id: u64,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Ok(mut waiting) = self.searching.waiting.lock() {
            waiting.sent.remove(&self.id);
        }
    }
}

pub struct QdrantVectors {
    // Dropped before the runtime its connections were made on.
    client: Qdrant,
    runtime: ClientRuntime,
    timeouts: Timeouts,
    location: PathBuf,
    collection: String,
    model: String,
    dimension: usize,
    store_id: String,
    layout: QdrantLayout,
    searching: Searching,
    /// What the collection last said of the corrections it has read: what searches filter
    /// by, without asking the server before each.
    corrections_seen: std::sync::atomic::AtomicU64,
    /// Why the collection was emptied on open, to be rebuilt from the store.
    pub rebuilt: Option<String>,
}

/// What a collection says about itself: its metadata, indexed payload fields, (dimension, distance).
type CollectionState = (Recorded, Vec<String>, (u64, Distance));

impl QdrantVectors {
    /// Connects to `url` (`qdrant://HOST[:PORT]`), then creates the collection of this store
    /// and model or checks that the existing one matches the embedder, writing nothing if it
    /// does not. Must be called from a blocking thread, like every other call here.
    pub fn open(
        url: &str,
        model: &str,
        dimension: usize,
        store_id: &str,
        runtime: Option<tokio::runtime::Handle>,
    ) -> Result<Self, IndexError> {
        Self::open_at(
            &QdrantTarget::from(url),
            model,
            dimension,
            store_id,
            runtime,
        )
    }

    /// [`open`](Self::open), creating a missing collection with the target's layout over
    /// the cluster's peers.
    pub fn open_at(
        target: &QdrantTarget,
        model: &str,
        dimension: usize,
        store_id: &str,
        runtime: Option<tokio::runtime::Handle>,
    ) -> Result<Self, IndexError> {
        Self::open_with(
            target,
            model,
            dimension,
            store_id,
            Timeouts::default(),
            runtime,
        )
    }

    fn open_with(
        target: &QdrantTarget,
        model: &str,
        dimension: usize,
        store_id: &str,
        timeouts: Timeouts,
        runtime: Option<tokio::runtime::Handle>,
    ) -> Result<Self, IndexError> {
        let url = target.url.as_str();
        let endpoint = parse_url(url).map_err(|e| IndexError::Vectors {
            path: PathBuf::from(crate::store::falkordb::mask_credentials(url)),
            message: e.to_string(),
        })?;
        let collection = collection_name(model, store_id);
        let location = PathBuf::from(format!("{}/{collection}", endpoint.shown()));
        let fail = |message: String| IndexError::Vectors {
            path: location.clone(),
            message,
        };
        // The runtime given, or one worker of its own, so the client's connections make
        // progress between calls.
        let runtime = ClientRuntime::start("qdrant-client", runtime)
            .map_err(|e| fail(format!("cannot start the client runtime: {e}")))?;
        let api_key = std::env::var(API_KEY_ENV).ok().filter(|k| !k.is_empty());
        if api_key.is_some() && !endpoint.tls {
            tracing::warn!(
                location = %endpoint.shown(),
                "{API_KEY_ENV} is sent without TLS: use qdrants:// past loopback"
            );
        }
        let client = Qdrant::from_url(&endpoint.http())
            .api_key(api_key)
            .timeout(timeouts.request)
            .connect_timeout(timeouts.connect)
            .skip_compatibility_check()
            .build()
            .map_err(|e| fail(describe(&e)))?;
        let mut index = QdrantVectors {
            client,
            runtime,
            timeouts,
            location,
            collection,
            model: model.to_string(),
            dimension,
            store_id: store_id.to_string(),
            layout: target.layout,
            searching: Searching::default(),
            corrections_seen: std::sync::atomic::AtomicU64::new(0),
            rebuilt: None,
        };
        let recorded = index.ensure_collection()?;
        if recorded.text_version != Some(i64::from(super::TEXT_VERSION)) {
            index.rebuilt = Some("built from an older episode text".to_string());
            index.clear()?;
        } else {
            index
                .corrections_seen
                .store(recorded.corrections, Ordering::SeqCst);
        }
        Ok(index)
    }

    fn fail(&self, message: String) -> IndexError {
        IndexError::Vectors {
            path: self.location.clone(),
            message,
        }
    }

    fn run_within<T>(
        &self,
        deadline: Duration,
        what: &str,
        call: impl Future<Output = Result<T, QdrantError>>,
    ) -> Result<T, IndexError> {
        // The timer must be made inside the runtime, hence the async block.
        match self
            .runtime
            .block_on(async { tokio::time::timeout(deadline, call).await })
        {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(self.fail(format!("{what}: {}", describe(&e)))),
            Err(_) => Err(self.fail(format!(
                "{what}: no answer within {} s",
                deadline.as_secs_f32()
            ))),
        }
    }

    fn run<T>(
        &self,
        what: &str,
        call: impl Future<Output = Result<T, QdrantError>>,
    ) -> Result<T, IndexError> {
        self.run_within(self.timeouts.call, what, call)
    }

    /// A write, sent again (up to [`WRITE_ATTEMPTS`] tries, backing off) while it fails in a
    /// way another try may not: a cluster answers again once it has noticed a peer down.
    /// Every write here is idempotent (upserts by id, metadata set to a value).
    fn write<T, F, Fut>(&self, what: &str, call: F) -> Result<T, IndexError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, QdrantError>>,
    {
        let mut pause = Duration::from_millis(100);
        let mut attempt = 1;
        loop {
            let outcome = self
                .runtime
                .block_on(async { tokio::time::timeout(self.timeouts.call, call()).await });
            match outcome {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(e)) if attempt < WRITE_ATTEMPTS && retryable(&e) => {
                    tracing::warn!(
                        collection = %self.collection,
                        attempt,
                        "{what}: {}; trying again in {} ms",
                        describe(&e),
                        pause.as_millis()
                    );
                }
                Ok(Err(e)) => {
                    return Err(
                        self.fail(format!("{what}: {} (after {attempt} tries)", describe(&e)))
                    );
                }
                Err(_) => {
                    return Err(self.fail(format!(
                        "{what}: no answer within {} s",
                        self.timeouts.call.as_secs_f32()
                    )));
                }
            }
            std::thread::sleep(pause);
            pause *= 2;
            attempt += 1;
        }
    }

    /// How many peers the cluster behind this endpoint has (1 for a single Qdrant). Qdrant
    /// reports peers only per collection, and gives a new collection one shard per peer: a
    /// scratch collection is made, read and dropped.
    fn peer_count(&self) -> Result<u32, IndexError> {
        static PROBES: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let probe = format!(
            "strata-peer-probe-{}-{}-{nanos}",
            std::process::id(),
            PROBES.fetch_add(1, Ordering::SeqCst)
        );
        let what = "cannot count the cluster's peers";
        self.run(
            what,
            self.client.create_collection(
                CreateCollectionBuilder::new(probe.as_str())
                    .vectors_config(VectorParamsBuilder::new(1, Distance::Cosine)),
            ),
        )?;
        let info = self.run(what, self.client.collection_cluster_info(probe.as_str()));
        let dropped = self.run(what, self.client.delete_collection(probe.as_str()));
        let info = info?;
        dropped?;
        let mut peers: std::collections::HashSet<u64> =
            info.remote_shards.iter().map(|s| s.peer_id).collect();
        peers.insert(info.peer_id);
        Ok(u32::try_from(peers.len()).unwrap_or(u32::MAX))
    }

    /// What the collection records, the payload fields it indexes, and its vector shape.
    /// A collection another client created a moment ago can answer "0 of 0 read operations
    /// failed" until its shards are up: the read is retried for up to `wait_ready`.
    fn recorded(&self, wait_ready: Duration) -> Result<CollectionState, IndexError> {
        let deadline = std::time::Instant::now() + wait_ready;
        let info = loop {
            match self.run(
                "cannot read the collection",
                self.client.collection_info(self.collection.as_str()),
            ) {
                Err(e) if std::time::Instant::now() < deadline => {
                    tracing::debug!("collection {} not readable yet: {e}", self.collection);
                    std::thread::sleep(Duration::from_millis(50));
                }
                read => break read?,
            }
        };
        let params = collection::vector_params(&info).map_err(|e| self.fail(e.to_string()))?;
        let indexed = info
            .result
            .as_ref()
            .map(|r| r.payload_schema.keys().cloned().collect())
            .unwrap_or_default();
        Ok((Recorded::read(&info), indexed, params))
    }

    /// Creates the collection if there is none (another process may create it at the same
    /// moment: whichever is first wins, the other checks what it made), checks it, and indexes
    /// the filtered payload fields. Returns what the collection records.
    fn ensure_collection(&self) -> Result<Recorded, IndexError> {
        let name = self.collection.as_str();
        if !self.run("cannot reach Qdrant", self.client.collection_exists(name))? {
            let peers = self.peer_count()?;
            let layout = self
                .layout
                .resolve(peers)
                .map_err(|e| self.fail(format!("cannot create the collection: {e}")))?;
            let mut create: CreateCollection = CreateCollectionBuilder::new(name)
                .vectors_config(VectorParamsBuilder::new(
                    self.dimension as u64,
                    Distance::Cosine,
                ))
                .hnsw_config(
                    HnswConfigDiffBuilder::default()
                        .m(HNSW_M)
                        .ef_construct(HNSW_EF_CONSTRUCT),
                )
                .shard_number(layout.shard_number)
                .replication_factor(layout.replication_factor)
                .write_consistency_factor(layout.write_consistency_factor)
                .build();
            create.metadata =
                collection::initial_metadata(&self.model, self.dimension, &self.store_id);
            let created = self.run(
                "cannot create the collection",
                self.client.create_collection(create),
            );
            if let Err(e) = created
                && !self.run("cannot reach Qdrant", self.client.collection_exists(name))?
            {
                return Err(e);
            }
        }
        let (recorded, indexed, params) = self.recorded(Duration::from_secs(2))?;
        collection::check_params(name, params, &self.model, self.dimension)
            .map_err(|e| self.fail(e.to_string()))?;
        if let Some(why) = recorded.refuse(name, &self.model, &self.store_id) {
            return Err(self.fail(why));
        }
        for field in FILTERED {
            if !indexed.iter().any(|f| f == field) {
                self.run(
                    &format!("cannot index the payload field {field}"),
                    self.client.create_field_index(
                        CreateFieldIndexCollectionBuilder::new(name, field, FieldType::Integer)
                            .wait(true),
                    ),
                )?;
            }
        }
        Ok(recorded)
    }

    pub fn collection(&self) -> &str {
        &self.collection
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    pub fn dimension(&self) -> usize {
        self.dimension
    }

    pub fn len(&self) -> Result<usize, IndexError> {
        let response = self.run(
            "cannot count the points",
            self.client
                .count(CountPointsBuilder::new(self.collection.as_str()).exact(true)),
        )?;
        let count = response.result.map_or(0, |r| r.count);
        usize::try_from(count).map_err(|e| self.fail(format!("{count} points: {e}")))
    }

    pub fn is_empty(&self) -> Result<bool, IndexError> {
        Ok(self.len()? == 0)
    }

    /// The store ingest sequence this collection has read up to, as it records it.
    pub fn watermark(&self) -> Result<u64, IndexError> {
        Ok(self.recorded(Duration::ZERO)?.0.current_watermark())
    }

    /// The store's correction log read up to ([`crate::index::versions`]).
    pub fn corrections_read(&self) -> Result<u64, IndexError> {
        let recorded = self.recorded(Duration::ZERO)?.0;
        let read = if recorded.text_version == Some(i64::from(super::TEXT_VERSION)) {
            recorded.corrections
        } else {
            0
        };
        self.corrections_seen.store(read, Ordering::SeqCst);
        Ok(read)
    }

    /// What [`Self::corrections_read`] said last (at the last catch-up), without a request.
    pub fn corrections_seen(&self) -> u64 {
        self.corrections_seen.load(Ordering::SeqCst)
    }

    /// How many points hold corrected texts.
    pub fn versions(&self) -> Result<u64, IndexError> {
        Ok(self.recorded(Duration::ZERO)?.0.versions)
    }

    /// Upserts the points of corrected texts, then records the correction log's watermark
    /// and how many such points there are (counting only points new to the collection, so a
    /// retried batch is not counted twice).
    pub fn append_versions(&self, rows: &[VectorRow], corrections: u64) -> Result<(), IndexError> {
        let keys: Vec<&str> = rows.iter().map(|r| r.fingerprint.as_str()).collect();
        let new = self.missing(&keys)?.len() as u64;
        let held = self.versions()?;
        self.upsert(rows)?;
        self.write("cannot record the corrections read", || {
            let mut update: UpdateCollection =
                UpdateCollectionBuilder::new(self.collection.as_str()).build();
            update.metadata = collection::corrections_metadata(corrections, held + new);
            self.client.update_collection(update)
        })?;
        self.corrections_seen.store(corrections, Ordering::SeqCst);
        Ok(())
    }

    /// Drops the collection and makes it anew, empty, for a rebuild from the store.
    pub fn clear(&self) -> Result<(), IndexError> {
        self.run(
            "cannot drop the collection",
            self.client.delete_collection(self.collection.as_str()),
        )?;
        self.ensure_collection().map(|_| ())
    }

    /// Which of `fingerprints` have no point yet.
    pub fn missing(&self, fingerprints: &[&str]) -> Result<Vec<String>, IndexError> {
        let found = self.points(fingerprints, false)?;
        let stored: std::collections::HashSet<&String> = found
            .iter()
            .filter_map(|p| collection::fingerprint_of(&p.payload))
            .collect();
        Ok(fingerprints
            .iter()
            .filter(|f| !stored.contains(&f.to_string()))
            .map(|f| f.to_string())
            .collect())
    }

    /// The points of these fingerprints that exist, with their fingerprint (and vector).
    fn points(
        &self,
        fingerprints: &[&str],
        with_vectors: bool,
    ) -> Result<Vec<qdrant_client::qdrant::RetrievedPoint>, IndexError> {
        if fingerprints.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<PointId> = fingerprints
            .iter()
            .map(|f| point_id(f).to_string().into())
            .collect();
        let found = self.run(
            "cannot read the points",
            self.client.get_points(
                GetPointsBuilder::new(self.collection.as_str(), ids)
                    .with_payload(PayloadIncludeSelector::new(vec![FINGERPRINT.to_string()]))
                    .with_vectors(with_vectors),
            ),
        )?;
        Ok(found.result)
    }

    /// The stored vector of each fingerprint, in order (`None` for one without a point): what
    /// `export --with-vectors` carries. Qdrant keeps cosine vectors normalised, as the
    /// embedders give them.
    pub fn stored_vectors(
        &self,
        fingerprints: &[&str],
    ) -> Result<Vec<Option<Vec<f32>>>, IndexError> {
        let found = self.points(fingerprints, true)?;
        let mut by_fingerprint = std::collections::HashMap::new();
        for p in &found {
            let Some(fingerprint) = collection::fingerprint_of(&p.payload) else {
                continue;
            };
            let vector = collection::vector_of_retrieved(p)
                .filter(|v| v.len() == self.dimension)
                .ok_or_else(|| self.fail(format!("point {fingerprint:?} has no vector")))?;
            by_fingerprint.insert(fingerprint.clone(), vector);
        }
        Ok(fingerprints
            .iter()
            .map(|f| by_fingerprint.remove(*f))
            .collect())
    }

    /// Upserts the rows (waiting until they are applied, medium ordering so replicas agree),
    /// then records the watermark in the collection's metadata; each write is retried.
    pub fn append(&self, rows: &[VectorRow], watermark: u64) -> Result<(), IndexError> {
        self.upsert(rows)?;
        self.write("cannot record the watermark", || {
            let mut update: UpdateCollection =
                UpdateCollectionBuilder::new(self.collection.as_str()).build();
            update.metadata = collection::watermark_metadata(watermark);
            self.client.update_collection(update)
        })?;
        Ok(())
    }

    fn upsert(&self, rows: &[VectorRow]) -> Result<(), IndexError> {
        if let Some(r) = rows.iter().find(|r| r.vector.len() != self.dimension) {
            return Err(IndexError::Dimension {
                expected: self.dimension,
                got: r.vector.len(),
            });
        }
        if !rows.is_empty() {
            let points: Vec<PointStruct> = rows.iter().map(collection::point).collect();
            self.write("cannot upsert the vectors", || {
                self.client.upsert_points(
                    UpsertPointsBuilder::new(self.collection.as_str(), points.clone())
                        .wait(true)
                        .ordering(WriteOrdering {
                            r#type: WriteOrderingType::Medium.into(),
                        }),
                )
            })?;
        }
        Ok(())
    }

    /// Cosine kNN over points known at K and begun by V. Qdrant picks the candidates (HNSW
    /// under the payload filter, or a full scan of small or narrowly filtered segments); they
    /// are then scored exactly as the local index scores, so equal vectors tie and the tie
    /// goes to the smaller fingerprint, as everywhere.
    pub fn search(
        &self,
        query: &[f32],
        as_of: &AsOf,
        limit: usize,
    ) -> Result<Vec<Scored>, IndexError> {
        if query.len() != self.dimension {
            return Err(IndexError::Dimension {
                expected: self.dimension,
                got: query.len(),
            });
        }
        if limit == 0 {
            return Ok(Vec::new());
        }
        let _counted = self.searching.enter().map_err(|why| self.fail(why))?;
        let candidates = limit + EXTRA_CANDIDATES;
        let response = self.run_within(
            self.timeouts.search,
            "cannot search",
            self.client.query(
                QueryPointsBuilder::new(self.collection.as_str())
                    .query(query.to_vec())
                    .filter(collection::as_of_filter(as_of))
                    .limit(candidates as u64)
                    .params(SearchParamsBuilder::default().hnsw_ef(HNSW_EF.max(candidates as u64)))
                    .with_payload(PayloadIncludeSelector::new(vec![FINGERPRINT.to_string()]))
                    .with_vectors(true),
            ),
        )?;
        let mut hits = response
            .result
            .iter()
            .map(|p| {
                let fingerprint = collection::fingerprint_of(&p.payload)
                    .ok_or_else(|| self.fail(format!("point {:?} has no {FINGERPRINT}", p.id)))?;
                let vector = collection::vector_of(p)
                    .filter(|v| v.len() == self.dimension)
                    .ok_or_else(|| self.fail(format!("point {fingerprint:?} has no vector")))?;
                Ok(Scored {
                    fingerprint: fingerprint.clone(),
                    score: dot(&vector, query),
                })
            })
            .collect::<Result<Vec<_>, IndexError>>()?;
        sort_hits(&mut hits);
        hits.truncate(limit);
        Ok(hits)
    }

    /// Whether Qdrant has finished optimising (indexing) what was upserted.
    pub fn indexing_done(&self) -> Result<bool, IndexError> {
        let info = self.run(
            "cannot read the collection",
            self.client.collection_info(self.collection.as_str()),
        )?;
        Ok(info
            .result
            .is_some_and(|r| r.status == qdrant_client::qdrant::CollectionStatus::Green as i32))
    }

    /// Deletes the collection: for benchmarks and tests that made a scratch one.
    pub fn drop_collection(self) -> Result<(), IndexError> {
        self.run(
            "cannot drop the collection",
            self.client.delete_collection(self.collection.as_str()),
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn message(e: IndexError) -> String {
        match e {
            IndexError::Vectors { message, .. } => message,
            other => panic!("expected IndexError::Vectors, got {other:?}"),
        }
    }

    #[test]
    fn open_refuses_a_bad_url_before_connecting() {
        let e = QdrantVectors::open("qdrant//localhost", "m", 4, "s", None)
            .err()
            .unwrap();
        assert!(e.to_string().contains("qdrant://HOST:PORT"), "{e}");
    }

    #[test]
    fn hits_sort_by_score_then_fingerprint() {
        let hit = |f: &str, score: f32| Scored {
            fingerprint: f.to_string(),
            score,
        };
        let mut hits = vec![hit("b", 0.5), hit("c", 0.9), hit("a", 0.5)];
        sort_hits(&mut hits);
        assert_eq!(hits, vec![hit("c", 0.9), hit("a", 0.5), hit("b", 0.5)]);
    }

    fn quick() -> Timeouts {
        Timeouts {
            connect: Duration::from_millis(500),
            request: Duration::from_millis(500),
            call: Duration::from_secs(2),
            search: Duration::from_secs(1),
        }
    }

    #[test]
    fn open_fails_fast_on_a_closed_port() {
        let t0 = Instant::now();
        let e = QdrantVectors::open("qdrant://127.0.0.1:1", "m", 4, "s", None)
            .err()
            .unwrap();
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        let text = e.to_string();
        assert!(
            text.contains("qdrant://127.0.0.1:1/incident-memory-m-s-v1"),
            "{text}"
        );
        assert!(message(e).starts_with("cannot reach Qdrant"), "{text}");
    }

    #[test]
    fn open_times_out_on_a_silent_server() {
        // Accepts connections (the kernel does) but never answers.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("qdrant://{}", listener.local_addr().unwrap());
        let t0 = Instant::now();
        let e = QdrantVectors::open_with(&url.as_str().into(), "m", 4, "s", quick(), None)
            .err()
            .unwrap();
        assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
        assert!(message(e).starts_with("cannot reach Qdrant"));
        drop(listener);
    }
}
