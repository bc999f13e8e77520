use std::process::ExitCode;
use std::sync::Arc;

use color_eyre::eyre::Result;

use crate::cli::args::McpArgs;
use crate::cli::context::Context;
use strata::explorer::live::LiveRecall;
use strata::mcp::{self, Clock, Memory, MemoryServer};

pub fn run(ctx: &Context, args: &McpArgs) -> Result<ExitCode> {
    let store = ctx.open_store()?;
    let generation = store.generation().ok();
    let mut stack = ctx.open_recall(store.clone());
    // A server answers many recalls: what the legs keep is built before the first.
    stack.warm_legs();
    let recorder = ctx.recorder();
    stack.engine.recorder = recorder.clone();
    let clock = if ctx.now_is_live() {
        Clock::Wall
    } else {
        // A fixed --now is a knowledge time every write records: refused when far ahead.
        ctx.knowledge_time()?;
        Clock::Fixed(ctx.now)
    };
    let server = MemoryServer::new(Memory {
        describe: store.describe(),
        store,
        recall: Arc::new(LiveRecall::new(stack, generation)),
        clock,
        limits: ctx.config.ingest,
        counters: ctx.counter_reader(),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let served = runtime.block_on(async {
        match args.http {
            None => mcp::serve_stdio(server).await,
            Some(addr) => {
                mcp::serve_http(server, addr, |bound| {
                    // Not through say!: redaction would mask the address, and it is ours.
                    eprintln!("strata mcp: listening on http://{bound}{}", mcp::HTTP_PATH);
                    eprintln!("strata mcp: metrics at http://{bound}{}", mcp::METRICS_PATH);
                })
                .await
            }
        }
    });
    // A recall leg that timed out may still be blocked in I/O: do not wait for it.
    runtime.shutdown_background();
    // Every recall answered is counted before the process ends.
    if let Some(recorder) = recorder {
        recorder.close();
    }
    served?;
    Ok(ExitCode::SUCCESS)
}
