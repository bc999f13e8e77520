//! `strata mcp`: the memory as a Model Context Protocol server, the way agent hosts are given a
//! memory tool. Built on the official Rust SDK (`rmcp`); stdio by default, streamable HTTP on
//! request: on loopback as it is, anywhere else behind bearer tokens (read-only or read-write),
//! over TLS when given a certificate. A long-lived process on the same store as the explorer
//! and the CLI: it reads what they write and they see what it records.

pub mod access;
pub mod answers;
pub mod http;
pub mod params;
pub mod resources;
pub mod server;
pub mod tls;

use std::net::SocketAddr;

use rmcp::ServiceExt;

pub use access::{Access, Role, TokenError, Tokens};
pub use http::{HttpOptions, Listening, serve_http};
pub use server::{Clock, Memory, MemoryServer};
pub use tls::TlsError;

/// The path the HTTP transport serves.
pub const HTTP_PATH: &str = "/mcp";
/// Where the HTTP transport serves Prometheus metrics.
pub const METRICS_PATH: &str = "/metrics";

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(
        "{0} is not a loopback address; off loopback the MCP server needs bearer tokens: --token-file FILE or STRATA_MCP_TOKEN"
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
