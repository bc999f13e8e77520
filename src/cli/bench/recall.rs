use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, eyre};
use serde::Serialize;

use super::rss::{fill_in_child, peak_bytes, reset_peak, resident, run_child};
use super::scratch_dir;
use crate::cli::context::{Context, progress_printer};
use crate::cli::output::print_json;
use strata::embed::{CachedEmbedder, Embedder, HashEmbedder};
use strata::index::VectorLocation;
use strata::model::{AsOf, EntityKey, Timestamp};
use strata::recall::{
    FusionPolicy, Leg, LegSet, LegStatus, RecallRequest, RecallStack, StackOptions,
};
use strata::store::MemoryStore;
use strata::store::embedded::EmbeddedStore;

#[derive(Serialize, Default)]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

pub fn percentiles(mut v: Vec<f64>) -> Percentiles {
    if v.is_empty() {
        return Percentiles::default();
    }
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[(((v.len() - 1) as f64) * p).round() as usize];
    Percentiles {
        p50: at(0.5),
        p95: at(0.95),
        p99: at(0.99),
        max: at(1.0),
    }
}

#[derive(Serialize)]
struct RecallBench {
    episodes: usize,
    queries: usize,
    index_build_seconds: f64,
    vector_search: &'static str,
    semantic_ms: Percentiles,
    bm25_ms: Percentiles,
    graph_ms: Percentiles,
    fused_ms: Percentiles,
    query_embedding_ms: Percentiles,
    legs_not_ok: usize,
    /// The `strata index` process that built the indexes: its peak resident set.
    index_build_peak_rss_bytes: u64,
    /// Opening the built memory in this process (the recall stack, current indexes).
    open_seconds: f64,
    /// This process's peak resident set, opening the memory and recalling: a recall
    /// process's (a child filled the store, another built the indexes).
    recall_peak_rss_bytes: Option<u64>,
    /// Of this process's resident set at the end: heap and other anonymous memory, and
    /// mapped file pages (LMDB and tantivy maps, which the kernel can drop under pressure).
    recall_rss_anon_bytes: Option<u64>,
    recall_rss_file_bytes: Option<u64>,
    target_recall_peak_rss_bytes: u64,
    /// The slowest 5% of the recalls, with each leg's time and the graph leg's seeds.
    slowest: Vec<SlowRecall>,
    target_fused_p95_ms: f64,
    meets_target: bool,
    /// With `--vectors qdrant://…`: the semantic leg there, beside the local scan.
    #[serde(skip_serializing_if = "Option::is_none")]
    server_vectors: Option<super::vectors::ServerVectors>,
    /// With `--corrected P`: the same recalls after P% of the episodes were corrected.
    #[serde(skip_serializing_if = "Option::is_none")]
    corrected: Option<CorrectedBench>,
}

#[derive(Serialize)]
struct CorrectedBench {
    percent: u32,
    episodes_corrected: usize,
    correct_seconds: f64,
    /// The text and vector indexes catching up with the corrected texts (one more document
    /// an episode corrected, each embedded), before the recalls are timed.
    index_catch_up_seconds: f64,
    texts_indexed: usize,
    vectors_embedded: usize,
    semantic_ms: Percentiles,
    bm25_ms: Percentiles,
    fused_ms: Percentiles,
    graph_ms: Percentiles,
    /// Fused p95 after the corrections over fused p95 before.
    fused_p95_ratio: f64,
    target_fused_p95_ratio: f64,
    meets_target: bool,
}

/// Corrects `percent`% of the episodes, in batches: each one's summary, and its first fact's
/// `t_valid` a minute earlier, so both episode and fact versions are read by every recall.
fn correct_share(store: &dyn MemoryStore, percent: u32) -> Result<usize> {
    use strata::correct::{
        Correction, CorrectionBatch, CorrectionItem, CorrectionLine, EpisodeCorrection,
        FactCorrection, WriteOrigin,
    };
    let every = (100 / percent.clamp(1, 100)) as u64;
    let mut cursor = 0;
    let mut corrected = 0;
    loop {
        let page = store.episodes_since(cursor, 1000)?;
        if page.last <= cursor {
            return Ok(corrected);
        }
        cursor = page.last;
        let mut items = Vec::new();
        for (seq, e) in &page.episodes {
            if seq % every != 0 {
                continue;
            }
            let line = |correction| CorrectionItem {
                origin: format!("bench:{seq}"),
                line: CorrectionLine {
                    correction,
                    reason: "bench".into(),
                    by: "bench".into(),
                },
            };
            items.push(line(Correction::CorrectEpisode(EpisodeCorrection {
                incident_fingerprint: e.incident_fingerprint.clone(),
                summary_nl: Some(format!("{} (corrected)", e.summary_nl)),
                resolution_nl: None,
            })));
            if let Some(f) = store.facts(&e.incident_fingerprint)?.into_iter().next() {
                items.push(line(Correction::CorrectFact(FactCorrection {
                    episode: f.episode.clone(),
                    relation: f.relation,
                    entity_type: f.entity.entity_type.clone(),
                    entity_ref: f.entity.entity_ref.clone(),
                    t_valid: Some(f.t_valid.plus_millis(-60_000)),
                    t_invalid: None,
                })));
            }
            corrected += 1;
        }
        if !items.is_empty() {
            store.correct(&CorrectionBatch {
                items,
                at: strata::store::KnowledgeTime::AtCommit,
                origin: WriteOrigin::Import,
            })?;
        }
    }
}

pub(crate) const QUERIES: &[(&str, &str)] = &[
    (
        "login loop after the session secret was rotated on authelia",
        "service:authelia",
    ),
    (
        "pgbouncer connection pool exhausted, postgres refusing connections",
        "service:pgbouncer",
    ),
    ("certificate expired on the caddy ingress", "service:caddy"),
    (
        "write-ahead log volume is full on postgres",
        "service:postgres",
    ),
    (
        "qdrant rejects vectors: dimension mismatch after model upgrade",
        "service:qdrant",
    ),
    (
        "nats stream hit its retention limit and dropped messages",
        "service:nats",
    ),
    (
        "argocd synced the wrong environment values",
        "service:argocd",
    ),
    (
        "falkordb out of memory on a deep traversal",
        "service:falkordb",
    ),
];

/// Issue 17's bound on the resident memory of a recall process and of the explorer at 1M.
pub(crate) const TARGET_PEAK_RSS_BYTES: u64 = 2_000_000_000;

/// Recall latency over synthetic memories. Vectors come from the 384-d hash embedder (MiniLM
/// would need hours to embed 100k episodes here); search cost depends on the dimension, not
/// the model. Query embeddings are computed before timing and reported on their own.
pub fn run(
    ctx: &Context,
    sizes: &[usize],
    queries: usize,
    legs: LegSet,
    corrected: Option<u32>,
    dir: Option<&Path>,
) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()?;
    let mut results = Vec::new();
    for &n in sizes {
        let tmp = scratch_dir(dir)?;
        eprintln!("bench recall: {n} episodes");
        // The store is filled and indexed by child processes; this process is a recall
        // process opening that memory, so its peak memory is a recall's.
        fill_in_child(ctx, tmp.path(), n)?;
        reset_peak()?;
        eprintln!("  indexing (strata index)");
        let build = run_child(ctx, tmp.path(), &["index"])?;
        let hash: Arc<dyn Embedder> = Arc::new(HashEmbedder::default());
        let cached = Arc::new(CachedEmbedder::new(hash.clone()));
        let t0 = Instant::now();
        let store = Arc::new(EmbeddedStore::open(tmp.path())?);
        let bench_store = store.clone();
        let mut progress = progress_printer("  opening");
        let mut stack = RecallStack::open(
            store,
            Ok(cached.clone() as Arc<dyn Embedder>),
            &StackOptions {
                index_dir: tmp.path().join("index"),
                sync: true,
                vectors: Default::default(),
                runtime: None,
            },
            &mut progress,
        );
        stack.warm_legs();
        let open_seconds = t0.elapsed().as_secs_f64();
        if stack.sync.text_indexed + stack.sync.vectors_embedded > 0 || !stack.notices.is_empty() {
            return Err(eyre!(
                "the indexes `strata index` built were not current here ({} texts, {} vectors \
                 indexed again; {:?})",
                stack.sync.text_indexed,
                stack.sync.vectors_embedded,
                stack.notices
            ));
        }
        stack.engine.timeout = Duration::from_secs(10);
        let mut embed_ms = Vec::new();
        for (text, _) in QUERIES {
            let t = Instant::now();
            hash.embed(text).map_err(|e| eyre!("{e}"))?;
            embed_ms.push(t.elapsed().as_secs_f64() * 1e3);
            cached.embed(text).map_err(|e| eyre!("{e}"))?;
        }
        let times = time_recalls(ctx.now, &runtime, &stack, queries, legs)?;
        let recall_rss = peak_bytes();
        let (rss_anon, rss_file) = resident(std::process::id()).unzip();
        let not_ok = times.legs_not_ok;
        let slowest = times.slowest.clone();
        let last = stack.engine.embedder_label().to_string();
        let (sem, bm, gr, fused) = (times.semantic, times.bm25, times.graph, times.fused);
        let fused = percentiles(fused);
        let meets = fused.p95 <= 20.0
            && not_ok == 0
            && recall_rss.is_some_and(|b| b <= TARGET_PEAK_RSS_BYTES);
        eprintln!("  embedder for the index: {last}");
        let server_vectors = match (&ctx.vectors, &stack.vectors) {
            (VectorLocation::Qdrant(target), Some(local)) => {
                eprintln!("  the same vectors on {}", target.url);
                Some(super::vectors::compare_qdrant(
                    ctx,
                    &target.url,
                    bench_store.as_ref(),
                    local.as_ref(),
                    cached.as_ref(),
                    queries,
                )?)
            }
            _ => None,
        };
        let corrected = match corrected {
            Some(percent) => {
                eprintln!("  correcting {percent}% of the episodes");
                let t = Instant::now();
                let episodes_corrected = correct_share(bench_store.as_ref(), percent)?;
                let correct_seconds = t.elapsed().as_secs_f64();
                eprintln!("  indexing the corrected texts");
                let t = Instant::now();
                let (synced, problems) = stack.catch_up(bench_store.as_ref(), &mut |_, _| {});
                if !problems.is_empty() {
                    return Err(eyre!("the indexes did not catch up: {problems:?}"));
                }
                let index_catch_up_seconds = t.elapsed().as_secs_f64();
                // As of now, after the corrections (stamped with the clock at commit, which
                // can be past the context's now): recall reads the corrected texts. As of the
                // context's now it would be a replay of the memory before them.
                let after = Timestamp::now().max(ctx.now);
                let again = time_recalls(after, &runtime, &stack, queries, legs)?;
                let after = percentiles(again.fused);
                let ratio = after.p95 / fused.p95.max(f64::EPSILON);
                Some(CorrectedBench {
                    percent,
                    episodes_corrected,
                    correct_seconds,
                    index_catch_up_seconds,
                    texts_indexed: synced.text_indexed,
                    vectors_embedded: synced.vectors_embedded,
                    semantic_ms: percentiles(again.semantic),
                    bm25_ms: percentiles(again.bm25),
                    graph_ms: percentiles(again.graph),
                    fused_p95_ratio: ratio,
                    target_fused_p95_ratio: 1.10,
                    meets_target: ratio <= 1.10 && again.legs_not_ok == 0,
                    fused_ms: after,
                })
            }
            None => None,
        };
        results.push(RecallBench {
            corrected,
            episodes: n,
            queries,
            index_build_seconds: build.seconds,
            index_build_peak_rss_bytes: build.peak_rss_bytes,
            open_seconds,
            vector_search: "int8 scan, best 2k+32 rescored exactly (cosine)",
            semantic_ms: percentiles(sem),
            bm25_ms: percentiles(bm),
            graph_ms: percentiles(gr),
            fused_ms: fused,
            query_embedding_ms: percentiles(embed_ms),
            legs_not_ok: not_ok,
            recall_peak_rss_bytes: recall_rss,
            recall_rss_anon_bytes: rss_anon,
            recall_rss_file_bytes: rss_file,
            target_recall_peak_rss_bytes: TARGET_PEAK_RSS_BYTES,
            slowest,
            target_fused_p95_ms: 20.0,
            meets_target: meets,
            server_vectors,
        });
    }
    print_json(&serde_json::json!({ "bench": "recall", "results": results }))?;
    Ok(ExitCode::SUCCESS)
}

/// Latencies of timed recalls, per leg and fused.
pub(crate) struct RecallTimes {
    pub semantic: Vec<f64>,
    pub bm25: Vec<f64>,
    pub graph: Vec<f64>,
    pub fused: Vec<f64>,
    pub legs_not_ok: usize,
    pub first_leg_error: Option<String>,
    /// The slowest 5% of the recalls, slowest first: where the tail comes from.
    pub slowest: Vec<SlowRecall>,
}

/// One slow recall: each leg's time and what the graph leg started from.
#[derive(Clone, Serialize)]
pub struct SlowRecall {
    pub query: usize,
    pub fused_ms: f64,
    pub semantic_ms: f64,
    pub bm25_ms: f64,
    pub graph_ms: f64,
    pub graph_hits: usize,
    pub graph_note: Option<String>,
}

/// Runs `queries` recalls as of `now` over `legs`, cycling through [`QUERIES`] with their
/// entity as the graph seed.
pub(crate) fn time_recalls(
    now: Timestamp,
    runtime: &tokio::runtime::Runtime,
    stack: &RecallStack,
    queries: usize,
    legs: LegSet,
) -> Result<RecallTimes> {
    let mut t = RecallTimes {
        semantic: Vec::new(),
        bm25: Vec::new(),
        graph: Vec::new(),
        fused: Vec::new(),
        legs_not_ok: 0,
        first_leg_error: None,
        slowest: Vec::new(),
    };
    let mut all = Vec::with_capacity(queries);
    for q in 0..queries {
        let (text, entity) = QUERIES[q % QUERIES.len()];
        let entity: EntityKey = entity.parse()?;
        let request = RecallRequest {
            exclude: Vec::new(),
            text: text.to_string(),
            entities: vec![entity],
            as_of: AsOf::now(now),
            k: 10,
            legs,
            fusion: FusionPolicy::default(),
            stale: Default::default(),
        };
        let r = runtime.block_on(stack.engine.recall(&request));
        for leg in legs.legs() {
            let report = r.legs.get(leg);
            if report.status != LegStatus::Ok {
                t.legs_not_ok += 1;
                t.first_leg_error.get_or_insert_with(|| {
                    format!(
                        "{} leg {}: {}",
                        leg.as_str(),
                        report.status.as_str(),
                        report.error.as_deref().unwrap_or("no error given")
                    )
                });
            }
            match leg {
                Leg::Semantic => &mut t.semantic,
                Leg::Bm25 => &mut t.bm25,
                Leg::Graph => &mut t.graph,
            }
            .push(report.latency_ms);
        }
        t.fused.push(r.latency_ms);
        all.push(SlowRecall {
            query: q,
            fused_ms: r.latency_ms,
            semantic_ms: r.legs.semantic.latency_ms,
            bm25_ms: r.legs.bm25.latency_ms,
            graph_ms: r.legs.graph.latency_ms,
            graph_hits: r.legs.graph.hits,
            graph_note: r.legs.graph.note.clone(),
        });
    }
    all.sort_by(|a, b| b.fused_ms.total_cmp(&a.fused_ms));
    all.truncate(queries.div_ceil(20));
    t.slowest = all;
    Ok(t)
}
