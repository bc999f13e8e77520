use std::process::ExitCode;

use color_eyre::eyre::{Result, bail};

use crate::cli::args::CodeArgs;
use crate::cli::context::Context;
use crate::cli::output::{print_json, safe};
use strata::model::AsOf;

pub fn run(ctx: &Context, args: &CodeArgs) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let units = if let Some(service) = &args.service {
        store.code_units_of_service(service)?
    } else if let Some(r) = &args.embedding_ref {
        match store.code_unit(r)? {
            Some(u) => vec![u],
            None => bail!("no code unit has embedding_ref {r:?}"),
        }
    } else if let Some(fp) = &args.episode {
        if store.episode(fp)?.is_none() {
            bail!("no episode with fingerprint {fp:?}");
        }
        let as_of = AsOf {
            valid_at: args.valid_at.unwrap_or(ctx.now),
            known_at: args.known_at.unwrap_or(ctx.now),
        };
        store.episode_code_units(fp, &as_of)?
    } else {
        bail!("pass --service NAME, --ref UUID or --episode FP");
    };
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
