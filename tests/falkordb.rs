//! The FalkorDB backend against a real server: a graph another program wrote, the server
//! killed and restarted mid-session, its own vector index, and the explorer with the server down.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::falkordb::{Server, graph_url, raw_query};
use common::*;
use strata::embed::HashEmbedder;
use strata::index::VectorLocation;
use strata::model::{AsOf, EntityKey, FactState};
use strata::recall::{
    FusionPolicy, Leg, LegSet, LegStatus, RecallRequest, RecallStack, StackOptions,
};
use strata::store::falkordb::{FalkorStore, FalkorUrl};
use strata::store::{MemoryStore, TimelineQuery};

/// Legs' success is asserted, not timed: recall here waits generously.
const GENEROUS: Duration = Duration::from_secs(30);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn request(text: &str, entities: &[&str], at: &str) -> RecallRequest {
    RecallRequest {
        exclude: Vec::new(),
        text: text.into(),
        entities: entities.iter().map(|e| e.parse().unwrap()).collect(),
        as_of: AsOf::now(ts(at)),
        k: 10,
        legs: LegSet::ALL,
        fusion: FusionPolicy::Rrf,
        stale: Default::default(),
    }
}

/// Another agent writes the graph with raw GRAPH.QUERY and the documented schema; Strata
/// reads it as-is: episodes, facts with both axes, lineage, timeline, recall.
#[test]
fn a_graph_written_by_another_program_reads_as_is() {
    let url = graph_url("foreign");
    let ms = |s: &str| ts(s).millis();
    raw_query(
        &url,
        &format!(
            "CREATE (a:MemoryEpisode {{incident_fingerprint: 'OPS-1', summary_nl: 'disk full on db-1', \
             resolution_nl: 'rotated WAL', concluded_at: {c1}, ingested_at: {i1}, t_valid: {v1}, \
             source: 'other-agent', status: 'concluded', confidence_score: 0.8}}), \
             (b:MemoryEpisode {{incident_fingerprint: 'OPS-2', summary_nl: 'disk full again on db-1', \
             resolution_nl: 'grew the volume', concluded_at: {c2}, ingested_at: {i2}, t_valid: {v2}, \
             source: 'other-agent', status: 'concluded', confidence_score: 0.9}}), \
             (h:MemoryEntity {{entity_type: 'host', entity_ref: 'db-1', ingested_at: {i1}}}), \
             (r:MemoryEntity {{entity_type: 'change', entity_ref: 'wal-rotation', ingested_at: {i1}}}), \
             (r2:MemoryEntity {{entity_type: 'change', entity_ref: 'volume-grow', ingested_at: {i2}}}), \
             (a)-[:MENTIONS {{t_valid: {v1}, ingested_at: {i1}, source: 'other-agent', status: 'concluded', confidence_score: 0.8}}]->(h), \
             (a)-[:RESOLVED_BY {{t_valid: {v1}, t_invalid: {v2}, ingested_at: {i1}, expired_at: {i2}, source: 'other-agent', status: 'concluded', confidence_score: 0.8}}]->(r), \
             (b)-[:MENTIONS {{t_valid: {v2}, ingested_at: {i2}, source: 'other-agent', status: 'concluded', confidence_score: 0.9}}]->(h), \
             (b)-[:RESOLVED_BY {{t_valid: {v2}, ingested_at: {i2}, source: 'other-agent', status: 'concluded', confidence_score: 0.9}}]->(r2), \
             (b)-[:SUPERSEDES {{entity_type: 'change', entity_ref: 'wal-rotation', t_valid: {v2}, ingested_at: {i2}, source: 'other-agent', status: 'concluded', confidence_score: 0.9}}]->(a)",
            c1 = ms("2026-03-01T12:00:00Z"),
            i1 = ms("2026-03-01T13:00:00Z"),
            v1 = ms("2026-03-01T10:00:00Z"),
            c2 = ms("2026-04-01T12:00:00Z"),
            i2 = ms("2026-04-01T13:00:00Z"),
            v2 = ms("2026-04-01T10:00:00Z"),
        ),
    );
    let store = FalkorStore::connect(&url).unwrap();
    let a = store.episode("OPS-1").unwrap().unwrap();
    assert_eq!(a.summary_nl, "disk full on db-1");
    assert_eq!(a.provenance.source, "other-agent");
    assert_eq!(a.ingested_at, ts("2026-03-01T13:00:00Z"));
    let facts = store.facts("OPS-1").unwrap();
    assert_eq!(facts.len(), 2);
    let closed = facts
        .iter()
        .find(|f| f.entity.entity_ref == "wal-rotation")
        .unwrap();
    assert_eq!(
        closed.superseded_by.as_deref(),
        Some("OPS-2"),
        "derived from the SUPERSEDES edge"
    );
    let before = AsOf {
        valid_at: ts("2026-03-15T00:00:00Z"),
        known_at: ts("2026-03-15T00:00:00Z"),
    };
    let after = AsOf::now(ts("2026-05-01T00:00:00Z"));
    assert_eq!(before.fact_state(closed), FactState::Valid);
    assert_eq!(after.fact_state(closed), FactState::Invalidated);
    let chain = strata::query::lineage(&store, "OPS-2", ts("2026-05-01T00:00:00Z")).unwrap();
    assert_eq!(chain.backwards.len(), 1);
    let timeline: Vec<String> = store
        .timeline(&TimelineQuery {
            limit: 10,
            ..Default::default()
        })
        .unwrap()
        .into_iter()
        .map(|e| e.incident_fingerprint)
        .collect();
    assert_eq!(timeline, ["OPS-2", "OPS-1"]);
    assert_eq!(store.entities().unwrap().len(), 3);
    assert!(
        store.check().unwrap().is_consistent(),
        "{:?}",
        store.check().unwrap().problems
    );
    // Strata can add to it without disturbing it.
    ingest_at(
        &store,
        &[record("INC-1", "2026-05-01T10:00:00Z")],
        "2026-05-02T00:00:00Z",
    )
    .unwrap();
    assert_eq!(store.stats().unwrap().episodes, 3);

    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn MemoryStore> = Arc::new(store);
    let mut stack = RecallStack::open(
        store,
        Ok(Arc::new(HashEmbedder::default())),
        &StackOptions {
            index_dir: dir.path().into(),
            sync: true,
            vectors: VectorLocation::Local,
            runtime: None,
        },
        &mut |_, _| {},
    );
    stack.engine.timeout = GENEROUS;
    let r = runtime().block_on(stack.engine.recall(&request(
        "disk full",
        &["host:db-1"],
        "2026-05-01T00:00:00Z",
    )));
    assert_eq!(r.legs.graph.status, LegStatus::Ok);
    let found: Vec<&str> = r.results.iter().map(|x| x.fingerprint.as_str()).collect();
    assert!(
        found.contains(&"OPS-1") && found.contains(&"OPS-2"),
        "{found:?}"
    );
}

/// FalkorDB's own vector index: the semantic leg inside the graph, as-of filtered, guarded
/// against another embedder.
#[test]
fn the_graphs_vector_index_serves_the_semantic_leg() {
    let url = graph_url("vectors");
    let store: Arc<dyn MemoryStore> = Arc::new(FalkorStore::connect(&url).unwrap());
    strata::demo::seed(store.as_ref()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let open = |location: VectorLocation, sub: &str| {
        let mut stack = RecallStack::open(
            store.clone(),
            Ok(Arc::new(HashEmbedder::default())),
            &StackOptions {
                index_dir: dir.path().join(sub),
                sync: true,
                vectors: location,
                runtime: None,
            },
            &mut |_, _| {},
        );
        stack.engine.timeout = GENEROUS;
        stack
    };
    let local = open(VectorLocation::Local, "local");
    let server = open(VectorLocation::FalkorDb(url.clone()), "server");
    assert!(
        !server.notices.iter().any(|n| n.contains("unavailable")),
        "{:?}",
        server.notices
    );
    assert_eq!(server.vectors.as_ref().unwrap().count().unwrap(), 300);
    let rt = runtime();
    for at in ["2026-12-01T00:00:00Z", "2025-06-01T00:00:00Z"] {
        let mut q = request("postgres disk full, pg_wal grew", &[], at);
        q.legs = LegSet::of(&[Leg::Semantic]);
        let a = rt.block_on(local.engine.recall(&q));
        let b = rt.block_on(server.engine.recall(&q));
        assert_eq!(
            b.legs.semantic.status,
            LegStatus::Ok,
            "{:?}",
            b.legs.semantic
        );
        let fps = |r: &strata::recall::RecallResponse| {
            r.results
                .iter()
                .map(|x| x.fingerprint.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            fps(&a),
            fps(&b),
            "exact local kNN and the server's index agree at {at}"
        );
        for x in &b.results {
            let e = store.episode(&x.fingerprint).unwrap().unwrap();
            assert!(e.ingested_at <= ts(at), "as-of filter");
        }
    }
    match VectorLocation::FalkorDb(url).open(dir.path(), "other-model", 8, None, None) {
        Err(e) => assert!(e.to_string().contains("hash-v1"), "{e}"),
        Ok(_) => panic!("opened an index of another model"),
    }
}

/// Killed mid-session: calls fail (fast, with the address), recall fails open on the graph
/// leg only, and everything reconnects once the server is back.
#[test]
fn a_killed_server_fails_open_and_reconnects_when_it_returns() {
    let mut server = Server::start(None);
    let port = server.port;
    let url: FalkorUrl = format!("falkordb://127.0.0.1:{port}/killed")
        .parse()
        .unwrap();
    let store = Arc::new(FalkorStore::connect(&url).unwrap());
    strata::demo::seed(store.as_ref()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut stack = RecallStack::open(
        store.clone(),
        Ok(Arc::new(HashEmbedder::default())),
        &StackOptions {
            index_dir: dir.path().into(),
            sync: true,
            vectors: VectorLocation::Local,
            runtime: None,
        },
        &mut |_, _| {},
    );
    stack.engine.timeout = GENEROUS;
    let rt = runtime();
    let q = request(
        "pgbouncer pool exhausted",
        &["service:pgbouncer"],
        "2026-12-01T00:00:00Z",
    );
    assert_eq!(
        rt.block_on(stack.engine.recall(&q)).legs.graph.status,
        LegStatus::Ok
    );

    server.kill();
    let err = store.stats().unwrap_err().to_string();
    assert!(
        err.contains("unreachable") || err.contains("FalkorDB"),
        "{err}"
    );
    let r = rt.block_on(stack.engine.recall(&q));
    assert_ne!(
        r.legs.graph.status,
        LegStatus::Ok,
        "the graph leg fails open"
    );
    assert_eq!(r.legs.bm25.status, LegStatus::Ok, "local legs still answer");
    assert_eq!(r.legs.semantic.status, LegStatus::Ok);
    assert!(!r.results.is_empty());

    let _back = Server::start(Some(port));
    let mut stats = store.stats();
    for _ in 0..50 {
        if stats.is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
        stats = store.stats();
    }
    assert_eq!(
        stats.unwrap().episodes,
        0,
        "a fresh server (no persistence) answers again"
    );
    strata::demo::seed(store.as_ref()).unwrap();
    let again = rt.block_on(stack.engine.recall(&q));
    assert_eq!(
        again.legs.graph.status,
        LegStatus::Ok,
        "{:?}",
        again.legs.graph
    );
    assert!(
        !store
            .entity_facts(&EntityKey::new("service", "pgbouncer").unwrap())
            .unwrap()
            .is_empty()
    );
}

/// With the server down the explorer still opens, says why, and recall degrades to the legs
/// that do not need it.
#[test]
fn the_explorer_opens_with_the_server_down() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("down.tape");
    std::fs::write(&script, "WaitIdle\nExpect \"unreachable\"\nKey q\n").unwrap();
    let port = common::falkordb::free_port();
    let out = strata(
        dir.path(),
        &[
            "--store",
            &format!("falkordb://localhost:{port}/down"),
            "headless",
            "--script",
            script.to_str().unwrap(),
            "--now",
            "2026-12-01T00:00:00Z",
            "--mask",
        ],
    );
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
}

/// `strata headless --store URL` records the explorer over a FalkorDB graph.
#[test]
fn headless_runs_over_a_falkordb_store() {
    let dir = tempfile::tempdir().unwrap();
    let url = graph_url("headless").to_string();
    let script = dir.path().join("tour.tape");
    std::fs::write(
        &script,
        "WaitIdle\nExpect \"INC-0300\"\nExpect \"FalkorDB\"\nAction recall.query pgbouncer pool exhausted, postgres refusing connections\nWaitIdle\nExpect \"FalkorDB ● ok\"\nExpect \"[x] semantic (s) ok 50 hits\"\nExpect \"10  INC-0276 ▽  2     9     1\"\nSnapshot recall\n",
    )
    .unwrap();
    let out = strata(
        dir.path(),
        &[
            "--store",
            &url,
            "headless",
            "--demo",
            "--script",
            script.to_str().unwrap(),
            "--now",
            "2026-12-01T00:00:00Z",
            "--mask",
            "--out",
            dir.path().join("frames").to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    assert!(dir.path().join("frames/recall.svg").is_file());
}

/// FalkorDB orders the ingest log by knowledge time then fingerprint, so an episode recorded
/// at the same instant with a smaller fingerprint lands behind the indexes' watermark; they
/// notice by count and catch up.
/// A later batch at the same knowledge time whose fingerprint sorts first still comes after
/// every earlier batch in the ingest log, so catching up reads only it; an episode another
/// program writes without a batch generation lands behind the watermark and is found by count.
#[test]
fn indexes_catch_up_when_an_episode_lands_behind_the_watermark() {
    let url = graph_url("behind");
    let store: Arc<dyn MemoryStore> = Arc::new(FalkorStore::connect(&url).unwrap());
    let now = "2026-02-01T00:00:00Z";
    ingest_at(
        store.as_ref(),
        &[
            record("INC-1", "2026-01-01T10:00:00Z"),
            record("INC-3", "2026-01-03T10:00:00Z"),
        ],
        now,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let open = || {
        let mut stack = RecallStack::open(
            store.clone(),
            Ok(Arc::new(HashEmbedder::default())),
            &StackOptions {
                index_dir: dir.path().into(),
                sync: true,
                vectors: VectorLocation::Local,
                runtime: None,
            },
            &mut |_, _| {},
        );
        stack.engine.timeout = GENEROUS;
        stack
    };
    let stack = open();
    assert_eq!(stack.text.as_ref().unwrap().len(), 2);
    ingest_at(
        store.as_ref(),
        &[record("INC-0", "2026-01-02T10:00:00Z")],
        now,
    )
    .unwrap();
    let (sync, problems) = stack.catch_up(store.as_ref(), &mut |_, _| {});
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        (sync.text_indexed, sync.vectors_embedded),
        (1, 1),
        "only the new batch is read"
    );
    assert_eq!(stack.text.as_ref().unwrap().len(), 3);
    drop(stack);

    let at = ts(now).millis();
    raw_query(
        &url,
        &format!(
            "CREATE (:MemoryEpisode {{incident_fingerprint: 'A-FOREIGN', summary_nl: 'written elsewhere', \
             resolution_nl: 'by another agent', concluded_at: {at}, ingested_at: {at}, t_valid: {at}, \
             source: 'other-agent', status: 'concluded', confidence_score: 0.5}})"
        ),
    );
    let reopened = open();
    assert_eq!(
        reopened.text.as_ref().unwrap().len(),
        4,
        "{:?}",
        reopened.notices
    );
    assert_eq!(reopened.vectors.as_ref().unwrap().count().unwrap(), 4);
}

/// A dense supersession graph: each episode of a layer supersedes both episodes of the layer
/// before (one on each of two entities), so the paths down from the top double with every
/// layer (2^29 here). Lineage walks it hop by hop with a visited set: it returns each edge
/// once, exactly as the embedded store does, in seconds (a walk of its paths would not end).
#[test]
fn lineage_over_a_dense_supersession_graph_costs_its_edges_not_its_paths() {
    use serde_json::json;
    const LAYERS: i64 = 30;
    let server = common::falkordb::store("dense_lineage");
    let (_dir, embedded) = temp_store();
    for layer in 0..LAYERS {
        let start = ts("2026-01-01T00:00:00Z").plus_millis(layer * 3_600_000);
        let records: Vec<serde_json::Value> = (0..2)
            .map(|i| {
                let mut r = json!({
                    "incident_fingerprint": format!("DAG-{layer:02}-{i}"),
                    "summary_nl": format!("layer {layer} episode {i}"),
                    "resolution_nl": "",
                    "concluded_at": start.plus_millis(1_800_000).to_rfc3339(),
                    "t_valid": start.to_rfc3339(),
                    "mentions": [{"entity_type": "service", "entity_ref": "a"},
                                 {"entity_type": "service", "entity_ref": "b"}],
                });
                if layer > 0 {
                    let entity = if i == 0 { "a" } else { "b" };
                    r["supersedes"] = json!([0, 1].map(|p| json!({
                        "incident_fingerprint": format!("DAG-{:02}-{p}", layer - 1),
                        "entity_type": "service",
                        "entity_ref": entity,
                    })));
                }
                r
            })
            .collect();
        let now = start.plus_millis(2_000_000).to_rfc3339();
        ingest_at(&server, &records, &now).unwrap();
        ingest_at(&embedded, &records, &now).unwrap();
    }
    let known_at = ts("2027-01-01T00:00:00Z");
    let started = std::time::Instant::now();
    let top = strata::query::lineage(&server, "DAG-29-0", known_at).unwrap();
    let bottom = strata::query::lineage(&server, "DAG-00-1", known_at).unwrap();
    let took = started.elapsed();
    assert_eq!(top.backwards.len(), 2 + 4 * 28, "every edge below, once");
    assert_eq!(bottom.forwards.len(), 2 + 4 * 28, "every edge above, once");
    let edges = |l: &strata::query::Lineage| serde_json::to_string(l).unwrap();
    assert_eq!(
        edges(&top),
        edges(&strata::query::lineage(&embedded, "DAG-29-0", known_at).unwrap())
    );
    assert_eq!(
        edges(&bottom),
        edges(&strata::query::lineage(&embedded, "DAG-00-1", known_at).unwrap())
    );
    assert!(took < Duration::from_secs(5), "lineage took {took:?}");
}
