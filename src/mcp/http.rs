//! The streamable HTTP transport: `/mcp` and `/metrics`, behind bearer tokens when the server
//! has any (it must off loopback), and over TLS when given a certificate.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::connect_info::Connected;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::IncomingStream;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use super::access::{Access, Tokens, bearer};
use super::tls::TlsListener;
use super::{HTTP_PATH, METRICS_PATH, MemoryServer, ServeError};

/// How the HTTP server listens and whom it answers.
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// Required on every request when present; required to listen off loopback.
    pub tokens: Option<Tokens>,
    /// TLS from `--tls-cert` and `--tls-key`.
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

/// What the server is listening on, once it is.
#[derive(Clone, Copy, Debug)]
pub struct Listening {
    pub addr: SocketAddr,
    pub tls: bool,
    /// How many tokens it accepts; 0 when it asks for none.
    pub tokens: usize,
}

impl Listening {
    /// The URL of `path` (`HTTP_PATH`, `METRICS_PATH`) on this server.
    pub fn url(&self, path: &str) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}{path}", self.addr)
    }
}

/// The client's address, for the log line of a refused request.
#[derive(Clone, Copy, Debug)]
struct Peer(SocketAddr);

impl Connected<IncomingStream<'_, TcpListener>> for Peer {
    fn connect_info(stream: IncomingStream<'_, TcpListener>) -> Self {
        Peer(*stream.remote_addr())
    }
}

impl Connected<IncomingStream<'_, TlsListener>> for Peer {
    fn connect_info(stream: IncomingStream<'_, TlsListener>) -> Self {
        Peer(*stream.remote_addr())
    }
}

/// Serves streamable HTTP at `ADDR/mcp`, and Prometheus metrics at `ADDR/metrics`, until
/// Ctrl-C or SIGTERM; `ready` is told what was bound (port 0 picks one).
pub async fn serve_http(
    server: MemoryServer,
    options: HttpOptions,
    ready: impl FnOnce(Listening),
) -> Result<(), ServeError> {
    let HttpOptions { addr, tokens, tls } = options;
    if !addr.ip().is_loopback() && tokens.is_none() {
        return Err(ServeError::NotLoopback(addr));
    }
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    let bound = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { addr, source })?;
    let scraped = server.clone();
    let mut config = StreamableHttpServerConfig::default();
    if tokens.is_some() {
        // The Host check guards a tokenless loopback server from DNS rebinding; a page that
        // rebinds cannot present a token, and a team reaches the server under names of its own.
        config = config.disable_allowed_hosts();
    }
    // Open sessions (an SSE stream) end when the server stops, or the shutdown would wait
    // for every client to hang up.
    let sessions = config.cancellation_token.clone();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listening = Listening {
        addr: bound,
        tls: tls.is_some(),
        tokens: tokens.as_ref().map_or(0, Tokens::len),
    };
    let app = axum::Router::new()
        .nest_service(HTTP_PATH, service)
        .route(
            METRICS_PATH,
            axum::routing::get(move || metrics(scraped.clone())),
        )
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(tokens),
            authorize,
        ))
        .into_make_service_with_connect_info::<Peer>();
    let stop = async move {
        shutdown().await;
        sessions.cancel();
    };
    let stopped = |e: std::io::Error| ServeError::Stopped(e.to_string());
    match tls {
        None => {
            ready(listening);
            axum::serve(listener, app)
                .with_graceful_shutdown(stop)
                .await
                .map_err(stopped)
        }
        Some(config) => {
            let listener = TlsListener::new(listener, config)
                .map_err(|source| ServeError::Bind { addr, source })?;
            ready(listening);
            axum::serve(listener, app)
                .with_graceful_shutdown(stop)
                .await
                .map_err(stopped)
        }
    }
}

/// Lets a request through with the [`Access`] its token grants, or answers 401. The log line
/// of a refusal names the client and the path, never what it presented.
async fn authorize(
    State(tokens): State<Arc<Option<Tokens>>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    mut request: Request,
    next: Next,
) -> Response {
    let access = match tokens.as_ref() {
        None => Access::open(),
        Some(tokens) => {
            let presented = request.headers().get(header::AUTHORIZATION);
            let found = match presented {
                None => Err(Refusal::Missing),
                Some(value) => match value.to_str().ok().and_then(bearer) {
                    None => Err(Refusal::NotBearer),
                    Some(token) => tokens.check(token).cloned().ok_or(Refusal::Unknown),
                },
            };
            match found {
                Ok(access) => access,
                Err(refusal) => {
                    tracing::warn!(
                        %peer,
                        method = %request.method(),
                        path = request.uri().path(),
                        reason = refusal.reason(),
                        "refused an HTTP request: 401 Unauthorized"
                    );
                    return refusal.into_response();
                }
            }
        }
    };
    request.extensions_mut().insert(access);
    next.run(request).await
}

#[derive(Clone, Copy)]
enum Refusal {
    Missing,
    NotBearer,
    Unknown,
}

impl Refusal {
    fn reason(self) -> &'static str {
        match self {
            Refusal::Missing => "no Authorization header",
            Refusal::NotBearer => "an Authorization header that is not `Bearer TOKEN`",
            Refusal::Unknown => "a bearer token this server does not accept",
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        // RFC 6750: a request with no credentials gets the bare challenge; a bad one, the error.
        let challenge = match self {
            Refusal::Missing | Refusal::NotBearer => r#"Bearer realm="strata""#,
            Refusal::Unknown => r#"Bearer realm="strata", error="invalid_token""#,
        };
        (
            StatusCode::UNAUTHORIZED,
            [(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(challenge),
            )],
            format!(
                "401 Unauthorized: {}; send `Authorization: Bearer TOKEN`\n",
                self.reason()
            ),
        )
            .into_response()
    }
}

/// `GET /metrics`: one scrape, read off the async workers.
async fn metrics(server: MemoryServer) -> Response {
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
