use std::process::ExitCode;

use color_eyre::eyre::Result;

use crate::cli::context::Context;
use crate::cli::output::print_json;
use strata::telemetry::{Lane, Snapshot, WarmSignal};

#[derive(serde::Serialize)]
struct WarmJson<'a> {
    mode: strata::recall::RecallMode,
    warm: &'a WarmSignal,
    verdict: String,
    counters: &'a Snapshot,
}

/// `strata warm`: whether the memory looks ready to go active, in words.
pub fn run(ctx: &Context, json: bool) -> Result<ExitCode> {
    let (counters, warm) = ctx.recall_counters()?;
    if json {
        print_json(&WarmJson {
            mode: ctx.recall_mode,
            warm: &warm,
            verdict: warm.verdict(),
            counters: &counters,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("recall mode: {}", ctx.recall_mode);
    println!("{}", warm.verdict());
    print_legs(&counters);
    Ok(ExitCode::SUCCESS)
}

/// Each leg's record since the counters began, both modes together: how often it found
/// something, timed out or failed, and its mean latency.
pub fn print_legs(counters: &Snapshot) {
    if counters.recalls() == 0 {
        return;
    }
    println!(
        "{:<9} {:>8} {:>10} {:>9} {:>9} {:>8}",
        "LEG", "QUERIES", "WITH HITS", "TIMEOUTS", "FAILURES", "MEAN ms"
    );
    for lane in Lane::ALL {
        let (mut queries, mut with_hits, mut timeouts, mut failures, mut seconds) =
            (0, 0, 0, 0, 0.0);
        for m in &counters.modes {
            if let Some(l) = m.lane(lane) {
                queries += l.queries;
                with_hits += l.with_hits;
                timeouts += l.timeouts;
                failures += l.failures;
                seconds += l.latency.sum_seconds;
            }
        }
        let share = if queries > 0 {
            format!("{:.0}%", with_hits as f64 * 100.0 / queries as f64)
        } else {
            "-".into()
        };
        let mean = if queries > 0 {
            format!("{:.1}", seconds * 1e3 / queries as f64)
        } else {
            "-".into()
        };
        println!(
            "{:<9} {queries:>8} {share:>10} {timeouts:>9} {failures:>9} {mean:>8}",
            lane.as_str()
        );
    }
}
