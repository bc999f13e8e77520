//! Builds the explorer over the context's store and recall stack; the I/O happens later,
//! on the explorer's worker.

use std::sync::Arc;
use std::time::Duration;

use color_eyre::eyre::{Result, eyre};
use ratatui::layout::Rect;

use super::context::Context;
use strata::embed;
use strata::explorer::worker::{HistoryFile, OpenError};
use strata::explorer::{
    Explorer, Keymap, Options, RecallOpener, StoreOpener, Theme, Worker, WorkerOptions,
};
use strata::recall::{RecallStack, StackOptions};
use strata::store::StoreLocation;

pub struct Launch {
    /// Seed the demo memory into an empty store, and say so.
    pub seed_demo: bool,
    pub mask_volatile: bool,
    pub record_events: bool,
    pub leg_timeout: Option<Duration>,
    /// Look for other processes' writes on a timer (the terminal); headless mode looks only
    /// at `WaitIdle`.
    pub follow: bool,
}

/// How often the explorer looks at the store's generation: one small read on the embedded
/// store, a round trip on a server.
pub(crate) fn follow_every(store: &StoreLocation) -> Duration {
    match store {
        StoreLocation::Embedded(_) => Duration::from_millis(250),
        StoreLocation::FalkorDb(_) => Duration::from_secs(1),
    }
}

pub fn build_app(ctx: &Context, launch: &Launch, size: Rect) -> Result<Explorer> {
    let keymap = Keymap::with_overrides(&ctx.config.keymap).map_err(|e| eyre!("config: {e}"))?;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let theme = Theme::load(&ctx.config.theme, no_color).map_err(|e| eyre!("config: {e}"))?;
    let location = ctx.store.clone();
    let seed_demo = launch.seed_demo;
    let open_store: StoreOpener = Box::new(move || {
        let store = location
            .open_lazily_on(tokio::runtime::Handle::try_current().ok())
            .map_err(|e| Box::new(e) as OpenError)?;
        let mut notices = Vec::new();
        if store.read_only() {
            notices.push(
                "the data directory is on a read-only filesystem: browsing only, nothing can be written"
                    .to_string(),
            );
        }
        if let Some(warning) = store.durability_warning() {
            notices.push(warning);
        }
        match store.stats() {
            Ok(stats) if seed_demo && stats.episodes == 0 && !store.read_only() => {
                let report =
                    strata::demo::seed(store.as_ref()).map_err(|e| Box::new(e) as OpenError)?;
                notices.push(format!(
                    "the store was empty: seeded the demo memory ({} incidents, {} supersessions)",
                    report.new_episodes, report.new_supersessions
                ));
            }
            Ok(_) => {}
            // A server that is down: open anyway; calls reconnect when it is back.
            Err(e) => notices.push(format!("{e}; retrying on every call")),
        }
        Ok((store, notices))
    });
    let vectors = ctx.vectors.clone();
    let embedder = ctx.embedder.clone();
    let index_dir = ctx.index_dir();
    let timeout = launch
        .leg_timeout
        .or(ctx.config.recall.timeout_ms.map(Duration::from_millis));
    let leg_limit = ctx.config.recall.leg_limit;
    let weights = ctx.config.recall.weights;
    let recall_mode = ctx.recall_mode;
    // In a terminal, vectors far behind the store (a first launch) are embedded in the
    // background while BM25 and graph answer; headless runs wait, so their frames are the
    // same on every run.
    let warm_in_background = launch.follow;
    let open_recall: RecallOpener = Box::new(move |store, progress| {
        let built = embed::build(&embedder).map(Arc::from);
        let mut stack = RecallStack::open(
            store.clone(),
            built,
            &StackOptions {
                index_dir,
                sync: !warm_in_background,
                vectors,
                // The worker's own runtime: openers run on its blocking threads.
                runtime: tokio::runtime::Handle::try_current().ok(),
            },
            progress,
        );
        if warm_in_background {
            let problems = stack.open_warming(store.as_ref(), progress);
            stack.notices.extend(problems);
        }
        stack.warm_legs();
        if let Some(t) = timeout {
            stack.engine.timeout = t;
        }
        if let Some(n) = leg_limit {
            stack.engine.leg_limit = n;
        }
        if let Some(w) = weights {
            stack.engine.weights = w;
        }
        // The explorer shows results in either mode and counts none of its recalls: they are
        // a person's, not the agent's.
        stack.engine.mode = recall_mode;
        stack
    });
    let worker = Worker::start_with(
        open_store,
        open_recall,
        WorkerOptions {
            follow_every: launch.follow.then(|| follow_every(&ctx.store)),
            history: Some(HistoryFile::new(ctx.store.query_history(&ctx.data_dir))),
            counters: Some(ctx.counter_reader()),
        },
    )?;
    Ok(Explorer::new(
        Options {
            now: ctx.now,
            theme,
            keymap,
            mask_volatile: launch.mask_volatile,
            record_events: launch.record_events,
            recall_k: 10,
            live_clock: ctx.now_is_live(),
            recall_mode: ctx.recall_mode,
            reviewer: ctx.reviewer(),
            write_at: ctx.knowledge_time().map_err(|e| e.to_string()),
        },
        worker,
        size,
    ))
}
