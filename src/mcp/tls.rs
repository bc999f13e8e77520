//! TLS for the HTTP server (rustls): a certificate chain and its key from PEM files, and a
//! listener that hands axum connections whose handshake is done. Handshakes run side by side,
//! each bounded, so a client that stalls one keeps no one else waiting.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client has to finish its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections whose handshake is done and that axum has not taken yet.
const READY_BACKLOG: usize = 64;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("the TLS certificate {path}: {message}")]
    Certificate { path: PathBuf, message: String },
    #[error("the TLS key {path}: {message}")]
    Key { path: PathBuf, message: String },
    #[error(
        "the TLS certificate {cert} and key {key} do not make a server configuration: {source}"
    )]
    Config {
        cert: PathBuf,
        key: PathBuf,
        source: rustls::Error,
    },
}

/// The server's side of TLS, from a PEM certificate chain (leaf first) and a PEM private key
/// (PKCS#8, PKCS#1 or SEC1).
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let certificate = |message: String| TlsError::Certificate {
        path: cert.to_path_buf(),
        message,
    };
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| certificate(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| certificate(e.to_string()))?;
    if chain.is_empty() {
        return Err(certificate(
            "no certificate in it; expected PEM `BEGIN CERTIFICATE` blocks".into(),
        ));
    }
    let private = PrivateKeyDer::from_pem_file(key).map_err(|e| TlsError::Key {
        path: key.to_path_buf(),
        message: format!("{e}; expected a PEM private key (PKCS#8, PKCS#1 or SEC1)"),
    })?;
    let config_error = |source| TlsError::Config {
        cert: cert.to_path_buf(),
        key: key.to_path_buf(),
        source,
    };
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(config_error)?
    .with_no_client_auth()
    .with_single_cert(chain, private)
    .map_err(config_error)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A listener whose connections have finished their TLS handshake.
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    accepting: tokio::task::JoinHandle<()>,
}

impl TlsListener {
    pub fn new(listener: TcpListener, config: Arc<rustls::ServerConfig>) -> std::io::Result<Self> {
        let local = listener.local_addr()?;
        let (done, ready) = mpsc::channel(READY_BACKLOG);
        let acceptor = TlsAcceptor::from(config);
        let accepting = tokio::spawn(async move {
            loop {
                let (tcp, peer) = match listener.accept().await {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of file descriptors and the like: wait, as axum's own listener does.
                        tracing::warn!(error = %e, "cannot accept a connection");
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                };
                let acceptor = acceptor.clone();
                let done = done.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(tls)) => {
                            let _ = done.send((tls, peer)).await;
                        }
                        Ok(Err(e)) => tracing::info!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::info!(%peer, "TLS handshake timed out"),
                    }
                });
            }
        });
        Ok(TlsListener {
            ready,
            local,
            accepting,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(ready) => ready,
            // The accepting task holds a sender for as long as it runs, and runs until dropped.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}
