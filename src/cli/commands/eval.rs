use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use color_eyre::eyre::{Result, WrapErr};

use crate::cli::args::EvalArgs;
use crate::cli::context::{Context, progress_printer};
use crate::cli::output::{excerpt, print_json, safe, say};
use strata::embed::{CachedEmbedder, Embedder};
use strata::eval::{self, DatasetReport, EvalReport, LabelledQuery};
use strata::import::postmortems::{self, LearnedAt};
use strata::ingest;
use strata::recall::{RecallStack, StackOptions};
use strata::store::MemoryStore;
use strata::store::embedded::EmbeddedStore;

const DEMO_RULE: &str = "the demo incidents of the same cause that concluded before the query time";
const DAY_MS: i64 = 86_400_000;
const SYNTHETIC_QUERIES: usize = 40;
/// Each recall's deadline during the evaluation.
const EVAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);
const SYNTHETIC_RULE: &str = "the synthetic incident whose summary the query's words were drawn \
    from (a shuffled two-thirds of them), every record known from its concluded_at";
const DATASET_RULE: &str = "as labelled in the dataset's labels.json; memory replayed as it stood at \
    each query (every record known from its concluded_at)";

pub fn run(ctx: &Context, args: &EvalArgs) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()?;
    let embedder: Result<Arc<dyn Embedder>, strata::embed::EmbedError> = ctx
        .build_embedder()
        .map(|e| Arc::new(CachedEmbedder::new(e)) as Arc<dyn Embedder>);
    let mut datasets = Vec::new();
    if !args.dataset.is_empty() {
        let scratch = tempfile::tempdir()?;
        for (i, dir) in args.dataset.iter().enumerate() {
            let store_dir = scratch.path().join(format!("dataset-{i}"));
            let (name, labels, store) = load_dataset(ctx, dir, &store_dir)?;
            let index_dir = scratch.path().join(format!("dataset-{i}-index"));
            let stack = open_stack(ctx, store, embedder.clone(), &index_dir);
            datasets.push(runtime.block_on(eval::evaluate(
                &stack.engine,
                &name,
                DATASET_RULE,
                &labels,
                args.legs_report,
            )));
        }
    } else if let Some(file) = &args.labels {
        let labels = read_labels(file)?;
        let store: Arc<dyn MemoryStore> = ctx.open_store()?;
        let mut stack = ctx.open_recall(store);
        stack.engine.timeout = stack.engine.timeout.max(EVAL_TIMEOUT);
        let name = file.display().to_string();
        datasets.push(runtime.block_on(eval::evaluate(
            &stack.engine,
            &name,
            "as labelled",
            &labels,
            args.legs_report,
        )));
    } else if args.synthetic.is_none() {
        let scratch = tempfile::tempdir()?;
        say!("eval: seeding the demo memory into a scratch store");
        let store = Arc::new(EmbeddedStore::open(&scratch.path().join("demo"))?);
        strata::demo::seed(store.as_ref())?;
        let stack = open_stack(
            ctx,
            store,
            embedder.clone(),
            &scratch.path().join("demo-index"),
        );
        let labels = strata::demo::generate().labels;
        datasets.push(runtime.block_on(eval::evaluate(
            &stack.engine,
            "demo",
            DEMO_RULE,
            &labels,
            args.legs_report,
        )));

        match postmortem_dir(args.postmortems.as_deref()) {
            Some(dir) => {
                say!("eval: importing postmortems from {}", dir.display());
                let converted = postmortems::convert_dir(&dir, LearnedAt::AfterConclusion(DAY_MS))?;
                let labels = eval::postmortem_labels(&converted.batch);
                let store = Arc::new(EmbeddedStore::open(&scratch.path().join("postmortems"))?);
                ingest::write(store.as_ref(), &converted.batch)?;
                let stack = open_stack(
                    ctx,
                    store,
                    embedder.clone(),
                    &scratch.path().join("pm-index"),
                );
                datasets.push(runtime.block_on(eval::evaluate(
                    &stack.engine,
                    "postmortems",
                    eval::POSTMORTEM_RULE,
                    &labels,
                    args.legs_report,
                )));
            }
            None => say!(
                "note: no postmortems found at ../shared/data/postmortems; pass --postmortems DIR for the second set"
            ),
        }
    }
    if let Some(episodes) = args.synthetic {
        let scratch = tempfile::tempdir()?;
        say!("eval: writing {episodes} synthetic incidents into a scratch store");
        let store = synthetic_store(ctx, episodes, &scratch.path().join("synthetic"))?;
        let stack = open_stack(
            ctx,
            store,
            embedder,
            &scratch.path().join("synthetic-index"),
        );
        let labels = strata::synthetic::queries(episodes, SYNTHETIC_QUERIES);
        datasets.push(runtime.block_on(eval::evaluate(
            &stack.engine,
            &format!("synthetic ({episodes})"),
            SYNTHETIC_RULE,
            &labels,
            args.legs_report,
        )));
    }
    runtime.shutdown_background();
    let report = EvalReport { datasets };
    if args.out.json {
        print_json(&report)?;
    } else {
        for d in &report.datasets {
            print_dataset(d);
        }
    }
    if let Some(baseline) = &args.gate {
        let base: EvalReport = serde_json::from_str(
            &std::fs::read_to_string(baseline)
                .wrap_err_with(|| format!("reading {}", baseline.display()))?,
        )
        .wrap_err_with(|| {
            format!(
                "{}: expected the JSON of `strata eval --json`",
                baseline.display()
            )
        })?;
        for name in eval::reweighted(&base, &report) {
            say!(
                "gate: {name}: the weighted rows are not compared (the baseline weighed the legs \
                 differently)"
            );
        }
        let failures = eval::gate(&base, &report);
        for f in &failures {
            say!(
                "gate: {} {} {}: AC@1 {:.3} is more than 0.02 below the baseline {:.3}",
                f.dataset,
                f.legs,
                f.fusion,
                f.ac1,
                f.baseline_ac1
            );
        }
        if !failures.is_empty() {
            return Ok(ExitCode::FAILURE);
        }
        say!(
            "gate: no AC@1 fell more than 0.02 below {}",
            baseline.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn open_stack(
    ctx: &Context,
    store: Arc<EmbeddedStore>,
    embedder: Result<Arc<dyn Embedder>, strata::embed::EmbedError>,
    index_dir: &Path,
) -> RecallStack {
    let mut progress = progress_printer("eval: indexing");
    let mut stack = RecallStack::open(
        store,
        embedder,
        &StackOptions {
            index_dir: index_dir.to_path_buf(),
            sync: true,
            vectors: Default::default(),
            runtime: None,
        },
        &mut progress,
    );
    for n in &stack.notices {
        say!("note: {n}");
    }
    // Recall as every other command runs it: the config's leg limit and weights. The timeout
    // is raised: the evaluation measures what recall ranks, and a machine busy with something
    // else must not change the scores (latency is reported on its own).
    ctx.configure_recall(&mut stack.engine);
    stack.engine.timeout = stack.engine.timeout.max(EVAL_TIMEOUT);
    stack
}

fn read_labels(file: &Path) -> Result<Vec<LabelledQuery>> {
    serde_json::from_str(
        &std::fs::read_to_string(file).wrap_err_with(|| format!("reading {}", file.display()))?,
    )
    .wrap_err_with(|| {
        format!(
            "{}: expected a JSON array of {{id, fault_class, query, entities, at, expected}}",
            file.display()
        )
    })
}

/// A dataset directory (`records.ndjson`, ingest records, and `labels.json`) written into a
/// scratch store at `store_dir`, each record known from its `concluded_at`, so that a query
/// at time T sees exactly the records that had concluded by T.
fn load_dataset(
    ctx: &Context,
    dir: &Path,
    store_dir: &Path,
) -> Result<(String, Vec<LabelledQuery>, Arc<EmbeddedStore>)> {
    let name = dir.file_name().map_or_else(
        || dir.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let labels = read_labels(&dir.join("labels.json"))?;
    let records = dir.join("records.ndjson");
    say!("eval: ingesting {}", records.display());
    let mut prepared = ingest::prepare_file_within(&records, ctx.now, &ctx.config.ingest)?;
    for item in &mut prepared.batch.items {
        item.ingested_at = strata::store::KnowledgeTime::At(item.draft.concluded_at);
    }
    let store = Arc::new(EmbeddedStore::open(store_dir)?);
    ingest::write(store.as_ref(), &prepared.batch)?;
    Ok((name, labels, store))
}

/// The first `episodes` synthetic records in a scratch store, each known from its concluded_at.
fn synthetic_store(ctx: &Context, episodes: usize, dir: &Path) -> Result<Arc<EmbeddedStore>> {
    let mut text = String::new();
    for i in 0..episodes {
        text.push_str(&strata::synthetic::record(i).to_string());
        text.push('\n');
    }
    let mut prepared =
        ingest::prepare_text_within("synthetic", &text, ctx.now, &ctx.config.ingest)?;
    for item in &mut prepared.batch.items {
        item.ingested_at = strata::store::KnowledgeTime::At(item.draft.concluded_at);
    }
    let store = Arc::new(EmbeddedStore::open(dir)?);
    ingest::write(store.as_ref(), &prepared.batch)?;
    Ok(store)
}

fn postmortem_dir(explicit: Option<&Path>) -> Option<PathBuf> {
    match explicit {
        Some(d) => Some(d.to_path_buf()),
        None => {
            let d = PathBuf::from("../shared/data/postmortems");
            d.is_dir().then_some(d)
        }
    }
}

fn print_dataset(d: &DatasetReport) {
    println!(
        "{}: {} queries · embedder {} · fused recall p50 {:.1} ms, p95 {:.1} ms",
        d.name, d.queries, d.embedder, d.latency_ms.p50, d.latency_ms.p95
    );
    println!("  related = {}", d.rule);
    println!(
        "  {:<22} {:<8} {:>6} {:>6} {:>6} {:>6} {:>7}",
        "LEGS", "FUSE", "AC@1", "AC@3", "MRR@10", "R@10", "nDCG@10"
    );
    for r in &d.rows {
        println!(
            "  {:<22} {:<8} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>7.3}",
            r.legs,
            r.fusion.as_str(),
            r.metrics.ac1,
            r.metrics.ac3,
            r.metrics.mrr,
            r.metrics.r10,
            r.metrics.ndcg10
        );
    }
    for o in &d.oracle {
        println!(
            "  {:<31} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>7.3}",
            format!("oracle: {}", o.name),
            o.metrics.ac1,
            o.metrics.ac3,
            o.metrics.mrr,
            o.metrics.r10,
            o.metrics.ndcg10
        );
    }
    for s in &d.skipped {
        println!("  skipped {s}");
    }
    if !d.traces.is_empty() {
        print_traces(d);
    }
}

/// The legs report: per query, where each leg put the first expected episode (`-`: not in
/// its list), how sure it was, and the fused position under each policy.
fn print_traces(d: &DatasetReport) {
    let place = |p: Option<usize>| p.map_or_else(|| "-".to_string(), |p| p.to_string());
    println!(
        "  per query: each leg's rank of the first expected · confidence → adaptive weight; fused rank per policy"
    );
    for t in &d.traces {
        let legs: Vec<String> = t
            .legs
            .iter()
            .map(|l| match l.confidence {
                Some(c) => format!(
                    "{} {:>2} {:.2}→{:.2}",
                    l.leg,
                    place(l.rank),
                    c,
                    l.adaptive_weight
                ),
                None => format!("{} {:>2} {}", l.leg, place(l.rank), l.status.as_str()),
            })
            .collect();
        let fused: Vec<String> = t
            .fused
            .iter()
            .map(|(policy, rank)| format!("{} {}", policy.as_str(), place(*rank)))
            .collect();
        println!(
            "  {:<24} {} | {}",
            safe(&excerpt(&t.id, 24)),
            legs.join("  "),
            fused.join(" ")
        );
    }
}
