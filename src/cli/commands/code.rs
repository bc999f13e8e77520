use std::process::ExitCode;

use color_eyre::eyre::{Result, bail};

use crate::cli::args::CodeArgs;
use crate::cli::context::Context;
use crate::cli::output::{print_json, safe};
use strata::model::AsOf;
use strata::query::{CodeQuery, code_units};

pub fn run(ctx: &Context, args: &CodeArgs) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let query = if let Some(service) = &args.service {
        CodeQuery::Service(service.clone())
    } else if let Some(r) = &args.embedding_ref {
        CodeQuery::EmbeddingRef(r.clone())
    } else if let Some(fp) = &args.episode {
        let as_of = AsOf {
            valid_at: args.valid_at.unwrap_or(ctx.now),
            known_at: args.known_at.unwrap_or(ctx.now),
        };
        CodeQuery::Episode(fp.clone(), as_of)
    } else {
        bail!("pass --service NAME, --ref UUID or --episode FP");
    };
    let units = code_units(store.as_ref(), &query)?;
    if args.json {
        print_json(&units)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<36}  {:<20}  {:<28}  PATH",
        "EMBEDDING_REF", "SERVICE", "REPO"
    );
    for u in &units {
        println!(
            "{:<36}  {:<20}  {:<28}  {}",
            u.embedding_ref,
            safe(&u.service),
            safe(&u.repo),
            safe(&u.path)
        );
    }
    if units.is_empty() {
        println!("(no code units)");
    }
    Ok(ExitCode::SUCCESS)
}
