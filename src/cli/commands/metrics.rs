use std::process::ExitCode;

use color_eyre::eyre::{Result, eyre};

use crate::cli::context::Context;
use strata::recall::{RecallStack, StackOptions};
use strata::telemetry::metrics::{self, Gauges, Scrape};

/// `strata metrics`: one scrape on stdout, for a node-exporter textfile collector. The
/// indexes are opened as they stand, not caught up: their lag is what is measured.
pub fn run(ctx: &Context) -> Result<ExitCode> {
    let (counters, warm) = ctx.recall_counters()?;
    let gauges = match ctx.open_store() {
        Ok(store) => {
            let stack = RecallStack::open(
                store.clone(),
                ctx.build_embedder(),
                &StackOptions {
                    index_dir: ctx.index_dir(),
                    sync: false,
                    vectors: ctx.vectors.clone(),
                    runtime: None,
                },
                &mut |_, _| {},
            );
            stack.gauges(store.as_ref())
        }
        Err(e) => {
            tracing::warn!(error = %e, "metrics without the store's gauges");
            Gauges::default()
        }
    };
    let text = metrics::render(Scrape {
        counters,
        warm,
        gauges,
    })
    .map_err(|e| eyre!("cannot encode the metrics: {e}"))?;
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}
