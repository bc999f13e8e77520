use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::args::{CorrectArgs, OriginArg};
use crate::cli::context::Context;
use crate::cli::output::{print_json, say};
use strata::correct::{CorrectionBatch, WriteOrigin};
use strata::store::StoreError;

/// The file is validated whole, then written as one transaction at the current knowledge
/// time; a bad line, or a correction the store refuses, writes nothing.
pub fn run(ctx: &Context, args: &CorrectArgs) -> Result<ExitCode> {
    let at = ctx.knowledge_time()?;
    let name = args.file.display().to_string();
    let items = match strata::correct::parse_file(&args.file) {
        Ok(items) => items,
        Err(errors) => {
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
    };
    let store = ctx.open_store()?;
    let batch = CorrectionBatch {
        items,
        at,
        origin: match args.origin {
            OriginArg::Human => WriteOrigin::Human,
            OriginArg::Agent => WriteOrigin::Agent,
            OriginArg::Import => WriteOrigin::Import,
        },
    };
    let report = match store.correct(&batch) {
        Ok(report) => report,
        Err(e @ StoreError::Rejected { .. }) => {
            say!("{e}");
            say!("{name}: rejected; nothing from this file was written");
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => return Err(e.into()),
    };
    if args.out.json {
        print_json(&report)?;
    } else {
        println!(
            "{name}: {} corrections recorded at {}: {} retracted, {} confirmed, {} episodes corrected, {} facts corrected, {} facts valid again, {} closed again",
            report.corrections,
            report
                .recorded_at
                .map(|t| t.to_string())
                .unwrap_or_default(),
            report.retracted,
            report.confirmed,
            report.episodes_corrected,
            report.facts_corrected,
            report.facts_reopened,
            report.facts_reclosed
        );
    }
    Ok(ExitCode::SUCCESS)
}
