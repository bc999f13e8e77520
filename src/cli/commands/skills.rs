use std::process::ExitCode;

use color_eyre::eyre::{Result, WrapErr};

use crate::cli::args::{SkillCommand, SkillsArgs};
use crate::cli::context::Context;
use crate::cli::output::{opt_time, print_json, safe};
use strata::learning::skill::listed;

pub fn add(ctx: &Context, command: &SkillCommand) -> Result<ExitCode> {
    let SkillCommand::Add { file, out } = command;
    let text = std::fs::read_to_string(file)
        .wrap_err_with(|| format!("cannot read {}", file.display()))?;
    let drafts = strata::ingest::prepare_skills(&file.display().to_string(), &text)?;
    let store = ctx.open_store()?;
    let written = store.add_skills(&drafts, ctx.knowledge_time()?)?;
    if out.json {
        print_json(&serde_json::json!({"skills": drafts.len(), "new_versions": written}))?;
    } else {
        println!(
            "{}: {} skills, {written} new versions ({} unchanged)",
            file.display(),
            drafts.len(),
            drafts.len() - written
        );
    }
    Ok(ExitCode::SUCCESS)
}

pub fn list(ctx: &Context, args: &SkillsArgs) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let known_at = args.known_at.unwrap_or(ctx.now);
    let shown = listed(store.skills()?, known_at, args.all, args.entity.as_ref());
    if args.out.json {
        print_json(&shown)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<28}  {:>3}  {:>7}  {:>9}  {:<16}  {:<16}  TRIGGERS",
        "NAME", "VER", "APPLIED", "SUCCEEDED", "LAST USED", "RECORDED"
    );
    for s in &shown {
        println!(
            "{:<28}  {:>3}  {:>7}  {:>9}  {:<16}  {:<16}  {}",
            safe(&s.name),
            s.version,
            s.applied,
            s.succeeded,
            opt_time(s.last_used),
            s.recorded_at.short(),
            safe(
                &s.trigger_entities
                    .iter()
                    .map(|e| format!("{}:{}", e.entity_type, e.entity_ref))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
        for (i, step) in s.steps.iter().enumerate() {
            println!("      {}. {}", i + 1, safe(step));
        }
    }
    if shown.is_empty() {
        println!("(no skills)");
    }
    Ok(ExitCode::SUCCESS)
}
