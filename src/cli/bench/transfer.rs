//! `strata bench transfer`: a synthetic store exported to a file, the file restored into an
//! empty embedded store (without building the recall indexes: embedding is not timed), and
//! the store backed up, each by a real `strata` process whose peak memory is measured.

use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::Result;
use serde::Serialize;

use super::rss::{ChildRun, fill_in_child, run_child};
use super::scratch_dir;
use crate::cli::context::Context;
use crate::cli::output::print_json;
use strata::store::embedded::STORE_DIR;
use strata::transfer::backup::{MANIFEST, Manifest};

/// Issue 36's targets.
const TARGET_EXPORT_PER_S: f64 = 100_000.0;
const TARGET_RESTORE_PER_S: f64 = 40_000.0;
const TARGET_BACKUP_MB_PER_S: f64 = 500.0;
const TARGET_PEAK_RSS_BYTES: u64 = 500 << 20;

#[derive(Serialize)]
struct Step {
    seconds: f64,
    /// Episodes a second (export, restore) or MB (10^6 bytes) a second (backup).
    rate: f64,
    unit: &'static str,
    target_rate: f64,
    /// The kernel's high-water mark: heap and the store's mapped file pages together.
    peak_rss_bytes: u64,
    /// Sampled every 20 ms: the process's own memory ...
    peak_anon_bytes: u64,
    /// ... and the store's pages mapped into it, which the kernel may drop at will.
    peak_file_mapped_bytes: u64,
    meets_target: bool,
}

impl Step {
    fn new(run: &ChildRun, amount: f64, unit: &'static str, target_rate: f64) -> Step {
        let rate = amount / run.seconds.max(1e-9);
        Step {
            seconds: run.seconds,
            rate,
            unit,
            target_rate,
            peak_rss_bytes: run.peak_rss_bytes,
            peak_anon_bytes: run.peak_anon_bytes,
            peak_file_mapped_bytes: run.peak_file_mapped_bytes,
            meets_target: rate >= target_rate && run.peak_rss_bytes <= TARGET_PEAK_RSS_BYTES,
        }
    }
}

#[derive(Serialize)]
struct TransferBench {
    episodes: usize,
    store_bytes: u64,
    export_file_bytes: u64,
    backup_bytes: u64,
    export: Step,
    restore: Step,
    backup: Step,
    target_peak_rss_bytes: u64,
    meets_targets: bool,
}

pub fn run(ctx: &Context, episodes: &[usize], dir: Option<&Path>) -> Result<ExitCode> {
    let mut results = Vec::new();
    for &n in episodes {
        let tmp = scratch_dir(dir)?;
        results.push(bench_transfer(ctx, tmp.path(), n)?);
    }
    print_json(&serde_json::json!({ "bench": "transfer", "results": results }))?;
    Ok(ExitCode::SUCCESS)
}

fn bench_transfer(ctx: &Context, dir: &Path, n: usize) -> Result<TransferBench> {
    let (source, file) = (dir.join("source"), dir.join("export.ndjson"));
    let (restored, backup) = (dir.join("restored"), dir.join("backup"));
    eprintln!("bench transfer: filling a store with {n} episodes");
    fill_in_child(ctx, &source, n)?;
    let store_bytes = std::fs::metadata(source.join(STORE_DIR).join("data.mdb"))?.len();

    eprintln!("bench transfer: strata export");
    let path = file.to_string_lossy().into_owned();
    let export = run_child(ctx, &source, &["export", "--to", &path])?;
    let export_file_bytes = std::fs::metadata(&file)?.len();

    eprintln!("bench transfer: strata restore --no-index into an empty store");
    let restore = run_child(ctx, &restored, &["restore", "--no-index", &path])?;
    std::fs::remove_dir_all(&restored)?;
    std::fs::remove_file(&file)?;

    eprintln!("bench transfer: strata backup");
    let dest = backup.to_string_lossy().into_owned();
    let backed_up = run_child(ctx, &source, &["backup", &dest])?;
    let manifest: Manifest = serde_json::from_slice(&std::fs::read(backup.join(MANIFEST))?)?;

    let export = Step::new(&export, n as f64, "episodes/s", TARGET_EXPORT_PER_S);
    let restore = Step::new(&restore, n as f64, "episodes/s", TARGET_RESTORE_PER_S);
    let backup = Step::new(
        &backed_up,
        manifest.bytes as f64 / 1e6,
        "MB/s",
        TARGET_BACKUP_MB_PER_S,
    );
    Ok(TransferBench {
        episodes: n,
        store_bytes,
        export_file_bytes,
        backup_bytes: manifest.bytes,
        meets_targets: export.meets_target && restore.meets_target && backup.meets_target,
        export,
        restore,
        backup,
        target_peak_rss_bytes: TARGET_PEAK_RSS_BYTES,
    })
}
