use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::args::FactsArgs;
use crate::cli::context::Context;
use crate::cli::output::{excerpt, opt_time, print_json, safe};
use strata::model::AsOf;
use strata::query::facts_as_of;

pub fn run(ctx: &Context, args: &FactsArgs) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let as_of = AsOf {
        valid_at: args.valid_at.unwrap_or(ctx.now),
        known_at: args.known_at.unwrap_or(ctx.now),
    };
    let report = facts_as_of(store.as_ref(), &args.fingerprint, as_of)?;
    if args.out.json {
        print_json(&report)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}: facts valid at {}, as known at {}",
        safe(&report.episode),
        report.valid_at,
        report.known_at
    );
    println!(
        "{:<11}  {:<36}  {:<16}  {:<16}  {:<16}  {:<13}  SUPERSEDED BY",
        "RELATION", "ENTITY", "VALID FROM", "VALID UNTIL", "KNOWN FROM", "STATE"
    );
    for f in &report.facts {
        println!(
            "{:<11}  {:<36}  {:<16}  {:<16}  {:<16}  {:<13}  {}",
            f.relation,
            excerpt(&format!("{}|{}", f.entity_type, f.entity_ref), 36),
            f.t_valid.short(),
            opt_time(f.t_invalid),
            f.ingested_at.short(),
            f.state.as_str(),
            f.superseded_by.as_deref().map(safe).unwrap_or_default()
        );
    }
    if report.facts.is_empty() {
        println!("(no facts known at {})", report.known_at);
    }
    Ok(ExitCode::SUCCESS)
}
