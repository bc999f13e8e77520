use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::context::Context;
use crate::cli::output::print_json;
use strata::recall::RecallMode;
use strata::telemetry::{Readiness, WarmSignal};

#[derive(serde::Serialize)]
struct StatsJson {
    #[serde(flatten)]
    stats: strata::store::StoreStats,
    store_id: Option<String>,
    generation: u64,
    recall: RecallJson,
}

/// The recall mode, the warm signal and every recall counter.
#[derive(serde::Serialize)]
struct RecallJson {
    mode: strata::recall::RecallMode,
    warm: strata::telemetry::WarmSignal,
    counters: strata::telemetry::Snapshot,
}

pub fn run(ctx: &Context, json: bool) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let s = store.stats()?;
    let identity = store.identity()?;
    let generation = store.generation()?;
    let (counters, warm) = ctx.recall_counters()?;
    if json {
        print_json(&StatsJson {
            stats: s,
            store_id: identity,
            generation,
            recall: RecallJson {
                mode: ctx.recall_mode,
                warm,
                counters,
            },
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
        println!("recall mode:        {}", ctx.recall_mode);
        let by_mode = |m| counters.mode(m).map_or(0, |c| c.recalls);
        println!(
            "recalls recorded:   {} ({} active, {} shadow)",
            counters.recalls(),
            by_mode(RecallMode::Active),
            by_mode(RecallMode::Shadow)
        );
        println!(
            "warm signal:        {}",
            match warm.ratio {
                Some(_) => format!(
                    "{} of the last {} recalls ({}) found an incident known before they were asked",
                    warm.warm,
                    warm.recalls,
                    warm.short()
                ),
                None => format!("no recalls in the window of {} yet", warm.window),
            }
        );
        println!("                    {}", readiness(&warm));
        super::warm::print_legs(&counters);
    }
    Ok(ExitCode::SUCCESS)
}

/// The verdict in a few words; `strata warm` says it whole.
fn readiness(warm: &WarmSignal) -> &'static str {
    match warm.readiness {
        Readiness::NoRecalls | Readiness::TooFew => {
            "too few recalls to judge (strata warm says more)"
        }
        Readiness::Cold => "not ready to go active (strata warm says more)",
        Readiness::Ready => "ready to go active once strata eval --gate passes (strata warm)",
    }
}
