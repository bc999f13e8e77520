//! `strata bench …`: the benchmarks, one file each, every one printing JSON. What they
//! measure and the figures are in docs/benchmarks.md.

mod big_file;
mod concurrent;
mod embed;
mod explorer;
mod live;
mod mcp;
mod mcp_load;
mod recall;
mod rss;
mod server;
mod store;
mod transfer;
mod vectors;

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use color_eyre::eyre::Result;

use crate::cli::args::BenchCommand;
use crate::cli::context::Context;
use strata::ingest;
use strata::store::MemoryStore;
use strata::store::embedded::EmbeddedStore;

pub fn run(ctx: &Context, command: &BenchCommand) -> Result<ExitCode> {
    match command {
        BenchCommand::Store {
            episodes,
            batch,
            dir,
        } => store::run(ctx, episodes, *batch, dir.as_deref()),
        BenchCommand::Fill { episodes } => {
            fill(ctx, &EmbeddedStore::open(&ctx.data_dir)?, *episodes, 10_000)?;
            Ok(ExitCode::SUCCESS)
        }
        BenchCommand::Recall {
            episodes,
            queries,
            legs,
            corrected,
            dir,
        } => match &ctx.store {
            // On a graph server the same recalls run over FalkorDB and the embedded store side
            // by side: the server bench, with the graph's vector index left out.
            strata::store::StoreLocation::FalkorDb(_) => {
                if *legs != strata::recall::LegSet::ALL || corrected.is_some() {
                    color_eyre::eyre::bail!(
                        "bench recall --store falkordb://…: --legs and --corrected are for the \
                         embedded store; on FalkorDB every leg runs, beside the embedded store"
                    );
                }
                server::run(ctx, episodes, *queries, 10_000, dir.as_deref(), false)
            }
            strata::store::StoreLocation::Embedded(_) => {
                recall::run(ctx, episodes, *queries, *legs, *corrected, dir.as_deref())
            }
        },
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
            no_graph_vectors,
        } => server::run(
            ctx,
            episodes,
            *queries,
            *batch,
            dir.as_deref(),
            !*no_graph_vectors,
        ),
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
            http: true,
            clients,
            seconds,
            halfway,
            dir,
            ..
        } => mcp_load::run(
            ctx,
            *episodes,
            clients.unwrap_or(1),
            *seconds,
            halfway.as_deref(),
            dir.as_deref(),
        ),
        BenchCommand::Mcp {
            episodes,
            queries,
            dir,
            ..
        } => mcp::run(ctx, *episodes, *queries, dir.as_deref()),
        BenchCommand::BigFile { mib, dir } => big_file::run(ctx, *mib, dir.as_deref()),
        BenchCommand::Embed { queries, batch } => embed::run(ctx, *queries, *batch),
        BenchCommand::Transfer { episodes, dir } => transfer::run(ctx, episodes, dir.as_deref()),
    }
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
