//! `strata bench server`: the FalkorDB backend against the embedded store on the same synthetic
//! memories — batched ingest throughput through the real ingest path, then per-leg and fused
//! recall latency. Each size writes into a scratch graph `<graph>_bench_<N>_<pid>` on the server
//! named by `--store`, deleted afterwards, so a real graph is never touched.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, bail, eyre};
use serde::Serialize;

use super::recall::{Percentiles, QUERIES, percentiles, time_recalls};
use super::{fill, scratch_dir};
use crate::cli::context::{Context, progress_printer};
use crate::cli::output::print_json;
use strata::embed::{CachedEmbedder, Embedder, HashEmbedder};
use strata::index::VectorLocation;

use strata::recall::{Leg, LegSet, RecallStack, StackOptions};
use strata::store::embedded::EmbeddedStore;
use strata::store::falkordb::{FalkorStore, FalkorUrl};
use strata::store::{MemoryStore, StoreLocation};

const TARGET_INGEST_PER_S: f64 = 1000.0;
const TARGET_FUSED_P95_MS: f64 = 50.0;
/// FalkorDB's fused recall at most this many times the embedded store's, at p95.
const TARGET_FUSED_P95_RATIO: f64 = 2.0;

#[derive(Serialize)]
struct IngestStats {
    ingest_seconds: f64,
    ingest_episodes_per_s: f64,
    validate_seconds: f64,
    write_seconds: f64,
    /// One `ingest::write` call per batch.
    batch_write_ms: Percentiles,
    /// What the store reports holding afterwards (the synthetic records are distinct).
    episodes_stored: u64,
}

#[derive(Serialize)]
struct RecallStats {
    /// Opening the recall stack: catching BM25 and the vectors up with the store.
    index_build_seconds: f64,
    semantic_ms: Percentiles,
    bm25_ms: Percentiles,
    graph_ms: Percentiles,
    fused_ms: Percentiles,
    legs_not_ok: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_leg_error: Option<String>,
}

#[derive(Serialize)]
struct BackendBench {
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    graph: Option<String>,
    #[serde(flatten)]
    ingest: IngestStats,
    #[serde(flatten)]
    recall: RecallStats,
}

#[derive(Serialize)]
struct VectorIndexBench {
    index_build_seconds: f64,
    /// The semantic leg inside three-leg recall (query embedding, search, as-of filter),
    /// sharing the machine with the graph leg's Cypher on the same server.
    semantic_ms: Percentiles,
    /// The same leg recalled alone: what the target is for.
    semantic_alone_ms: Percentiles,
    /// The vector search alone, top 10 at now, beside the local exact scan.
    search: super::vectors::Agreement,
    hnsw: &'static str,
    target_semantic_p95_ms: f64,
    target_recall_at_10: f64,
    meets_targets: bool,
    fused_ms: Percentiles,
    legs_not_ok: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_leg_error: Option<String>,
}

#[derive(Serialize)]
struct ServerBench {
    episodes: usize,
    batch_size: usize,
    queries: usize,
    vector_search: &'static str,
    embedded: BackendBench,
    falkordb: BackendBench,
    #[serde(skip_serializing_if = "Option::is_none")]
    falkordb_vector_index: Option<VectorIndexBench>,
    /// FalkorDB's fused p95 over the embedded store's, same data, same run.
    fused_p95_ratio: f64,
    target_fused_p95_ratio: f64,
    target_ingest_episodes_per_s: f64,
    target_fused_p95_ms: f64,
    meets_targets: bool,
}

/// A scratch graph on the server, deleted with `GRAPH.DELETE` when dropped.
pub(super) struct ScratchGraph {
    pub(super) url: FalkorUrl,
    client: redis::Client,
}

impl ScratchGraph {
    pub(super) fn create(base: &FalkorUrl, n: usize) -> Result<Self> {
        let url = FalkorUrl {
            graph: format!("{}_bench_{n}_{}", base.graph, std::process::id()),
            ..base.clone()
        };
        // Through Sentinel: the primary it names now.
        let client = match &url.sentinel {
            Some(set) => redis::sentinel::SentinelClientBuilder::new(
                set.connection_addrs(),
                &set.primary,
                redis::sentinel::SentinelServerType::Master,
            )?
            .build()?
            .get_client()?,
            None => redis::Client::open(url.connection_info()?)?,
        };
        let mut connection = client
            .get_connection_with_timeout(Duration::from_secs(2))
            .map_err(|e| eyre!("FalkorDB at {} is unreachable: {e}", url.address()))?;
        let exists: i64 = redis::cmd("EXISTS")
            .arg(&url.graph)
            .query(&mut connection)?;
        if exists != 0 {
            bail!(
                "graph {} already exists on {}: a leftover of an earlier bench? delete it with \
                 GRAPH.DELETE {} and rerun",
                url.graph,
                url.address(),
                url.graph
            );
        }
        Ok(ScratchGraph { url, client })
    }

    /// Deletes the graph; `false` when there was none (the run stopped before writing).
    fn delete(&self) -> Result<bool> {
        let mut connection = self
            .client
            .get_connection_with_timeout(Duration::from_secs(2))?;
        let exists: i64 = redis::cmd("EXISTS")
            .arg(&self.url.graph)
            .query(&mut connection)?;
        if exists == 0 {
            return Ok(false);
        }
        let _: redis::Value = redis::cmd("GRAPH.DELETE")
            .arg(&self.url.graph)
            .query(&mut connection)?;
        Ok(true)
    }
}

impl Drop for ScratchGraph {
    fn drop(&mut self) {
        match self.delete() {
            Ok(true) => eprintln!("  deleted scratch graph {}", self.url.graph),
            Ok(false) => {}
            Err(e) => eprintln!(
                "  could not delete scratch graph {} on {}: {e}",
                self.url.graph,
                self.url.address()
            ),
        }
    }
}

pub fn run(
    ctx: &Context,
    sizes: &[usize],
    queries: usize,
    batch: usize,
    dir: Option<&Path>,
    graph_vectors: bool,
) -> Result<ExitCode> {
    let base = match &ctx.store {
        StoreLocation::FalkorDb(url) => url.clone(),
        StoreLocation::Embedded(_) => bail!(
            "bench server needs a FalkorDB server: pass --store falkordb://127.0.0.1:PORT/GRAPH \
             (scripts/falkordb start DIR starts one and prints its port); the bench writes into \
             a scratch graph GRAPH_bench_N_PID and deletes it afterwards"
        ),
    };
    let batch = batch.max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()?;
    let mut results = Vec::new();
    for &n in sizes {
        results.push(bench_size(
            ctx,
            &runtime,
            &base,
            n,
            queries,
            batch,
            dir,
            graph_vectors,
        )?);
    }
    print_json(&serde_json::json!({ "bench": "server", "results": results }))?;
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::too_many_arguments)]
fn bench_size(
    ctx: &Context,
    runtime: &tokio::runtime::Runtime,
    base: &FalkorUrl,
    n: usize,
    queries: usize,
    batch: usize,
    dir: Option<&Path>,
    graph_vectors: bool,
) -> Result<ServerBench> {
    // Declared first, dropped last: the graph is deleted after every connection to it.
    let scratch = ScratchGraph::create(base, n)?;
    let url = scratch.url.clone();
    let tmp = scratch_dir(dir)?;
    eprintln!(
        "bench server: {n} episodes in batches of {batch}; FalkorDB graph {} on {}",
        url.graph,
        url.address()
    );

    eprintln!(" embedded store");
    let embedded: Arc<dyn MemoryStore> = Arc::new(EmbeddedStore::open(&tmp.path().join("store"))?);
    let embedded_ingest = ingest_into(ctx, embedded.as_ref(), n, batch)?;
    eprintln!(" falkordb store");
    let falkor: Arc<dyn MemoryStore> = Arc::new(FalkorStore::connect(&url)?);
    let falkor_ingest = ingest_into(ctx, falkor.as_ref(), n, batch)?;

    let hash: Arc<dyn Embedder> = Arc::new(HashEmbedder::default());
    let cached = Arc::new(CachedEmbedder::new(hash));
    for (text, _) in QUERIES {
        cached.embed(text).map_err(|e| eyre!("{e}"))?;
    }
    let embedder = cached as Arc<dyn Embedder>;

    eprintln!(" recall over the embedded store");
    let (embedded_recall, _) = recall_pass(
        ctx,
        runtime,
        embedded,
        &embedder,
        &tmp.path().join("index-embedded"),
        VectorLocation::Local,
        queries,
    )?;
    eprintln!(" recall over falkordb (local vector index)");
    let (falkor_recall, falkor_stack) = recall_pass(
        ctx,
        runtime,
        falkor.clone(),
        &embedder,
        &tmp.path().join("index-falkordb"),
        VectorLocation::Local,
        queries,
    )?;
    let falkordb_vector_index = if graph_vectors {
        Some(graph_vector_index(
            ctx,
            runtime,
            falkor,
            &embedder,
            &falkor_stack,
            &url,
            &tmp.path().join("index-falkordb-vectors"),
            queries,
        )?)
    } else {
        None
    };
    let fused_p95_ratio = falkor_recall.fused_ms.p95 / embedded_recall.fused_ms.p95.max(1e-9);
    let meets = falkor_ingest.ingest_episodes_per_s >= TARGET_INGEST_PER_S
        && falkor_recall.fused_ms.p95 <= TARGET_FUSED_P95_MS
        && fused_p95_ratio <= TARGET_FUSED_P95_RATIO
        && falkor_recall.legs_not_ok == 0;
    Ok(ServerBench {
        episodes: n,
        batch_size: batch,
        queries,
        vector_search: "384-d hash embedder; local: exact (flat, cosine)",
        embedded: BackendBench {
            address: None,
            graph: None,
            ingest: embedded_ingest,
            recall: embedded_recall,
        },
        falkordb: BackendBench {
            address: Some(url.address()),
            graph: Some(url.graph.clone()),
            ingest: falkor_ingest,
            recall: falkor_recall,
        },
        falkordb_vector_index,
        fused_p95_ratio,
        target_fused_p95_ratio: TARGET_FUSED_P95_RATIO,
        target_ingest_episodes_per_s: TARGET_INGEST_PER_S,
        target_fused_p95_ms: TARGET_FUSED_P95_MS,
        meets_targets: meets,
    })
}

/// [`fill`] into `store`, summarised.
fn ingest_into(
    ctx: &Context,
    store: &dyn MemoryStore,
    n: usize,
    batch: usize,
) -> Result<IngestStats> {
    let filled = fill(ctx, store, n, batch)?;
    let seconds = filled.validate_seconds + filled.write_seconds;
    Ok(IngestStats {
        ingest_seconds: seconds,
        ingest_episodes_per_s: n as f64 / seconds.max(f64::EPSILON),
        validate_seconds: filled.validate_seconds,
        write_seconds: filled.write_seconds,
        batch_write_ms: percentiles(filled.batch_write_ms),
        episodes_stored: store.stats()?.episodes,
    })
}

/// Opens a recall stack over `store` (indexes in `index_dir`, vectors at `vectors`) and times
/// `queries` recalls, cycling through [`QUERIES`] with their entity as the graph seed.
fn recall_pass(
    ctx: &Context,
    runtime: &tokio::runtime::Runtime,
    store: Arc<dyn MemoryStore>,
    embedder: &Arc<dyn Embedder>,
    index_dir: &Path,
    vectors: VectorLocation,
    queries: usize,
) -> Result<(RecallStats, RecallStack)> {
    let t0 = Instant::now();
    let mut progress = progress_printer("  indexing");
    let mut stack = RecallStack::open(
        store,
        Ok(embedder.clone()),
        &StackOptions {
            index_dir: index_dir.to_path_buf(),
            sync: true,
            vectors,
            runtime: None,
        },
        &mut progress,
    );
    stack.warm_legs();
    let build = t0.elapsed().as_secs_f64();
    for notice in &stack.notices {
        eprintln!("  {notice}");
    }
    stack.engine.timeout = Duration::from_secs(10);
    let t = time_recalls(ctx.now, runtime, &stack, queries, LegSet::ALL)?;
    if let Some(e) = &t.first_leg_error {
        eprintln!("  {} legs not ok; first: {e}", t.legs_not_ok);
    }
    let stats = RecallStats {
        index_build_seconds: build,
        semantic_ms: percentiles(t.semantic),
        bm25_ms: percentiles(t.bm25),
        graph_ms: percentiles(t.graph),
        fused_ms: percentiles(t.fused),
        legs_not_ok: t.legs_not_ok,
        first_leg_error: t.first_leg_error,
    };
    Ok((stats, stack))
}

/// Recall with the semantic leg on FalkorDB's own vector index, and that index's search beside
/// the exact local scan of the same vectors.
#[allow(clippy::too_many_arguments)]
fn graph_vector_index(
    ctx: &Context,
    runtime: &tokio::runtime::Runtime,
    falkor: Arc<dyn MemoryStore>,
    embedder: &Arc<dyn Embedder>,
    falkor_stack: &RecallStack,
    url: &FalkorUrl,
    index_dir: &Path,
    queries: usize,
) -> Result<VectorIndexBench> {
    eprintln!(" recall over falkordb (the graph's own vector index)");
    let (vector_recall, vector_stack) = recall_pass(
        ctx,
        runtime,
        falkor,
        embedder,
        index_dir,
        VectorLocation::FalkorDb(url.clone()),
        queries,
    )?;

    let (Some(exact), Some(graph_index)) = (&falkor_stack.vectors, &vector_stack.vectors) else {
        bail!("a vector index did not open (see the notices above)");
    };
    eprintln!(" the semantic leg alone on the graph's vector index");
    let semantic_alone = time_recalls(
        ctx.now,
        runtime,
        &vector_stack,
        queries,
        LegSet::of(&[Leg::Semantic]),
    )?;
    let semantic_alone_ms = percentiles(semantic_alone.semantic);
    eprintln!(" the graph's vector index beside the exact local scan");
    let search = super::vectors::agreement(
        ctx,
        graph_index.as_ref(),
        exact.as_ref(),
        embedder.as_ref(),
        queries,
    )?;
    let vectors_meet = semantic_alone_ms.p95 <= super::vectors::TARGET_SEMANTIC_P95_MS
        && search.recall_at_10_ties >= super::vectors::TARGET_RECALL_AT_10;
    Ok(VectorIndexBench {
        index_build_seconds: vector_recall.index_build_seconds,
        semantic_ms: vector_recall.semantic_ms,
        semantic_alone_ms,
        search,
        hnsw: "M 32, efConstruction 400, efRuntime 1000 (FalkorDB's defaults: 16, 200, \
                   10); the as-of filter after the kNN, widened until enough hits survive it",
        target_semantic_p95_ms: super::vectors::TARGET_SEMANTIC_P95_MS,
        target_recall_at_10: super::vectors::TARGET_RECALL_AT_10,
        meets_targets: vectors_meet,
        fused_ms: vector_recall.fused_ms,
        legs_not_ok: vector_recall.legs_not_ok,
        first_leg_error: vector_recall.first_leg_error,
    })
}
