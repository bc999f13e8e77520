//! `strata bench explorer`: how fast the explorer draws and how soon it shows memory.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, eyre};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use serde::Serialize;

use super::recall::TARGET_PEAK_RSS_BYTES;
use super::recall::{Percentiles, percentiles};
use super::rss::{fill_in_child, peak_bytes, reset_peak, run_child};
use super::scratch_dir;
use crate::cli::context::Context;
use crate::cli::output::print_json;
use strata::embed::HashEmbedder;
use strata::explorer::action::Action;
use strata::explorer::pane::Pane;
use strata::explorer::{App, Explorer, Keymap, Options, RecallOpener, StoreOpener, Theme, Worker};
use strata::recall::{RecallStack, StackOptions};
use strata::store::MemoryStore;
use strata::store::embedded::EmbeddedStore;

#[derive(Serialize)]
struct ExplorerBench {
    episodes: usize,
    width: u16,
    height: u16,
    /// From starting the explorer to its first frame (drawn before any I/O answers).
    first_frame_ms: f64,
    /// From starting the explorer to the first frame showing the timeline and the
    /// selected episode's facts.
    first_content_ms: f64,
    frames: usize,
    frame_render_ms: Percentiles,
    /// Jumping to the oldest episode: until its page has arrived and is drawn.
    jump_to_oldest_ms: f64,
    /// Of that: until the oldest page arrived, and until the oldest episode's detail did.
    jump_page_ms: f64,
    jump_detail_ms: f64,
    /// This process's peak resident set: the explorer's own, with its recall stack open on
    /// indexes a child process built (another child filled the store).
    peak_rss_bytes: Option<u64>,
    target_peak_rss_bytes: u64,
    target_frame_p95_ms: f64,
    target_first_frame_ms: f64,
    target_jump_to_oldest_ms: f64,
    meets_targets: bool,
}

pub fn run(
    ctx: &Context,
    sizes: &[usize],
    frames: usize,
    (width, height): (u16, u16),
    dir: Option<&Path>,
) -> Result<ExitCode> {
    let mut results = Vec::new();
    for &n in sizes {
        let tmp = scratch_dir(dir)?;
        eprintln!("bench explorer: {n} episodes");
        fill_in_child(ctx, tmp.path(), n)?;
        eprintln!("  indexing (strata index)");
        run_child(ctx, tmp.path(), &["index"])?;
        reset_peak()?;
        results.push(bench(ctx, tmp.path(), n, frames, width, height)?);
    }
    print_json(&serde_json::json!({ "bench": "explorer", "results": results }))?;
    Ok(ExitCode::SUCCESS)
}

/// Applies replies until `done` holds or the deadline passes.
fn settle(explorer: &mut Explorer, done: impl Fn(&App) -> bool) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done(explorer.app()) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(eyre!("the explorer did not settle within 120 s"));
        }
        explorer.wait(left.min(Duration::from_millis(10)));
    }
    Ok(())
}

fn bench(
    ctx: &Context,
    dir: &Path,
    n: usize,
    frames: usize,
    width: u16,
    height: u16,
) -> Result<ExplorerBench> {
    let data = dir.to_path_buf();
    let index_dir = dir.join("index");
    let start = Instant::now();
    let open_store: StoreOpener = Box::new(move || {
        let store = EmbeddedStore::open(&data)
            .map_err(|e| Box::new(e) as strata::explorer::worker::OpenError)?;
        Ok((Arc::new(store) as Arc<dyn MemoryStore>, Vec::new()))
    });
    // Recall as the explorer opens it on a memory whose indexes another process built: all
    // three legs, the vectors loaded, the hub links read ahead, in the worker's background.
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
    let worker = Worker::start(open_store, open_recall)?;
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
        Rect::new(0, 0, width, height),
    );
    let mut terminal = Terminal::new(TestBackend::new(width, height))?;
    terminal.draw(|f| app.render(f))?;
    let first_frame_ms = start.elapsed().as_secs_f64() * 1e3;
    settle(&mut app, |a| a.shared.selection.detail.is_some())?;
    terminal.draw(|f| app.render(f))?;
    let first_content_ms = start.elapsed().as_secs_f64() * 1e3;
    settle(&mut app, App::is_idle)?;
    app.dispatch(Action::RecallSeed);
    settle(&mut app, App::is_idle)?;

    let script = [
        Action::Focus(Pane::Timeline),
        Action::Down,
        Action::Down,
        Action::PageDown,
        Action::Focus(Pane::Facts),
        Action::Down,
        Action::Focus(Pane::Recall),
        Action::Down,
        Action::Focus(Pane::Lineage),
        Action::Focus(Pane::Timeline),
        Action::Down,
    ];
    let mut times = Vec::with_capacity(frames);
    for i in 0..frames {
        app.dispatch(script[i % script.len()].clone());
        app.drain();
        let t0 = Instant::now();
        terminal.draw(|f| app.render(f))?;
        times.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    settle(&mut app, App::is_idle)?;

    app.dispatch(Action::Focus(Pane::Timeline));
    let t0 = Instant::now();
    app.dispatch(Action::Bottom);
    let last = n.saturating_sub(1);
    settle(&mut app, |a| a.panes.timeline.row(last).is_some())?;
    let jump_page_ms = t0.elapsed().as_secs_f64() * 1e3;
    settle(&mut app, |a| a.shared.selection.detail.is_some())?;
    let jump_detail_ms = t0.elapsed().as_secs_f64() * 1e3;
    settle(&mut app, |a| {
        a.panes.timeline.row(last).is_some() && a.shared.selection.detail.is_some() && a.is_idle()
    })?;
    terminal.draw(|f| app.render(f))?;
    let jump_to_oldest_ms = t0.elapsed().as_secs_f64() * 1e3;

    let frame_render_ms = percentiles(times);
    let peak_rss_bytes = peak_bytes();
    let meets_targets = frame_render_ms.p95 <= 4.0
        && (n > 10_000 || first_content_ms <= 300.0)
        && jump_to_oldest_ms <= 50.0
        && peak_rss_bytes.is_some_and(|b| b <= TARGET_PEAK_RSS_BYTES);
    Ok(ExplorerBench {
        episodes: n,
        width,
        height,
        first_frame_ms,
        first_content_ms,
        frames,
        frame_render_ms,
        jump_to_oldest_ms,
        jump_page_ms,
        jump_detail_ms,
        peak_rss_bytes,
        target_peak_rss_bytes: TARGET_PEAK_RSS_BYTES,
        target_frame_p95_ms: 4.0,
        target_first_frame_ms: 300.0,
        target_jump_to_oldest_ms: 50.0,
        meets_targets,
    })
}
