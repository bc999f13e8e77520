//! The Qdrant backend against a cluster of three peers on loopback (`../shared/bin/qdrant` in
//! distributed mode): the collection's layout over the peers, a replication factor the
//! cluster cannot meet, and recall and catch-up with one peer killed, then that peer
//! rejoining with nothing missing.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::qdrant::{self, Cluster, Raw, demo_store, fingerprints, request, runtime, stack};
use common::*;
use qdrant_client::qdrant::ReplicaState;
use strata::index::qdrant::{QdrantLayout, QdrantTarget, QdrantVectors, collection_name};
use strata::recall::{LegStatus, RecallRequest, RecallStack};

/// Each shard's copies as (peer, state), as the peer `raw` talks to sees them.
fn copies(raw: &Raw, collection: &str) -> BTreeMap<u32, Vec<(u64, i32)>> {
    let info = raw.cluster_info(collection);
    let mut shards: BTreeMap<u32, Vec<(u64, i32)>> = BTreeMap::new();
    for local in &info.local_shards {
        shards
            .entry(local.shard_id)
            .or_default()
            .push((info.peer_id, local.state));
    }
    for remote in &info.remote_shards {
        shards
            .entry(remote.shard_id)
            .or_default()
            .push((remote.peer_id, remote.state));
    }
    shards
}

fn all_active(shards: &BTreeMap<u32, Vec<(u64, i32)>>) -> bool {
    shards
        .values()
        .flatten()
        .all(|(_, state)| *state == ReplicaState::Active as i32)
}

/// Recall with the semantic leg `ok`, asked a few times: a read that reached the dead peer
/// first is answered by another copy, but the leg must be `ok` on every try.
fn recall_ok(rt: &tokio::runtime::Runtime, s: &RecallStack, q: &RecallRequest) -> Vec<String> {
    let mut seen = Vec::new();
    for _ in 0..5 {
        let r = rt.block_on(s.engine.recall(q));
        assert_eq!(
            r.legs.semantic.status,
            LegStatus::Ok,
            "{:?}",
            r.legs.semantic
        );
        seen = fingerprints(&r);
    }
    seen
}

#[test]
fn a_cluster_answers_and_catches_up_with_a_peer_down_and_the_peer_rejoins() {
    let Some(mut cluster) = Cluster::start() else {
        qdrant::skipping("a_cluster_answers_and_catches_up_with_a_peer_down");
        return;
    };
    let url = cluster.peers[0].url();
    let raw = Raw::new(&url);

    // A replication factor the cluster cannot meet: refused before anything is made.
    let impossible = format!("impossible-{}", std::process::id());
    let e = QdrantVectors::open_at(
        &QdrantTarget {
            url: url.clone(),
            layout: QdrantLayout {
                replication_factor: Some(4),
                ..Default::default()
            },
        },
        "hash-v1",
        384,
        &impossible,
        None,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("replication_factor = 4") && e.contains("has 3 peer(s)"),
        "{e}"
    );
    assert!(!raw.exists(&collection_name("hash-v1", &impossible)));

    // The default layout: a shard per peer, two copies of each on distinct peers.
    let dir = tempfile::tempdir().unwrap();
    let store = demo_store(dir.path());
    let name = collection_name("hash-v1", &qdrant::store_id(store.as_ref()));
    let index = dir.path().join("index");
    let s = stack(store.clone(), &index, &url);
    assert_eq!(s.sync.vectors_embedded, 300, "{:?}", s.notices);
    let params = raw.info(&name).config.unwrap().params.unwrap();
    assert_eq!(params.shard_number, 3);
    assert_eq!(params.replication_factor, Some(2));
    assert_eq!(params.write_consistency_factor, Some(1));
    let layout = copies(&raw, &name);
    assert_eq!(layout.len(), 3, "{layout:?}");
    for (shard, held) in &layout {
        let peers: BTreeSet<u64> = held.iter().map(|(p, _)| *p).collect();
        assert_eq!(peers.len(), 2, "shard {shard}: {held:?}");
    }

    let rt = runtime();
    let q = request(
        "postgres disk full, pg_wal grew",
        &["service:postgres"],
        "2026-12-01T00:00:00Z",
    );
    let before = recall_ok(&rt, &s, &q);

    // One peer killed: recall answers as before, and a catch-up lands.
    cluster.peers[2].kill();
    assert_eq!(recall_ok(&rt, &s, &q), before);
    drop(s);
    let late: Vec<_> = (0..20)
        .map(|i| record(&format!("INC-PEER-DOWN-{i:02}"), "2026-11-30T10:00:00Z"))
        .collect();
    ingest_at(store.as_ref(), &late, "2026-12-01T00:00:00Z").unwrap();
    let s = stack(store.clone(), &index, &url);
    assert_eq!(s.sync.vectors_embedded, 20, "{:?}", s.notices);
    let episodes = store.episode_count().unwrap();
    assert_eq!(episodes, 320);
    assert_eq!(
        s.vectors.as_ref().unwrap().count().unwrap() as u64,
        episodes
    );
    recall_ok(&rt, &s, &q);

    // The peer back: its copies are brought up to date and every copy is active again.
    cluster.peers[2].restart();
    let rejoined = Raw::new(&cluster.peers[2].url());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let seen_by_first = copies(&raw, &name);
        let seen_by_back = copies(&rejoined, &name);
        if all_active(&seen_by_first) && all_active(&seen_by_back) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "copies never all active: {seen_by_first:?} / {seen_by_back:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(raw.count(&name), episodes);

    // Nothing is missing on the peer that was down: with another peer killed, the shards
    // whose other copy was there are served by it alone, and every point is still counted.
    cluster.peers[1].kill();
    assert_eq!(raw.count(&name), episodes);
    assert_eq!(recall_ok(&rt, &s, &q), before);
}
