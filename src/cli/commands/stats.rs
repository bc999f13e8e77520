use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::context::Context;
use crate::cli::output::print_json;

#[derive(serde::Serialize)]
struct StatsJson {
    #[serde(flatten)]
    stats: strata::store::StoreStats,
    store_id: Option<String>,
    generation: u64,
}

pub fn run(ctx: &Context, json: bool) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let s = store.stats()?;
    let identity = store.identity()?;
    let generation = store.generation()?;
    if json {
        print_json(&StatsJson {
            stats: s,
            store_id: identity,
            generation,
        })?;
    } else {
        println!("store:              {}", store.describe());
        println!(
            "identity:           {}",
            identity
                .as_deref()
                .unwrap_or("none yet (nothing written through Strata)")
        );
        println!("generation:         {generation}");
        println!("episodes:           {}", s.episodes);
        println!("entities:           {}", s.entities);
        println!("MENTIONS edges:     {}", s.mentions);
        println!("RESOLVED_BY edges:  {}", s.resolved_by);
        println!("SUPERSEDES edges:   {}", s.supersedes);
        println!("invalidated edges:  {}", s.invalidated_edges);
    }
    Ok(ExitCode::SUCCESS)
}
