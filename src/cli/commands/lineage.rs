use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::args::LineageArgs;
use crate::cli::context::Context;
use crate::cli::output::{print_json, safe};
use strata::query::{LineageLink, lineage};

pub fn run(ctx: &Context, args: &LineageArgs) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let known_at = args.known_at.unwrap_or(ctx.now);
    let chain = lineage(store.as_ref(), &args.fingerprint, known_at)?;
    if args.out.json {
        print_json(&chain)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}: lineage as known at {known_at}", safe(&chain.episode));
    println!("superseded (backwards):");
    print_links(&chain.backwards);
    println!("superseded by (forwards):");
    print_links(&chain.forwards);
    Ok(ExitCode::SUCCESS)
}

fn print_links(links: &[LineageLink]) {
    if links.is_empty() {
        println!("  (none)");
    }
    for l in links {
        println!(
            "  {}{} superseded {}: closed {}|{} at {} (recorded {})",
            "  ".repeat(l.depth.saturating_sub(1)),
            safe(&l.episode),
            safe(&l.prior),
            safe(&l.entity_type),
            safe(&l.entity_ref),
            l.closed_at,
            l.recorded_at
        );
        if let Some(r) = &l.review {
            println!(
                "  {}  {} by {} at {}: {}",
                "  ".repeat(l.depth.saturating_sub(1)),
                r.verdict.as_str(),
                safe(&r.by),
                r.recorded_at,
                safe(&r.reason)
            );
        }
    }
}
