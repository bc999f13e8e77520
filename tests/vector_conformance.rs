//! The semantic leg's conformance suite, run on every vector store: the local exact index,
//! FalkorDB's vector index, a real Qdrant and a cluster of three Qdrant peers. Each must return the same neighbours in
//! the same order (ties to the smaller fingerprint) under the as-of filter on both axes, at
//! the interval boundaries, with hostile strings as payload, and give the demo memory the
//! same recall rankings under every fusion policy.

mod common;

use std::fmt::Write;
use std::sync::Arc;

use common::*;
use serde_json::json;
use strata::embed::{Embedder, HashEmbedder};
use strata::index::VectorLocation;
use strata::model::AsOf;
use strata::recall::{FusionPolicy, LegSet, LegStatus, RecallRequest, RecallStack, StackOptions};
use strata::store::MemoryStore;
use strata::store::embedded::EmbeddedStore;

/// One vector store over a store holding the scenario's data.
struct Subject {
    name: &'static str,
    stack: RecallStack,
}

/// The vector stores, each over a store that `fill` wrote: local, Qdrant and the Qdrant cluster
/// over an embedded store, FalkorDB's index over a FalkorDB graph. None when there is no Qdrant.
fn subjects(
    name: &str,
    fill: &dyn Fn(&dyn MemoryStore),
) -> Option<(tempfile::TempDir, Vec<Subject>)> {
    let (Some(qdrant_url), Some(cluster_url)) =
        (common::qdrant::url(), common::qdrant::cluster_url())
    else {
        common::qdrant::skipping(name);
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let embedded: Arc<dyn MemoryStore> =
        Arc::new(EmbeddedStore::open(&dir.path().join("store")).unwrap());
    fill(embedded.as_ref());
    let url = common::falkordb::graph_url(name);
    let falkor: Arc<dyn MemoryStore> =
        Arc::new(strata::store::falkordb::FalkorStore::connect(&url).unwrap());
    fill(falkor.as_ref());
    let open = |store: &Arc<dyn MemoryStore>, vectors: VectorLocation, sub: &str| {
        let mut stack = RecallStack::open(
            store.clone(),
            Ok(Arc::new(HashEmbedder::default())),
            &StackOptions {
                index_dir: dir.path().join(sub),
                sync: true,
                vectors,
                runtime: None,
            },
            &mut |_, _| {},
        );
        // Legs' success is asserted, not timed.
        stack.engine.timeout = std::time::Duration::from_secs(30);
        assert!(
            stack.notices.iter().all(|n| !n.contains("unavailable")),
            "{sub}: {:?}",
            stack.notices
        );
        stack
    };
    let subjects = vec![
        Subject {
            name: "local",
            stack: open(&embedded, VectorLocation::Local, "local"),
        },
        Subject {
            name: "qdrant",
            stack: open(
                &embedded,
                VectorLocation::Qdrant(qdrant_url.into()),
                "qdrant",
            ),
        },
        Subject {
            name: "qdrant cluster",
            stack: open(
                &embedded,
                VectorLocation::Qdrant(cluster_url.into()),
                "qdrant-cluster",
            ),
        },
        Subject {
            name: "falkordb",
            stack: open(&falkor, VectorLocation::FalkorDb(url), "falkordb"),
        },
    ];
    Some((dir, subjects))
}

/// Fails with the first differing lines between the local transcript and another's.
fn all_agree(scenario: &str, transcripts: &[(&str, String)]) {
    let (base_name, base) = &transcripts[0];
    for (name, got) in &transcripts[1..] {
        if got != base {
            let diff: Vec<String> = base
                .lines()
                .zip(got.lines())
                .filter(|(a, b)| a != b)
                .take(5)
                .map(|(a, b)| format!("{base_name}: {a:.600}\n{name}: {b:.600}"))
                .collect();
            panic!(
                "{scenario}: {name} answers differently ({} vs {} lines)\n{}",
                base.lines().count(),
                got.lines().count(),
                diff.join("\n---\n")
            );
        }
    }
}

/// Every neighbour (up to 50) of each query at each as-of point.
fn neighbours(s: &Subject, queries: &[&str], points: &[AsOf]) -> String {
    let embedder = HashEmbedder::default();
    let vectors = s.stack.vectors.as_ref().unwrap();
    let mut out = String::new();
    for q in queries {
        let v = embedder.embed(q).unwrap();
        for at in points {
            let hits = vectors.search(&v, at, 50).unwrap();
            let fps: Vec<&str> = hits.iter().map(|h| h.fingerprint.as_str()).collect();
            writeln!(out, "{q:?} V={} K={}: {fps:?}", at.valid_at, at.known_at).unwrap();
        }
    }
    out
}

const HOSTILE: &[&str] = &[
    "quote\"d 'single' `back`",
    "\"}) DETACH DELETE n //",
    "MATCH (n) DETACH DELETE n; --",
    "back\\slash \\\\ \\u0041 \\\"",
    "new\nline\r\ttab",
    "bell\u{7} escape\u{1b}[31mred\u{1b}[0m \u{7f}",
    "日本語のサービス Ωμέγα عربى 🚒",
    "pipe|and:colon $param {x: 1}",
    "{\"must\": [{\"key\": \"t_valid\"}]}",
];

/// Episodes at the edges of both axes, duplicated texts (equal vectors tie), and hostile
/// fingerprints and texts; neighbours at each side of every boundary.
#[test]
fn neighbours_agree_at_the_boundaries_with_ties_and_hostile_payloads() {
    let fill = |store: &dyn MemoryStore| {
        let mut first = Vec::new();
        for (i, s) in HOSTILE.iter().enumerate() {
            let mut r = record(&format!("{s}#{i}"), "2026-01-01T10:00:00Z");
            r["summary_nl"] = json!(format!("disk full on the database host {s}"));
            r["resolution_nl"] = json!(s);
            first.push(r);
        }
        for fp in ["TIE-b", "TIE-a", "TIE-c"] {
            let mut r = record(fp, "2026-01-01T10:00:00Z");
            r["summary_nl"] = json!("disk full on the database host");
            r["resolution_nl"] = json!("grew the volume");
            first.push(r);
        }
        ingest_at(store, &first, "2026-01-01T13:00:00Z").unwrap();
        let mut later = Vec::new();
        for fp in ["TIE-e", "TIE-d"] {
            let mut r = record(fp, "2026-02-01T10:00:00Z");
            r["summary_nl"] = json!("disk full on the database host");
            r["resolution_nl"] = json!("grew the volume");
            later.push(r);
        }
        ingest_at(store, &later, "2026-02-03T00:00:00Z").unwrap();
    };
    let Some((_dir, subjects)) = subjects("vec_boundaries", &fill) else {
        return;
    };
    let times = [
        "2026-01-01T09:59:59.999Z",
        "2026-01-01T10:00:00Z",
        "2026-01-01T13:00:00Z",
        "2026-02-01T09:59:59.999Z",
        "2026-02-01T10:00:00Z",
        "2026-02-02T23:59:59.999Z",
        "2026-02-03T00:00:00Z",
    ];
    let points: Vec<AsOf> = times
        .iter()
        .flat_map(|v| {
            times.iter().map(move |k| AsOf {
                valid_at: ts(v),
                known_at: ts(k),
            })
        })
        .collect();
    let queries = [
        "disk full on the database host",
        HOSTILE[1],
        HOSTILE[6],
        "grew the volume",
    ];
    let transcripts: Vec<(&str, String)> = subjects
        .iter()
        .map(|s| (s.name, neighbours(s, &queries, &points)))
        .collect();
    let local = &transcripts[0].1;
    assert!(
        local.contains(r#"V=2026-02-03T00:00:00Z K=2026-02-03T00:00:00Z: ["TIE-a", "TIE-b", "TIE-c", "TIE-d", "TIE-e""#),
        "ties break by fingerprint:\n{local}"
    );
    assert!(
        local.contains(r#""disk full on the database host" V=2026-01-01T09:59:59.999Z K=2026-02-03T00:00:00Z: []"#),
        "nothing valid before the first t_valid:\n{local}"
    );
    all_agree("boundaries", &transcripts);
}

/// The whole demo memory: every leg on, every fusion policy, two as-of points.
#[test]
fn demo_recall_rankings_agree_under_every_fusion_policy() {
    let fill = |store: &dyn MemoryStore| {
        strata::demo::seed(store).unwrap();
    };
    let Some((_dir, subjects)) = subjects("vec_demo", &fill) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let queries: [(&str, &[&str]); 5] = [
        (
            "pgbouncer pool exhausted, postgres says too many connections",
            &[],
        ),
        ("certificate expired on every hostname", &["service:caddy"]),
        ("disk full on the database host", &[]),
        (
            "authelia login loop after config change",
            &["service:authelia"],
        ),
        (
            "qdrant rejects vectors after a model upgrade",
            &["service:qdrant"],
        ),
    ];
    let transcripts: Vec<(&str, String)> = subjects
        .iter()
        .map(|s| {
            let mut out = String::new();
            for (text, entities) in queries {
                for fusion in FusionPolicy::ALL {
                    for legs in [LegSet::ALL, LegSet::of(&[strata::recall::Leg::Semantic])] {
                        for at in ["2026-12-01T00:00:00Z", "2026-06-01T00:00:00Z"] {
                            let r = runtime.block_on(s.stack.engine.recall(&RecallRequest {
                                exclude: Vec::new(),
                                text: text.into(),
                                entities: entities.iter().map(|e| e.parse().unwrap()).collect(),
                                as_of: AsOf::now(ts(at)),
                                k: 10,
                                legs,
                                fusion,
                                stale: Default::default(),
                            }));
                            for leg in legs.legs() {
                                assert_eq!(
                                    r.legs.get(leg).status,
                                    LegStatus::Ok,
                                    "{}: {leg}: {:?}",
                                    s.name,
                                    r.legs.get(leg)
                                );
                            }
                            let rows: Vec<String> = r
                                .results
                                .iter()
                                .map(|x| {
                                    // Each store computes its cosines its own way: the legs'
                                    // scores agree to 5 decimals, the ranks and weights exactly.
                                    let legs: Vec<String> = strata::recall::Leg::ALL
                                        .iter()
                                        .filter_map(|l| x.per_leg.get(*l).map(|r| (l, r)))
                                        .map(|(l, r)| {
                                            format!(
                                                "{l} #{} score {:.5} weight {:.6} adds {:.8}",
                                                r.rank, r.score, r.weight, r.contribution
                                            )
                                        })
                                        .collect();
                                    format!("{} {legs:?} {:.6}", x.fingerprint, x.rrf_score)
                                })
                                .collect();
                            writeln!(out, "{text} {at} {fusion:?} {}: {rows:#?}", legs.name())
                                .unwrap();
                        }
                    }
                }
            }
            (s.name, out)
        })
        .collect();
    all_agree("demo recall", &transcripts);
}
