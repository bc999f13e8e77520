//! Credentials and TLS against real servers: FalkorDB with `requirepass`, the same behind a
//! TLS endpoint whose certificate is made here, and Qdrant serving TLS with an API key. A
//! password is never shown: not on stdout or stderr, not in the log, not in a directory name.

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use common::falkordb::Server;
use common::{ndjson, record, stderr, stdout};

const NOW: &str = "2026-12-01T00:00:00Z";
const PASSWORD: &str = "s3cret-Pa55";

fn strata(data: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.env("STRATA_EMBEDDER", "hash")
        .env_remove("STRATA_STORE")
        .env_remove("STRATA_FALKORDB_PASSWORD")
        .env_remove("STRATA_QDRANT_API_KEY")
        .env_remove("SSL_CERT_FILE")
        .arg("--data")
        .arg(data)
        .args(["--now", NOW]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(args).output().unwrap()
}

/// Everything a run left where a user could read it: its output, the log and the names of
/// every file under the data directory.
fn everything_shown(data: &Path, outs: &[&Output]) -> String {
    let mut all = String::new();
    for o in outs {
        all.push_str(&stdout(o));
        all.push_str(&stderr(o));
    }
    all.push_str(&std::fs::read_to_string(data.join("strata.log")).unwrap_or_default());
    let mut stack = vec![data.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            all.push_str(&entry.path().display().to_string());
            all.push('\n');
            if entry.path().is_dir() {
                stack.push(entry.path());
            }
        }
    }
    all
}

fn incident_file(dir: &Path, fp: &str) -> String {
    let file = dir.join(format!("{fp}.ndjson"));
    std::fs::write(&file, ndjson(&[record(fp, "2026-11-01T10:00:00Z")])).unwrap();
    file.to_str().unwrap().to_string()
}

fn timeline(data: &Path, env: &[(&str, &str)], store: &str) -> Output {
    strata(data, env, &["--store", store, "timeline"])
}

#[test]
fn a_password_protected_falkordb_takes_the_password_from_the_url_or_the_environment() {
    let server = Server::start_with(&["--requirepass", PASSWORD]);
    let scratch = tempfile::tempdir().unwrap();
    let data = scratch.path().join("data");
    let port = server.port;
    let with_password = format!("falkordb://default:{PASSWORD}@127.0.0.1:{port}/auth");
    let file = incident_file(scratch.path(), "INC-AUTH-1");

    let ingest = strata(&data, &[], &["--store", &with_password, "ingest", &file]);
    assert!(ingest.status.success(), "{}", stderr(&ingest));
    let read = timeline(&data, &[], &with_password);
    assert!(stdout(&read).contains("INC-AUTH-1"), "{}", stderr(&read));

    let bare = format!("falkordb://127.0.0.1:{port}/auth");
    let from_env = timeline(&data, &[("STRATA_FALKORDB_PASSWORD", PASSWORD)], &bare);
    assert!(
        from_env.status.success() && stdout(&from_env).contains("INC-AUTH-1"),
        "STRATA_FALKORDB_PASSWORD is used when the URL has no password: {}",
        stderr(&from_env)
    );

    let wrong = timeline(
        &data,
        &[],
        &format!("falkordb://default:not-it@127.0.0.1:{port}/auth"),
    );
    let none = timeline(&data, &[], &bare);
    for (what, out) in [("a wrong password", &wrong), ("no password", &none)] {
        let err = stderr(out);
        assert!(!out.status.success(), "{what}: {err}");
        assert!(err.contains("authentication failed"), "{what}: {err}");
        assert!(!err.contains("unreachable"), "{what}: {err}");
        assert!(!err.contains("not-it"), "{what}: {err}");
    }

    let shown = everything_shown(&data, &[&ingest, &read, &from_env, &wrong, &none]);
    assert!(
        !shown.contains(PASSWORD),
        "the password was shown:\n{shown}"
    );
}

/// A test CA, and a certificate for `localhost` and 127.0.0.1 that it signed.
struct TestCerts {
    ca_pem: String,
    cert_pem: String,
    cert_der: rustls::pki_types::CertificateDer<'static>,
    key_pem: String,
    key_der: Vec<u8>,
}

fn make_certs() -> TestCerts {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "strata test CA");
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    let cert = params.signed_by(&key, &issuer).unwrap();
    TestCerts {
        ca_pem: ca_cert.pem(),
        cert_pem: cert.pem(),
        cert_der: cert.der().clone(),
        key_pem: key.serialize_pem(),
        key_der: key.serialize_der(),
    }
}

/// A TLS endpoint on a free loopback port that hands each connection to `upstream`: FalkorDB
/// over TLS, as a TLS-terminating proxy in front of a server provides it.
fn tls_endpoint(certs: &TestCerts, upstream: u16) -> u16 {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let key = rustls::pki_types::PrivateKeyDer::try_from(certs.key_der.clone()).unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![certs.cert_der.clone()], key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(client).await else {
                        return;
                    };
                    let Ok(mut server) =
                        tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await
                    else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut server).await;
                });
            }
        });
    });
    port
}

#[test]
fn falkordb_over_tls_trusts_the_given_ca_and_refuses_an_unknown_one() {
    let server = Server::start_with(&["--requirepass", PASSWORD]);
    let certs = make_certs();
    let scratch = tempfile::tempdir().unwrap();
    let ca = scratch.path().join("ca.pem");
    std::fs::write(&ca, &certs.ca_pem).unwrap();
    let data = scratch.path().join("data");
    let tls_port = tls_endpoint(&certs, server.port);
    let url = format!("falkordbs://localhost:{tls_port}/tls");
    let trusted = [
        ("SSL_CERT_FILE", ca.to_str().unwrap()),
        ("STRATA_FALKORDB_PASSWORD", PASSWORD),
    ];
    let file = incident_file(scratch.path(), "INC-TLS-1");

    let ingest = strata(&data, &trusted, &["--store", &url, "ingest", &file]);
    assert!(ingest.status.success(), "{}", stderr(&ingest));
    let read = timeline(&data, &trusted, &url);
    assert!(stdout(&read).contains("INC-TLS-1"), "{}", stderr(&read));
    let plain = timeline(
        &data,
        &[("STRATA_FALKORDB_PASSWORD", PASSWORD)],
        &format!("falkordb://127.0.0.1:{}/tls", server.port),
    );
    assert!(
        stdout(&plain).contains("INC-TLS-1"),
        "what went over TLS is the server's graph: {}",
        stderr(&plain)
    );

    let untrusted = timeline(&data, &[("STRATA_FALKORDB_PASSWORD", PASSWORD)], &url);
    assert!(
        !untrusted.status.success(),
        "a certificate from an unknown CA is refused: {}",
        stdout(&untrusted)
    );
    let err = stderr(&untrusted).to_lowercase();
    assert!(err.contains("certificate"), "{err}");
    let shown = everything_shown(&data, &[&ingest, &read, &plain, &untrusted]);
    assert!(
        !shown.contains(PASSWORD),
        "the password was shown:\n{shown}"
    );
}

/// Qdrant serving TLS on both ports with an API key, from a certificate made here.
struct TlsQdrant {
    child: std::process::Child,
    grpc_port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for TlsQdrant {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tls_qdrant(certs: &TestCerts, api_key: &str) -> Option<TlsQdrant> {
    let bin = common::qdrant::binary()?;
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, &certs.cert_pem).unwrap();
    std::fs::write(&key, &certs.key_pem).unwrap();
    let http_port = common::falkordb::free_port();
    let grpc_port = common::falkordb::free_port();
    let log = std::fs::File::create(dir.path().join("qdrant.log")).unwrap();
    let child = Command::new(bin)
        .current_dir(dir.path())
        .env("QDRANT__SERVICE__HOST", "127.0.0.1")
        .env("QDRANT__SERVICE__HTTP_PORT", http_port.to_string())
        .env("QDRANT__SERVICE__GRPC_PORT", grpc_port.to_string())
        .env("QDRANT__SERVICE__ENABLE_TLS", "true")
        .env("QDRANT__SERVICE__API_KEY", api_key)
        .env("QDRANT__TLS__CERT", &cert)
        .env("QDRANT__TLS__KEY", &key)
        .env("QDRANT__STORAGE__STORAGE_PATH", dir.path().join("storage"))
        .env(
            "QDRANT__STORAGE__SNAPSHOTS_PATH",
            dir.path().join("snapshots"),
        )
        .env("QDRANT__TELEMETRY_DISABLED", "true")
        .env("QDRANT__LOG_LEVEL", "WARN")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", grpc_port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "Qdrant did not start: {}",
            std::fs::read_to_string(dir.path().join("qdrant.log")).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Some(TlsQdrant {
        child,
        grpc_port,
        _dir: dir,
    })
}

#[test]
fn qdrant_over_tls_with_an_api_key() {
    let certs = make_certs();
    let api_key = "qdrant-key-5ecret";
    let Some(qdrant) = tls_qdrant(&certs, api_key) else {
        eprintln!("skipped: no Qdrant binary (../shared/bin/qdrant or STRATA_QDRANT_BIN)");
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let ca = scratch.path().join("ca.pem");
    std::fs::write(&ca, &certs.ca_pem).unwrap();
    let data = scratch.path().join("data");
    let url = format!("qdrants://localhost:{}", qdrant.grpc_port);
    let file = incident_file(scratch.path(), "INC-QTLS-1");
    let ca = ca.to_str().unwrap();
    let recall = |key: &str| {
        strata(
            &data,
            &[("SSL_CERT_FILE", ca), ("STRATA_QDRANT_API_KEY", key)],
            &[
                "--vectors",
                &url,
                "recall",
                "INC-QTLS-1 summary",
                "--legs",
                "semantic",
                "--json",
            ],
        )
    };

    // Qdrant may take a moment to answer over TLS after its port opens.
    let mut ingest = None;
    for _ in 0..50 {
        let out = strata(
            &data,
            &[("SSL_CERT_FILE", ca), ("STRATA_QDRANT_API_KEY", api_key)],
            &["--vectors", &url, "ingest", &file],
        );
        if out.status.success() && !stderr(&out).contains("unavailable") {
            ingest = Some(out);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let ingest = ingest.expect("ingest with the semantic index on Qdrant over TLS");
    let good = recall(api_key);
    let json: serde_json::Value =
        serde_json::from_slice(&good.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&good)));
    assert_eq!(json["legs"]["semantic"]["status"], "ok", "{json}");
    assert_eq!(json["results"][0]["fingerprint"], "INC-QTLS-1", "{json}");

    let bad = recall("not-the-key");
    let json: serde_json::Value =
        serde_json::from_slice(&bad.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&bad)));
    assert_ne!(json["legs"]["semantic"]["status"], "ok", "{json}");
    let said = format!("{json}{}", stderr(&bad));
    assert!(said.contains("authentication failed"), "{said}");
    let shown = everything_shown(&data, &[&ingest, &good, &bad]);
    assert!(!shown.contains(api_key), "the API key was shown:\n{shown}");
}
