//! Recall through the real engine: fail-open legs, as-of visibility, the dimension guard,
//! a corrupt text index rebuilt.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;
use strata::embed::{EmbedError, Embedder, EmbedderKind, HashEmbedder};
use strata::index::IndexError;
use strata::index::vectors::VectorIndex;
use strata::model::{AsOf, EntityKey, FactEdge, MemoryEpisode, Supersession};
use strata::recall::{
    FusionPolicy, Leg, LegSet, LegStatus, RecallRequest, RecallStack, StackOptions,
};
use strata::store::{
    ApplyReport, EntityLink, IntegrityReport, LogPage, MemoryStore, StoreError, StoreStats,
    TimelineQuery, WriteBatch,
};

/// A store wrapper that fails or hangs on every read the graph leg makes (and, with
/// `log_down`, on reading the ingest log the indexes catch up from).
struct Faulty {
    inner: Arc<dyn MemoryStore>,
    hang: bool,
    log_down: bool,
}

impl Faulty {
    fn fault<T>(&self) -> Result<T, StoreError> {
        if self.hang {
            std::thread::sleep(Duration::from_secs(3));
        }
        Err(StoreError::Internal("connection refused (injected)".into()))
    }
}

impl MemoryStore for Faulty {
    fn describe(&self) -> String {
        "faulty".into()
    }
    fn apply(&self, b: &WriteBatch) -> Result<ApplyReport, StoreError> {
        self.inner.apply(b)
    }
    fn episode(&self, fp: &str) -> Result<Option<MemoryEpisode>, StoreError> {
        self.inner.episode(fp)
    }
    fn timeline(&self, q: &TimelineQuery) -> Result<Vec<MemoryEpisode>, StoreError> {
        self.inner.timeline(q)
    }
    fn facts(&self, _: &str) -> Result<Vec<FactEdge>, StoreError> {
        self.fault()
    }
    fn entity_facts(&self, _: &EntityKey) -> Result<Vec<FactEdge>, StoreError> {
        self.fault()
    }
    fn supersedes(&self, _: &str) -> Result<Vec<Supersession>, StoreError> {
        self.fault()
    }
    fn superseded_by(&self, _: &str) -> Result<Vec<Supersession>, StoreError> {
        self.fault()
    }
    fn episodes_since(&self, a: u64, l: usize) -> Result<LogPage, StoreError> {
        if self.log_down {
            return self.fault();
        }
        self.inner.episodes_since(a, l)
    }
    fn entities(&self) -> Result<Vec<EntityKey>, StoreError> {
        self.fault()
    }
    fn entity_links(&self, _: &EntityKey) -> Result<Vec<EntityLink>, StoreError> {
        self.fault()
    }
    fn stats(&self) -> Result<StoreStats, StoreError> {
        self.inner.stats()
    }
    fn check(&self) -> Result<IntegrityReport, StoreError> {
        self.inner.check()
    }
    fn identity(&self) -> Result<Option<String>, StoreError> {
        self.inner.identity()
    }
    fn generation(&self) -> Result<u64, StoreError> {
        self.inner.generation()
    }
    fn lesson(&self, fp: &str) -> Result<Option<strata::learning::Lesson>, StoreError> {
        self.inner.lesson(fp)
    }
}

/// An embedder that fails or hangs.
struct BadEmbedder {
    hang: bool,
}

impl Embedder for BadEmbedder {
    fn kind(&self) -> EmbedderKind {
        EmbedderKind::Hash
    }
    fn model(&self) -> &str {
        "hash-v1"
    }
    fn dimension(&self) -> usize {
        384
    }
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.len() > 1 {
            return HashEmbedder::default().embed_batch(texts);
        }
        if self.hang {
            std::thread::sleep(Duration::from_secs(3));
        }
        Err(EmbedError::Server(
            "embedding server down (injected)".into(),
        ))
    }
}

fn seeded(dir: &std::path::Path) -> Arc<dyn MemoryStore> {
    let store = strata::store::embedded::EmbeddedStore::open(&dir.join("store")).unwrap();
    strata::demo::seed(&store).unwrap();
    Arc::new(store)
}

/// Legs' success is asserted, not timed: their timeout is generous (a test that times a leg
/// out sets its own).
const GENEROUS: Duration = Duration::from_secs(30);

fn stack(
    store: Arc<dyn MemoryStore>,
    embedder: Arc<dyn Embedder>,
    dir: &std::path::Path,
) -> RecallStack {
    let mut s = RecallStack::open(
        store,
        Ok(embedder),
        &StackOptions {
            index_dir: dir.join("index"),
            sync: true,
            vectors: Default::default(),
            runtime: None,
        },
        &mut |_, _| {},
    );
    s.engine.timeout = GENEROUS;
    s
}

fn request(text: &str, entities: &[&str]) -> RecallRequest {
    RecallRequest {
        exclude: Vec::new(),
        text: text.into(),
        entities: entities.iter().map(|e| e.parse().unwrap()).collect(),
        as_of: AsOf::now(ts("2026-12-01T00:00:00Z")),
        k: 10,
        legs: LegSet::ALL,
        fusion: FusionPolicy::Rrf,
        stale: Default::default(),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap()
}

#[test]
fn all_legs_answer_and_results_explain_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let s = stack(
        seeded(dir.path()),
        Arc::new(HashEmbedder::default()),
        dir.path(),
    );
    let r = runtime().block_on(s.engine.recall(&request(
        "pgbouncer pool exhausted, postgres says too many connections",
        &[],
    )));
    for leg in Leg::ALL {
        assert_eq!(
            r.legs.get(leg).status,
            LegStatus::Ok,
            "{leg}: {:?}",
            r.legs.get(leg)
        );
        assert!(r.legs.get(leg).hits > 0, "{leg}");
    }
    assert!(
        r.legs
            .graph
            .note
            .as_deref()
            .unwrap()
            .contains("service|pgbouncer")
    );
    assert_eq!(r.results.len(), 10);
    assert!(
        r.embedder.contains("model-free hash embedder"),
        "hash results are labelled"
    );
    for x in &r.results {
        let sum: f64 = [x.per_leg.semantic, x.per_leg.bm25, x.per_leg.graph]
            .iter()
            .flatten()
            .map(|l| 1.0 / (60.0 + l.rank as f64))
            .sum();
        assert!((sum - x.rrf_score).abs() < 1e-12, "recomputable by hand");
    }
    assert!(
        r.results[0].summary.to_lowercase().contains("pgbouncer")
            || r.results[0].summary.to_lowercase().contains("connection")
    );
}

#[test]
fn a_store_that_errors_fails_the_graph_leg_open() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let faulty: Arc<dyn MemoryStore> = Arc::new(Faulty {
        inner: store,
        hang: false,
        log_down: false,
    });
    let s = stack(faulty, Arc::new(HashEmbedder::default()), dir.path());
    let r = runtime().block_on(
        s.engine
            .recall(&request("caddy certificate expired", &["service:caddy"])),
    );
    assert_eq!(r.legs.graph.status, LegStatus::Failed);
    assert!(r.legs.graph.error.as_deref().unwrap().contains("injected"));
    assert_eq!(r.legs.semantic.status, LegStatus::Ok);
    assert_eq!(r.legs.bm25.status, LegStatus::Ok);
    assert!(!r.results.is_empty(), "the other legs still answer");
    assert!(r.results.iter().all(|x| x.per_leg.graph.is_none()));
}

#[test]
fn a_store_that_hangs_times_the_graph_leg_out() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let faulty: Arc<dyn MemoryStore> = Arc::new(Faulty {
        inner: store,
        hang: true,
        log_down: false,
    });
    let mut s = stack(faulty, Arc::new(HashEmbedder::default()), dir.path());
    s.engine.timeout = Duration::from_millis(300);
    let rt = runtime();
    let started = std::time::Instant::now();
    let r = rt.block_on(
        s.engine
            .recall(&request("caddy certificate expired", &["service:caddy"])),
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "recall did not wait for the hung leg"
    );
    rt.shutdown_background();
    assert_eq!(r.legs.graph.status, LegStatus::Timeout);
    assert!(r.legs.graph.error.as_deref().unwrap().contains("300 ms"));
    assert!(!r.results.is_empty());
}

#[test]
fn an_embedder_that_errors_or_hangs_fails_the_semantic_leg_open() {
    for hang in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut s = stack(
            seeded(dir.path()),
            Arc::new(BadEmbedder { hang }),
            dir.path(),
        );
        s.engine.timeout = Duration::from_millis(300);
        let r = runtime().block_on(s.engine.recall(&request("redis evicted session keys", &[])));
        let expected = if hang {
            LegStatus::Timeout
        } else {
            LegStatus::Failed
        };
        assert_eq!(r.legs.semantic.status, expected);
        assert_eq!(r.legs.bm25.status, LegStatus::Ok);
        assert!(!r.results.is_empty());
        assert!(r.results.iter().all(|x| x.per_leg.semantic.is_none()));
    }
}

#[test]
fn disabled_legs_are_reported_and_change_the_ranking() {
    let dir = tempfile::tempdir().unwrap();
    let s = stack(
        seeded(dir.path()),
        Arc::new(HashEmbedder::default()),
        dir.path(),
    );
    let rt = runtime();
    let all = rt.block_on(
        s.engine
            .recall(&request("authelia login loop", &["service:authelia"])),
    );
    let mut only_graph = request("authelia login loop", &["service:authelia"]);
    only_graph.legs = "graph".parse().unwrap();
    let g = rt.block_on(s.engine.recall(&only_graph));
    assert_eq!(g.legs.semantic.status, LegStatus::Disabled);
    assert_eq!(g.legs.bm25.status, LegStatus::Disabled);
    assert!(
        g.results
            .iter()
            .all(|x| x.legs_hit == 1 && x.per_leg.graph.is_some())
    );
    let a: Vec<_> = all.results.iter().map(|x| &x.fingerprint).collect();
    let b: Vec<_> = g.results.iter().map(|x| &x.fingerprint).collect();
    assert_ne!(a, b);
}

#[test]
fn as_of_recall_does_not_see_what_was_not_yet_known() {
    let dir = tempfile::tempdir().unwrap();
    let store = strata::store::embedded::EmbeddedStore::open(&dir.path().join("store")).unwrap();
    let mut early = record("INC-EARLY", "2026-01-01T10:00:00Z");
    early["summary_nl"] = json!("zookeeper quorum lost after disk stall");
    early["mentions"] = json!([{"entity_type": "service", "entity_ref": "zookeeper"}]);
    let mut late = record("INC-LATE", "2026-01-02T10:00:00Z");
    late["summary_nl"] = json!("zookeeper quorum lost again during upgrade");
    late["mentions"] = json!([{"entity_type": "service", "entity_ref": "zookeeper"}]);
    ingest_at(&store, &[early], "2026-01-01T13:00:00Z").unwrap();
    ingest_at(&store, &[late], "2026-03-01T00:00:00Z").unwrap();
    let s = stack(
        Arc::new(store),
        Arc::new(HashEmbedder::default()),
        dir.path(),
    );
    let rt = runtime();
    let ask = |known: &str| {
        let mut r = request("zookeeper quorum lost", &["service:zookeeper"]);
        r.as_of = AsOf {
            valid_at: ts("2026-02-15T00:00:00Z"),
            known_at: ts(known),
        };
        rt.block_on(s.engine.recall(&r))
    };
    let before = ask("2026-02-28T23:59:59Z");
    let fps: Vec<_> = before
        .results
        .iter()
        .map(|x| x.fingerprint.as_str())
        .collect();
    assert_eq!(fps, ["INC-EARLY"], "INC-LATE was recorded on 2026-03-01");
    for leg in Leg::ALL {
        assert_eq!(
            before.legs.get(leg).hits,
            1,
            "{leg} sees only what was known"
        );
    }
    let after = ask("2026-03-01T00:00:00Z");
    assert_eq!(after.results.len(), 2);
    assert!(after.results.iter().all(|x| x.legs_hit == 3));
}

#[test]
fn graph_leg_follows_only_facts_valid_at_the_as_of_point() {
    let dir = tempfile::tempdir().unwrap();
    let store = strata::store::embedded::EmbeddedStore::open(&dir.path().join("store")).unwrap();
    let mut a = record("INC-A", "2026-01-01T10:00:00Z");
    a["resolved_by"] = json!([{"entity_type": "change", "entity_ref": "cfg-42"}]);
    let mut b = record("INC-B", "2026-02-01T10:00:00Z");
    b["mentions"] = json!([{"entity_type": "service", "entity_ref": "other"}]);
    b["resolved_by"] = json!([{"entity_type": "change", "entity_ref": "cfg-43"}]);
    b["supersedes"] =
        json!([{"incident_fingerprint": "INC-A", "entity_type": "change", "entity_ref": "cfg-42"}]);
    ingest_at(&store, &[a, b], "2026-02-02T00:00:00Z").unwrap();
    let s = stack(
        Arc::new(store),
        Arc::new(HashEmbedder::default()),
        dir.path(),
    );
    let rt = runtime();
    let graph_hits = |valid: &str| {
        let mut r = request("what changed", &["change:cfg-42"]);
        r.legs = "graph".parse().unwrap();
        r.as_of = AsOf {
            valid_at: ts(valid),
            known_at: ts("2026-12-01T00:00:00Z"),
        };
        rt.block_on(s.engine.recall(&r))
            .results
            .into_iter()
            .map(|x| x.fingerprint)
            .collect::<Vec<_>>()
    };
    assert_eq!(graph_hits("2026-01-15T00:00:00Z"), ["INC-A"]);
    assert!(
        graph_hits("2026-02-15T00:00:00Z").is_empty(),
        "cfg-42 was superseded on 2026-02-01"
    );
}

#[test]
fn vector_index_refuses_another_model_or_dimension() {
    let dir = tempfile::tempdir().unwrap();
    VectorIndex::open(dir.path(), "hash-v1", 384, Some("s")).unwrap();
    match VectorIndex::open(dir.path(), "hash-v1", 128, Some("s")) {
        Err(IndexError::EmbedderMismatch {
            found_dimension: 384,
            dimension: 128,
            ..
        }) => {}
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("opened a 384-d index at 128 dimensions"),
    }
    let index = VectorIndex::open(dir.path(), "hash-v1", 384, Some("s")).unwrap();
    let bad = strata::index::vectors::VectorRow {
        fingerprint: "X".into(),
        ingested_at: ts("2026-01-01T00:00:00Z"),
        t_valid: ts("2026-01-01T00:00:00Z"),
        concluded_at: ts("2026-01-01T00:00:00Z"),
        vector: vec![0.0; 128],
    };
    assert!(matches!(
        index.append(&[bad], 1),
        Err(IndexError::Dimension {
            expected: 384,
            got: 128
        })
    ));
    assert!(index.is_empty(), "nothing written at the wrong dimension");
    drop(index);
    let msg = VectorIndex::open(dir.path(), "hash-v1", 1024, Some("s"))
        .err()
        .unwrap()
        .to_string();
    assert!(msg.contains("384") && msg.contains("1024"), "{msg}");
}

#[test]
fn a_corrupt_text_index_is_rebuilt_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    drop(stack(
        store.clone(),
        Arc::new(HashEmbedder::default()),
        dir.path(),
    ));
    std::fs::write(dir.path().join("index/bm25/meta.json"), "{ corrupt").unwrap();
    let s = stack(store, Arc::new(HashEmbedder::default()), dir.path());
    assert!(
        s.notices
            .iter()
            .any(|n| n.contains("text index damaged") && n.contains("rebuilding")),
        "{:?}",
        s.notices
    );
    assert_eq!(s.sync.text_indexed, 300);
    let r = runtime().block_on(s.engine.recall(&request("minio bucket policy", &[])));
    assert_eq!(r.legs.bm25.status, LegStatus::Ok);
    assert!(r.legs.bm25.hits > 0);
}

/// An index a catch-up could not bring up to the store answers from what it holds and says
/// how far behind it is; once caught up it says `ok` again.
#[test]
fn a_leg_whose_index_lags_the_store_says_how_far_behind() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let s = stack(store.clone(), Arc::new(HashEmbedder::default()), dir.path());
    ingest_at(
        store.as_ref(),
        &[
            record("LAG-1", "2026-11-20T10:00:00Z"),
            record("LAG-2", "2026-11-21T10:00:00Z"),
        ],
        "2026-12-01T00:00:00Z",
    )
    .unwrap();
    let log_down = Faulty {
        inner: store.clone(),
        hang: false,
        log_down: true,
    };
    let (_, problems) = s.catch_up(&log_down, &mut |_, _| {});
    assert!(!problems.is_empty(), "the catch-up could not read the log");
    let rt = runtime();
    let q = request("LAG-1 summary authelia", &["service:authelia"]);
    let behind = rt.block_on(s.engine.recall(&q));
    for leg in [&behind.legs.bm25, &behind.legs.semantic] {
        assert_eq!(leg.status, LegStatus::Behind, "{leg:?}");
        assert!(
            leg.error
                .as_deref()
                .unwrap_or_default()
                .contains("behind 2 episodes"),
            "{leg:?}"
        );
        assert!(leg.hits > 0, "it still answers from what it holds: {leg:?}");
    }
    assert_eq!(behind.legs.graph.status, LegStatus::Ok);
    let (_, problems) = s.catch_up(store.as_ref(), &mut |_, _| {});
    assert!(problems.is_empty(), "{problems:?}");
    let caught_up = rt.block_on(s.engine.recall(&q));
    assert_eq!(caught_up.legs.bm25.status, LegStatus::Ok);
    assert_eq!(caught_up.legs.semantic.status, LegStatus::Ok);
}

#[test]
fn hostile_query_text_is_data() {
    let dir = tempfile::tempdir().unwrap();
    let s = stack(
        seeded(dir.path()),
        Arc::new(HashEmbedder::default()),
        dir.path(),
    );
    for text in [
        "\"}) DETACH DELETE n //",
        "title:sea^20 AND (",
        "*",
        "",
        "\u{1b}[31m日本",
    ] {
        let r = runtime().block_on(s.engine.recall(&request(text, &[])));
        assert_ne!(
            r.legs.bm25.status,
            LegStatus::Failed,
            "{text:?}: {:?}",
            r.legs.bm25.error
        );
    }
}

#[test]
fn graph_leg_sees_episodes_written_after_its_links_were_cached() {
    let dir = tempfile::tempdir().unwrap();
    let store =
        Arc::new(strata::store::embedded::EmbeddedStore::open(&dir.path().join("store")).unwrap());
    ingest_at(
        store.as_ref(),
        &[record("INC-1", "2026-01-01T10:00:00Z")],
        "2026-01-02T00:00:00Z",
    )
    .unwrap();
    let shared: Arc<dyn MemoryStore> = store.clone();
    let s = stack(shared, Arc::new(HashEmbedder::default()), dir.path());
    let rt = runtime();
    let graph_hits = || {
        let mut r = request("authelia", &["service:authelia"]);
        r.legs = "graph".parse().unwrap();
        let mut hits: Vec<String> = rt
            .block_on(s.engine.recall(&r))
            .results
            .into_iter()
            .map(|x| x.fingerprint)
            .collect();
        hits.sort();
        hits
    };
    assert_eq!(graph_hits(), ["INC-1"]);
    ingest_at(
        store.as_ref(),
        &[record("INC-2", "2026-02-01T10:00:00Z")],
        "2026-02-02T00:00:00Z",
    )
    .unwrap();
    // What the explorer runs before each recall and on every change.
    let (_, problems) = s.catch_up(store.as_ref(), &mut |_, _| {});
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        graph_hits(),
        ["INC-1", "INC-2"],
        "the cached links were refreshed"
    );
}

/// A first launch in a terminal: the text index and graph are brought up at once, the vectors
/// left to a background catch-up. Until it finishes the semantic leg answers nothing and says
/// how far the embedding got; BM25 and the graph answer as usual.
#[test]
fn while_the_memory_is_embedded_bm25_and_graph_answer() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let s = RecallStack::open(
        store.clone(),
        Ok(Arc::new(HashEmbedder::default())),
        &StackOptions {
            index_dir: dir.path().join("index"),
            sync: false,
            vectors: Default::default(),
            runtime: None,
        },
        &mut |_, _| {},
    );
    assert!(s.open_warming(store.as_ref(), &mut |_, _| {}).is_empty());
    let total = store.stats().unwrap().episodes;
    assert_eq!(
        s.warming.reason().as_deref(),
        Some(
            format!(
                "embedding the memory: 0 of {total} episodes; the semantic leg answers when that is done"
            )
            .as_str()
        )
    );
    let rt = runtime();
    let q = request(
        "authelia login loop after config change",
        &["service:authelia"],
    );
    let warming = rt.block_on(s.engine.recall(&q));
    assert_eq!(warming.legs.semantic.status, LegStatus::Failed);
    assert!(
        warming
            .legs
            .semantic
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("embedding the memory"),
        "{:?}",
        warming.legs.semantic
    );
    assert_eq!(warming.legs.bm25.status, LegStatus::Ok);
    assert_eq!(warming.legs.graph.status, LegStatus::Ok);
    assert!(!warming.results.is_empty());
    assert!(warming.results.iter().all(|r| r.per_leg.semantic.is_none()));

    // Catch-ups meanwhile (a write by another process, a recall) leave the vectors to the
    // background embedding, so they never wait for it.
    let (report, problems) = s.catch_up(store.as_ref(), &mut |_, _| {});
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(report.vectors_embedded, 0);
    assert!(s.warming.reason().is_some());

    let mut seen = Vec::new();
    assert_eq!(
        s.warm(store.as_ref(), &mut |done, of| seen.push((done, of))) as u64,
        total
    );
    assert_eq!(
        seen.last(),
        Some(&(total, total)),
        "progress reaches the end"
    );
    assert_eq!(s.warming.reason(), None);
    let (report, problems) = s.catch_up(store.as_ref(), &mut |_, _| {});
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(report.vectors_embedded, 0, "nothing left to embed");
    let ready = rt.block_on(s.engine.recall(&q));
    assert_eq!(ready.legs.semantic.status, LegStatus::Ok);
    assert!(ready.results.iter().any(|r| r.per_leg.semantic.is_some()));
}

/// The local index scans int8 codes and scores its best candidates again from the stored
/// f32 vectors: against an exact scan of the same vectors its top 10 agree (recall@10
/// ≥ 0.99) and every score it returns is the exact cosine.
#[test]
fn the_quantised_vector_scan_finds_what_an_exact_scan_finds() {
    use strata::embed::{Embedder, HashEmbedder};
    use strata::index::vectors::VectorRow;
    use strata::model::AsOf;

    let dir = tempfile::tempdir().unwrap();
    let index = VectorIndex::open(dir.path(), "hash-v1", 384, Some("s")).unwrap();
    let embedder = HashEmbedder::default();
    let at = ts("2026-01-01T00:00:00Z");
    let words = [
        "disk",
        "full",
        "postgres",
        "pgbouncer",
        "login",
        "loop",
        "certificate",
        "expired",
        "caddy",
        "dns",
        "timeout",
        "memory",
        "leak",
        "oom",
        "killed",
        "queue",
        "backlog",
        "nats",
        "graph",
        "vector",
        "latency",
        "spike",
        "rollback",
        "deploy",
    ];
    let text = |i: usize| {
        (0..6)
            .map(|j| words[(i * 7 + j * j * 3 + i / 5) % words.len()])
            .collect::<Vec<_>>()
            .join(" ")
            + &format!(" incident {i}")
    };
    let vectors: Vec<(String, Vec<f32>)> = (0..3_000)
        .map(|i| (format!("INC-{i:05}"), embedder.embed(&text(i)).unwrap()))
        .collect();
    let rows: Vec<VectorRow> = vectors
        .iter()
        .map(|(fp, v)| VectorRow {
            fingerprint: fp.clone(),
            ingested_at: at,
            t_valid: at,
            concluded_at: at,
            vector: v.clone(),
        })
        .collect();
    index.append(&rows, 3_000).unwrap();
    let as_of = AsOf::now(ts("2026-12-01T00:00:00Z"));
    let (mut found, mut asked) = (0, 0);
    for q in 0..50 {
        let query = embedder.embed(&text(q * 61 + 7)).unwrap();
        let mut exact: Vec<(f32, &str)> = vectors
            .iter()
            .map(|(fp, v)| (v.iter().zip(&query).map(|(a, b)| a * b).sum(), fp.as_str()))
            .collect();
        exact.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        let got = index.search(&query, &as_of, 10).unwrap();
        for hit in &got {
            let (_, v) = vectors
                .iter()
                .find(|(fp, _)| *fp == hit.fingerprint)
                .unwrap();
            let cosine: f32 = v.iter().zip(&query).map(|(a, b)| a * b).sum();
            assert!((hit.score - cosine).abs() < 1e-5, "{} {cosine}", hit.score);
        }
        // Tie-aware: a result scoring as high as the exact tenth is one of the top 10.
        let tenth = exact[9].0;
        found += got
            .iter()
            .filter(|h| h.score >= tenth - 1e-6)
            .count()
            .min(10);
        asked += 10;
    }
    let recall = found as f64 / asked as f64;
    assert!(recall >= 0.99, "recall@10 {recall}");
}

#[test]
fn a_fingerprint_embedded_again_keeps_one_row_with_its_newest_vector() {
    let dir = tempfile::tempdir().unwrap();
    let index = VectorIndex::open(dir.path(), "hash-v1", 384, Some("s")).unwrap();
    let row = |fp: &str, axis: usize| {
        let mut vector = vec![0.0f32; 384];
        vector[axis] = 1.0;
        strata::index::vectors::VectorRow {
            fingerprint: fp.into(),
            ingested_at: ts("2026-01-01T00:00:00Z"),
            t_valid: ts("2026-01-01T00:00:00Z"),
            concluded_at: ts("2026-01-01T00:00:00Z"),
            vector,
        }
    };
    index.append(&[row("A", 0), row("B", 1)], 2).unwrap();
    index.append(&[row("A", 2)], 3).unwrap();
    assert_eq!(index.len(), 2);
    let as_of = AsOf {
        valid_at: ts("2026-06-01T00:00:00Z"),
        known_at: ts("2026-06-01T00:00:00Z"),
    };
    let mut query = vec![0.0f32; 384];
    query[2] = 1.0;
    let hits = index.search(&query, &as_of, 2).unwrap();
    assert_eq!(hits[0].fingerprint, "A");
    assert!((hits[0].score - 1.0).abs() < 1e-6, "{hits:?}");
    query[2] = 0.0;
    query[0] = 1.0;
    let hits = index.search(&query, &as_of, 2).unwrap();
    assert!(hits.iter().all(|h| h.score.abs() < 1e-6), "{hits:?}");
    drop(index);
    // Read in again from the stored rows, as another process would.
    let reopened = VectorIndex::open(dir.path(), "hash-v1", 384, Some("s")).unwrap();
    assert_eq!(reopened.len(), 2);
    let hits = reopened.search(&query, &as_of, 2).unwrap();
    assert!(hits.iter().all(|h| h.score.abs() < 1e-6), "{hits:?}");
}
