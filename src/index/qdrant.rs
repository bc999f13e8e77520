//! The Qdrant backend of the vector index: one collection per embedding model on a Qdrant
//! server (gRPC), with the ingest watermark kept in a local state file. It stands in for
//! [`VectorIndex`](super::vectors::VectorIndex) and offers the same synchronous calls.
//!
//! Each point carries `incident_fingerprint`, `concluded_at`, `ingested_at` and `t_valid`
//! (epoch ms) in its payload; the last two drive the as-of filter.

use std::collections::HashMap;
use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use qdrant_client::qdrant::vectors_config::Config;
use qdrant_client::qdrant::{
    Condition, CountPointsBuilder, CreateCollectionBuilder, CreateFieldIndexCollectionBuilder,
    Distance, FieldType, Filter, GetCollectionInfoResponse, PayloadIncludeSelector, PointStruct,
    QueryPointsBuilder, Range, ScoredPoint, UpsertPointsBuilder, Value, VectorParamsBuilder,
};
use qdrant_client::{Qdrant, QdrantError};
use uuid::Uuid;

use super::IndexError;
use super::sync::TEXT_VERSION;
use super::vectors::{Scored, VectorRow};
use crate::model::AsOf;

pub const DEFAULT_PORT: u16 = 6334;
const SCHEME: &str = "qdrant://";
const FINGERPRINT: &str = "incident_fingerprint";
const CONCLUDED_AT: &str = "concluded_at";
const INGESTED_AT: &str = "ingested_at";
const T_VALID: &str = "t_valid";
/// Payload fields the as-of filter ranges over, indexed so filtered search stays fast.
const FILTERED: [&str; 2] = [INGESTED_AT, T_VALID];

#[derive(Clone, Copy, Debug)]
struct Timeouts {
    connect: Duration,
    request: Duration,
    /// Bounds a whole call, including the client's one reconnect-and-retry.
    call: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(5),
            request: Duration::from_secs(5),
            call: Duration::from_secs(12),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Endpoint {
    /// A name, an IPv4 address or a bracketed IPv6 address.
    host: String,
    port: u16,
}

impl Endpoint {
    fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    fn http(&self) -> String {
        format!("http://{}", self.authority())
    }
}

fn parse_url(url: &str) -> Result<Endpoint, String> {
    let bad = |why: &str| {
        format!(
            "expected a URL like qdrant://HOST:PORT (the gRPC port, {DEFAULT_PORT} if left \
             out), got {url:?}: {why}"
        )
    };
    let rest = url
        .strip_prefix(SCHEME)
        .ok_or_else(|| bad("it does not start with qdrant://"))?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if let Some(c) = rest
        .chars()
        .find(|c| matches!(c, '/' | '?' | '#' | '@') || c.is_whitespace())
    {
        return Err(bad(&format!(
            "{c:?} is not allowed: no path, query, credentials or spaces"
        )));
    }
    let (host, port) = if rest.starts_with('[') {
        let end = rest
            .find(']')
            .ok_or_else(|| bad("an IPv6 address needs its closing ']'"))?;
        let (host, after) = rest.split_at(end + 1);
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err(bad("only :PORT may follow the IPv6 address")),
            },
        }
    } else {
        match rest.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (rest, None),
        }
    };
    if host.is_empty() || host == "[]" {
        return Err(bad("the host is missing"));
    }
    let port = match port {
        None => DEFAULT_PORT,
        Some(p) => match p.parse::<u16>() {
            Ok(0) | Err(_) => return Err(bad(&format!("{p:?} is not a port (1-65535)"))),
            Ok(port) => port,
        },
    };
    Ok(Endpoint {
        host: host.to_string(),
        port,
    })
}

/// Same slug as the embedded index's file names.
fn slug(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// One collection per store and model: two stores on one server never see each other's points.
pub fn collection_name(model: &str, store_id: &str) -> String {
    format!("incident-memory-{}-{}-v1", slug(model), slug(store_id))
}

pub fn point_id(fingerprint: &str) -> Uuid {
    Uuid::new_v5(&Uuid::NAMESPACE_URL, fingerprint.as_bytes())
}

/// The single unnamed dense vector of a collection, as (dimension, distance).
fn vector_params(info: &GetCollectionInfoResponse) -> Result<(u64, Distance), String> {
    let config = info
        .result
        .as_ref()
        .and_then(|r| r.config.as_ref())
        .and_then(|c| c.params.as_ref())
        .and_then(|p| p.vectors_config.as_ref())
        .and_then(|v| v.config.as_ref());
    match config {
        Some(Config::Params(p)) => Ok((
            p.size,
            Distance::try_from(p.distance).unwrap_or(Distance::UnknownDistance),
        )),
        Some(Config::ParamsMap(map)) => {
            let mut names: Vec<&str> = map.map.keys().map(String::as_str).collect();
            names.sort_unstable();
            Err(format!(
                "holds named vectors ({}), not the single unnamed vector expected",
                names.join(", ")
            ))
        }
        None => Err("the server did not report its vector configuration".to_string()),
    }
}

/// Refuses a collection whose vectors the embedder cannot share.
fn check_params(
    collection: &str,
    found: (u64, Distance),
    model: &str,
    dimension: usize,
) -> Result<(), String> {
    let (found_dimension, found_distance) = found;
    if found_dimension == dimension as u64 && found_distance == Distance::Cosine {
        return Ok(());
    }
    Err(format!(
        "collection {collection} holds {found_dimension}-dimensional {} vectors, but the \
         embedder {model} needs {dimension}-dimensional {} vectors; use the matching \
         --embedder or delete the collection to rebuild it",
        found_distance.as_str_name(),
        Distance::Cosine.as_str_name()
    ))
}

/// Points known at `known_at` and begun by `valid_at`. Epoch ms are exact in an f64 up to
/// 2^53 ms (year 287396); beyond that the bounds only round outward.
fn as_of_filter(as_of: &AsOf) -> Filter {
    let at_most = |field: &str, ms: i64| {
        Condition::range(
            field,
            Range {
                lte: Some(ms as f64),
                ..Default::default()
            },
        )
    };
    Filter::must([
        at_most(INGESTED_AT, as_of.known_at.millis()),
        at_most(T_VALID, as_of.valid_at.millis()),
    ])
}

fn point(row: &VectorRow) -> PointStruct {
    let payload: HashMap<&str, Value> = HashMap::from([
        (FINGERPRINT, row.fingerprint.as_str().into()),
        (CONCLUDED_AT, row.concluded_at.millis().into()),
        (INGESTED_AT, row.ingested_at.millis().into()),
        (T_VALID, row.t_valid.millis().into()),
    ]);
    PointStruct::new(
        point_id(&row.fingerprint).to_string(),
        row.vector.clone(),
        payload,
    )
}

fn scored(point: &ScoredPoint) -> Option<Scored> {
    let fingerprint = point.payload.get(FINGERPRINT)?.as_str()?;
    Some(Scored {
        fingerprint: fingerprint.clone(),
        score: point.score,
    })
}

fn sort_hits(hits: &mut [Scored]) {
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.fingerprint.cmp(&b.fingerprint))
    });
}

fn state_path(state_dir: &Path, endpoint: &Endpoint, collection: &str) -> PathBuf {
    state_dir.join(format!(
        "qdrant-{}-{collection}.watermark",
        slug(&endpoint.authority())
    ))
}

fn format_state(watermark: u64) -> String {
    format!("watermark {watermark}\ntext_version {TEXT_VERSION}\n")
}

/// The watermark, or 0 when the state is unreadable or was written for another episode text
/// (the vectors are then embedded again; their point ids do not change).
fn parse_state(text: &str) -> u64 {
    let mut watermark = None;
    let mut text_version = None;
    for line in text.lines() {
        match line.split_once(' ') {
            Some(("watermark", v)) => watermark = v.trim().parse::<u64>().ok(),
            Some(("text_version", v)) => text_version = v.trim().parse::<u32>().ok(),
            _ => {}
        }
    }
    match (watermark, text_version) {
        (Some(w), Some(TEXT_VERSION)) => w,
        _ => 0,
    }
}

fn describe(e: &QdrantError) -> String {
    match e {
        QdrantError::ResponseError { status } => {
            format!("{} ({:?})", status.message(), status.code())
        }
        other => other.to_string(),
    }
}

pub struct QdrantVectors {
    // Dropped before the runtime its connections were made on.
    client: Qdrant,
    runtime: tokio::runtime::Runtime,
    timeouts: Timeouts,
    location: PathBuf,
    collection: String,
    model: String,
    dimension: usize,
    state_dir: PathBuf,
    state_path: PathBuf,
}

impl QdrantVectors {
    /// Connects to `url` (`qdrant://HOST[:PORT]`), then creates the model's collection or
    /// checks that the existing one matches the embedder, writing nothing if it does not.
    /// Must be called from a blocking thread, like every other call here.
    pub fn open(
        url: &str,
        model: &str,
        dimension: usize,
        state_dir: &Path,
        store_id: &str,
    ) -> Result<Self, IndexError> {
        Self::open_with(
            url,
            model,
            dimension,
            state_dir,
            store_id,
            Timeouts::default(),
        )
    }

    fn open_with(
        url: &str,
        model: &str,
        dimension: usize,
        state_dir: &Path,
        store_id: &str,
        timeouts: Timeouts,
    ) -> Result<Self, IndexError> {
        let endpoint = parse_url(url).map_err(|message| IndexError::Vectors {
            path: PathBuf::from(url),
            message,
        })?;
        let collection = collection_name(model, store_id);
        let location = PathBuf::from(format!("{SCHEME}{}/{collection}", endpoint.authority()));
        let fail = |message: String| IndexError::Vectors {
            path: location.clone(),
            message,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(format!("cannot start the client runtime: {e}")))?;
        let client = Qdrant::from_url(&endpoint.http())
            .timeout(timeouts.request)
            .connect_timeout(timeouts.connect)
            .skip_compatibility_check()
            .build()
            .map_err(|e| fail(describe(&e)))?;
        let index = QdrantVectors {
            client,
            runtime,
            timeouts,
            state_path: state_path(state_dir, &endpoint, &collection),
            state_dir: state_dir.to_path_buf(),
            location,
            collection,
            model: model.to_string(),
            dimension,
        };
        if index.ensure_collection()? {
            // A new collection holds nothing, whatever an old state file says.
            index.write_watermark(0)?;
        }
        Ok(index)
    }

    fn fail(&self, message: String) -> IndexError {
        IndexError::Vectors {
            path: self.location.clone(),
            message,
        }
    }

    fn run<T>(
        &self,
        what: &str,
        call: impl Future<Output = Result<T, QdrantError>>,
    ) -> Result<T, IndexError> {
        // The timer must be made inside the runtime, hence the async block.
        let deadline = self.timeouts.call;
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

    /// Whether the collection had to be created.
    fn ensure_collection(&self) -> Result<bool, IndexError> {
        let name = self.collection.as_str();
        let exists = self.run("cannot reach Qdrant", self.client.collection_exists(name))?;
        let indexed: Vec<String> = if exists {
            let info = self.run(
                "cannot read the collection",
                self.client.collection_info(name),
            )?;
            vector_params(&info)
                .and_then(|found| check_params(name, found, &self.model, self.dimension))
                .map_err(|m| self.fail(m))?;
            info.result
                .map(|r| r.payload_schema.into_keys().collect())
                .unwrap_or_default()
        } else {
            self.run(
                "cannot create the collection",
                self.client
                    .create_collection(CreateCollectionBuilder::new(name).vectors_config(
                        VectorParamsBuilder::new(self.dimension as u64, Distance::Cosine),
                    )),
            )?;
            Vec::new()
        };
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
        Ok(!exists)
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

    /// The store ingest sequence this index has read up to.
    pub fn watermark(&self) -> Result<u64, IndexError> {
        match std::fs::read_to_string(&self.state_path) {
            Ok(text) => Ok(parse_state(&text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
            Err(e) => Err(self.fail(format!(
                "cannot read the watermark {}: {e}",
                self.state_path.display()
            ))),
        }
    }

    fn write_watermark(&self, watermark: u64) -> Result<(), IndexError> {
        let fail = |e: &dyn std::fmt::Display| {
            self.fail(format!(
                "cannot write the watermark {}: {e}",
                self.state_path.display()
            ))
        };
        std::fs::create_dir_all(&self.state_dir).map_err(|e| fail(&e))?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.state_dir).map_err(|e| fail(&e))?;
        tmp.write_all(format_state(watermark).as_bytes())
            .map_err(|e| fail(&e))?;
        tmp.as_file().sync_all().map_err(|e| fail(&e))?;
        tmp.persist(&self.state_path).map_err(|e| fail(&e))?;
        Ok(())
    }

    /// Drops the collection and makes it anew, empty, for a rebuild from the store.
    pub fn clear(&self) -> Result<(), IndexError> {
        self.run(
            "cannot drop the collection",
            self.client.delete_collection(self.collection.as_str()),
        )?;
        self.ensure_collection()?;
        self.write_watermark(0)
    }

    /// Upserts the rows (waiting until they are applied), then records the watermark.
    pub fn append(&self, rows: &[VectorRow], watermark: u64) -> Result<(), IndexError> {
        if let Some(r) = rows.iter().find(|r| r.vector.len() != self.dimension) {
            return Err(IndexError::Dimension {
                expected: self.dimension,
                got: r.vector.len(),
            });
        }
        if !rows.is_empty() {
            let points: Vec<PointStruct> = rows.iter().map(point).collect();
            self.run(
                "cannot upsert the vectors",
                self.client.upsert_points(
                    UpsertPointsBuilder::new(self.collection.as_str(), points).wait(true),
                ),
            )?;
        }
        self.write_watermark(watermark)
    }

    /// Cosine kNN over points known at K and begun by V.
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
        let response = self.run(
            "cannot search",
            self.client.query(
                QueryPointsBuilder::new(self.collection.as_str())
                    .query(query.to_vec())
                    .filter(as_of_filter(as_of))
                    .limit(limit as u64)
                    .with_payload(PayloadIncludeSelector::new(vec![FINGERPRINT.to_string()])),
            ),
        )?;
        let mut hits = response
            .result
            .iter()
            .map(|p| {
                scored(p).ok_or_else(|| self.fail(format!("point {:?} has no {FINGERPRINT}", p.id)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        sort_hits(&mut hits);
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Timestamp;
    use qdrant_client::qdrant::condition::ConditionOneOf;
    use qdrant_client::qdrant::{
        CollectionConfig, CollectionInfo, CollectionParams, VectorParams, VectorParamsMap,
        VectorsConfig,
    };
    use std::time::Instant;

    fn message(e: IndexError) -> String {
        match e {
            IndexError::Vectors { message, .. } => message,
            other => panic!("expected IndexError::Vectors, got {other:?}"),
        }
    }

    #[test]
    fn urls_map_to_grpc_endpoints() {
        let ok = |url: &str| parse_url(url).unwrap().http();
        assert_eq!(ok("qdrant://localhost:6334"), "http://localhost:6334");
        assert_eq!(
            ok("qdrant://qdrant.internal"),
            "http://qdrant.internal:6334"
        );
        assert_eq!(ok("qdrant://10.0.0.7:7000/"), "http://10.0.0.7:7000");
        assert_eq!(ok("qdrant://[::1]:6400"), "http://[::1]:6400");
        assert_eq!(ok("qdrant://[::1]"), "http://[::1]:6334");
    }

    #[test]
    fn bad_urls_say_what_was_expected() {
        for (url, why) in [
            ("http://localhost:6334", "does not start with qdrant://"),
            ("localhost:6334", "does not start with qdrant://"),
            ("qdrant://", "host is missing"),
            ("qdrant://:6334", "host is missing"),
            ("qdrant://host:", "\"\" is not a port"),
            ("qdrant://host:abc", "\"abc\" is not a port"),
            ("qdrant://host:0", "\"0\" is not a port"),
            ("qdrant://host:70000", "\"70000\" is not a port"),
            ("qdrant://host:1:2", "\"1:2\" is not a port"),
            ("qdrant://host:6334/collections", "no path"),
            ("qdrant://user@host", "credentials"),
            ("qdrant://[::1", "closing ']'"),
            ("qdrant://[::1]x", "only :PORT"),
        ] {
            let e = parse_url(url).unwrap_err();
            assert!(e.contains("expected a URL like qdrant://HOST:PORT"), "{e}");
            assert!(e.contains(&format!("{url:?}")), "{e}");
            assert!(e.contains(why), "{url}: {e}");
        }
    }

    #[test]
    fn open_refuses_a_bad_url_before_connecting() {
        let dir = tempfile::tempdir().unwrap();
        let e = QdrantVectors::open("qdrant//localhost", "m", 4, dir.path(), "s")
            .err()
            .unwrap();
        assert!(e.to_string().contains("qdrant://HOST:PORT"), "{e}");
    }

    #[test]
    fn collections_are_named_by_model_and_store() {
        assert_eq!(
            collection_name("BAAI/bge-small-en-v1.5", "3f2a"),
            "incident-memory-baai_bge-small-en-v1.5-3f2a-v1"
        );
        assert_eq!(
            collection_name("hash 64", "id"),
            "incident-memory-hash_64-id-v1"
        );
    }

    #[test]
    fn point_ids_are_uuid5_of_the_fingerprint() {
        // python3: uuid.uuid5(uuid.NAMESPACE_URL, "INC-1")
        assert_eq!(
            point_id("INC-1").to_string(),
            "a93545f1-3ed9-5000-a8cd-9ad04b50fd74"
        );
        assert_ne!(point_id("INC-1"), point_id("INC-2"));
    }

    #[test]
    fn points_carry_fingerprint_and_times() {
        let p = point(&VectorRow {
            fingerprint: "INC-1".to_string(),
            ingested_at: Timestamp::from_millis(20),
            t_valid: Timestamp::from_millis(10),
            concluded_at: Timestamp::from_millis(30),
            vector: vec![0.5; 4],
        });
        assert_eq!(
            p.id,
            Some("a93545f1-3ed9-5000-a8cd-9ad04b50fd74".to_string().into())
        );
        assert_eq!(p.payload[FINGERPRINT].as_str().unwrap(), "INC-1");
        assert_eq!(p.payload[INGESTED_AT].as_integer(), Some(20));
        assert_eq!(p.payload[T_VALID].as_integer(), Some(10));
        assert_eq!(p.payload[CONCLUDED_AT].as_integer(), Some(30));
    }

    #[test]
    fn guard_accepts_only_the_embedders_shape() {
        let name = "incident-memory-m-v1";
        assert_eq!(
            check_params(name, (384, Distance::Cosine), "m", 384),
            Ok(())
        );
        let e = check_params(name, (768, Distance::Cosine), "m", 384).unwrap_err();
        assert!(
            e.contains(name) && e.contains("768-dimensional Cosine"),
            "{e}"
        );
        assert!(e.contains("needs 384-dimensional Cosine"), "{e}");
        let e = check_params(name, (384, Distance::Dot), "m", 384).unwrap_err();
        assert!(
            e.contains("384-dimensional Dot vectors, but the embedder m"),
            "{e}"
        );
        assert!(check_params(name, (384, Distance::UnknownDistance), "m", 384).is_err());
    }

    fn info(config: Config) -> GetCollectionInfoResponse {
        GetCollectionInfoResponse {
            result: Some(CollectionInfo {
                config: Some(CollectionConfig {
                    params: Some(CollectionParams {
                        vectors_config: Some(VectorsConfig {
                            config: Some(config),
                        }),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            time: 0.0,
        }
    }

    #[test]
    fn vector_params_read_from_collection_info() {
        let params = VectorParams {
            size: 384,
            distance: Distance::Euclid.into(),
            ..Default::default()
        };
        assert_eq!(
            vector_params(&info(Config::Params(params))),
            Ok((384, Distance::Euclid))
        );
        let named = Config::ParamsMap(VectorParamsMap {
            map: HashMap::from([("text".to_string(), params)]),
        });
        let e = vector_params(&info(named)).unwrap_err();
        assert!(e.contains("named vectors (text)"), "{e}");
        assert!(vector_params(&GetCollectionInfoResponse::default()).is_err());
    }

    #[test]
    fn filter_bounds_both_times_by_the_as_of_point() {
        let as_of = AsOf {
            valid_at: Timestamp::from_millis(1_767_225_600_000),
            known_at: Timestamp::from_millis(1_767_225_600_123),
        };
        let filter = as_of_filter(&as_of);
        assert!(filter.should.is_empty() && filter.must_not.is_empty());
        let bounds: Vec<(String, Range)> = filter
            .must
            .iter()
            .map(|c| match &c.condition_one_of {
                Some(ConditionOneOf::Field(f)) => (f.key.clone(), f.range.unwrap()),
                other => panic!("not a field condition: {other:?}"),
            })
            .collect();
        let at_most = |ms: f64| Range {
            lte: Some(ms),
            ..Default::default()
        };
        assert_eq!(
            bounds,
            vec![
                ("ingested_at".to_string(), at_most(1_767_225_600_123.0)),
                ("t_valid".to_string(), at_most(1_767_225_600_000.0)),
            ]
        );
    }

    #[test]
    fn hits_read_the_fingerprint_from_the_payload() {
        let mut p = ScoredPoint {
            score: 0.75,
            ..Default::default()
        };
        assert_eq!(scored(&p), None);
        p.payload.insert(FINGERPRINT.to_string(), "INC-9".into());
        assert_eq!(
            scored(&p),
            Some(Scored {
                fingerprint: "INC-9".to_string(),
                score: 0.75
            })
        );
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

    #[test]
    fn state_round_trips_and_resets_on_a_new_text_version() {
        assert_eq!(parse_state(&format_state(4242)), 4242);
        assert_eq!(parse_state(""), 0);
        assert_eq!(parse_state("watermark x\n"), 0);
        assert_eq!(parse_state("watermark 9\ntext_version 1\n"), 0);
        assert_ne!(TEXT_VERSION, 1);
        let endpoint = parse_url("qdrant://127.0.0.1:6334").unwrap();
        assert_eq!(
            state_path(Path::new("/s"), &endpoint, "incident-memory-m-v1"),
            Path::new("/s/qdrant-127.0.0.1_6334-incident-memory-m-v1.watermark")
        );
    }

    fn quick() -> Timeouts {
        Timeouts {
            connect: Duration::from_millis(500),
            request: Duration::from_millis(500),
            call: Duration::from_secs(2),
        }
    }

    #[test]
    fn open_fails_fast_on_a_closed_port() {
        let dir = tempfile::tempdir().unwrap();
        let t0 = Instant::now();
        let e = QdrantVectors::open("qdrant://127.0.0.1:1", "m", 4, dir.path(), "s")
            .err()
            .unwrap();
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        let text = e.to_string();
        assert!(
            text.contains("qdrant://127.0.0.1:1/incident-memory-m-s-v1"),
            "{text}"
        );
        assert!(message(e).starts_with("cannot reach Qdrant"), "{text}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn open_times_out_on_a_silent_server() {
        // Accepts connections (the kernel does) but never answers.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("qdrant://{}", listener.local_addr().unwrap());
        let dir = tempfile::tempdir().unwrap();
        let t0 = Instant::now();
        let e = QdrantVectors::open_with(&url, "m", 4, dir.path(), "s", quick())
            .err()
            .unwrap();
        assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
        assert!(message(e).starts_with("cannot reach Qdrant"));
        drop(listener);
    }
}
