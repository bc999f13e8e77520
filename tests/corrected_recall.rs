//! Recall by corrected text: a `correct_episode` at K2 gives the text legs (BM25 and every
//! vector store) a document for the new text, known from K2. As of now they match the
//! corrected text and not the old; as of a K before K2 the old text and not the new; each
//! episode is one hit at most. A rebuilt index answers as the one that caught up
//! incrementally, and a correction made by another process is found by the next recall.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use strata::correct::{CorrectionBatch, WriteOrigin, parse_text};
use strata::embed::HashEmbedder;
use strata::index::VectorLocation;
use strata::model::AsOf;
use strata::recall::{FusionPolicy, Leg, LegSet, RecallRequest, RecallStack, StackOptions};
use strata::store::{KnowledgeTime, MemoryStore};

const K0: &str = "2026-01-10T00:00:00Z";
const BEFORE: &str = "2026-01-31T00:00:00Z";
const K2: &str = "2026-02-01T00:00:00Z";
const NOW: &str = "2026-03-01T00:00:00Z";

/// Words only the text as first written has, and words only the corrected text has.
const OLD_WORDS: &str = "gateway timeouts";
const NEW_WORDS: &str = "expired certificate";

fn episode(fp: &str, summary: &str) -> Value {
    let mut r = record(fp, "2026-01-05T00:00:00Z");
    r["summary_nl"] = json!(summary);
    r
}

/// OPS-1's summary says gateway timeouts until K2, an expired certificate from then on. Each
/// of the others shares one word with one of the two texts, so that a vector search ranks
/// them under the OPS-1 text that has both words, and above the one that has neither.
fn seed_and_correct(store: &dyn MemoryStore) {
    seed(store);
    correct(store, K2);
}

/// The four episodes, as first written, at K0.
fn seed(store: &dyn MemoryStore) {
    ingest_at(
        store,
        &[
            episode("OPS-1", "OPS-1: gateway timeouts on the ingress"),
            episode("GW-7", "GW-7: the gateway was restarted"),
            episode("CERT-9", "CERT-9: certificate renewal was slow"),
            episode("DB-3", "DB-3: replica lag on postgres"),
        ],
        K0,
    )
    .unwrap();
}

fn correct(store: &dyn MemoryStore, at: &str) {
    let line = r#"{"correct_episode": {"incident_fingerprint": "OPS-1", "summary_nl": "OPS-1: expired certificate on the ingress"}, "reason": "the summary named a symptom, not the cause", "by": "ana"}"#;
    store
        .correct(&CorrectionBatch {
            items: parse_text("c.ndjson", line).unwrap(),
            at: KnowledgeTime::At(ts(at)),
            origin: WriteOrigin::Human,
        })
        .unwrap();
}

fn open(
    store: Arc<dyn MemoryStore>,
    index_dir: &std::path::Path,
    vectors: VectorLocation,
) -> RecallStack {
    let mut stack = RecallStack::open(
        store,
        Ok(Arc::new(HashEmbedder::default())),
        &StackOptions {
            index_dir: index_dir.into(),
            sync: true,
            vectors,
            runtime: None,
        },
        &mut |_, _| {},
    );
    assert!(stack.stopped.is_empty(), "{:?}", stack.stopped);
    stack.engine.timeout = Duration::from_secs(30);
    stack
}

/// One leg's ranking of `text` as of (V, K) = (now, `known_at`).
fn ranking(stack: &RecallStack, leg: Leg, text: &str, known_at: &str) -> Vec<(String, f64)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let request = RecallRequest {
        exclude: Vec::new(),
        text: text.into(),
        entities: Vec::new(),
        as_of: AsOf {
            valid_at: ts(NOW),
            known_at: ts(known_at),
        },
        k: 10,
        legs: LegSet::of(&[leg]),
        fusion: FusionPolicy::Rrf,
        stale: Default::default(),
    };
    let run = runtime.block_on(stack.engine.run_legs(&request));
    let report = run.reports.get(leg);
    assert!(report.status.answered(), "{leg}: {:?}", report.error);
    let (_, hits) = run.rankings.into_iter().find(|(l, _)| *l == leg).unwrap();
    let ranked: Vec<(String, f64)> = hits.fingerprints.into_iter().zip(hits.scores).collect();
    let mut fps: Vec<&String> = ranked.iter().map(|(fp, _)| fp).collect();
    fps.sort();
    let n = fps.len();
    fps.dedup();
    assert_eq!(fps.len(), n, "{leg}: one hit an episode: {ranked:?}");
    ranked
}

fn names(ranked: &[(String, f64)]) -> Vec<&str> {
    ranked.iter().map(|(fp, _)| fp.as_str()).collect()
}

/// The whole check, for a stack over a store seeded and corrected by [`seed_and_correct`].
fn corrected_text_is_recalled(stack: &RecallStack) {
    // BM25 finds a document only by the words it holds.
    let bm25 = |text: &str, k: &str| names(&ranking(stack, Leg::Bm25, text, k)).contains(&"OPS-1");
    assert!(bm25(NEW_WORDS, NOW), "the corrected text, as of now");
    assert!(
        !bm25(NEW_WORDS, BEFORE),
        "the corrected text, before the correction"
    );
    assert!(
        bm25(OLD_WORDS, BEFORE),
        "the old text, before the correction"
    );
    assert!(!bm25(OLD_WORDS, NOW), "the old text, as of now");
    assert!(bm25(NEW_WORDS, K2), "from the correction's own K on");

    // A vector search ranks every episode: the text with both words comes first, the one
    // with neither under the episode that shares a word.
    let semantic = |text: &str, k: &str| ranking(stack, Leg::Semantic, text, k);
    let now = semantic(NEW_WORDS, NOW);
    assert_eq!(now[0].0, "OPS-1", "{now:?}");
    let before = semantic(NEW_WORDS, BEFORE);
    assert_eq!(before[0].0, "CERT-9", "{before:?}");
    assert!(before.iter().any(|(fp, _)| fp == "OPS-1"), "{before:?}");
    let old_before = semantic(OLD_WORDS, BEFORE);
    assert_eq!(old_before[0].0, "OPS-1", "{old_before:?}");
    let old_now = semantic(OLD_WORDS, NOW);
    assert_eq!(old_now[0].0, "GW-7", "{old_now:?}");
    assert_eq!(names(&old_now).len(), 4, "every episode once: {old_now:?}");
}

/// What both text legs answer to both texts at K before, at and after the correction.
fn transcript(stack: &RecallStack) -> String {
    let mut out = String::new();
    for leg in [Leg::Bm25, Leg::Semantic] {
        for text in [OLD_WORDS, NEW_WORDS] {
            for k in [K0, BEFORE, K2, NOW] {
                out.push_str(&format!(
                    "{leg} {text:?} K={k}: {:?}\n",
                    ranking(stack, leg, text, k)
                ));
            }
        }
    }
    out
}

#[test]
fn corrected_text_is_recalled_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn MemoryStore> =
        Arc::new(strata::store::embedded::EmbeddedStore::open(&dir.path().join("store")).unwrap());
    // The indexes catch up with the episodes first, then with the correction.
    seed(store.as_ref());
    let stack = open(
        store.clone(),
        &dir.path().join("index"),
        VectorLocation::Local,
    );
    assert!(
        names(&ranking(&stack, Leg::Bm25, OLD_WORDS, NOW)).contains(&"OPS-1"),
        "before any correction"
    );
    correct(store.as_ref(), K2);
    let (report, problems) = stack.catch_up(store.as_ref(), &mut |_, _| {});
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!((report.text_indexed, report.vectors_embedded), (1, 1));
    corrected_text_is_recalled(&stack);
    let caught_up = transcript(&stack);

    // Caught up again: nothing to do.
    let (again, _) = stack.catch_up(store.as_ref(), &mut |_, _| {});
    assert_eq!((again.text_indexed, again.vectors_embedded), (0, 0));
    assert_eq!(
        stack.text.as_ref().unwrap().len(),
        4,
        "episodes, not documents"
    );
    assert_eq!(stack.vectors.as_ref().unwrap().count().unwrap(), 4);

    // Built from nothing, the indexes answer byte for byte as the caught-up ones.
    let rebuilt = open(
        store.clone(),
        &dir.path().join("rebuilt"),
        VectorLocation::Local,
    );
    assert_eq!(
        rebuilt.sync.text_indexed, 5,
        "four episodes and one corrected text"
    );
    assert_eq!(transcript(&rebuilt), caught_up);

    // Reopened over the same indexes: nothing is indexed again.
    let reopened = open(
        store.clone(),
        &dir.path().join("index"),
        VectorLocation::Local,
    );
    assert_eq!(
        (reopened.sync.text_indexed, reopened.sync.vectors_embedded),
        (0, 0)
    );
    assert_eq!(transcript(&reopened), caught_up);
}

#[test]
fn a_correction_of_the_correction_is_another_version() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn MemoryStore> =
        Arc::new(strata::store::embedded::EmbeddedStore::open(&dir.path().join("store")).unwrap());
    seed_and_correct(store.as_ref());
    let stack = open(
        store.clone(),
        &dir.path().join("index"),
        VectorLocation::Local,
    );
    let line = r#"{"correct_episode": {"incident_fingerprint": "OPS-1", "summary_nl": "OPS-1: a revoked intermediate"}, "reason": "it was revoked, not expired", "by": "ben"}"#;
    store
        .correct(&CorrectionBatch {
            items: parse_text("c.ndjson", line).unwrap(),
            at: KnowledgeTime::At(ts("2026-02-10T00:00:00Z")),
            origin: WriteOrigin::Human,
        })
        .unwrap();
    stack.catch_up(store.as_ref(), &mut |_, _| {});
    let found =
        |text: &str, k: &str| names(&ranking(&stack, Leg::Bm25, text, k)).contains(&"OPS-1");
    assert!(found("revoked intermediate", NOW));
    assert!(
        !found(NEW_WORDS, NOW),
        "the first correction's text is no longer current"
    );
    assert!(found(NEW_WORDS, "2026-02-05T00:00:00Z"));
    assert!(!found("revoked intermediate", "2026-02-05T00:00:00Z"));
    assert!(found(OLD_WORDS, BEFORE));
}

#[test]
fn another_processs_correction_is_found_by_the_next_recall() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let file = data.join("episodes.ndjson");
    std::fs::write(
        &file,
        ndjson(&[
            episode("OPS-1", "OPS-1: gateway timeouts on the ingress"),
            episode("DB-3", "DB-3: replica lag on postgres"),
        ]),
    )
    .unwrap();
    let out = strata(data, &["--now", K0, "ingest", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let recall = |text: &str, known_at: &str| -> Vec<String> {
        let out = strata(
            data,
            &[
                "--now",
                NOW,
                "recall",
                text,
                "--legs",
                "bm25",
                "--known-at",
                known_at,
                "--json",
            ],
        );
        assert!(out.status.success(), "{}", stderr(&out));
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        json["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["fingerprint"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(recall(NEW_WORDS, NOW), Vec::<String>::new());
    let backup = dir.path().join("backup");
    copy_dir(&data.join("store"), &backup);
    let fix = data.join("fix.ndjson");
    std::fs::write(
        &fix,
        r#"{"correct_episode": {"incident_fingerprint": "OPS-1", "summary_nl": "OPS-1: expired certificate on the ingress"}, "reason": "the cause", "by": "ana"}"#,
    )
    .unwrap();
    let out = strata(data, &["--now", K2, "correct", fix.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(recall(NEW_WORDS, NOW), vec!["OPS-1"]);
    assert_eq!(recall(OLD_WORDS, NOW), Vec::<String>::new());
    assert_eq!(recall(OLD_WORDS, BEFORE), vec!["OPS-1"]);
    assert_eq!(recall(NEW_WORDS, BEFORE), Vec::<String>::new());

    // The store goes back to a backup from before the correction: the indexes, ahead of its
    // correction log, are rebuilt from it, and the corrected text is found no more.
    std::fs::remove_dir_all(data.join("store")).unwrap();
    copy_dir(&backup, &data.join("store"));
    assert_eq!(recall(NEW_WORDS, NOW), Vec::<String>::new());
    assert_eq!(recall(OLD_WORDS, NOW), vec!["OPS-1"]);
}

#[test]
fn corrected_text_is_recalled_on_falkordb() {
    let url = common::falkordb::graph_url("corrected_recall");
    let store: Arc<dyn MemoryStore> =
        Arc::new(strata::store::falkordb::FalkorStore::connect(&url).unwrap());
    seed_and_correct(store.as_ref());
    let dir = tempfile::tempdir().unwrap();
    let stack = open(
        store.clone(),
        dir.path(),
        VectorLocation::FalkorDb(url.clone()),
    );
    corrected_text_is_recalled(&stack);
    let caught_up = transcript(&stack);
    // A second process's stack over the same graph embeds nothing again.
    let other = open(
        store,
        &dir.path().join("other"),
        VectorLocation::FalkorDb(url),
    );
    assert_eq!(other.sync.vectors_embedded, 0);
    assert_eq!(transcript(&other), caught_up);
}

#[test]
fn corrected_text_is_recalled_with_qdrant() {
    let Some(qdrant) = common::qdrant::url() else {
        common::qdrant::skipping("corrected_text_is_recalled_with_qdrant");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn MemoryStore> =
        Arc::new(strata::store::embedded::EmbeddedStore::open(&dir.path().join("store")).unwrap());
    seed_and_correct(store.as_ref());
    let stack = open(
        store.clone(),
        &dir.path().join("index"),
        VectorLocation::Qdrant(qdrant.as_str().into()),
    );
    corrected_text_is_recalled(&stack);
    assert_eq!(stack.vectors.as_ref().unwrap().count().unwrap(), 4);
    let local = open(store, &dir.path().join("local"), VectorLocation::Local);
    assert_eq!(
        transcript(&stack),
        transcript(&local),
        "Qdrant answers as the local index"
    );
}
