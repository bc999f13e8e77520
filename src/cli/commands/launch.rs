use std::process::ExitCode;

use color_eyre::eyre::Result;

use super::timeline::print_table;
use crate::cli::context::Context;
use strata::store::{MemoryStore, TimelineQuery};

/// Until the explorer lands: seed the demo memory into an empty store, then show the timeline.
pub fn run(ctx: &Context) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    if store.stats()?.episodes == 0 {
        eprintln!(
            "The store at {} is empty: seeding the demo memory (about 300 incidents over two years)…",
            ctx.data_dir.display()
        );
        let report = strata::demo::seed(&store)?;
        eprintln!(
            "Seeded {} incidents, {} entities, {} supersessions.",
            report.new_episodes, report.new_entities, report.new_supersessions
        );
    }
    let stats = store.stats()?;
    println!(
        "{}: {} episodes, {} entities, {} supersessions",
        store.describe(),
        stats.episodes,
        stats.entities,
        stats.supersedes
    );
    print_table(&store.timeline(&TimelineQuery {
        limit: 20,
        ..TimelineQuery::default()
    })?);
    println!();
    println!(
        "Next: strata recall \"login loop after the session secret rotated\", strata facts FP, strata lineage FP, strata --help"
    );
    Ok(ExitCode::SUCCESS)
}
