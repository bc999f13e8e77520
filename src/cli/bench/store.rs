//! `strata bench store`: ingest throughput, open time and bytes on disk of the embedded store.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use color_eyre::eyre::Result;
use serde::Serialize;

use super::{fill, scratch_dir};
use crate::cli::context::Context;
use crate::cli::output::print_json;
use strata::store::embedded::{EmbeddedStore, STORE_DIR};
use strata::store::{MemoryStore, TimelineQuery};

#[derive(Serialize)]
struct StoreBench {
    episodes: usize,
    batch_size: usize,
    ingest_seconds: f64,
    ingest_episodes_per_s: f64,
    validate_seconds: f64,
    write_seconds: f64,
    open_ms_median: f64,
    open_ms_max: f64,
    timeline_first_page_ms: f64,
    db_bytes: u64,
    bytes_per_episode: f64,
    tables: Vec<strata::store::embedded::TableSize>,
    target_ingest_episodes_per_s: f64,
    target_bytes_per_episode: f64,
    target_open_ms: f64,
    meets_targets: bool,
}

pub fn run(
    ctx: &Context,
    episodes: &[usize],
    batch: usize,
    dir: Option<&Path>,
) -> Result<ExitCode> {
    let mut results = Vec::new();
    for &n in episodes {
        let tmp = scratch_dir(dir)?;
        eprintln!("bench store: {n} episodes in batches of {batch}");
        results.push(bench_store(ctx, tmp.path(), n, batch.max(1))?);
    }
    print_json(&serde_json::json!({ "bench": "store", "results": results }))?;
    Ok(ExitCode::SUCCESS)
}

/// Issue 17's targets for the embedded store (synthetic episodes, excluding embedding).
const TARGET_INGEST_PER_S: f64 = 20_000.0;
const TARGET_BYTES_PER_EPISODE: f64 = 1_500.0;

fn bench_store(ctx: &Context, dir: &Path, n: usize, batch: usize) -> Result<StoreBench> {
    let filled = fill(ctx, &EmbeddedStore::open(dir)?, n, batch)?;
    let (validate, write) = (filled.validate_seconds, filled.write_seconds);
    let mut opens = Vec::new();
    let mut first_page = 0.0;
    for _ in 0..5 {
        let t0 = Instant::now();
        let store = EmbeddedStore::open(dir)?;
        opens.push(t0.elapsed().as_secs_f64() * 1e3);
        let t1 = Instant::now();
        store.timeline(&TimelineQuery {
            limit: 50,
            ..TimelineQuery::default()
        })?;
        first_page = t1.elapsed().as_secs_f64() * 1e3;
    }
    opens.sort_by(f64::total_cmp);
    let ingest_seconds = validate + write;
    let rate = n as f64 / ingest_seconds.max(f64::EPSILON);
    let open_max = opens.last().copied().unwrap_or(0.0);
    let db_bytes = std::fs::metadata(dir.join(STORE_DIR).join("data.mdb"))?.len();
    let bytes_per_episode = db_bytes as f64 / n.max(1) as f64;
    Ok(StoreBench {
        episodes: n,
        batch_size: batch,
        ingest_seconds,
        ingest_episodes_per_s: rate,
        validate_seconds: validate,
        write_seconds: write,
        open_ms_median: opens[opens.len() / 2],
        open_ms_max: open_max,
        timeline_first_page_ms: first_page,
        db_bytes,
        bytes_per_episode,
        tables: EmbeddedStore::open(dir)?.table_sizes()?,
        target_ingest_episodes_per_s: TARGET_INGEST_PER_S,
        target_bytes_per_episode: TARGET_BYTES_PER_EPISODE,
        target_open_ms: 1000.0,
        meets_targets: rate >= TARGET_INGEST_PER_S
            && bytes_per_episode <= TARGET_BYTES_PER_EPISODE
            && open_max <= 1000.0,
    })
}
