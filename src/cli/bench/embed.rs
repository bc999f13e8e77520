//! `strata bench embed`: query latency and batch throughput of the configured embedder, and
//! for MiniLM on ONNX Runtime the machine's own GEMM limit beside it.

use std::process::ExitCode;
use std::time::Instant;

use color_eyre::eyre::{Result, eyre};
use serde::Serialize;

use super::recall::{Percentiles, percentiles};
use crate::cli::context::Context;
use crate::cli::output::print_json;
use strata::embed::peak::GemmPeak;
use strata::embed::{self, Embedder, EmbedderKind, MiniLmEmbedder, MiniLmRuntime};

const QUERY: &str = "Users are stuck in a login loop on the SSO portal after the authelia session \
                     secret was rotated; sessions fail with 401 Unauthorized";
const TARGET_QUERY_P95_MS: f64 = 8.0;
const TARGET_TEXTS_PER_S: f64 = 100.0;
/// MiniLM-L6: 6 layers of width 384, feed-forward 1536.
const LAYERS: f64 = 6.0;
const WIDTH: f64 = 384.0;

#[derive(Serialize)]
struct EmbedBench {
    embedder: String,
    query_tokens: Option<usize>,
    query_ms: Percentiles,
    batch_texts: usize,
    /// Mean tokens per batch text, as the model sees them.
    batch_tokens_mean: Option<f64>,
    batch_seconds: f64,
    batch_texts_per_s: f64,
    target_query_p95_ms: f64,
    target_batch_texts_per_s: f64,
    meets_targets: bool,
    /// The machine's fp32 and int8 GEMM rates (MiniLM on ONNX Runtime only).
    machine: Option<GemmPeak>,
    /// The model's arithmetic in the batch (its matrix products and attention) per second,
    /// as a share of the machine's int8 GEMM rate.
    batch_share_of_int8_peak: Option<f64>,
}

/// Multiply-adds × 2 of one MiniLM forward pass over `tokens` tokens: per layer, the Q/K/V,
/// output and two feed-forward products (12·w² per token) and attention (2·t·w per token).
fn forward_ops(tokens: f64) -> f64 {
    2.0 * LAYERS * (12.0 * WIDTH * WIDTH * tokens + 2.0 * tokens * tokens * WIDTH)
}

/// Incident texts of about 100 tokens: demo incidents' summaries and resolutions.
fn batch_texts(n: usize) -> Vec<String> {
    let records = strata::demo::generate().records;
    let text = |i: usize| {
        let r = &records[i % records.len()].record;
        format!(
            "{}\n{}",
            r["summary_nl"].as_str().unwrap_or(""),
            r["resolution_nl"].as_str().unwrap_or("")
        )
    };
    (0..n).map(text).collect()
}

pub fn run(ctx: &Context, queries: usize, batch: usize) -> Result<ExitCode> {
    let minilm = match ctx.embedder.kind {
        EmbedderKind::Minilm => Some(
            MiniLmEmbedder::load_with(&ctx.embedder.minilm_dir, ctx.embedder.minilm_runtime)
                .map_err(|e| eyre!("{e}"))?,
        ),
        _ => None,
    };
    // MiniLM is built as itself, for its token counts and runtime.
    let other;
    let embedder: &dyn Embedder = match &minilm {
        Some(m) => m,
        None => {
            other = embed::build(&ctx.embedder).map_err(|e| eyre!("{e}"))?;
            other.as_ref()
        }
    };
    embedder.embed(QUERY).map_err(|e| eyre!("{e}"))?;
    let mut times = Vec::with_capacity(queries);
    for _ in 0..queries {
        let t = Instant::now();
        embedder.embed(QUERY).map_err(|e| eyre!("{e}"))?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let texts = batch_texts(batch);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let t = Instant::now();
    embedder.embed_batch(&refs).map_err(|e| eyre!("{e}"))?;
    let seconds = t.elapsed().as_secs_f64().max(f64::EPSILON);
    let rate = batch as f64 / seconds;
    let query_ms = percentiles(times);

    let tokens = |text: &str| minilm.as_ref().and_then(|m| m.token_count(text).ok());
    let batch_tokens: Option<Vec<usize>> = refs.iter().map(|t| tokens(t)).collect();
    let batch_tokens_mean = batch_tokens
        .as_ref()
        .filter(|t| !t.is_empty())
        .map(|t| t.iter().sum::<usize>() as f64 / t.len() as f64);
    let onnx = minilm
        .as_ref()
        .is_some_and(|m| m.runtime() == MiniLmRuntime::Onnx);
    let machine = if onnx {
        eprintln!("bench embed: measuring the machine's fp32 and int8 GEMM rates");
        Some(embed::peak::measure(&ctx.embedder.minilm_dir).map_err(|e| eyre!("{e}"))?)
    } else {
        None
    };
    let batch_share_of_int8_peak = match (&machine, &batch_tokens) {
        (Some(peak), Some(tokens)) => {
            let ops: f64 = tokens.iter().map(|&t| forward_ops(t as f64)).sum();
            Some(ops / seconds / (peak.int8_gops * 1e9))
        }
        _ => None,
    };
    let meets = embedder.kind() != EmbedderKind::Hash
        && query_ms.p95 <= TARGET_QUERY_P95_MS
        && rate >= TARGET_TEXTS_PER_S;
    print_json(
        &serde_json::json!({ "bench": "embed", "results": [EmbedBench {
            embedder: embedder.label(),
            query_tokens: tokens(QUERY),
            query_ms,
            batch_texts: batch,
            batch_tokens_mean,
            batch_seconds: seconds,
            batch_texts_per_s: rate,
            target_query_p95_ms: TARGET_QUERY_P95_MS,
            target_batch_texts_per_s: TARGET_TEXTS_PER_S,
            meets_targets: meets,
            machine,
            batch_share_of_int8_peak,
        }]}),
    )?;
    Ok(ExitCode::SUCCESS)
}
