//! Reflexion lessons: rendered from each episode's own facts, stored with it, cited by
//! real IDs, superseded (never deleted) when a fact they rest on is superseded.

mod common;

use common::{stdout, strata, ts};
use serde_json::Value;
use strata::learning::{LessonState, render};
use strata::model::AsOf;
use strata::query::lesson_as_of;
use strata::store::embedded::EmbeddedStore;
use strata::store::{MemoryStore, TimelineQuery};

fn demo() -> (tempfile::TempDir, EmbeddedStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    strata::demo::seed(&store).unwrap();
    (dir, store)
}

fn all(store: &EmbeddedStore) -> Vec<strata::model::MemoryEpisode> {
    store
        .timeline(&TimelineQuery {
            limit: usize::MAX,
            ..TimelineQuery::default()
        })
        .unwrap()
}

#[test]
fn every_episode_has_a_deterministic_lesson_citing_real_ids() {
    let (_dir, store) = demo();
    let entities: std::collections::BTreeSet<String> = store
        .entities()
        .unwrap()
        .iter()
        .map(|e| e.to_string())
        .collect();
    let episodes = all(&store);
    assert_eq!(episodes.len(), 300);
    for e in &episodes {
        let fp = &e.incident_fingerprint;
        let lesson = store.lesson(fp).unwrap().expect("stored with the episode");
        let facts = store.facts(fp).unwrap();
        let again = render(
            fp,
            &e.resolution_nl,
            facts.iter().map(|f| (f.relation, &f.entity)),
        );
        assert_eq!(lesson, again, "{fp}: rendering is deterministic");
        assert!(lesson.text.starts_with("Lesson: cause "), "{}", lesson.text);
        assert!(lesson.text.ends_with(&format!("[{fp}]")), "{}", lesson.text);
        assert!(!lesson.cites.is_empty());
        for cite in &lesson.cites {
            let (_, key) = cite.split_once(' ').unwrap();
            assert!(entities.contains(key), "{fp} cites unknown {key}");
        }
    }
    assert!(store.check().unwrap().is_consistent());
}

#[test]
fn a_superseded_fix_supersedes_the_lesson_without_deleting_it() {
    let (_dir, store) = demo();
    let (prior, link) = all(&store)
        .iter()
        .find_map(|e| {
            store
                .superseded_by(&e.incident_fingerprint)
                .unwrap()
                .into_iter()
                .next()
                .map(|s| (e.incident_fingerprint.clone(), s))
        })
        .unwrap();
    let now = AsOf::now(ts("2026-12-01T00:00:00Z"));
    let view = lesson_as_of(&store, &prior, now).unwrap();
    assert_eq!(view.state, LessonState::Superseded);
    assert_eq!(view.superseded_by.as_deref(), Some(link.episode.as_str()));
    assert_eq!(view.superseded_at, Some(link.t_valid));

    let before_valid = AsOf {
        valid_at: link.t_valid.plus_millis(-1),
        known_at: now.known_at,
    };
    assert_eq!(
        lesson_as_of(&store, &prior, before_valid).unwrap().state,
        LessonState::Current
    );
    let before_known = AsOf {
        valid_at: now.valid_at,
        known_at: link.ingested_at.plus_millis(-1),
    };
    assert_eq!(
        lesson_as_of(&store, &prior, before_known).unwrap().state,
        LessonState::Current
    );
    assert!(store.lesson(&prior).unwrap().is_some(), "never deleted");
}

#[test]
fn stores_written_before_lessons_get_them_on_open() {
    let (dir, store) = demo();
    let path = store.path().to_path_buf();
    let expected = store.lesson("INC-0100").unwrap().unwrap();
    drop(store);
    // What a store written before lessons existed looks like: an empty lessons table.
    common::raw_lmdb_edit(&path, "lessons", |lessons, txn| lessons.clear(txn).unwrap());
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.lesson("INC-0100").unwrap().unwrap(), expected);
    assert!(store.check().unwrap().is_consistent());
}

#[test]
fn the_lesson_command_shows_state_and_json() {
    let dir = tempfile::tempdir().unwrap();
    assert!(strata(dir.path(), &["demo"]).status.success());
    let out = strata(
        dir.path(),
        &["--now", "2026-12-01T00:00:00Z", "lesson", "INC-0268"],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("Lesson: cause ") && text.contains("state: superseded by INC-"),
        "{text}"
    );
    let json: Value = serde_json::from_slice(
        &strata(
            dir.path(),
            &[
                "--now",
                "2026-12-01T00:00:00Z",
                "lesson",
                "INC-0268",
                "--valid-at",
                "2026-09-20T00:00:00Z",
                "--json",
            ],
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(json["state"], "current");
    assert_eq!(json["episode"], "INC-0268");
}

#[test]
fn a_fact_ended_at_ingest_does_not_supersede_the_lesson() {
    let (_dir, store) = common::temp_store();
    let mut r = common::record("INC-E", "2026-01-01T00:00:00Z");
    r["resolved_by"] = serde_json::json!([{"entity_type": "change", "entity_ref": "cfg-1", "t_invalid": "2026-01-05T00:00:00Z"}]);
    common::ingest_at(&store, &[r], "2026-01-02T00:00:00Z").unwrap();
    let view = lesson_as_of(&store, "INC-E", AsOf::now(ts("2026-12-01T00:00:00Z"))).unwrap();
    assert_eq!(
        view.state,
        LessonState::Current,
        "ended by its own record, not superseded"
    );
}
