//! `strata bench mcp --http --clients N`: a team's MCP server under load. N clients, each its
//! own MCP session over streamable HTTP, recall in a loop for a while against one `strata mcp
//! --http` child serving the memory where `--store` and `--vectors` put it; half way through,
//! an optional command (kill a Qdrant peer, say) runs. It reports throughput, latency, failed
//! calls and how often the semantic leg answered after the half-way mark.

use std::path::Path;
use std::process::{Child, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde::Serialize;
use serde_json::json;

use super::recall::{Percentiles, QUERIES, percentiles};
use super::server::ScratchGraph;
use super::{fill, scratch_dir};
use crate::cli::context::Context;
use crate::cli::output::print_json;
use strata::index::VectorLocation;
use strata::store::StoreLocation;
use strata::store::embedded::EmbeddedStore;
use strata::store::falkordb::FalkorStore;

/// Sequential recalls by one client before the load: the unloaded latency.
const UNLOADED_CALLS: usize = 100;
/// Untimed calls first (the child's catch-up, caches).
const WARM_UP: usize = 16;
const TARGET_P95_RATIO: f64 = 2.0;
const TARGET_SEMANTIC_OK: f64 = 0.99;

#[derive(Serialize)]
struct LoadBench {
    episodes: usize,
    clients: usize,
    seconds: u64,
    store: String,
    vectors: String,
    halfway: Option<String>,
    halfway_exit: Option<i32>,
    unloaded_ms: Percentiles,
    loaded_ms: Percentiles,
    calls: usize,
    calls_per_s: f64,
    failed_calls: usize,
    failures: Vec<String>,
    calls_after_halfway: usize,
    semantic_ok_before_halfway: f64,
    semantic_ok_after_halfway: f64,
    /// Why the semantic leg was not `ok`, most frequent first, with counts.
    semantic_not_ok: Vec<(String, usize)>,
    p95_ratio: f64,
    target_failed_calls: usize,
    target_p95_ratio: f64,
    target_semantic_ok_after_halfway: f64,
    meets_targets: bool,
}

/// One timed call: when it started (from the load's start), how long it took, whether it
/// answered, and whether its semantic leg said `ok`.
struct Call {
    started: Duration,
    ms: f64,
    failure: Option<String>,
    semantic_ok: bool,
    /// The semantic leg's status and error when not `ok`.
    semantic_why: Option<String>,
}

/// The `strata mcp --http` child, stopped when dropped.
struct ServerChild(Child);

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn run(
    ctx: &Context,
    episodes: usize,
    clients: usize,
    seconds: u64,
    halfway: Option<&str>,
    dir: Option<&Path>,
) -> Result<ExitCode> {
    if clients == 0 {
        bail!("bench mcp --http: --clients must be at least 1");
    }
    let tmp = scratch_dir(dir)?;
    eprintln!("bench mcp --http: {episodes} episodes, {clients} clients, {seconds} s");
    // The memory: a scratch graph on the FalkorDB server given (deleted afterwards), or an
    // embedded store in the scratch directory. Declared before the child: dropped after it.
    let (_graph, store_arg) = match &ctx.store {
        StoreLocation::FalkorDb(url) => {
            let graph = ScratchGraph::create(url, episodes)?;
            fill(ctx, &FalkorStore::connect(&graph.url)?, episodes, 10_000)?;
            let arg = graph.url.to_string();
            (Some(graph), Some(arg))
        }
        StoreLocation::Embedded(_) => {
            fill(ctx, &EmbeddedStore::open(tmp.path())?, episodes, 10_000)?;
            (None, None)
        }
    };
    let vectors_arg = match &ctx.vectors {
        VectorLocation::Local => None,
        VectorLocation::Qdrant(target) => Some(target.url.clone()),
        VectorLocation::FalkorDb(_) => Some("falkordb".to_string()),
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let mut command = std::process::Command::new(std::env::current_exe()?);
    command
        .env_remove("STRATA_STORE")
        .env_remove("STRATA_VECTORS")
        .env_remove("STRATA_EMBEDDER")
        .arg("--data")
        .arg(tmp.path())
        .args(["--embedder", "hash", "--now", &ctx.now.to_rfc3339()]);
    if let Some(store) = &store_arg {
        command.args(["--store", store]);
    }
    if let Some(vectors) = &vectors_arg {
        command.args(["--vectors", vectors]);
    }
    let child = command
        .args(["mcp", "--http", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .wrap_err("cannot start strata mcp --http")?;
    let _server = ServerChild(child);
    let uri: Arc<str> = format!("http://127.0.0.1:{port}/mcp").into();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let arguments = arguments(ctx)?;
    let started = Instant::now();
    // The server listens once its store is open; the first recalls wait for its indexes.
    let unloaded = runtime.block_on(async {
        let client = loop {
            match connect(&uri).await {
                Ok(client) => break client,
                Err(e) if started.elapsed() < Duration::from_secs(600) => {
                    tracing::debug!(error = %e, "the MCP server is not up yet");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => return Err(e),
            }
        };
        let mut times = Vec::new();
        for i in 0..WARM_UP + UNLOADED_CALLS {
            let call = recall(&client, &arguments[i % arguments.len()], Instant::now()).await;
            if let Some(failure) = call.failure {
                bail!("recall over HTTP failed before the load: {failure}");
            }
            if i >= WARM_UP {
                times.push(call.ms);
            }
        }
        client.cancel().await.map_err(|e| eyre!("{e}"))?;
        Ok(times)
    })?;
    eprintln!("  unloaded: {} calls", unloaded.len());

    let length = Duration::from_secs(seconds);
    let load_start = Instant::now();
    let halfway_task = halfway.map(|cmd| {
        let cmd = cmd.to_string();
        std::thread::spawn(move || {
            std::thread::sleep(length / 2);
            eprintln!("  half way: {cmd}");
            std::process::Command::new("sh")
                .args(["-c", &cmd])
                .status()
                .ok()
                .and_then(|s| s.code())
        })
    });
    let calls: Vec<Call> = runtime.block_on(async {
        let mut tasks = Vec::new();
        for c in 0..clients {
            let uri = uri.clone();
            let arguments = arguments.clone();
            tasks.push(tokio::spawn(async move {
                let mut calls = Vec::new();
                let client = match connect(&uri).await {
                    Ok(client) => client,
                    Err(e) => {
                        calls.push(Call {
                            started: load_start.elapsed(),
                            ms: 0.0,
                            failure: Some(format!("connect: {e}")),
                            semantic_ok: false,
                            semantic_why: None,
                        });
                        return calls;
                    }
                };
                let mut i = c;
                while load_start.elapsed() < length {
                    calls.push(recall(&client, &arguments[i % arguments.len()], load_start).await);
                    i += clients;
                }
                let _ = client.cancel().await;
                calls
            }));
        }
        let mut all = Vec::new();
        for task in tasks {
            all.extend(task.await.unwrap_or_default());
        }
        all
    });
    let elapsed = load_start.elapsed().as_secs_f64();
    let halfway_exit = halfway_task.and_then(|t| t.join().ok().flatten());
    runtime.shutdown_background();

    let (after, before): (Vec<&Call>, Vec<&Call>) =
        calls.iter().partition(|c| c.started >= length / 2);
    let ok_share = |calls: &[&Call]| {
        calls.iter().filter(|c| c.semantic_ok).count() as f64 / calls.len().max(1) as f64
    };
    let semantic_ok_after = ok_share(&after);
    let mut why: std::collections::BTreeMap<String, usize> = Default::default();
    for reason in calls.iter().filter_map(|c| c.semantic_why.clone()) {
        *why.entry(reason).or_default() += 1;
    }
    let mut semantic_not_ok: Vec<(String, usize)> = why.into_iter().collect();
    semantic_not_ok.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    semantic_not_ok.truncate(5);
    let failures: Vec<String> = calls.iter().filter_map(|c| c.failure.clone()).collect();
    let unloaded = percentiles(unloaded);
    let loaded = percentiles(calls.iter().map(|c| c.ms).collect());
    let p95_ratio = loaded.p95 / unloaded.p95.max(1e-9);
    let meets = failures.is_empty()
        && p95_ratio <= TARGET_P95_RATIO
        && semantic_ok_after >= TARGET_SEMANTIC_OK;
    let mut sample = failures.clone();
    sample.dedup();
    sample.truncate(5);
    print_json(&json!({
        "bench": "mcp-http",
        "results": [LoadBench {
            episodes,
            clients,
            seconds,
            store: store_arg.unwrap_or_else(|| "embedded".into()),
            vectors: vectors_arg.unwrap_or_else(|| "local".into()),
            halfway: halfway.map(str::to_string),
            halfway_exit,
            unloaded_ms: unloaded,
            loaded_ms: loaded,
            calls: calls.len(),
            calls_per_s: calls.len() as f64 / elapsed.max(f64::EPSILON),
            failed_calls: failures.len(),
            failures: sample,
            calls_after_halfway: after.len(),
            semantic_ok_before_halfway: ok_share(&before),
            semantic_ok_after_halfway: semantic_ok_after,
            semantic_not_ok,
            p95_ratio,
            target_failed_calls: 0,
            target_p95_ratio: TARGET_P95_RATIO,
            target_semantic_ok_after_halfway: TARGET_SEMANTIC_OK,
            meets_targets: meets,
        }]
    }))?;
    Ok(ExitCode::SUCCESS)
}

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

async fn connect(uri: &Arc<str>) -> Result<Client> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(uri.clone());
    if let Ok(token) = std::env::var("STRATA_MCP_TOKEN") {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    ().serve(transport).await.map_err(|e| eyre!("{e}"))
}

async fn recall(
    client: &Client,
    arguments: &serde_json::Map<String, serde_json::Value>,
    since: Instant,
) -> Call {
    let started = since.elapsed();
    let t = Instant::now();
    let reply = client
        .call_tool(CallToolRequestParams::new("recall").with_arguments(arguments.clone()))
        .await;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    match reply {
        Ok(result) if result.is_error != Some(true) => {
            let leg = result
                .structured_content
                .as_ref()
                .map(|c| c["legs"]["semantic"].clone())
                .unwrap_or_default();
            let ok = leg["status"].as_str() == Some("ok");
            Call {
                started,
                ms,
                failure: None,
                semantic_ok: ok,
                semantic_why: (!ok).then(|| {
                    format!(
                        "{}: {}",
                        leg["status"].as_str().unwrap_or("?"),
                        leg["error"].as_str().unwrap_or("")
                    )
                }),
            }
        }
        Ok(result) => Call {
            started,
            ms,
            failure: Some(format!("tool error: {:?}", result.content)),
            semantic_ok: false,
            semantic_why: None,
        },
        Err(e) => Call {
            started,
            ms,
            failure: Some(e.to_string()),
            semantic_ok: false,
            semantic_why: None,
        },
    }
}

/// The recall arguments the clients take turns with: the synthetic queries and their entities.
fn arguments(ctx: &Context) -> Result<Vec<serde_json::Map<String, serde_json::Value>>> {
    QUERIES
        .iter()
        .map(|(text, entity)| {
            match json!({
                "query": text,
                "entities": [entity],
                "k": 10,
                "valid_at": ctx.now.to_rfc3339(),
                "known_at": ctx.now.to_rfc3339(),
            }) {
                serde_json::Value::Object(args) => Ok(args),
                _ => Err(eyre!("recall arguments are an object")),
            }
        })
        .collect()
}
