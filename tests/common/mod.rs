#![allow(dead_code)]

pub mod falkordb;
pub mod qdrant;
pub mod tmux;

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
/// [`record`], superseding `prior`'s fix (`change:cfg-PRIOR`).
pub fn supersede(fp: &str, start: &str, prior: &str) -> Value {
    let mut r = record(fp, start);
    r["supersedes"] = json!([{"incident_fingerprint": prior, "entity_type": "change", "entity_ref": format!("cfg-{prior}")}]);
    r
}

/// Two episodes at 2026-01-10, and two that supersede them at 2026-01-20: the memory the
/// corrections tests correct.
pub fn seed_superseded(store: &dyn MemoryStore) {
    ingest_at(
        store,
        &[
            record("CR-1", "2026-01-01T00:00:00Z"),
            record("OPS-1", "2026-01-02T00:00:00Z"),
        ],
        "2026-01-10T00:00:00Z",
    )
    .unwrap();
    ingest_at(
        store,
        &[
            supersede("CR-2", "2026-01-15T00:00:00Z", "CR-1"),
            supersede("CR-3", "2026-01-16T00:00:00Z", "OPS-1"),
        ],
        "2026-01-20T00:00:00Z",
    )
    .unwrap();
}

pub fn ingest_at(
    store: &dyn MemoryStore,
    records: &[Value],
    now: &str,
) -> Result<ApplyReport, ingest::IngestFailure> {
    let prepared = ingest::prepare_text("test.ndjson", &ndjson(records), ts(now))?;
    ingest::write(store, &prepared.batch)
}

pub fn strata(data: &Path, args: &[&str]) -> Output {
    strata_command(data, args).output().unwrap()
}

/// The `strata` binary on the data directory `data`, with the hash embedder.
pub fn strata_command(data: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_strata"));
    command
        .env("STRATA_EMBEDDER", "hash")
        // The developer's own ~/.config/strata (weights, say) stays out of the tests.
        .env("XDG_CONFIG_HOME", data.join("no-user-config"))
        .env_remove("STRATA_OTLP_ENDPOINT")
        .arg("--data")
        .arg(data)
        .args(args);
    command
}

/// Says that a test is skipped and why, where it is seen: on stderr past the harness's
/// capture, so `cargo test` shows it even when the test passes.
pub fn skip(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// Whether this process runs as root (CI does: mounts and other users are available).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A copy of a data directory (LMDB's lock files left behind: a copy gets its own).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else if entry.file_name() != "lock.mdb" {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Sends `kill -NAME` to a process (KILL, STOP, CONT…).
pub fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} {pid}");
}

/// Stops `pid` once this test process has ended: a server held in a static is never dropped.
pub fn stop_with_this_process(pid: u32) {
    let _ = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "while kill -0 {} 2>/dev/null; do sleep 0.5; done; kill {pid}",
            std::process::id()
        ))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
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

/// The explorer over a store in `dir` (seeded with the demo memory when empty), the hash
/// embedder, a fixed clock and volatile details masked, in an off-screen terminal.
pub fn explorer(dir: &Path, width: u16, height: u16) -> strata::headless::Session {
    use std::sync::Arc;
    use std::time::Duration;
    use strata::embed::HashEmbedder;
    use strata::explorer::{Explorer, Keymap, Options, RecallOpener, StoreOpener, Theme, Worker};
    use strata::recall::{RecallStack, StackOptions};

    let data = dir.to_path_buf();
    let open_store: StoreOpener = Box::new(move || {
        let store = EmbeddedStore::open(&data)?;
        if store.stats()?.episodes == 0 {
            strata::demo::seed(&store)?;
        }
        Ok((Arc::new(store) as Arc<dyn MemoryStore>, Vec::new()))
    });
    let index_dir = dir.join("index");
    let open_recall: RecallOpener = Box::new(move |store, progress| {
        let mut stack = RecallStack::open(
            store,
            Ok(Arc::new(HashEmbedder::default())),
            &StackOptions {
                index_dir,
                sync: true,
                vectors: Default::default(),
                runtime: None,
            },
            progress,
        );
        stack.engine.timeout = Duration::from_secs(30);
        stack
    });
    let worker = Worker::start(open_store, open_recall).unwrap();
    let app = Explorer::new(
        Options {
            now: ts("2026-12-01T00:00:00Z"),
            theme: Theme::default(),
            keymap: Keymap::defaults().unwrap(),
            mask_volatile: true,
            record_events: false,
            recall_k: 10,
            live_clock: false,
            recall_mode: Default::default(),
            reviewer: Some("reviewer".into()),
            write_at: Ok(strata::store::KnowledgeTime::At(ts("2026-12-01T00:00:00Z"))),
        },
        worker,
        ratatui::layout::Rect::new(0, 0, width, height),
    );
    strata::headless::Session::new(
        app,
        width,
        height,
        strata::headless::SessionOptions {
            out_dir: dir.join("frames"),
            events: None,
            title: "strata".into(),
            idle_timeout: Duration::from_secs(300),
        },
    )
    .unwrap()
}

/// Runs script lines in the session and returns the screen text.
pub fn play(session: &mut strata::headless::Session, script: &str) -> String {
    let lines = strata::headless::parse(script).unwrap();
    session.run(&lines).unwrap();
    session.text().unwrap()
}

type RawDb = heed::Database<'static, heed::types::Bytes, heed::types::Bytes>;

/// Edits one table of an LMDB environment behind Strata's back (to make a store look
/// older, newer or damaged); nothing else may have it open in this process.
pub fn raw_lmdb_edit(env_dir: &Path, table: &str, edit: impl FnOnce(RawDb, &mut heed::RwTxn)) {
    let env = unsafe {
        heed::EnvOpenOptions::new()
            .max_dbs(32)
            .map_size(1 << 40)
            .open(env_dir)
            .unwrap()
    };
    let rtxn = env.read_txn().unwrap();
    let db: RawDb = env
        .open_databases_and_commit(rtxn, |dbo, txn| -> Result<_, heed::Error> {
            let db = dbo.open_database(txn, Some(table))?;
            Ok(heed::CommitOrAbort::<_, ()>::Commit(db))
        })
        .unwrap()
        .unwrap_commit()
        .unwrap();
    let mut txn = env.write_txn().unwrap();
    edit(db, &mut txn);
    txn.commit().unwrap();
}

/// Each table's rows, as raw bytes.
pub type RawTables = std::collections::BTreeMap<String, Vec<(Vec<u8>, Vec<u8>)>>;

/// Every row of every named table of an LMDB environment, as raw bytes.
pub fn raw_lmdb_dump(env_dir: &Path, tables: &[&str]) -> RawTables {
    let env = unsafe {
        heed::EnvOpenOptions::new()
            .max_dbs(32)
            .map_size(1 << 40)
            .open(env_dir)
            .unwrap()
    };
    let mut out = std::collections::BTreeMap::new();
    for table in tables {
        let rtxn = env.read_txn().unwrap();
        let db: RawDb = env
            .open_databases_and_commit(rtxn, |dbo, txn| -> Result<_, heed::Error> {
                let db = dbo.open_database(txn, Some(table))?;
                Ok(heed::CommitOrAbort::<_, ()>::Commit(db))
            })
            .unwrap()
            .unwrap_commit()
            .unwrap();
        let txn = env.read_txn().unwrap();
        let rows = db
            .iter(&txn)
            .unwrap()
            .map(|r| {
                let (k, v) = r.unwrap();
                (k.to_vec(), v.to_vec())
            })
            .collect();
        out.insert(table.to_string(), rows);
    }
    out
}
