use std::process::ExitCode;
use std::sync::Arc;

use color_eyre::eyre::Result;

use crate::cli::args::RecallArgs;
use crate::cli::context::Context;
use crate::cli::output::{excerpt, print_json, safe};
use strata::model::AsOf;
use strata::recall::{Leg, LegStatus, RecallMode, RecallRequest, RecallResponse};
use strata::store::MemoryStore;

pub fn run(ctx: &Context, args: &RecallArgs) -> Result<ExitCode> {
    let store: Arc<dyn MemoryStore> = ctx.open_store()?;
    let mut stack = ctx.open_recall(store);
    if let Some(ms) = args.timeout_ms {
        stack.engine.timeout = std::time::Duration::from_millis(ms);
    }
    if let Some(n) = args.leg_limit {
        stack.engine.leg_limit = n;
    }
    if let Some(w) = args.weights {
        stack.engine.weights = w;
    }
    stack.engine.recorder = ctx.recorder();
    let request = RecallRequest {
        exclude: Vec::new(),
        text: args.text.clone(),
        entities: args.entities.clone(),
        as_of: AsOf {
            valid_at: args.valid_at.unwrap_or(ctx.now),
            known_at: args.known_at.unwrap_or(ctx.now),
        },
        k: args.k,
        legs: args.legs,
        fusion: args.fusion,
        stale: args.stale.unwrap_or(stack.engine.stale),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()?;
    let response = runtime
        .block_on(stack.engine.recall(&request))
        .handed_out(stack.engine.mode);
    // A leg that timed out may still be blocked in I/O: do not wait for it.
    runtime.shutdown_background();
    // The count is written before the process ends.
    if let Some(recorder) = &stack.engine.recorder {
        recorder.close();
    }
    if args.out.json {
        print_json(&response)?;
    } else if args.brief {
        for line in response.brief.lines() {
            println!("{}", safe(line));
        }
    } else {
        print_table(&response);
    }
    Ok(ExitCode::SUCCESS)
}

fn rank(r: Option<strata::recall::fusion::LegRank>) -> String {
    r.map_or_else(|| "-".to_string(), |r| r.rank.to_string())
}

pub fn print_table(r: &RecallResponse) {
    println!(
        "recall {:?} · valid at {} · known at {} · fusion {} · k {}",
        safe(&r.query),
        r.valid_at,
        r.known_at,
        r.fusion.as_str(),
        r.k
    );
    println!(
        "each leg adds weight/(60 + rank) for each result it ranks (rank 0-based){}",
        match r.fusion {
            strata::recall::FusionPolicy::Rrf | strata::recall::FusionPolicy::Seed =>
                "; every weight is 1 under this policy",
            strata::recall::FusionPolicy::Weighted => "; weights as configured",
            strata::recall::FusionPolicy::Adaptive =>
                "; weights as configured times each leg's confidence, 0 below the floor",
        }
    );
    println!("embedder: {}", r.embedder);
    for leg in Leg::ALL {
        let l = r.legs.get(leg);
        let mut line = format!("  {:<8} {:<8}", leg.as_str(), l.status.as_str());
        if l.status != LegStatus::Disabled {
            line.push_str(&format!(" {:>3} hits {:>8.1} ms", l.hits, l.latency_ms));
        }
        if let Some(e) = l.embed_ms {
            line.push_str(&format!(" (query embedding {e:.1} ms)"));
        }
        if l.status.answered() {
            line.push_str(&format!(" · weight {:.3}", l.weight));
        }
        if let Some(c) = &l.confidence {
            line.push_str(&format!(
                " · confidence {:.2} ({})",
                c.value,
                safe(&c.describe())
            ));
        }
        if let Some(e) = &l.error {
            line.push_str(&format!("  {}", safe(e)));
        }
        if let (Leg::Graph, Some(n)) = (leg, &l.note) {
            line.push_str(&format!("  {}", excerpt(n, 80)));
        }
        println!("{line}");
    }
    if r.mode == RecallMode::Active {
        println!(
            "{:>3}  {:<12} {:>4} {:>4} {:>4} {:>5}  {:>8}  {:<12}  {:<16}  SUMMARY",
            "POS", "FINGERPRINT", "LEGS", "SEM", "BM25", "GRAPH", "RRF", "DECIDED BY", "CONCLUDED"
        );
    }
    for x in &r.results {
        println!(
            "{:>3}  {:<12} {:>4} {:>4} {:>4} {:>5}  {:>8.6}  {:<12}  {:<16}  {}",
            x.position,
            excerpt(&x.fingerprint, 12),
            x.legs_hit,
            rank(x.per_leg.semantic),
            rank(x.per_leg.bm25),
            rank(x.per_leg.graph),
            x.rrf_score,
            x.decided_by.map_or("-", |k| k.as_str()),
            x.concluded_at.short(),
            excerpt(&x.summary, 60)
        );
        if let Some(prior) = &x.follows {
            println!("     ↳ the current successor of {}", safe(prior));
        }
        if let Some(s) = x.superseded_by.as_ref().and_then(|s| s.first()) {
            let mut line = format!(
                "     ▽ its {} fix was superseded {} by {}",
                s.entity,
                s.t_invalid.date(),
                s.episode
            );
            if let Some(now) = &x.current_successor {
                line.push_str(&format!(
                    " · holds now: {} ({})",
                    now.fingerprint,
                    now.resolved_by.join(", ")
                ));
            }
            println!("{}", safe(&line));
        }
    }
    if r.mode == RecallMode::Shadow {
        println!(
            "mode shadow: {} results withheld (recall is recorded, not handed out; see strata warm)",
            r.withheld
        );
    } else if r.results.is_empty() {
        println!("(no results)");
    }
    for s in &r.skills {
        println!(
            "skill {} v{} ({} steps, {}/{} succeeded): results {} share {}",
            safe(&s.name),
            s.version,
            s.steps,
            s.succeeded,
            s.applied,
            s.results
                .iter()
                .map(|p| format!("#{p}"))
                .collect::<Vec<_>>()
                .join(" "),
            safe(&s.shared.join(", "))
        );
    }
    println!("{:.1} ms", r.latency_ms);
}
