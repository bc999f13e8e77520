use std::process::ExitCode;

use color_eyre::eyre::Result;
use serde::Serialize;

use crate::cli::args::IngestArgs;
use crate::cli::context::Context;
use crate::cli::output::{print_json, say};
use strata::ingest::{self, IngestFailure};
use strata::store::ApplyReport;

#[derive(Serialize)]
struct FileReport {
    file: String,
    duplicates_in_file: usize,
    #[serde(flatten)]
    applied: ApplyReport,
}

/// Each file is validated whole, then written as one transaction; a bad file writes nothing
/// and the files after it are not attempted.
pub fn run(ctx: &Context, args: &IngestArgs) -> Result<ExitCode> {
    let now = ctx.knowledge_time()?;
    let store = ctx.open_store()?;
    let mut reports = Vec::new();
    let total = args.files.len();
    for (n, path) in args.files.iter().enumerate() {
        let name = path.display().to_string();
        say!("[{}/{total}] {name}: validating", n + 1);
        let limits = &ctx.config.ingest;
        let valid = |records: usize| {
            say!(
                "[{}/{total}] {name}: {records} records valid, writing",
                n + 1
            );
        };
        // A regular file is streamed (read twice); a pipe can be read only once, so it is
        // read whole as before.
        let result = if std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            ingest::check_file(path, limits).and_then(|checked| {
                valid(checked.episodes());
                ingest::write_file(store.as_ref(), path, &checked, now, limits)
                    .map(|r| (r, checked.duplicates))
            })
        } else {
            ingest::prepare_file_within(path, now, limits).and_then(|prepared| {
                valid(prepared.batch.items.len());
                ingest::write(store.as_ref(), &prepared.batch).map(|r| (r, prepared.duplicates))
            })
        };
        match result {
            Ok((applied, duplicates)) => {
                say!(
                    "[{}/{total}] {name}: committed: {} new, {} unchanged",
                    n + 1,
                    applied.new_episodes,
                    applied.unchanged_episodes
                );
                tracing::info!(file = %name, new = applied.new_episodes, "ingested");
                reports.push(FileReport {
                    file: name,
                    duplicates_in_file: duplicates,
                    applied,
                });
            }
            Err(IngestFailure::Invalid(errors)) => {
                for e in &errors {
                    say!("{e}");
                }
                say!(
                    "{name}: rejected ({} error{}); nothing from this file was written",
                    errors.len(),
                    if errors.len() == 1 { "" } else { "s" }
                );
                return Ok(ExitCode::FAILURE);
            }
            Err(other) => return Err(other.into()),
        }
    }
    if !args.no_index && reports.iter().any(|r| r.applied.new_episodes > 0) {
        let stack = ctx.open_recall(store);
        say!(
            "recall indexes: {} texts, {} vectors added",
            stack.sync.text_indexed,
            stack.sync.vectors_embedded
        );
    }
    if args.out.json {
        print_json(&reports)?;
    } else {
        for r in &reports {
            let a = &r.applied;
            println!(
                "{}: {} records, {} new, {} unchanged, {} new entities, {} new facts, {} facts closed, {} supersessions",
                r.file,
                a.records + r.duplicates_in_file,
                a.new_episodes,
                a.unchanged_episodes,
                a.new_entities,
                a.new_facts,
                a.closed_facts,
                a.new_supersessions
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
