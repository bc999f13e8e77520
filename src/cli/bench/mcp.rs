use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, eyre};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde::Serialize;
use serde_json::json;

use super::recall::{Percentiles, QUERIES, percentiles};
use super::{fill, scratch_dir};
use crate::cli::context::{Context, progress_printer};
use crate::cli::output::print_json;
use strata::embed::{Embedder, HashEmbedder};
use strata::model::{AsOf, EntityKey};
use strata::recall::{FusionPolicy, LegSet, RecallRequest, RecallStack, StackOptions};
use strata::store::embedded::EmbeddedStore;

/// Round trips allowed beyond the in-process recall, at p95.
const TARGET_OVERHEAD_MS: f64 = 2.0;
/// Untimed calls on each side first (caches, the child's first catch-up).
const WARM_UP: usize = 16;

#[derive(Serialize)]
struct McpBench {
    episodes: usize,
    queries: usize,
    /// `RecallEngine::recall` in this process, wall time per call.
    in_process_ms: Percentiles,
    /// `tools/call recall` to a `strata mcp` child over stdio, request to parsed answer.
    stdio_round_trip_ms: Percentiles,
    overhead_p95_ms: f64,
    target_overhead_p95_ms: f64,
    meets_target: bool,
    results_differ: usize,
}

/// The MCP server's recall against the same recall in-process, on one synthetic store: both
/// use the 384-d hash embedder, the same indexes and the same queries.
pub fn run(ctx: &Context, episodes: usize, queries: usize, dir: Option<&Path>) -> Result<ExitCode> {
    let tmp = scratch_dir(dir)?;
    eprintln!("bench mcp: {episodes} episodes");
    let store = Arc::new(EmbeddedStore::open(tmp.path())?);
    fill(ctx, store.as_ref(), episodes, 10_000)?;
    let mut progress = progress_printer("  indexing");
    let mut stack = RecallStack::open(
        store.clone(),
        Ok(Arc::new(HashEmbedder::default()) as Arc<dyn Embedder>),
        &StackOptions {
            index_dir: tmp.path().join("index"),
            sync: true,
            vectors: Default::default(),
            runtime: None,
        },
        &mut progress,
    );
    stack.warm_legs();
    stack.engine.timeout = Duration::from_secs(10);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let requests: Vec<(RecallRequest, serde_json::Map<String, serde_json::Value>)> = (0..queries
        + WARM_UP)
        .map(|q| {
            let (text, entity) = QUERIES[q % QUERIES.len()];
            let request = RecallRequest {
                exclude: Vec::new(),
                text: text.to_string(),
                entities: vec![entity.parse::<EntityKey>()?],
                as_of: AsOf::now(ctx.now),
                k: 10,
                legs: LegSet::ALL,
                fusion: FusionPolicy::default(),
                stale: Default::default(),
            };
            let args = json!({
                "query": text,
                "entities": [entity],
                "k": 10,
                "valid_at": ctx.now.to_rfc3339(),
                "known_at": ctx.now.to_rfc3339(),
            });
            let serde_json::Value::Object(args) = args else {
                return Err(eyre!("recall arguments are an object"));
            };
            Ok((request, args))
        })
        .collect::<Result<_>>()?;

    let mut in_process = Vec::new();
    let mut expected = Vec::new();
    for (i, (request, _)) in requests.iter().enumerate() {
        let t = Instant::now();
        let r = runtime.block_on(stack.engine.recall(request));
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if i >= WARM_UP {
            in_process.push(ms);
            expected.push(fingerprints(&serde_json::to_value(&r)?));
        }
    }
    drop(stack);

    let exe = std::env::current_exe()?;
    let data = tmp.path().to_path_buf();
    let now = ctx.now.to_rfc3339();
    let (stdio, answers) = runtime.block_on(async {
        let child = TokioChildProcess::new(tokio::process::Command::new(&exe).configure(|c| {
            // The child serves this scratch store, whatever the environment points at.
            c.env_remove("STRATA_STORE")
                .env_remove("STRATA_VECTORS")
                .env_remove("STRATA_CONFIG")
                .env_remove("STRATA_EMBEDDER")
                .arg("--data")
                .arg(&data)
                .args(["--embedder", "hash", "--now", &now, "mcp"]);
        }))?;
        let client = ().serve(child).await.map_err(|e| eyre!("{e}"))?;
        let mut times = Vec::new();
        let mut answers = Vec::new();
        for (i, (_, args)) in requests.iter().enumerate() {
            let t = Instant::now();
            let result = client
                .call_tool(CallToolRequestParams::new("recall").with_arguments(args.clone()))
                .await
                .map_err(|e| eyre!("{e}"))?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            if result.is_error == Some(true) {
                return Err(eyre!("recall over MCP failed: {:?}", result.content));
            }
            if i >= WARM_UP {
                times.push(ms);
                answers.push(fingerprints(
                    result.structured_content.as_ref().unwrap_or_default(),
                ));
            }
        }
        client.cancel().await.map_err(|e| eyre!("{e}"))?;
        Ok::<_, color_eyre::eyre::Report>((times, answers))
    })?;
    runtime.shutdown_background();

    let differ = expected
        .iter()
        .zip(&answers)
        .filter(|(a, b)| a != b)
        .count();
    let in_process = percentiles(in_process);
    let stdio = percentiles(stdio);
    let overhead = stdio.p95 - in_process.p95;
    print_json(&json!({
        "bench": "mcp",
        "results": [McpBench {
            episodes,
            queries,
            overhead_p95_ms: overhead,
            target_overhead_p95_ms: TARGET_OVERHEAD_MS,
            meets_target: overhead <= TARGET_OVERHEAD_MS && differ == 0,
            in_process_ms: in_process,
            stdio_round_trip_ms: stdio,
            results_differ: differ,
        }]
    }))?;
    Ok(ExitCode::SUCCESS)
}

fn fingerprints(response: &serde_json::Value) -> Vec<String> {
    response["results"]
        .as_array()
        .map(|results| {
            results
                .iter()
                .filter_map(|r| r["fingerprint"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
