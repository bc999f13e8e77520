//! No LLM on the recall path. Structurally, recall's only model interface is `Embedder`, which
//! can only turn text into vectors. Behaviourally, this sentinel stands in for an
//! OpenAI-compatible server: it answers `/v1/embeddings` and records every request, so any
//! call to a generation endpoint (`/v1/chat/completions`, `/v1/completions`, ...) made while
//! ingesting, indexing or recalling fails the test.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use common::*;
use serde_json::{Value, json};
use strata::embed::{Embedder, HashEmbedder};

const DIM: usize = 32;

type Log = Arc<Mutex<Vec<(String, String)>>>;

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(String, String)> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let path = line.split_whitespace().nth(1)?.to_string();
    let (mut length, mut chunked) = (0usize, false);
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let h = header.trim().to_ascii_lowercase();
        if h.is_empty() {
            break;
        }
        if let Some(v) = h.strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
        if h.starts_with("transfer-encoding:") && h.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim(), 16).ok()?;
            let mut chunk = vec![0; n + 2];
            reader.read_exact(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body).ok()?;
    }
    Some((path, String::from_utf8_lossy(&body).into_owned()))
}

fn serve(conn: TcpStream, log: Log) {
    let mut writer = conn.try_clone().unwrap();
    let mut reader = BufReader::new(conn);
    while let Some((path, body)) = read_request(&mut reader) {
        log.lock().unwrap().push((path.clone(), body.clone()));
        let (status, payload) = if path == "/v1/embeddings" {
            let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            let inputs: Vec<String> = request["input"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            let hash = HashEmbedder::with_dimension(DIM);
            let data: Vec<Value> = inputs
                .iter()
                .enumerate()
                .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": hash.embed(t).unwrap()}))
                .collect();
            (
                "200 OK",
                json!({"object": "list", "model": "sentinel", "data": data}).to_string(),
            )
        } else {
            (
                "404 Not Found",
                json!({"error": "the sentinel serves embeddings only"}).to_string(),
            )
        };
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{payload}",
            payload.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

fn sentinel() -> (String, Log) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let l = log.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let l = l.clone();
            std::thread::spawn(move || serve(conn, l));
        }
    });
    (url, log)
}

#[test]
fn recall_only_ever_asks_for_embeddings() {
    let (url, log) = sentinel();
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "--now",
        "2026-12-01T00:00:00Z",
        "--embedder",
        "openai",
        "--openai-url",
        &url,
        "--openai-model",
        "sentinel",
        "--openai-dimension",
        "32",
    ];
    let run = |extra: &[&str]| {
        let args: Vec<&str> = base.iter().copied().chain(extra.iter().copied()).collect();
        let out = strata(dir.path(), &args);
        assert!(out.status.success(), "{extra:?}: {}", stderr(&out));
        out
    };
    run(&["demo"]);
    run(&["index"]);
    let out = run(&[
        "recall",
        "users stuck in a login loop after the session secret rotated",
        "--json",
    ]);
    let response: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(response["legs"]["semantic"]["status"], "ok", "{response}");
    assert!(
        response["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["per_leg"]["semantic"].is_object())
    );

    let requests = log.lock().unwrap().clone();
    assert!(
        requests.len() >= 2,
        "the probe was reached: documents and the query were embedded"
    );
    for (path, body) in &requests {
        assert_eq!(
            path, "/v1/embeddings",
            "recall called a non-embedding endpoint"
        );
        let v: Value = serde_json::from_str(body).unwrap();
        assert!(
            v.get("messages").is_none() && v.get("prompt").is_none(),
            "{body}"
        );
    }
    assert!(
        requests
            .iter()
            .any(|(_, b)| b.contains("login loop after the session secret rotated"))
    );
}

#[test]
fn a_wrong_dimension_from_the_server_is_refused() {
    let (url, _log) = sentinel();
    let dir = tempfile::tempdir().unwrap();
    let out = strata(
        dir.path(),
        &[
            "--embedder",
            "openai",
            "--openai-url",
            &url,
            "--openai-dimension",
            "1024",
            "demo",
        ],
    );
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("returned 32 dimensions, configured for 1024"),
        "{err}"
    );
    let stats: Value =
        serde_json::from_slice(&strata(dir.path(), &["stats", "--json"]).stdout).unwrap();
    assert_eq!(
        stats["episodes"], 300,
        "the memory itself is written; only the index waits"
    );
}
