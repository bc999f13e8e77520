//! `strata mcp`: the memory as a Model Context Protocol server, the way agent hosts are given a
//! memory tool. Built on the official Rust SDK (`rmcp`); stdio by default, streamable HTTP on a
//! loopback address on request. A long-lived process on the same store as the explorer and the
//! CLI: it reads what they write and they see what it records.

pub mod answers;
pub mod params;
pub mod resources;
pub mod server;

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

pub use server::{Clock, Memory, MemoryServer};

/// The path the HTTP transport serves.
pub const HTTP_PATH: &str = "/mcp";
/// Where the HTTP transport serves Prometheus metrics.
pub const METRICS_PATH: &str = "/metrics";

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "{0} is not a loopback address; the MCP server has no authentication, so it listens on 127.0.0.1 or ::1 only"
    )]
    NotLoopback(SocketAddr),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("the MCP session could not start: {0}")]
    Start(String),
    #[error("the MCP server stopped: {0}")]
    Stopped(String),
}

/// Serves one session over stdin/stdout until the host closes it. Nothing else may write to
/// stdout meanwhile: logs go to the data directory's log file.
pub async fn serve_stdio(server: MemoryServer) -> Result<(), ServeError> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Start(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServeError::Stopped(e.to_string()))?;
    Ok(())
}

/// Serves streamable HTTP at `http://ADDR/mcp`, and Prometheus metrics at
/// `http://ADDR/metrics`, until Ctrl-C or SIGTERM; `ready` is told the address actually bound
/// (port 0 picks one).
pub async fn serve_http(
    server: MemoryServer,
    addr: SocketAddr,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    if !addr.ip().is_loopback() {
        return Err(ServeError::NotLoopback(addr));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;
    let scraped = server.clone();
    let config = StreamableHttpServerConfig::default();
    // Open sessions (an SSE stream) end when the server stops, or the shutdown would wait
    // for every client to hang up.
    let sessions = config.cancellation_token.clone();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service(HTTP_PATH, service).route(
        METRICS_PATH,
        axum::routing::get(move || metrics(scraped.clone())),
    );
    ready(bound);
    axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            shutdown().await;
            sessions.cancel();
        })
        .await
        .map_err(|e| ServeError::Stopped(e.to_string()))
}

/// `GET /metrics`: one scrape, read off the async workers.
async fn metrics(server: MemoryServer) -> axum::response::Response {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    match tokio::task::spawn_blocking(move || server.metrics()).await {
        Ok(Ok(text)) => (
            [(
                header::CONTENT_TYPE,
                crate::telemetry::metrics::CONTENT_TYPE,
            )],
            text,
        )
            .into_response(),
        Ok(Err(why)) => (StatusCode::INTERNAL_SERVER_ERROR, why).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

async fn shutdown() {
    let interrupt = tokio::signal::ctrl_c();
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = interrupt => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = interrupt.await;
        }
    }
}
