#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use strata::ingest;
use strata::model::Timestamp;
use strata::store::embedded::EmbeddedStore;
use strata::store::{ApplyReport, MemoryStore};

pub fn ts(s: &str) -> Timestamp {
    Timestamp::parse(s).unwrap()
}

pub fn temp_store() -> (tempfile::TempDir, EmbeddedStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    (dir, store)
}

/// A minimal valid record concluded two hours after `start`.
pub fn record(fp: &str, start: &str) -> Value {
    let t = ts(start);
    json!({
        "incident_fingerprint": fp,
        "summary_nl": format!("{fp} summary"),
        "resolution_nl": format!("{fp} resolution"),
        "concluded_at": t.plus_millis(7_200_000).to_rfc3339(),
        "t_valid": start,
        "mentions": [{"entity_type": "service", "entity_ref": "authelia"}],
        "resolved_by": [{"entity_type": "change", "entity_ref": format!("cfg-{fp}")}],
        "provenance": {"source": "test", "status": "concluded", "confidence_score": 0.9}
    })
}

pub fn ndjson(records: &[Value]) -> String {
    records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Validates and writes `records` as one batch stamped at `now`.
pub fn ingest_at(
    store: &dyn MemoryStore,
    records: &[Value],
    now: &str,
) -> Result<ApplyReport, ingest::IngestFailure> {
    let prepared = ingest::prepare_text("test.ndjson", &ndjson(records), ts(now))?;
    ingest::write(store, &prepared.batch)
}

pub fn strata(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .env("STRATA_EMBEDDER", "hash")
        .arg("--data")
        .arg(data)
        .args(args)
        .output()
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `../shared/` beside the checkout, or `STRATA_SHARED`.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("STRATA_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}
