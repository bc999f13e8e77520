use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::context::Context;
use crate::cli::output::print_json;

pub fn run(ctx: &Context, json: bool) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let s = store.stats()?;
    if json {
        print_json(&s)?;
    } else {
        println!("store:              {}", store.describe());
        println!("episodes:           {}", s.episodes);
        println!("entities:           {}", s.entities);
        println!("MENTIONS edges:     {}", s.mentions);
        println!("RESOLVED_BY edges:  {}", s.resolved_by);
        println!("SUPERSEDES edges:   {}", s.supersedes);
        println!("invalidated edges:  {}", s.invalidated_edges);
    }
    Ok(ExitCode::SUCCESS)
}
