use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::context::Context;
use crate::cli::output::print_json;

pub fn run(ctx: &Context, json: bool) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let report = store.check()?;
    if json {
        print_json(&report)?;
    } else {
        println!(
            "checked {} episodes, {} facts, {} supersessions: {}",
            report.checked_episodes,
            report.checked_facts,
            report.checked_supersessions,
            if report.is_consistent() {
                "consistent"
            } else {
                "PROBLEMS FOUND"
            }
        );
        for p in &report.problems {
            println!("  {p}");
        }
    }
    Ok(if report.is_consistent() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
