//! The evaluation replays labelled sets through real recall and gates on AC@1.

mod common;

use common::*;
use serde_json::Value;
use strata::eval::postmortem_labels;
use strata::import::postmortems::{LearnedAt, convert_dir};

/// `strata --embedder hash ARGS…` on `data`, which must succeed, and the JSON it printed.
fn json_of(data: &std::path::Path, args: &[&str]) -> Value {
    let out = strata(data, &[&["--embedder", "hash"], args].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn eval_reports_every_combination_and_gates_on_ac1() {
    let dir = tempfile::tempdir().unwrap();
    let pm = shared_dir().join("data/postmortems");
    let report = json_of(
        dir.path(),
        &["eval", "--json", "--postmortems", pm.to_str().unwrap()],
    );
    let datasets = report["datasets"].as_array().unwrap();
    assert_eq!(datasets.len(), 2);
    let demo = &datasets[0];
    assert_eq!(demo["name"], "demo");
    assert_eq!(demo["queries"], 9);
    let rows = demo["rows"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        32,
        "7 leg combinations x 4 fusion policies, and the 4 with every leg under stale follow"
    );
    assert_eq!(
        rows.iter().filter(|r| r["stale"] == "follow").count(),
        4,
        "{rows:?}"
    );
    for r in rows {
        for m in ["ac1", "ac3", "mrr", "ndcg10"] {
            let v = r[m].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&v), "{m} = {v}");
        }
        assert!(r["ac3"].as_f64().unwrap() >= r["ac1"].as_f64().unwrap());
    }
    let all = rows
        .iter()
        .find(|r| r["legs"] == "semantic+bm25+graph" && r["fusion"] == "rrf")
        .unwrap();
    assert!(
        all["ac3"].as_f64().unwrap() >= 0.5,
        "fused recall finds same-cause incidents: {all}"
    );
    assert!(demo["latency_ms"]["p95"].as_f64().unwrap() > 0.0);
    assert!(datasets[1]["queries"].as_u64().unwrap() >= 20);

    let committed =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/eval/baseline-hash.json");
    let shipped: Value =
        serde_json::from_str(&std::fs::read_to_string(&committed).unwrap()).unwrap();
    for (a, b) in shipped["datasets"].as_array().unwrap().iter().zip(datasets) {
        assert_eq!(
            a["rows"], b["rows"],
            "same data, same embedder: the same scores as the committed baseline"
        );
    }
    let baseline = dir.path().join("baseline.json");
    std::fs::write(&baseline, serde_json::to_vec(&report).unwrap()).unwrap();
    let same = strata(
        dir.path(),
        &[
            "--embedder",
            "hash",
            "eval",
            "--gate",
            baseline.to_str().unwrap(),
        ],
    );
    assert!(same.status.success(), "{}", stderr(&same));

    let mut raised = report.clone();
    raised["datasets"][0]["rows"][0]["ac1"] =
        Value::from(raised["datasets"][0]["rows"][0]["ac1"].as_f64().unwrap() + 0.03);
    std::fs::write(&baseline, serde_json::to_vec(&raised).unwrap()).unwrap();
    let worse = strata(
        dir.path(),
        &[
            "--embedder",
            "hash",
            "eval",
            "--gate",
            baseline.to_str().unwrap(),
        ],
    );
    assert!(!worse.status.success(), "a drop of 0.03 fails the gate");
    assert!(
        stderr(&worse).contains("more than 0.02 below the baseline"),
        "{}",
        stderr(&worse)
    );
}

#[test]
fn postmortem_labels_follow_the_documented_rule() {
    let converted = convert_dir(
        &shared_dir().join("data/postmortems"),
        LearnedAt::AfterConclusion(86_400_000),
    )
    .unwrap();
    let labels = postmortem_labels(&converted.batch);
    assert!(labels.len() >= 20, "{}", labels.len());
    let by_fp: std::collections::HashMap<_, _> = converted
        .batch
        .items
        .iter()
        .map(|i| (i.draft.incident_fingerprint.clone(), i))
        .collect();
    for l in &labels {
        let q = by_fp[&l.id];
        assert!(!l.expected.is_empty());
        for fp in &l.expected {
            let p = by_fp[fp];
            assert!(
                p.draft.concluded_at < q.draft.t_valid,
                "{fp} concluded before {}",
                l.id
            );
            let refs = |i: &strata::store::BatchItem, t: &str| -> Vec<String> {
                i.draft
                    .facts
                    .iter()
                    .filter(|f| f.entity.entity_type == t)
                    .map(|f| f.entity.entity_ref.clone())
                    .collect()
            };
            assert!(
                refs(p, "service")
                    .iter()
                    .any(|s| refs(q, "service").contains(s))
            );
            assert!(
                refs(p, "root_cause")
                    .iter()
                    .any(|c| !c.starts_with("unknown") && refs(q, "root_cause").contains(c))
            );
        }
    }
}

/// A dataset directory is replayed as memory stood at each query: a record that concluded
/// after the query (same text, valid all along, a fingerprint that would win the tie) is not
/// yet known, so the earlier one ranks first; R@10 is reported beside the other metrics.
#[test]
fn a_dataset_is_replayed_as_memory_stood_at_each_query() {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("tiny-set");
    std::fs::create_dir(&set).unwrap();
    let text = "disk full on the ledger database volume";
    let rec = |fp: &str, summary: &str, concluded: &str| {
        serde_json::json!({
            "incident_fingerprint": fp,
            "summary_nl": summary,
            "resolution_nl": "grew the volume",
            "concluded_at": concluded,
            "t_valid": "2025-01-01T00:00:00Z",
            "mentions": [{"entity_type": "service", "entity_ref": "ledger"}],
        })
    };
    std::fs::write(
        set.join("records.ndjson"),
        ndjson(&[
            rec("OLD-1", text, "2025-01-02T00:00:00Z"),
            rec(
                "OTHER-1",
                "certificate expired on the ingress",
                "2025-01-03T00:00:00Z",
            ),
            rec("LATE-1", text, "2025-03-01T00:00:00Z"),
        ]),
    )
    .unwrap();
    std::fs::write(
        set.join("labels.json"),
        serde_json::to_string(&serde_json::json!([{
            "id": "Q-1",
            "fault_class": "duplicate",
            "query": text,
            "entities": [],
            "at": "2025-02-01T00:00:00Z",
            "expected": ["OLD-1"],
        }]))
        .unwrap(),
    )
    .unwrap();
    let report = json_of(
        dir.path(),
        &["eval", "--json", "--dataset", set.to_str().unwrap()],
    );
    let datasets = report["datasets"].as_array().unwrap();
    assert_eq!(datasets.len(), 1);
    assert_eq!(datasets[0]["name"], "tiny-set");
    assert_eq!(datasets[0]["queries"], 1);
    for legs in ["semantic", "bm25"] {
        let row = datasets[0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["legs"] == legs && r["fusion"] == "rrf")
            .unwrap();
        assert_eq!(row["ac1"], 1.0, "{legs}: {row}");
        assert_eq!(row["r10"], 1.0, "{legs}: {row}");
    }
    assert_eq!(
        datasets[0]["weights"],
        serde_json::json!({"semantic": 1.0, "bm25": 0.5, "graph": 1.0}),
        "the default weights"
    );

    // The weighted rows use the config's weights, as every other recall does.
    let config = dir.path().join("weights.toml");
    std::fs::write(&config, "[recall.weights]\nsemantic = 0.25\n").unwrap();
    let report = json_of(
        dir.path(),
        &[
            "--config",
            config.to_str().unwrap(),
            "eval",
            "--json",
            "--dataset",
            set.to_str().unwrap(),
        ],
    );
    assert_eq!(
        report["datasets"][0]["weights"],
        serde_json::json!({"semantic": 0.25, "bm25": 0.5, "graph": 1.0})
    );

    std::fs::remove_file(set.join("labels.json")).unwrap();
    let missing = strata(dir.path(), &["eval", "--dataset", set.to_str().unwrap()]);
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("labels.json"),
        "{}",
        stderr(&missing)
    );
}

/// The public dev set (GitBugs SeaMonkey, CC BY 4.0) replays to the committed hash-embedder
/// scores, and the gate holds against them.
#[test]
fn the_gitbugs_dev_set_replays_to_its_committed_baseline() {
    let set = shared_dir().join("data/gitbugs-seamonkey");
    if !set.join("records.ndjson").is_file() {
        eprintln!("skipped: no dev set at {}", set.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let committed = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/eval/gitbugs-seamonkey-hash.json");
    let report = json_of(
        dir.path(),
        &[
            "eval",
            "--json",
            "--dataset",
            set.to_str().unwrap(),
            "--gate",
            committed.to_str().unwrap(),
        ],
    );
    let shipped: Value =
        serde_json::from_str(&std::fs::read_to_string(&committed).unwrap()).unwrap();
    assert_eq!(report["datasets"][0]["queries"], 46);
    assert_eq!(
        shipped["datasets"][0]["rows"], report["datasets"][0]["rows"],
        "same data, same embedder: the same scores as the committed baseline"
    );
}

/// The synthetic sanity case (docs/recall.md): each query carries its incident's number, a rare
/// token that BM25 ranks first by a wide margin. Weighted RRF buries it under incidents every
/// leg ranks moderately; adaptive fusion, knowing BM25 is sure, keeps it. The legs report says
/// per query where each leg put the answer and how sure it was.
#[test]
fn adaptive_fusion_keeps_a_sure_legs_first_place() {
    let dir = tempfile::tempdir().unwrap();
    let report = json_of(
        dir.path(),
        &["eval", "--json", "--synthetic", "10000", "--legs-report"],
    );
    let datasets = report["datasets"].as_array().unwrap();
    assert_eq!(datasets.len(), 1, "--synthetic alone replays only that set");
    let set = &datasets[0];
    assert_eq!(set["queries"], 40);
    let mrr = |legs: &str, fusion: &str| {
        set["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["legs"] == legs && r["fusion"] == fusion)
            .unwrap()["mrr"]
            .as_f64()
            .unwrap()
    };
    let bm25 = mrr("bm25", "rrf");
    let best_leg = ["semantic", "bm25", "graph"]
        .iter()
        .map(|l| mrr(l, "rrf"))
        .fold(0.0, f64::max);
    assert!(bm25 >= 0.5, "BM25 finds most by the rare token: {bm25}");
    assert!(
        mrr("semantic+bm25+graph", "weighted") < bm25 - 0.1,
        "weighted RRF buries the sure leg's first place"
    );
    assert!(
        mrr("semantic+bm25+graph", "adaptive") >= best_leg,
        "adaptive fusion never loses to its best leg here"
    );
    let oracle = set["oracle"].as_array().unwrap();
    assert!(oracle[0]["mrr"].as_f64().unwrap() >= best_leg);
    let committed =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/eval/synthetic-hash.json");
    let shipped: Value =
        serde_json::from_str(&std::fs::read_to_string(&committed).unwrap()).unwrap();
    assert_eq!(
        shipped["datasets"][0]["rows"], set["rows"],
        "same data, same embedder: the same scores as the committed baseline"
    );

    let traces = set["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 40);
    for t in traces {
        let legs = t["legs"].as_array().unwrap();
        assert_eq!(legs.len(), 3);
        for l in legs {
            let c = l["confidence"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&c), "{l}");
        }
        let bm25 = &legs[1];
        assert_eq!(bm25["leg"], "bm25");
        // Where BM25 put the answer first, it was sure, and adaptive fusion kept it first.
        if bm25["rank"] == 1 {
            assert!(bm25["confidence"].as_f64().unwrap() > 0.9, "{t}");
        }
        // The graph leg's seeds came from the text: it abstains.
        assert_eq!(legs[2]["adaptive_weight"], 0.0, "{t}");
        assert_eq!(t["fused"].as_array().unwrap().len(), 4);
    }
    let text = strata(
        dir.path(),
        &[
            "--embedder",
            "hash",
            "eval",
            "--synthetic",
            "200",
            "--legs-report",
        ],
    );
    assert!(text.status.success(), "{}", stderr(&text));
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(out.contains("oracle: best single leg per query"), "{out}");
    assert!(out.contains("synthetic-query-00"), "{out}");
}
