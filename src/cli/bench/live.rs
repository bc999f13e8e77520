//! `strata bench live`: how soon an open explorer shows what another process wrote, and how
//! soon its recall finds it. On the embedded store by default; with `--store falkordb://…` in a
//! scratch graph on that server, deleted afterwards.

use std::path::Path;
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, bail, eyre};
use ratatui::layout::Rect;
use serde::Serialize;

use super::recall::{Percentiles, percentiles};
use super::server::ScratchGraph;
use super::{fill, scratch_dir};
use crate::cli::context::Context;
use crate::cli::explorer::follow_every;
use crate::cli::output::print_json;
use strata::embed::HashEmbedder;
use strata::explorer::action::Action;
use strata::explorer::{
    App, Explorer, Keymap, Options, RecallOpener, StoreOpener, Theme, Worker, WorkerOptions,
};
use strata::model::Timestamp;
use strata::recall::{RecallStack, StackOptions};
use strata::store::{StoreLocation, TimelineQuery};

/// How soon a live explorer must show another process's write, on each backend.
fn target_ms(store: &StoreLocation) -> f64 {
    match store {
        StoreLocation::Embedded(_) => 1000.0,
        StoreLocation::FalkorDb(_) => 2000.0,
    }
}

#[derive(Serialize)]
struct LiveBench {
    backend: &'static str,
    episodes: usize,
    writes: usize,
    follow_every_ms: u128,
    /// From the writing process's exit (its batch committed) to the new row in the
    /// explorer's timeline.
    write_to_timeline_ms: Percentiles,
    /// From the same moment to a recall for the new episode's text that ranks it.
    write_to_recall_ms: Percentiles,
    target_ms: f64,
    meets_target: bool,
}

pub fn run(ctx: &Context, sizes: &[usize], writes: usize, dir: Option<&Path>) -> Result<ExitCode> {
    let mut results = Vec::new();
    for &n in sizes {
        let tmp = scratch_dir(dir)?;
        // Declared before the run, dropped after it: the scratch graph outlives every
        // connection to it.
        let (location, _scratch) = match &ctx.store {
            StoreLocation::Embedded(_) => (StoreLocation::Embedded(tmp.path().to_path_buf()), None),
            StoreLocation::FalkorDb(base) => {
                let scratch = ScratchGraph::create(base, n)?;
                (StoreLocation::FalkorDb(scratch.url.clone()), Some(scratch))
            }
        };
        eprintln!("bench live: {n} episodes, {writes} writes");
        fill(ctx, location.open()?.as_ref(), n, 10_000)?;
        results.push(bench(ctx, &location, tmp.path(), n, writes)?);
    }
    print_json(&serde_json::json!({ "bench": "live", "results": results }))?;
    Ok(ExitCode::SUCCESS)
}

/// Applies replies until `done` holds.
fn settle(explorer: &mut Explorer, done: impl Fn(&App) -> bool) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(300);
    while !done(explorer.app()) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(eyre!("the explorer did not settle within 300 s"));
        }
        explorer.wait(left.min(Duration::from_millis(10)));
    }
    Ok(())
}

fn bench(
    ctx: &Context,
    location: &StoreLocation,
    dir: &Path,
    n: usize,
    writes: usize,
) -> Result<LiveBench> {
    let follow = follow_every(location);
    let index_dir = location.index_dir(dir);
    let opened = location.clone();
    let open_store: StoreOpener = Box::new(move || {
        let store = opened
            .open()
            .map_err(|e| Box::new(e) as strata::explorer::worker::OpenError)?;
        Ok((store, Vec::new()))
    });
    let open_recall: RecallOpener = Box::new(move |store, progress| {
        let mut stack = RecallStack::open(
            store,
            Ok(Arc::new(HashEmbedder::default())),
            &StackOptions {
                index_dir,
                sync: true,
                vectors: Default::default(),
                runtime: None,
            },
            progress,
        );
        stack.warm_legs();
        stack
    });
    let worker = Worker::start_with(
        open_store,
        open_recall,
        WorkerOptions {
            follow_every: Some(follow),
            history: None,
            counters: None,
        },
    )?;
    let mut app = Explorer::new(
        Options {
            now: ctx.now,
            theme: Theme::default(),
            keymap: Keymap::defaults()?,
            mask_volatile: false,
            record_events: false,
            recall_k: 10,
            live_clock: false,
            recall_mode: Default::default(),
            reviewer: Some("reviewer".into()),
            write_at: Err("benchmarks write no corrections".into()),
        },
        worker,
        Rect::new(0, 0, 200, 60),
    );
    settle(&mut app, App::is_idle)?;
    let newest = location
        .open()?
        .timeline(&TimelineQuery {
            limit: 1,
            ..TimelineQuery::default()
        })?
        .first()
        .map_or(ctx.now, |e| e.concluded_at);
    let exe = std::env::current_exe()?;
    let mut to_timeline = Vec::with_capacity(writes);
    let mut to_recall = Vec::with_capacity(writes);
    for i in 0..writes {
        let fp = format!("BENCH-LIVE-{i}");
        let text = format!("bench live write {i} wombat{i} marmot{i}");
        let file = dir.join(format!("{fp}.ndjson"));
        std::fs::write(&file, record(&fp, &text, newest, i)?)?;
        let mut ingest = Command::new(&exe);
        ingest.env("STRATA_EMBEDDER", "hash").arg("--data").arg(dir);
        if let StoreLocation::FalkorDb(url) = location {
            // The password goes by the environment, never on a command line.
            ingest
                .arg("--store")
                .arg(url.without_password().to_string());
            if let Some(password) = &url.password {
                ingest.env(strata::store::falkordb::PASSWORD_ENV, password.expose());
            }
        }
        let status = ingest
            .arg("--now")
            .arg(ctx.now.to_rfc3339())
            .arg("ingest")
            .arg(&file)
            .arg("--no-index")
            .output()?;
        if !status.status.success() {
            bail!("ingest failed: {}", String::from_utf8_lossy(&status.stderr));
        }
        let written = Instant::now();
        settle(&mut app, |a| {
            a.panes.timeline.rows.iter().any(|r| r.fingerprint == fp)
        })?;
        to_timeline.push(written.elapsed().as_secs_f64() * 1e3);
        app.dispatch(Action::RecallQuery(text));
        settle(&mut app, |a| {
            !a.panes.recall.running
                && a.panes
                    .recall
                    .response
                    .as_ref()
                    .is_some_and(|r| r.results.iter().any(|x| x.fingerprint == fp))
        })?;
        to_recall.push(written.elapsed().as_secs_f64() * 1e3);
    }
    let write_to_timeline_ms = percentiles(to_timeline);
    let target_ms = target_ms(location);
    let meets_target = write_to_timeline_ms.max <= target_ms;
    Ok(LiveBench {
        backend: match location {
            StoreLocation::Embedded(_) => "embedded",
            StoreLocation::FalkorDb(_) => "falkordb",
        },
        episodes: n,
        writes,
        follow_every_ms: follow.as_millis(),
        write_to_timeline_ms,
        write_to_recall_ms: percentiles(to_recall),
        target_ms,
        meets_target,
    })
}

/// One episode concluded after every other, so it lands on the first timeline page.
fn record(fp: &str, text: &str, newest: Timestamp, i: usize) -> Result<String> {
    let at = newest.plus_millis((i as i64 + 1) * 60_000);
    Ok(serde_json::to_string(&serde_json::json!({
        "incident_fingerprint": fp,
        "summary_nl": text,
        "resolution_nl": "restarted it",
        "concluded_at": at.to_rfc3339(),
        "mentions": [{"entity_type": "service", "entity_ref": "bench-live"}],
    }))?)
}
