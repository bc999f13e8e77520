use std::process::ExitCode;
use std::sync::Arc;

use color_eyre::eyre::Result;

use crate::cli::args::McpArgs;
use crate::cli::context::Context;
use strata::explorer::live::LiveRecall;
use strata::mcp::{self, Clock, HttpOptions, Memory, MemoryServer, Tokens};

/// What `--http` serves with, read before the store opens: a bad token file or certificate
/// fails at once.
fn http_options(args: &McpArgs) -> Result<Option<HttpOptions>> {
    let Some(addr) = args.http else {
        return Ok(None);
    };
    let env = std::env::var(mcp::access::ENV_TOKEN).ok();
    let tokens = Tokens::load(args.token_file.as_deref(), env.as_deref())?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(mcp::tls::server_config(cert, key)?),
        _ => None,
    };
    Ok(Some(HttpOptions { addr, tokens, tls }))
}

/// A client that hangs up mid-answer is that connection's end, not the server's: with
/// SIGPIPE at its default (see main), a TLS write (writev) to a reset socket would end the
/// process.
fn ignore_sigpipe() {
    // SAFETY: SIG_IGN is always a valid disposition, and sigaction is process-wide and
    // thread-safe; nothing in this process relies on SIGPIPE being delivered.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

pub fn run(ctx: &Context, args: &McpArgs) -> Result<ExitCode> {
    let http = http_options(args)?;
    if http.is_some() {
        ignore_sigpipe();
    }
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
        match http {
            None => mcp::serve_stdio(server).await,
            Some(options) => {
                mcp::serve_http(server, options, |bound| {
                    // Not through say!: redaction would mask the address, and it is ours.
                    eprintln!("strata mcp: listening on {}", bound.url(mcp::HTTP_PATH));
                    eprintln!("strata mcp: metrics at {}", bound.url(mcp::METRICS_PATH));
                    if bound.tokens > 0 {
                        eprintln!(
                            "strata mcp: {} bearer token{} accepted; requests without one get 401",
                            bound.tokens,
                            if bound.tokens == 1 { "" } else { "s" }
                        );
                    }
                    if !bound.addr.ip().is_loopback() && !bound.tls {
                        eprintln!(
                            "strata mcp: warning: no TLS off loopback: tokens cross the network in clear text (--tls-cert and --tls-key, or a TLS proxy in front)"
                        );
                    }
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
