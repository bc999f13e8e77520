//! A server's vector search (Qdrant for `--vectors qdrant://… bench recall`, the graph's own
//! index for `bench server`) beside the local exact scan over the same vectors, and how many
//! of the exact top 10 it finds.

use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, eyre};
use serde::Serialize;

use super::recall::{Percentiles, QUERIES, percentiles};
use crate::cli::context::Context;
use strata::embed::Embedder;
use strata::index::qdrant::{HNSW_EF, HNSW_EF_CONSTRUCT, HNSW_M, QdrantVectors};
use strata::index::{VectorStore, store_identity, sync_vectors};
use strata::model::AsOf;
use strata::store::MemoryStore;

#[derive(Serialize)]
pub struct ServerVectors {
    backend: String,
    index_build_seconds: f64,
    semantic_ms: Percentiles,
    local_semantic_ms: Percentiles,
    recall_at_10: f64,
    recall_at_10_ties: f64,
    queries_tied_at_10: usize,
    queries: usize,
    hnsw: serde_json::Value,
    filter: &'static str,
    target_semantic_p95_ms: f64,
    target_recall_at_10: f64,
    meets_targets: bool,
}

/// A query vector per query: the bench's texts, each made distinct by a suffix.
fn query_vectors(embedder: &dyn Embedder, queries: usize) -> Result<Vec<Vec<f32>>> {
    (0..queries)
        .map(|q| {
            let (text, _) = QUERIES[q % QUERIES.len()];
            embedder
                .embed(&format!("{text} variant {q}"))
                .map_err(|e| eyre!("{e}"))
        })
        .collect()
}

/// Times the semantic search of `vectors` for every query and returns the hits.
fn timed(
    vectors: &dyn VectorStore,
    queries: &[Vec<f32>],
    as_of: &AsOf,
) -> Result<(Vec<f64>, Vec<Vec<String>>)> {
    let mut times = Vec::new();
    let mut hits = Vec::new();
    for q in queries {
        let t = Instant::now();
        let found = vectors.search(q, as_of, 10).map_err(|e| eyre!("{e}"))?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        hits.push(found.into_iter().map(|h| h.fingerprint).collect());
    }
    Ok((times, hits))
}

pub const TARGET_SEMANTIC_P95_MS: f64 = 10.0;
pub const TARGET_RECALL_AT_10: f64 = 0.99;

/// Scores closer than this are the same score: two sums of 384 f32 products in another
/// order (SIMD lanes, the server's own kernel) differ by about 1e-7, and the hash embedder's
/// synthetic texts give many episodes the same score in exact arithmetic.
const SAME_SCORE: f32 = 1e-5;
/// How deep the exact scan is read to score the server's hits exactly.
const EXACT_DEPTH: usize = 2_000;

/// A server's vector search beside the exact local scan over the same vectors.
#[derive(Serialize)]
pub struct Agreement {
    pub semantic_ms: Percentiles,
    pub local_semantic_ms: Percentiles,
    /// Of the exact top 10 at now, the share the server's top 10 holds (by fingerprint).
    pub recall_at_10: f64,
    /// The share of the server's top 10 that are true top-10 neighbours, a hit counting when
    /// its exact score is at least the exact 10th score (within [`SAME_SCORE`]): the usual
    /// ANN measure, which does not count a tie at the cut broken the other way as a miss.
    pub recall_at_10_ties: f64,
    /// Queries whose exact 10th and 11th neighbours have the same score, so that which of the
    /// tied episodes makes the top 10 is a tie-break, not a search result.
    pub queries_tied_at_10: usize,
}

/// Times `queries` searches (top 10 at now) on `server` and on `local` and counts how many
/// of the exact neighbours the server found.
pub fn agreement(
    ctx: &Context,
    server: &dyn VectorStore,
    local: &dyn VectorStore,
    embedder: &dyn Embedder,
    queries: usize,
) -> Result<Agreement> {
    let vectors = query_vectors(embedder, queries)?;
    let as_of = AsOf::now(ctx.now);
    // One untimed pass warms both.
    timed(server, &vectors[..vectors.len().min(10)], &as_of)?;
    timed(local, &vectors[..vectors.len().min(10)], &as_of)?;
    let (server_ms, server_hits) = timed(server, &vectors, &as_of)?;
    let (local_ms, local_hits) = timed(local, &vectors, &as_of)?;
    let (mut found, mut wanted) = (0usize, 0usize);
    for (exact, approx) in local_hits.iter().zip(&server_hits) {
        wanted += exact.len();
        found += exact.iter().filter(|f| approx.contains(f)).count();
    }
    let (mut true_hits, mut returned, mut tied) = (0usize, 0usize, 0usize);
    for (q, approx) in vectors.iter().zip(&server_hits) {
        let exact = local
            .search(q, &as_of, EXACT_DEPTH)
            .map_err(|e| eyre!("{e}"))?;
        let Some(tenth) = exact.get(9.min(exact.len().saturating_sub(1))) else {
            continue;
        };
        if exact
            .get(10)
            .is_some_and(|next| tenth.score - next.score <= SAME_SCORE)
        {
            tied += 1;
        }
        returned += approx.len();
        true_hits += approx
            .iter()
            .filter(|f| {
                exact
                    .iter()
                    .find(|e| &e.fingerprint == *f)
                    .is_some_and(|e| e.score >= tenth.score - SAME_SCORE)
            })
            .count();
    }
    let share = |part: usize, whole: usize| {
        if whole == 0 {
            1.0
        } else {
            part as f64 / whole as f64
        }
    };
    Ok(Agreement {
        semantic_ms: percentiles(server_ms),
        local_semantic_ms: percentiles(local_ms),
        recall_at_10: share(found, wanted),
        recall_at_10_ties: share(true_hits, returned),
        queries_tied_at_10: tied,
    })
}

/// Fills a scratch Qdrant collection from `store`, waits for its HNSW index, compares it
/// with `local`, and drops the collection.
pub fn compare_qdrant(
    ctx: &Context,
    url: &str,
    store: &dyn MemoryStore,
    local: &dyn VectorStore,
    embedder: &dyn Embedder,
    queries: usize,
) -> Result<ServerVectors> {
    let id = store_identity(store).map_err(|e| eyre!("{e}"))?;
    let t0 = Instant::now();
    let qdrant = QdrantVectors::open(url, embedder.model(), embedder.dimension(), &id, None)
        .map_err(|e| eyre!("{e}"))?;
    let mut progress = crate::cli::context::progress_printer("  qdrant");
    sync_vectors(store, &qdrant, embedder, &mut progress).map_err(|e| eyre!("{e}"))?;
    let deadline = Instant::now() + Duration::from_secs(600);
    while !qdrant.indexing_done().map_err(|e| eyre!("{e}"))? {
        if Instant::now() > deadline {
            return Err(eyre!("Qdrant did not finish indexing within 10 minutes"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let build = t0.elapsed().as_secs_f64();
    let agreement = agreement(ctx, &qdrant, local, embedder, queries)?;
    let backend = format!("Qdrant collection {}", qdrant.collection());
    qdrant.drop_collection().map_err(|e| eyre!("{e}"))?;
    let meets = agreement.semantic_ms.p95 <= TARGET_SEMANTIC_P95_MS
        && agreement.recall_at_10_ties >= TARGET_RECALL_AT_10;
    Ok(ServerVectors {
        backend,
        index_build_seconds: build,
        semantic_ms: agreement.semantic_ms,
        local_semantic_ms: agreement.local_semantic_ms,
        recall_at_10: agreement.recall_at_10,
        recall_at_10_ties: agreement.recall_at_10_ties,
        queries_tied_at_10: agreement.queries_tied_at_10,
        queries,
        hnsw: serde_json::json!({"m": HNSW_M, "ef_construct": HNSW_EF_CONSTRUCT, "ef": HNSW_EF}),
        filter: "range conditions on the integer payload indexes ingested_at <= K and t_valid \
                 <= V, planned by Qdrant (HNSW with the filter applied during the graph walk, \
                 or a scan of the matching points when few match)",
        target_semantic_p95_ms: TARGET_SEMANTIC_P95_MS,
        target_recall_at_10: TARGET_RECALL_AT_10,
        meets_targets: meets,
    })
}
