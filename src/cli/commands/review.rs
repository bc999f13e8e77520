use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::args::ReviewArgs;
use crate::cli::context::Context;
use crate::cli::output::{excerpt, print_json, safe};

pub fn run(ctx: &Context, args: &ReviewArgs) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let known_at = args.known_at.unwrap_or(ctx.now);
    let rows = strata::query::review(store.as_ref(), known_at, args.unreviewed)?;
    if args.out.json {
        print_json(&rows)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("{} supersessions as known at {known_at}", rows.len());
    for r in &rows {
        println!(
            "{} superseded {} about {}|{} (closed {}, recorded {}) · {} · {} {} {:.2}",
            safe(&r.episode),
            safe(&r.prior),
            safe(&r.entity_type),
            safe(&r.entity_ref),
            r.closed_at,
            r.recorded_at,
            r.verdict,
            safe(&r.source),
            safe(&r.status),
            r.confidence_score
        );
        println!("  new:   {}", excerpt(&r.episode_summary, 100));
        println!("  prior: {}", excerpt(&r.prior_summary, 100));
        if let Some(review) = &r.review {
            println!(
                "  {} by {} at {}: {}",
                review.verdict.as_str(),
                safe(&review.by),
                review.recorded_at,
                excerpt(&review.reason, 100)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
