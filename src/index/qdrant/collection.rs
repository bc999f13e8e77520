//! What a Strata collection is: its name, its vectors, the metadata it records about itself,
//! its points and the as-of filter over their payload.

use std::collections::HashMap;

use qdrant_client::qdrant::vectors_config::Config;
use qdrant_client::qdrant::{
    Condition, Distance, Filter, GetCollectionInfoResponse, PointStruct, Range, ScoredPoint, Value,
};
use uuid::Uuid;

use crate::index::TEXT_VERSION;
use crate::index::vectors::VectorRow;
use crate::model::AsOf;

pub(super) const FINGERPRINT: &str = "incident_fingerprint";
const CONCLUDED_AT: &str = "concluded_at";
const INGESTED_AT: &str = "ingested_at";
const T_VALID: &str = "t_valid";
/// Payload fields the as-of filter ranges over, indexed so filtered search stays fast.
pub(super) const FILTERED: [&str; 2] = [INGESTED_AT, T_VALID];

const MODEL: &str = "model";
const DIMENSION: &str = "dimension";
const STORE: &str = "store_id";
const TEXT: &str = "text_version";
const WATERMARK: &str = "watermark";
const CORRECTIONS: &str = "corrections";
const VERSIONS: &str = "versions";

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

/// A collection whose vectors this index cannot use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum CollectionError {
    #[error("holds named vectors ({0}), not the single unnamed vector expected")]
    NamedVectors(String),
    #[error("the server did not report its vector configuration")]
    NoVectorConfig,
    #[error(
        "collection {collection} holds {found_dimension}-dimensional {found_distance} vectors, \
         but the embedder {model} needs {dimension}-dimensional Cosine vectors; use the \
         matching --embedder or delete the collection to rebuild it"
    )]
    Mismatch {
        collection: String,
        found_dimension: u64,
        found_distance: &'static str,
        model: String,
        dimension: usize,
    },
}

/// The single unnamed dense vector of a collection, as (dimension, distance).
pub(super) fn vector_params(
    info: &GetCollectionInfoResponse,
) -> Result<(u64, Distance), CollectionError> {
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
            Err(CollectionError::NamedVectors(names.join(", ")))
        }
        None => Err(CollectionError::NoVectorConfig),
    }
}

/// Refuses a collection whose vectors the embedder cannot share.
pub(super) fn check_params(
    collection: &str,
    found: (u64, Distance),
    model: &str,
    dimension: usize,
) -> Result<(), CollectionError> {
    let (found_dimension, found_distance) = found;
    if found_dimension == dimension as u64 && found_distance == Distance::Cosine {
        return Ok(());
    }
    Err(CollectionError::Mismatch {
        collection: collection.to_string(),
        found_dimension,
        found_distance: found_distance.as_str_name(),
        model: model.to_string(),
        dimension,
    })
}

/// What a collection records about itself, in its metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Recorded {
    pub model: Option<String>,
    pub dimension: Option<i64>,
    pub store_id: Option<String>,
    pub text_version: Option<i64>,
    pub watermark: u64,
    /// The store's correction log read up to, and how many points hold corrected texts.
    pub corrections: u64,
    pub versions: u64,
}

impl Recorded {
    pub fn read(info: &GetCollectionInfoResponse) -> Recorded {
        let Some(meta) = info
            .result
            .as_ref()
            .and_then(|r| r.config.as_ref())
            .map(|c| &c.metadata)
        else {
            return Recorded::default();
        };
        let text = |k: &str| meta.get(k).and_then(|v| v.as_str()).cloned();
        let int = |k: &str| meta.get(k).and_then(Value::as_integer);
        Recorded {
            model: text(MODEL),
            dimension: int(DIMENSION),
            store_id: text(STORE),
            text_version: int(TEXT),
            watermark: int(WATERMARK)
                .and_then(|w| u64::try_from(w).ok())
                .unwrap_or(0),
            corrections: int(CORRECTIONS)
                .and_then(|w| u64::try_from(w).ok())
                .unwrap_or(0),
            versions: int(VERSIONS)
                .and_then(|w| u64::try_from(w).ok())
                .unwrap_or(0),
        }
    }

    /// The watermark, or 0 for vectors of another episode text.
    pub fn current_watermark(&self) -> u64 {
        if self.text_version == Some(i64::from(TEXT_VERSION)) {
            self.watermark
        } else {
            0
        }
    }

    /// Why this collection cannot hold the vectors of `model` for the store `store_id`.
    pub fn refuse(&self, collection: &str, model: &str, store_id: &str) -> Option<String> {
        match (&self.model, &self.store_id) {
            (None, _) | (_, None) => Some(format!(
                "collection {collection} does not say which model and store it holds (Strata \
                 did not create it); delete it or point --vectors at another server"
            )),
            (Some(m), _) if m != model => Some(format!(
                "collection {collection} holds vectors of the model {m}, not {model}"
            )),
            (_, Some(s)) if s != store_id => Some(format!(
                "collection {collection} holds the vectors of the store {s}, not {store_id}"
            )),
            _ => None,
        }
    }
}

/// The metadata of a new collection: what it holds and that it has read nothing yet.
pub(super) fn initial_metadata(
    model: &str,
    dimension: usize,
    store_id: &str,
) -> HashMap<String, Value> {
    HashMap::from([
        (MODEL.to_string(), model.into()),
        (DIMENSION.to_string(), (dimension as i64).into()),
        (STORE.to_string(), store_id.into()),
        (TEXT.to_string(), i64::from(TEXT_VERSION).into()),
        (WATERMARK.to_string(), 0i64.into()),
    ])
}

/// The metadata an append merges in.
pub(super) fn watermark_metadata(watermark: u64) -> HashMap<String, Value> {
    HashMap::from([
        (
            WATERMARK.to_string(),
            i64::try_from(watermark).unwrap_or(i64::MAX).into(),
        ),
        (TEXT.to_string(), i64::from(TEXT_VERSION).into()),
    ])
}

/// The metadata an append of corrected texts merges in.
pub(super) fn corrections_metadata(corrections: u64, versions: u64) -> HashMap<String, Value> {
    let int = |n: u64| Value::from(i64::try_from(n).unwrap_or(i64::MAX));
    HashMap::from([
        (CORRECTIONS.to_string(), int(corrections)),
        (VERSIONS.to_string(), int(versions)),
    ])
}

/// Points known at `known_at` and begun by `valid_at`. Epoch ms are exact in an f64 up to
/// 2^53 ms (year 287396); beyond that the bounds only round outward.
pub(super) fn as_of_filter(as_of: &AsOf) -> Filter {
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

pub(super) fn point(row: &VectorRow) -> PointStruct {
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

pub(super) fn fingerprint_of(payload: &HashMap<String, Value>) -> Option<&String> {
    payload.get(FINGERPRINT)?.as_str()
}

/// The point's dense vector, as stored.
pub(super) fn vector_of(point: &ScoredPoint) -> Option<Vec<f32>> {
    dense(point.vectors.as_ref()?)
}

/// The dense vector of a point read back by id.
pub(super) fn vector_of_retrieved(
    point: &qdrant_client::qdrant::RetrievedPoint,
) -> Option<Vec<f32>> {
    dense(point.vectors.as_ref()?)
}

fn dense(vectors: &qdrant_client::qdrant::VectorsOutput) -> Option<Vec<f32>> {
    use qdrant_client::qdrant::vector_output::Vector;
    match vectors.get_vector()? {
        Vector::Dense(d) => Some(d.data),
        _ => None,
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
        let e = check_params(name, (768, Distance::Cosine), "m", 384)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(name) && e.contains("768-dimensional Cosine"),
            "{e}"
        );
        assert!(e.contains("needs 384-dimensional Cosine"), "{e}");
        let e = check_params(name, (384, Distance::Dot), "m", 384)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("384-dimensional Dot vectors, but the embedder m"),
            "{e}"
        );
        assert!(check_params(name, (384, Distance::UnknownDistance), "m", 384).is_err());
    }

    fn info(config: Option<Config>, metadata: HashMap<String, Value>) -> GetCollectionInfoResponse {
        GetCollectionInfoResponse {
            result: Some(CollectionInfo {
                config: Some(CollectionConfig {
                    params: Some(CollectionParams {
                        vectors_config: config.map(|c| VectorsConfig { config: Some(c) }),
                        ..Default::default()
                    }),
                    metadata,
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
            vector_params(&info(Some(Config::Params(params)), HashMap::new())),
            Ok((384, Distance::Euclid))
        );
        let named = Config::ParamsMap(VectorParamsMap {
            map: HashMap::from([("text".to_string(), params)]),
        });
        let e = vector_params(&info(Some(named), HashMap::new()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("named vectors (text)"), "{e}");
        assert!(vector_params(&GetCollectionInfoResponse::default()).is_err());
    }

    #[test]
    fn metadata_records_what_the_collection_holds_and_how_far_it_has_read() {
        let mut meta = initial_metadata("m", 4, "store-1");
        let fresh = Recorded::read(&info(None, meta.clone()));
        assert_eq!(
            fresh,
            Recorded {
                model: Some("m".into()),
                dimension: Some(4),
                store_id: Some("store-1".into()),
                text_version: Some(i64::from(TEXT_VERSION)),
                watermark: 0,
                corrections: 0,
                versions: 0,
            }
        );
        assert_eq!(fresh.refuse("c", "m", "store-1"), None);
        let e = fresh.refuse("c", "other", "store-1").unwrap();
        assert!(e.contains("model m, not other"), "{e}");
        let e = fresh.refuse("c", "m", "store-2").unwrap();
        assert!(e.contains("store store-1, not store-2"), "{e}");
        let e = Recorded::default().refuse("c", "m", "s").unwrap();
        assert!(e.contains("Strata did not create it"), "{e}");

        meta.extend(watermark_metadata(4242));
        let read = Recorded::read(&info(None, meta.clone()));
        assert_eq!(read.current_watermark(), 4242);
        meta.insert(TEXT.to_string(), 1i64.into());
        assert_ne!(TEXT_VERSION, 1);
        assert_eq!(Recorded::read(&info(None, meta)).current_watermark(), 0);
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
        let mut payload = HashMap::new();
        assert_eq!(fingerprint_of(&payload), None);
        payload.insert(FINGERPRINT.to_string(), "INC-9".into());
        assert_eq!(fingerprint_of(&payload).map(String::as_str), Some("INC-9"));
    }
}
