//! `strata bench …`: the benchmarks, one file each, every one printing JSON. What they
//! measure and the figures are in docs/benchmarks.md.

mod big_file;
mod concurrent;
mod embed;
mod explorer;
mod live;
mod mcp;
mod recall;
mod rss;
mod server;
mod vectors;

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use color_eyre::eyre::Result;
use serde::Serialize;

use crate::cli::args::BenchCommand;
use crate::cli::context::Context;
use crate::cli::output::print_json;
use strata::ingest;
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

pub fn run(ctx: &Context, command: &BenchCommand) -> Result<ExitCode> {
    match command {
        BenchCommand::Store {
            episodes,
            batch,
            dir,
        } => run_store(ctx, episodes, *batch, dir.as_deref()),
        BenchCommand::Fill { episodes } => {
            fill(ctx, &EmbeddedStore::open(&ctx.data_dir)?, *episodes, 10_000)?;
            Ok(ExitCode::SUCCESS)
        }
        BenchCommand::Recall {
            episodes,
            queries,
            legs,
            dir,
        } => recall::run(ctx, episodes, *queries, *legs, dir.as_deref()),
        BenchCommand::Explorer {
            episodes,
            frames,
            size,
            dir,
        } => explorer::run(ctx, episodes, *frames, *size, dir.as_deref()),
        BenchCommand::Live {
            episodes,
            writes,
            dir,
        } => live::run(ctx, episodes, *writes, dir.as_deref()),
        BenchCommand::Server {
            episodes,
            queries,
            batch,
            dir,
        } => server::run(ctx, episodes, *queries, *batch, dir.as_deref()),
        BenchCommand::Concurrent {
            episodes,
            writes,
            reader_interval_ms,
            dir,
        } => concurrent::run(
            ctx,
            episodes,
            *writes,
            Duration::from_millis(*reader_interval_ms),
            dir.as_deref(),
        ),
        BenchCommand::Mcp {
            episodes,
            queries,
            dir,
        } => mcp::run(ctx, *episodes, *queries, dir.as_deref()),
        BenchCommand::BigFile { mib, dir } => big_file::run(ctx, *mib, dir.as_deref()),
        BenchCommand::Embed { queries, batch } => embed::run(ctx, *queries, *batch),
    }
}

fn run_store(
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

pub fn scratch_dir(dir: Option<&Path>) -> Result<tempfile::TempDir> {
    Ok(tempfile::Builder::new()
        .prefix("strata-bench")
        .tempdir_in(dir.map_or_else(std::env::temp_dir, Path::to_path_buf))?)
}

/// Time spent writing synthetic records through the real ingest path.
pub struct Filled {
    pub validate_seconds: f64,
    pub write_seconds: f64,
    /// The write of each batch.
    pub batch_write_ms: Vec<f64>,
}

/// Writes synthetic records `0..n` through the real ingest path in batches, timing
/// validation and the write of each batch apart; generating the text is not timed.
pub fn fill(ctx: &Context, store: &dyn MemoryStore, n: usize, batch: usize) -> Result<Filled> {
    let mut filled = Filled {
        validate_seconds: 0.0,
        write_seconds: 0.0,
        batch_write_ms: Vec::new(),
    };
    let mut start = 0;
    while start < n {
        let end = (start + batch).min(n);
        let mut text = String::new();
        for i in start..end {
            text.push_str(&serde_json::to_string(&strata::synthetic::record(i))?);
            text.push('\n');
        }
        let t0 = Instant::now();
        let prepared = ingest::prepare_text("bench", &text, ctx.now)?;
        let t1 = Instant::now();
        ingest::write(store, &prepared.batch)?;
        let write = t1.elapsed().as_secs_f64();
        filled.validate_seconds += (t1 - t0).as_secs_f64();
        filled.write_seconds += write;
        filled.batch_write_ms.push(write * 1e3);
        start = end;
        eprintln!("  {end}/{n} written ({:.0} ms)", write * 1e3);
    }
    Ok(filled)
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
