//! A writer and readers on one embedded store at once: a `strata ingest` process writes
//! while this process runs the explorer's reads and recalls, and a watcher polls the store's
//! generation as the live explorer does. Each is measured alone first.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, eyre};
use serde::Serialize;

use super::recall::{Percentiles, QUERIES, percentiles};
use super::{fill, scratch_dir};
use crate::cli::context::{Context, progress_printer};
use crate::cli::output::print_json;
use strata::embed::{Embedder, HashEmbedder};
use strata::model::{AsOf, EntityKey};
use strata::recall::{FusionPolicy, LegSet, RecallRequest, RecallStack, StackOptions};
use strata::store::embedded::EmbeddedStore;
use strata::store::{MemoryStore, TimelineQuery};

/// How often the live explorer asks the embedded store whether anything changed.
const POLL: Duration = Duration::from_millis(250);
const FILE_RECORDS: usize = 1000;
/// One writer run is over in well under a second: a handful of reader rounds. Several
/// give the percentiles something to stand on.
const TRIALS: usize = 5;

#[derive(Serialize)]
struct ConcurrentBench {
    episodes: usize,
    writes: usize,
    /// Alternating solo and concurrent writer runs, summed.
    trials: usize,
    writer_alone_episodes_per_s: f64,
    writer_with_readers_episodes_per_s: f64,
    writer_ratio: f64,
    reader_alone_ms: Percentiles,
    reader_with_writer_ms: Percentiles,
    reader_p95_ratio: f64,
    reader_rounds_with_writer: usize,
    reader_interval_ms: u64,
    reader_alone_leg_p95_ms: BTreeMap<&'static str, f64>,
    reader_with_writer_leg_p95_ms: BTreeMap<&'static str, f64>,
    commit_to_visible_ms: Percentiles,
    poll_interval_ms: u64,
    targets: Targets,
    meets_targets: bool,
}

#[derive(Serialize)]
struct Targets {
    writer_ratio_min: f64,
    reader_p95_ratio_max: f64,
    commit_to_visible_p95_ms_max: f64,
}

pub fn run(
    ctx: &Context,
    sizes: &[usize],
    writes: usize,
    reader_interval: Duration,
    dir: Option<&Path>,
) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()?;
    let mut results = Vec::new();
    for &n in sizes {
        let tmp = scratch_dir(dir)?;
        let data = tmp.path().join("data");
        eprintln!(
            "bench concurrent: {n} episodes, then {TRIALS} trials of {writes} written alone and {writes} beside the readers"
        );
        let store = Arc::new(EmbeddedStore::open(&data)?);
        fill(ctx, store.as_ref(), n, 10_000)?;
        let mut progress = progress_printer("  indexing");
        let mut stack = RecallStack::open(
            store.clone(),
            Ok(Arc::new(HashEmbedder::default()) as Arc<dyn Embedder>),
            &StackOptions {
                index_dir: data.join("index"),
                sync: true,
                vectors: Default::default(),
                runtime: None,
            },
            &mut progress,
        );
        stack.warm_legs();
        let reader = Reader {
            ctx,
            runtime: &runtime,
            store: store.as_ref(),
            stack: &stack,
            interval: reader_interval,
        };
        catch_up(&stack, store.as_ref());
        let reader_alone = reader.rounds(200, None)?;
        let mut alone_seconds = 0.0;
        let mut with_seconds = 0.0;
        let mut reader_with = ReaderRun::default();
        let mut visible = Vec::new();
        let mut next = n;
        for trial in 1..=TRIALS {
            let alone_files = write_files(tmp.path(), "alone", next, writes)?;
            let with_files = write_files(tmp.path(), "with", next + writes, writes)?;
            next += 2 * writes;
            eprintln!("  trial {trial}/{TRIALS}: writer alone");
            alone_seconds += run_writer(ctx.now, &data, &alone_files)?.seconds;
            // What a live explorer would have done meanwhile: catch up on the solo writes,
            // so the trial measures the writer beside the readers, not that backlog.
            catch_up(&stack, store.as_ref());
            eprintln!("  trial {trial}/{TRIALS}: writer with readers and a live watcher");
            let busy = AtomicBool::new(true);
            let (with, seen, run) = std::thread::scope(|scope| -> Result<_> {
                let watcher = scope.spawn(|| watch(store.as_ref(), &stack, &busy));
                let writer = {
                    let ctx_now = ctx.now;
                    let data = data.clone();
                    std::thread::spawn(move || run_writer(ctx_now, &data, &with_files))
                };
                let run = reader.rounds(usize::MAX, Some(&writer));
                let with = writer
                    .join()
                    .map_err(|_| eyre!("the writer thread panicked"))?;
                busy.store(false, Ordering::Release);
                let seen = watcher
                    .join()
                    .map_err(|_| eyre!("the watcher thread panicked"))?;
                Ok((with?, seen, run?))
            })?;
            reader_with.extend(run);
            with_seconds += with.seconds;
            for (generation, committed) in with.commits.iter().enumerate() {
                let wanted = with.first_generation + generation as u64 + 1;
                if let Some((_, at)) = seen
                    .iter()
                    .find(|(g, at)| *g >= wanted && *at >= *committed)
                {
                    visible.push(at.duration_since(*committed).as_secs_f64() * 1e3);
                }
            }
        }
        let total = (TRIALS * writes) as f64;
        let (alone_rate, with_rate) = (total / alone_seconds, total / with_seconds);
        let rounds = reader_with.times.len();
        let visible = percentiles(visible);
        let targets = Targets {
            writer_ratio_min: 0.8,
            reader_p95_ratio_max: 2.0,
            commit_to_visible_p95_ms_max: 1000.0,
        };
        let writer_ratio = with_rate / alone_rate;
        let alone_legs = reader_alone.legs_p95();
        let with_legs = reader_with.legs_p95();
        let reader_alone = percentiles(reader_alone.times);
        let reader_with = percentiles(reader_with.times);
        let reader_ratio = reader_with.p95 / reader_alone.p95.max(f64::EPSILON);
        let meets = writer_ratio >= targets.writer_ratio_min
            && reader_ratio <= targets.reader_p95_ratio_max
            && visible.p95 <= targets.commit_to_visible_p95_ms_max;
        results.push(ConcurrentBench {
            episodes: n,
            writes,
            trials: TRIALS,
            writer_alone_episodes_per_s: alone_rate,
            writer_with_readers_episodes_per_s: with_rate,
            writer_ratio,
            reader_alone_ms: reader_alone,
            reader_with_writer_ms: reader_with,
            reader_p95_ratio: reader_ratio,
            reader_rounds_with_writer: rounds,
            reader_interval_ms: reader_interval.as_millis() as u64,
            reader_alone_leg_p95_ms: alone_legs,
            reader_with_writer_leg_p95_ms: with_legs,
            commit_to_visible_ms: visible,
            poll_interval_ms: POLL.as_millis() as u64,
            targets,
            meets_targets: meets,
        });
    }
    print_json(&serde_json::json!({ "bench": "concurrent", "results": results }))?;
    Ok(ExitCode::SUCCESS)
}

/// What a live explorer does when the store moves; what stopped a part of it is said.
fn catch_up(stack: &RecallStack, store: &dyn MemoryStore) {
    for problem in stack.catch_up(store, &mut |_, _| {}).1 {
        eprintln!("  {problem}");
    }
}

/// `writes` synthetic records from `first` on, in files of [`FILE_RECORDS`] (one batch each).
fn write_files(dir: &Path, name: &str, first: usize, writes: usize) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut start = first;
    while start < first + writes {
        let end = (start + FILE_RECORDS).min(first + writes);
        let path = dir.join(format!("{name}-{start}.ndjson"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path)?);
        for i in start..end {
            serde_json::to_writer(&mut f, &strata::synthetic::record(i))?;
            f.write_all(b"\n")?;
        }
        f.flush()?;
        files.push(path);
        start = end;
    }
    Ok(files)
}

struct WriterRun {
    seconds: f64,
    /// When each file's commit was reported, in order.
    commits: Vec<Instant>,
    first_generation: u64,
}

/// Runs `strata ingest` over the files in a child process, noting when each commit lands.
fn run_writer(now: strata::model::Timestamp, data: &Path, files: &[PathBuf]) -> Result<WriterRun> {
    let first_generation = EmbeddedStore::open(data)?.generation()?;
    let started = Instant::now();
    let mut child = Command::new(std::env::current_exe()?)
        .arg("--data")
        .arg(data)
        .args(["--now", &now.to_rfc3339(), "ingest", "--no-index"])
        .args(files)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| eyre!("no stderr from the writer"))?;
    let mut commits = Vec::new();
    for line in BufReader::new(stderr).lines() {
        if line?.contains(": committed: ") {
            commits.push(Instant::now());
        }
    }
    let status = child.wait()?;
    if !status.success() {
        return Err(eyre!("the writer failed: {status}"));
    }
    Ok(WriterRun {
        seconds: started.elapsed().as_secs_f64(),
        commits,
        first_generation,
    })
}

/// What the live explorer does: poll the generation and, on a change, read the newest page
/// (the change is visible then) and bring the recall indexes up to it in the background, as
/// its follow task does.
fn watch(store: &EmbeddedStore, stack: &RecallStack, busy: &AtomicBool) -> Vec<(u64, Instant)> {
    let mut seen = Vec::new();
    let mut last = store.generation().unwrap_or(0);
    while busy.load(Ordering::Acquire) {
        std::thread::sleep(POLL);
        let Ok(generation) = store.generation() else {
            continue;
        };
        if generation != last {
            let page = store.timeline(&TimelineQuery {
                limit: 200,
                ..TimelineQuery::default()
            });
            if page.is_ok() {
                seen.push((generation, Instant::now()));
                last = generation;
                catch_up(stack, store);
            }
        }
    }
    seen
}

/// The explorer's reads and recalls, timed per round.
#[derive(Default)]
struct ReaderRun {
    times: Vec<f64>,
    legs: BTreeMap<&'static str, Vec<f64>>,
}

impl ReaderRun {
    fn extend(&mut self, other: ReaderRun) {
        self.times.extend(other.times);
        for (leg, ms) in other.legs {
            self.legs.entry(leg).or_default().extend(ms);
        }
    }

    fn legs_p95(&self) -> BTreeMap<&'static str, f64> {
        self.legs
            .iter()
            .map(|(leg, ms)| (*leg, percentiles(ms.clone()).p95))
            .collect()
    }
}

struct Reader<'a> {
    ctx: &'a Context,
    runtime: &'a tokio::runtime::Runtime,
    store: &'a dyn MemoryStore,
    stack: &'a RecallStack,
    interval: Duration,
}

impl Reader<'_> {
    /// The explorer's reads for one selection (timeline page, the episode's facts, lineage
    /// and lesson) and one recall, timed together; `rounds` of them, or until `writer`
    /// finishes, each starting at most every `interval`.
    fn rounds(
        &self,
        rounds: usize,
        writer: Option<&std::thread::JoinHandle<Result<WriterRun>>>,
    ) -> Result<ReaderRun> {
        let mut run = ReaderRun::default();
        for round in 0..rounds {
            if writer.is_some_and(|w| w.is_finished()) {
                break;
            }
            let (text, entity) = QUERIES[round % QUERIES.len()];
            let t0 = Instant::now();
            let page = self.store.timeline(&TimelineQuery {
                offset: (round * 37) % 5000,
                limit: 200,
                ..TimelineQuery::default()
            })?;
            if let Some(e) = page.first() {
                let fp = &e.incident_fingerprint;
                self.store.facts(fp)?;
                self.store.supersedes(fp)?;
                self.store.superseded_by(fp)?;
                self.store.lesson(fp)?;
            }
            let request = RecallRequest {
                exclude: Vec::new(),
                text: text.to_string(),
                entities: vec![entity.parse::<EntityKey>()?],
                as_of: AsOf::now(self.ctx.now),
                k: 10,
                legs: LegSet::ALL,
                fusion: FusionPolicy::default(),
                stale: Default::default(),
            };
            let response = self.runtime.block_on(self.stack.engine.recall(&request));
            run.times.push(t0.elapsed().as_secs_f64() * 1e3);
            for (leg, report) in [
                ("semantic", &response.legs.semantic),
                ("bm25", &response.legs.bm25),
                ("graph", &response.legs.graph),
            ] {
                run.legs.entry(leg).or_default().push(report.latency_ms);
            }
            std::thread::sleep(self.interval.saturating_sub(t0.elapsed()));
        }
        Ok(run)
    }
}
