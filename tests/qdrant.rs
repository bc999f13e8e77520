//! The Qdrant backend against a real server (`../shared/bin/qdrant`): the collection's
//! lifecycle and guards, two stores on one server, catch-up that embeds only what is missing,
//! and the semantic leg through a server killed, restarted and stopped.

mod common;

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::qdrant::{self, Server, demo_store, fingerprints, request, runtime, stack, store_id};
use common::*;
use strata::index::qdrant::{QdrantVectors, collection_name};
use strata::recall::LegStatus;

/// The shared server's URL, or None after saying once that the Qdrant tests skip.
fn server_url(test: &str) -> Option<String> {
    let url = qdrant::url();
    if url.is_none() {
        qdrant::skipping(test);
    }
    url
}

/// Created on first use with the embedder's dimension, cosine distance and the payload
/// indexes of the as-of filter; recording its model, store and watermark; an embedder of
/// another dimension and a collection of another distance are refused, naming both.
#[test]
fn the_collection_is_made_on_first_use_and_refuses_another_shape() {
    let Some(url) = server_url("the_collection_is_made_on_first_use") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = demo_store(dir.path());
    let id = store_id(store.as_ref());
    let name = collection_name("hash-v1", &id);
    let raw = qdrant::Raw::new(&url);
    assert!(!raw.exists(&name));
    let s = stack(store.clone(), &dir.path().join("index"), &url);
    assert!(
        s.notices.iter().all(|n| !n.contains("unavailable")),
        "{:?}",
        s.notices
    );
    assert_eq!(s.vectors.as_ref().unwrap().count().unwrap(), 300);
    assert_eq!(s.sync.vectors_embedded, 300);

    let info = raw.info(&name);
    let params = info.config.as_ref().unwrap().params.as_ref().unwrap();
    match params
        .vectors_config
        .as_ref()
        .unwrap()
        .config
        .as_ref()
        .unwrap()
    {
        qdrant_client::qdrant::vectors_config::Config::Params(p) => {
            assert_eq!(p.size, 384);
            assert_eq!(p.distance, qdrant_client::qdrant::Distance::Cosine as i32);
        }
        other => panic!("unexpected vectors config {other:?}"),
    }
    for field in ["ingested_at", "t_valid"] {
        let schema = &info.payload_schema[field];
        assert_eq!(
            schema.data_type,
            qdrant_client::qdrant::PayloadSchemaType::Integer as i32,
            "{field}"
        );
    }
    let meta = &info.config.as_ref().unwrap().metadata;
    assert_eq!(meta["model"].as_str().map(String::as_str), Some("hash-v1"));
    assert_eq!(meta["store_id"].as_str(), Some(&id));
    assert_eq!(meta["dimension"].as_integer(), Some(384));
    let watermark = s.vectors.as_ref().unwrap().watermark().unwrap();
    assert_eq!(meta["watermark"].as_integer(), Some(watermark as i64));
    assert!(watermark > 0);

    let e = QdrantVectors::open(&url, "hash-v1", 8, &id, None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains(&name), "{e}");
    assert!(e.contains("holds 384-dimensional Cosine vectors"), "{e}");
    assert!(e.contains("needs 8-dimensional Cosine vectors"), "{e}");

    let foreign = format!("dot-{}", std::process::id());
    raw.create(
        &collection_name("hash-v1", &foreign),
        384,
        qdrant_client::qdrant::Distance::Dot,
    );
    let e = QdrantVectors::open(&url, "hash-v1", 384, &foreign, None)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("holds 384-dimensional Dot vectors"), "{e}");
    assert!(e.contains("needs 384-dimensional Cosine"), "{e}");
}

/// Two clients creating the same collection at once with embedders of different
/// dimensions: one collection, of the winner's dimension, and a clear refusal for the other.
#[test]
fn creating_one_collection_at_once_with_two_embedders_leaves_one_and_a_refusal() {
    let Some(url) = server_url("creating_one_collection_at_once") else {
        return;
    };
    let raw = qdrant::Raw::new(&url);
    for trial in 0..5 {
        let id = format!("race-{}-{trial}", std::process::id());
        let barrier = Arc::new(Barrier::new(2));
        let racers: Vec<_> = [384usize, 256]
            .into_iter()
            .map(|dimension| {
                let (url, id, barrier) = (url.clone(), id.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    QdrantVectors::open(&url, "hash-v1", dimension, &id, None)
                        .map(|v| v.dimension())
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        let outcomes: Vec<Result<usize, String>> =
            racers.into_iter().map(|t| t.join().unwrap()).collect();
        let won: Vec<usize> = outcomes.iter().filter_map(|o| o.clone().ok()).collect();
        assert_eq!(won.len(), 1, "trial {trial}: {outcomes:?}");
        let refusal = outcomes.iter().find_map(|o| o.clone().err()).unwrap();
        let lost = if won[0] == 384 { 256 } else { 384 };
        assert!(
            refusal.contains(&format!("holds {}-dimensional Cosine", won[0]))
                && refusal.contains(&format!("needs {lost}-dimensional")),
            "trial {trial}: {refusal}"
        );
        let info = raw.info(&collection_name("hash-v1", &id));
        match info
            .config
            .unwrap()
            .params
            .unwrap()
            .vectors_config
            .unwrap()
            .config
            .unwrap()
        {
            qdrant_client::qdrant::vectors_config::Config::Params(p) => {
                assert_eq!(p.size, won[0] as u64)
            }
            other => panic!("unexpected vectors config {other:?}"),
        }
    }
}

/// Points lost from the collection (another program deleted them) and a new episode: the
/// catch-up embeds exactly those three, not the 298 already stored; a second open embeds
/// nothing.
#[test]
fn catch_up_embeds_only_what_is_missing() {
    let Some(url) = server_url("catch_up_embeds_only_what_is_missing") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = demo_store(dir.path());
    let name = collection_name("hash-v1", &store_id(store.as_ref()));
    let first = stack(store.clone(), &dir.path().join("index"), &url);
    assert_eq!(first.sync.vectors_embedded, 300);
    let lost: Vec<String> = store
        .episodes_since(0, 2)
        .unwrap()
        .episodes
        .into_iter()
        .map(|(_, e)| e.incident_fingerprint)
        .collect();
    drop(first);
    qdrant::Raw::new(&url)
        .delete_points(&name, &lost.iter().map(String::as_str).collect::<Vec<_>>());
    ingest_at(
        store.as_ref(),
        &[record("INC-LATE", "2026-11-30T10:00:00Z")],
        "2026-12-01T00:00:00Z",
    )
    .unwrap();
    let second = stack(store.clone(), &dir.path().join("index"), &url);
    assert_eq!(second.sync.vectors_embedded, 3, "{:?}", second.notices);
    assert_eq!(second.vectors.as_ref().unwrap().count().unwrap(), 301);
    drop(second);
    let third = stack(store, &dir.path().join("index"), &url);
    assert_eq!(third.sync.vectors_embedded, 0);
}

/// Two data directories, each ingesting and recalling through the real binary against one
/// Qdrant: the same text in both, and neither ever returns the other's episode.
#[test]
fn two_stores_on_one_server_never_see_each_others_points() {
    let Some(url) = server_url("two_stores_on_one_server") else {
        return;
    };
    let text = "postgres disk full: pg_wal grew until the volume filled";
    let run = |dir: &std::path::Path, args: &[&str]| {
        let mut all = vec!["--vectors", url.as_str(), "--now", "2026-12-01T00:00:00Z"];
        all.extend_from_slice(args);
        let out = strata(dir, &all);
        assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
        stdout(&out)
    };
    let mut dirs = Vec::new();
    for fp in ["INC-STORE-A", "INC-STORE-B"] {
        let dir = tempfile::tempdir().unwrap();
        let mut r = record(fp, "2026-11-01T10:00:00Z");
        r["summary_nl"] = text.into();
        r["resolution_nl"] = "grew the volume".into();
        let file = dir.path().join("in.ndjson");
        std::fs::write(&file, ndjson(&[r])).unwrap();
        run(dir.path(), &["ingest", file.to_str().unwrap()]);
        dirs.push((fp, dir));
    }
    for (fp, dir) in &dirs {
        for legs in ["semantic", "semantic,bm25,graph"] {
            let out = run(dir.path(), &["recall", text, "--legs", legs, "--json"]);
            let json: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(json["legs"]["semantic"]["status"], "ok", "{out}");
            let found: Vec<&str> = json["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["fingerprint"].as_str().unwrap())
                .collect();
            assert_eq!(found, vec![*fp], "{legs}: {out}");
        }
    }
}

/// Killed while recall runs: the semantic leg fails with the reason, the others answer; once
/// the server is back the leg answers again by itself, with the same ranking.
#[test]
fn a_killed_qdrant_fails_the_leg_open_and_the_leg_recovers_on_its_own() {
    let Some(mut server) = Server::start() else {
        qdrant::skipping("a_killed_qdrant_fails_the_leg_open");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = demo_store(dir.path());
    let s = stack(store, &dir.path().join("index"), &server.url());
    let rt = runtime();
    let q = request(
        "postgres disk full, pg_wal grew",
        &["service:postgres"],
        "2026-12-01T00:00:00Z",
    );
    let before = rt.block_on(s.engine.recall(&q));
    assert_eq!(
        before.legs.semantic.status,
        LegStatus::Ok,
        "{:?}",
        before.legs.semantic
    );

    server.kill();
    let down = rt.block_on(s.engine.recall(&q));
    assert_ne!(down.legs.semantic.status, LegStatus::Ok);
    let reason = down.legs.semantic.error.clone().unwrap_or_default();
    assert!(
        reason.contains(&format!("127.0.0.1:{}", server.grpc_port)),
        "{reason}"
    );
    assert_eq!(down.legs.bm25.status, LegStatus::Ok);
    assert_eq!(down.legs.graph.status, LegStatus::Ok);
    assert!(!down.results.is_empty());

    server.restart();
    let deadline = Instant::now() + Duration::from_secs(30);
    let again = loop {
        let r = rt.block_on(s.engine.recall(&q));
        if r.legs.semantic.status == LegStatus::Ok {
            break r;
        }
        assert!(
            Instant::now() < deadline,
            "never recovered: {:?}",
            r.legs.semantic
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(fingerprints(&again), fingerprints(&before));
}

/// The threads of runtimes named `name`: other tests in this binary run at the same time and
/// start threads of their own.
fn threads_named(name: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|comm| comm.trim_end() == name)
        .count()
}

/// Stopped (SIGSTOP): the leg times out at its bound on every recall while the others
/// answer, and searches waiting on the server stay capped instead of piling up workers;
/// continued (SIGCONT), the leg answers again.
#[test]
fn a_stopped_qdrant_times_the_leg_out_without_piling_up_workers() {
    let Some(server) = Server::start() else {
        qdrant::skipping("a_stopped_qdrant_times_the_leg_out");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = demo_store(dir.path());
    let mut s = stack(store, &dir.path().join("index"), &server.url());
    // Under a third of Qdrant's own 2 s bound, so a paused server times the leg out and
    // searches still waiting on it pile up to the cap; over twice the default, a hundred times
    // what the local legs take here, so they answer however loaded the machine.
    s.engine.timeout = Duration::from_millis(600);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("stopped-qdrant")
        .enable_all()
        .build()
        .unwrap();
    let q = request(
        "certificate expired on every hostname",
        &["service:caddy"],
        "2026-12-01T00:00:00Z",
    );
    let before = rt.block_on(s.engine.recall(&q));
    assert_eq!(
        before.legs.semantic.status,
        LegStatus::Ok,
        "{:?}",
        before.legs.semantic
    );
    let threads_before = threads_named("stopped-qdrant");

    server.pause(true);
    let mut refused = 0;
    for _ in 0..16 {
        let r = rt.block_on(s.engine.recall(&q));
        let sem = &r.legs.semantic;
        assert_ne!(sem.status, LegStatus::Ok);
        let error = sem.error.clone().unwrap_or_default();
        if sem.status == LegStatus::Failed {
            assert!(error.contains("still waiting on Qdrant"), "{error}");
            refused += 1;
        } else {
            assert!(error.contains("no answer within"), "{error}");
        }
        assert_eq!(r.legs.bm25.status, LegStatus::Ok);
        assert_eq!(r.legs.graph.status, LegStatus::Ok);
    }
    assert!(refused > 0, "no search was refused while two were waiting");
    // Two searches may wait on the server, each holding a worker; under load the pool adds a
    // few more for the other legs. Searches piling up would add one per recall: 16.
    let grown = threads_named("stopped-qdrant").saturating_sub(threads_before);
    assert!(
        grown <= 8,
        "{grown} more threads after 16 recalls against a stopped server"
    );

    server.pause(false);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r = rt.block_on(s.engine.recall(&q));
        if r.legs.semantic.status == LegStatus::Ok {
            assert_eq!(fingerprints(&r), fingerprints(&before));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never recovered: {:?}",
            r.legs.semantic
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
