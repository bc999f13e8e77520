use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::args::ChangesArgs;
use crate::cli::context::Context;
use crate::cli::output::{excerpt, print_json, safe};

pub fn run(ctx: &Context, args: &ChangesArgs) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let until = args.until.unwrap_or(ctx.now);
    let changes = strata::query::changes(store.as_ref(), args.since, until)?;
    if args.out.json {
        print_json(&changes)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("{} changes from {} to {until}", changes.len(), args.since);
    for c in &changes {
        let who = match (&c.origin, &c.by, &c.source) {
            (Some(origin), Some(by), _) => format!("{} {}", origin.as_str(), safe(by)),
            (_, _, Some(source)) => format!("source {}", safe(source)),
            _ => String::new(),
        };
        println!("{} {:<20} {} ({who})", c.at, c.kind, safe(&c.target));
        if let Some(reason) = &c.reason {
            println!("  why: {}", excerpt(reason, 100));
        }
    }
    Ok(ExitCode::SUCCESS)
}
