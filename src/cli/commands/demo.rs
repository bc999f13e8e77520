use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::context::Context;
use crate::cli::output::{print_json, say};

pub fn run(ctx: &Context, json: bool) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let report = strata::demo::seed(store.as_ref())?;
    let stack = ctx.open_recall(store);
    say!(
        "recall indexes: {} texts, {} vectors added ({})",
        stack.sync.text_indexed,
        stack.sync.vectors_embedded,
        stack.engine.embedder_label()
    );
    if json {
        print_json(&report)?;
    } else {
        println!(
            "demo memory: {} incidents ({} new, {} already present), {} entities, {} facts, {} supersessions added",
            report.records,
            report.new_episodes,
            report.unchanged_episodes,
            report.new_entities,
            report.new_facts,
            report.new_supersessions
        );
    }
    Ok(ExitCode::SUCCESS)
}
