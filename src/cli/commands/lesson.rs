use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::args::FactsArgs;
use crate::cli::context::Context;
use crate::cli::output::{opt_time, print_json, safe};
use strata::model::AsOf;
use strata::query::lesson_as_of;

pub fn run(ctx: &Context, args: &FactsArgs) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let as_of = AsOf {
        valid_at: args.valid_at.unwrap_or(ctx.now),
        known_at: args.known_at.unwrap_or(ctx.now),
    };
    let view = lesson_as_of(store.as_ref(), &args.fingerprint, as_of)?;
    if args.out.json {
        print_json(&view)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", safe(&view.lesson.text));
    println!("rests on: {}", safe(&view.lesson.cites.join(", ")));
    match &view.superseded_by {
        Some(by) => println!(
            "state: {} by {} (valid until {}, recorded {})",
            view.state.as_str(),
            safe(by),
            opt_time(view.superseded_at),
            opt_time(view.superseded_known_at)
        ),
        None => println!("state: {}", view.state.as_str()),
    }
    Ok(ExitCode::SUCCESS)
}
