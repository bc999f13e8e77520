//! One big NDJSON file of synthetic incidents (each carrying a long resolution, as real
//! postmortems do) ingested by a real `strata ingest --no-index` process into an empty
//! embedded store: how long it takes and the process's peak RSS against the file's size.

use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use color_eyre::eyre::{Result, eyre};
use serde::Serialize;

use super::rss::{ResidentSampler, wait_with_peak_rss};
use super::scratch_dir;
use crate::cli::context::Context;
use crate::cli::output::print_json;

/// Words added to each resolution: about 2 KB per record in all.
const RESOLUTION_WORDS: usize = 220;

#[derive(Serialize)]
struct BigFileBench {
    file_bytes: u64,
    records: usize,
    write_file_seconds: f64,
    ingest_seconds: f64,
    ingest_records_per_s: f64,
    /// The kernel's high-water mark: heap and the store's mapped file pages together.
    peak_rss_bytes: u64,
    /// Sampled every 20 ms: the process's own memory (heap, stacks) ...
    peak_anon_bytes: u64,
    /// ... and the store's file pages mapped into it, which the kernel may drop at will.
    peak_file_mapped_bytes: u64,
    peak_rss_per_file_byte: f64,
    store_bytes: u64,
    target_peak_rss_bytes: u64,
    meets_targets: bool,
}

pub fn run(ctx: &Context, mib: u64, dir: Option<&Path>) -> Result<ExitCode> {
    let tmp = scratch_dir(dir)?;
    let file = tmp.path().join("big.ndjson");
    let data = tmp.path().join("data");
    let target = mib << 20;
    eprintln!("bench big-file: writing {mib} MiB of records");
    let started = Instant::now();
    let mut out = std::io::BufWriter::new(std::fs::File::create(&file)?);
    let (mut written, mut records, mut next_report) = (0u64, 0usize, 100u64 << 20);
    let filler: Vec<&str> = [
        "rolled",
        "back",
        "the",
        "config",
        "drained",
        "node",
        "restarted",
        "pool",
        "verified",
        "error",
        "rate",
        "returned",
        "to",
        "baseline",
        "after",
        "failover",
    ]
    .to_vec();
    while written < target {
        let mut record = strata::synthetic::record(records);
        let words: Vec<&str> = (0..RESOLUTION_WORDS)
            .map(|w| filler[(records * 31 + w * 7) % filler.len()])
            .collect();
        record["resolution_nl"] = format!(
            "{} {}",
            record["resolution_nl"].as_str().unwrap_or_default(),
            words.join(" ")
        )
        .into();
        let line = serde_json::to_vec(&record)?;
        out.write_all(&line)?;
        out.write_all(b"\n")?;
        written += line.len() as u64 + 1;
        records += 1;
        if written >= next_report {
            eprintln!("  {} MiB, {records} records", written >> 20);
            next_report += 100 << 20;
        }
    }
    out.flush()?;
    drop(out);
    let write_file_seconds = started.elapsed().as_secs_f64();

    eprintln!("bench big-file: strata ingest --no-index ({records} records)");
    let started = Instant::now();
    let child = Command::new(std::env::current_exe()?)
        .arg("--data")
        .arg(&data)
        .args(["--now", &ctx.now.to_rfc3339(), "ingest", "--no-index"])
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()?;
    let pid = child.id();
    let sampler = ResidentSampler::start(pid);
    let (status, peak_rss_bytes) = wait_with_peak_rss(pid)?;
    let (peak_anon_bytes, peak_file_bytes) = sampler.stop();
    let ingest_seconds = started.elapsed().as_secs_f64();
    if status != 0 {
        return Err(eyre!("the ingest failed (wait status {status})"));
    }
    let store_bytes = dir_bytes(&data);
    let target_peak_rss_bytes = 1 << 30;
    print_json(&serde_json::json!({
        "bench": "big_file",
        "results": [BigFileBench {
            file_bytes: written,
            records,
            write_file_seconds,
            ingest_seconds,
            ingest_records_per_s: records as f64 / ingest_seconds.max(1e-9),
            peak_rss_bytes,
            peak_anon_bytes,
            peak_file_mapped_bytes: peak_file_bytes,
            peak_rss_per_file_byte: peak_rss_bytes as f64 / written.max(1) as f64,
            store_bytes,
            target_peak_rss_bytes,
            meets_targets: peak_rss_bytes <= target_peak_rss_bytes,
        }],
    }))?;
    Ok(ExitCode::SUCCESS)
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match entry.metadata() {
                Ok(m) if m.is_dir() => stack.push(entry.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}
