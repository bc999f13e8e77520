use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::args::ImportCommand;
use crate::cli::context::Context;
use crate::cli::output::{print_json, safe, say};
use strata::import::postmortems;

pub fn run(ctx: &Context, command: &ImportCommand) -> Result<ExitCode> {
    let ImportCommand::Postmortems { dir, out } = command;
    let store = ctx.open_store()?;
    say!("importing postmortems from {}", dir.display());
    let report = postmortems::import_dir(store.as_ref(), dir, ctx.knowledge_time()?)?;
    if out.json {
        print_json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    let a = &report.applied;
    println!(
        "{} files, {} records: {} new, {} unchanged, {} skipped; {} new entities, {} new facts",
        report.files,
        report.records_seen,
        a.new_episodes,
        a.unchanged_episodes,
        report.skipped.len(),
        a.new_entities,
        a.new_facts
    );
    for s in &report.skipped {
        println!("skipped {} ({}): {}", safe(&s.id), s.file, safe(&s.reason));
    }
    Ok(ExitCode::SUCCESS)
}
