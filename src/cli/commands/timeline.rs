use std::process::ExitCode;

use crate::cli::args::TimelineArgs;
use crate::cli::context::Context;
use crate::cli::output::{excerpt, print_json, safe};
use color_eyre::eyre::Result;
use strata::model::MemoryEpisode;
use strata::query::TimelinePage;
use strata::store::TimelineQuery;

pub fn run(ctx: &Context, args: &TimelineArgs) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let episodes = store.timeline(&TimelineQuery {
        entity: args.entity.clone(),
        known_at: args.known_at,
        offset: args.offset,
        limit: args.limit,
    })?;
    let page = TimelinePage::of(episodes, args.known_at.unwrap_or(ctx.now));
    if args.out.json {
        print_json(&page)?;
    } else {
        print_table(&page.episodes);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn print_table(episodes: &[MemoryEpisode]) {
    let fp_width = episodes
        .iter()
        .map(|e| safe(&e.incident_fingerprint).chars().count())
        .max()
        .unwrap_or(11)
        .max(11);
    println!("{:<16}  {:<fp_width$}  SUMMARY", "CONCLUDED", "FINGERPRINT");
    for e in episodes {
        println!(
            "{:<16}  {:<fp_width$}  {}",
            e.concluded_at.short(),
            safe(&e.incident_fingerprint),
            excerpt(&e.summary_nl, 90)
        );
    }
    if episodes.is_empty() {
        println!("(no episodes)");
    }
}
