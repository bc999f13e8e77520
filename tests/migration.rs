//! Stores written by earlier releases open in this one, keeping every record: schema 2 (JSON
//! records; `tests/fixtures/store-v2`, written by the release before the compact encoding)
//! is rewritten as compact records on open, and schema 1 (the single-process redb file)
//! goes through schema 2 to the same place, its old file kept beside it.

mod common;

use std::path::Path;

use common::*;
use redb::{MultimapTableDefinition, TableDefinition};
use strata::store::MemoryStore;
use strata::store::embedded::EmbeddedStore;

const STR_BYTES: [&str; 5] = ["episodes", "drafts", "lessons", "skills", "code_units"];
const BYTES_BYTES: [&str; 3] = ["entities", "facts", "supersedes"];
const ALL: [&str; 17] = [
    "episodes",
    "drafts",
    "lessons",
    "skills",
    "code_units",
    "entities",
    "facts",
    "supersedes",
    "entity_facts",
    "superseded_by",
    "service_code",
    "timeline",
    "fact_times",
    "episode_times",
    "ingest_log",
    "counters",
    "meta",
];

fn text(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap()
}

fn i64s(b: &[u8]) -> Vec<i64> {
    b.chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Writes the rows of a shared-layout store as the schema-1 redb store held them (the table
/// definitions of Strata before the shared layout).
fn write_legacy(path: &Path, rows: &RawTables) {
    let db = redb::Database::create(path).unwrap();
    let txn = db.begin_write().unwrap();
    {
        for name in STR_BYTES {
            let mut t = txn
                .open_table(TableDefinition::<&str, &[u8]>::new(name))
                .unwrap();
            for (k, v) in &rows[name] {
                t.insert(text(k), v.as_slice()).unwrap();
            }
        }
        for name in BYTES_BYTES {
            let mut t = txn
                .open_table(TableDefinition::<&[u8], &[u8]>::new(name))
                .unwrap();
            for (k, v) in &rows[name] {
                t.insert(k.as_slice(), v.as_slice()).unwrap();
            }
        }
        let mut t = txn
            .open_multimap_table(MultimapTableDefinition::<&[u8], &[u8]>::new("entity_facts"))
            .unwrap();
        for (k, v) in &rows["entity_facts"] {
            t.insert(k.as_slice(), v.as_slice()).unwrap();
        }
        let mut t = txn
            .open_multimap_table(MultimapTableDefinition::<&str, &[u8]>::new("superseded_by"))
            .unwrap();
        for (k, v) in &rows["superseded_by"] {
            t.insert(text(k), v.as_slice()).unwrap();
        }
        let mut t = txn
            .open_multimap_table(MultimapTableDefinition::<&str, &str>::new("service_code"))
            .unwrap();
        for (k, v) in &rows["service_code"] {
            t.insert(text(k), text(v)).unwrap();
        }
        let mut t = txn
            .open_table(TableDefinition::<(i64, &str), ()>::new("timeline"))
            .unwrap();
        for (k, _) in &rows["timeline"] {
            let ms = (u64::from_be_bytes(k[..8].try_into().unwrap()) ^ (1 << 63)) as i64;
            t.insert((ms, text(&k[8..])), ()).unwrap();
        }
        let mut t = txn
            .open_table(TableDefinition::<&[u8], (i64, i64, i64, i64)>::new(
                "fact_times",
            ))
            .unwrap();
        for (k, v) in &rows["fact_times"] {
            let x = i64s(v);
            t.insert(k.as_slice(), (x[0], x[1], x[2], x[3])).unwrap();
        }
        let mut t = txn
            .open_table(TableDefinition::<&str, (i64, i64, i64)>::new(
                "episode_times",
            ))
            .unwrap();
        for (k, v) in &rows["episode_times"] {
            let x = i64s(v);
            t.insert(text(k), (x[0], x[1], x[2])).unwrap();
        }
        let mut t = txn
            .open_table(TableDefinition::<u64, &str>::new("ingest_log"))
            .unwrap();
        for (k, v) in &rows["ingest_log"] {
            t.insert(
                u64::from_be_bytes(k.as_slice().try_into().unwrap()),
                text(v),
            )
            .unwrap();
        }
        let mut t = txn
            .open_table(TableDefinition::<&str, u64>::new("counters"))
            .unwrap();
        for (k, v) in &rows["counters"] {
            if text(k) != "generation" {
                t.insert(
                    text(k),
                    u64::from_le_bytes(v.as_slice().try_into().unwrap()),
                )
                .unwrap();
            }
        }
        let mut t = txn
            .open_table(TableDefinition::<&str, &str>::new("meta"))
            .unwrap();
        t.insert("schema_version", "1").unwrap();
        for (k, v) in &rows["meta"] {
            if text(k) == "knowledge_high_water" {
                t.insert(text(k), text(v)).unwrap();
            }
        }
    }
    txn.commit().unwrap();
}

/// Everything the store answers about its memory, as text.
fn transcript(store: &dyn MemoryStore) -> String {
    let mut out = format!("{:?}\n", store.stats().unwrap());
    let page = store
        .timeline(&strata::store::TimelineQuery {
            limit: usize::MAX,
            ..Default::default()
        })
        .unwrap();
    for e in &page {
        let fp = &e.incident_fingerprint;
        out.push_str(&format!("{e:?}\n{:?}\n", store.facts(fp).unwrap()));
        out.push_str(&format!(
            "{:?}\n{:?}\n{:?}\n",
            store.supersedes(fp).unwrap(),
            store.superseded_by(fp).unwrap(),
            store.lesson(fp).unwrap()
        ));
    }
    out.push_str(&format!(
        "{:?}\n",
        store.episodes_since(0, usize::MAX).unwrap().episodes
    ));
    for entity in store.entities().unwrap() {
        out.push_str(&format!("{:?}\n", store.entity_links(&entity).unwrap()));
    }
    out.push_str(&format!("{:?}\n", store.skills().unwrap()));
    for service in ["authelia", "postgres", "caddy"] {
        out.push_str(&format!(
            "{:?}\n",
            store.code_units_of_service(service).unwrap()
        ));
    }
    out
}

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/store-v2");

/// A copy of the schema-2 fixture as the data directory `dir`.
fn schema_2_store(dir: &Path) {
    let store = dir.join("store");
    std::fs::create_dir_all(&store).unwrap();
    let packed = std::fs::read(format!("{FIXTURE}/data.mdb.zst")).unwrap();
    let bytes = zstd::decode_all(packed.as_slice()).unwrap();
    std::fs::write(store.join("data.mdb"), bytes).unwrap();
}

/// What the release that wrote the fixture answered about it.
fn fixture_transcript() -> String {
    let packed = std::fs::read(format!("{FIXTURE}/transcript.txt.zst")).unwrap();
    String::from_utf8(zstd::decode_all(packed.as_slice()).unwrap()).unwrap()
}

/// The first line where two transcripts differ, for a readable failure.
fn assert_same_transcript(actual: &str, expected: &str) {
    if let Some((i, (a, e))) = actual
        .lines()
        .zip(expected.lines())
        .enumerate()
        .find(|(_, (a, e))| a != e)
    {
        panic!("line {} differs:\n  now:    {a}\n  before: {e}", i + 1);
    }
    assert_eq!(actual.lines().count(), expected.lines().count());
}

fn schema_of(data: &Path) -> String {
    let meta = raw_lmdb_dump(&data.join("store"), &["meta"]);
    meta["meta"]
        .iter()
        .find(|(k, _)| k == b"schema_version")
        // Schema 4 on seals the value: the version is its leading digits.
        .map(|(_, v)| {
            String::from_utf8_lossy(v)
                .chars()
                .take_while(char::is_ascii_digit)
                .collect()
        })
        .unwrap()
}

#[test]
fn a_schema_2_store_is_rewritten_as_compact_records_keeping_every_record() {
    let dir = tempfile::tempdir().unwrap();
    schema_2_store(dir.path());
    assert_eq!(schema_of(dir.path()), "2");
    let before = std::fs::metadata(dir.path().join("store/data.mdb"))
        .unwrap()
        .len();
    let json_rows = raw_lmdb_dump(&dir.path().join("store"), &["episodes", "drafts", "facts"]);

    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_same_transcript(&transcript(&store), &fixture_transcript());
    let report = store.check().unwrap();
    assert!(report.is_consistent(), "{:?}", report.problems);
    assert_eq!(report.checked_episodes, 308);
    let generation = store.generation().unwrap();
    let sizes = store.table_sizes().unwrap();
    let lessons = sizes.iter().find(|s| s.table == "lessons").unwrap();
    assert_eq!(lessons.entries, 0, "every lesson renders as it was stored");
    drop(store);
    assert_eq!(schema_of(dir.path()), "4");
    // The retired tables stay, empty, so an older release finds every table it knows and
    // refuses the store as newer instead of creating them.
    let retired = raw_lmdb_dump(&dir.path().join("store"), &["drafts", "fact_times"]);
    assert!(retired["drafts"].is_empty() && retired["fact_times"].is_empty());
    let compact_rows = raw_lmdb_dump(&dir.path().join("store"), &["episodes", "facts"]);
    let sum = |rows: &Vec<(Vec<u8>, Vec<u8>)>| rows.iter().map(|r| r.1.len()).sum::<usize>();
    // An episode's value now holds its draft too.
    for (table, json) in [
        (
            "episodes",
            sum(&json_rows["episodes"]) + sum(&json_rows["drafts"]),
        ),
        ("facts", sum(&json_rows["facts"])),
    ] {
        assert_eq!(json_rows[table].len(), compact_rows[table].len());
        let compact = sum(&compact_rows[table]);
        assert!(
            compact * 2 < json,
            "{table}: {compact} bytes of values, {json} as JSON"
        );
    }

    // Opened again it is not migrated again, and the drafts survived exactly: the same
    // records ingested again are all unchanged.
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(store.generation().unwrap(), generation);
    drop(store);
    let demo = strata(dir.path(), &["--now", "2026-12-03T00:00:00Z", "demo"]);
    assert!(demo.status.success(), "{}", stderr(&demo));
    assert!(
        stdout(&demo).contains("(0 new, 300 already present)"),
        "{}",
        stdout(&demo)
    );
    let hostile = format!("{FIXTURE}/hostile.ndjson");
    let again = strata(
        dir.path(),
        &["--now", "2026-12-03T00:00:00Z", "ingest", &hostile],
    );
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stdout(&again).contains("8 records, 0 new, 8 unchanged"),
        "{}",
        stdout(&again)
    );
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(
        store.generation().unwrap(),
        generation,
        "nothing was written"
    );
    // The file keeps its length (LMDB reuses the freed pages); the tables use less of it.
    let used: u64 = store.table_sizes().unwrap().iter().map(|s| s.bytes).sum();
    assert!(
        used * 3 < before * 2,
        "{used} bytes in pages, the file was {before}"
    );
}

#[test]
fn a_schema_2_store_that_cannot_migrate_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    schema_2_store(dir.path());
    let env = dir.path().join("store");
    let mut damaged = Vec::new();
    raw_lmdb_edit(&env, "facts", |db, txn| {
        let (key, _) = db.iter(txn).unwrap().nth(700).unwrap().unwrap();
        damaged = key.to_vec();
        db.put(txn, &damaged, b"{\"not\": \"a fact\"").unwrap();
    });
    let all = [
        "episodes",
        "drafts",
        "facts",
        "fact_times",
        "lessons",
        "entities",
        "supersedes",
        "meta",
        "counters",
    ];
    let before = raw_lmdb_dump(&env, &all);

    let err = EmbeddedStore::open(dir.path()).err().unwrap().to_string();
    let shown = String::from_utf8_lossy(&damaged).replace('\0', "|");
    assert!(err.contains("facts") && err.contains(&shown), "{err}");
    assert_eq!(raw_lmdb_dump(&env, &all), before, "nothing was rewritten");
    assert_eq!(schema_of(dir.path()), "2");

    let out = strata(dir.path(), &["stats"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains(&shown), "{}", stderr(&out));
}

#[test]
fn a_lesson_an_earlier_release_rendered_differently_is_kept_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    schema_2_store(dir.path());
    let env = dir.path().join("store");
    let fp = b"pipe|and:colon#7";
    raw_lmdb_edit(&env, "lessons", |db, txn| {
        let stored = db.get(txn, fp).unwrap().unwrap().to_vec();
        let mut lesson: serde_json::Value = serde_json::from_slice(&stored).unwrap();
        lesson["text"] = serde_json::json!("an older wording of this lesson");
        db.put(txn, fp, &serde_json::to_vec(&lesson).unwrap())
            .unwrap();
    });

    let store = EmbeddedStore::open(dir.path()).unwrap();
    let kept = store.lesson("pipe|and:colon#7").unwrap().unwrap();
    assert_eq!(kept.text, "an older wording of this lesson");
    let rendered = store.lesson("INC-0008").unwrap().unwrap();
    assert!(rendered.text.starts_with("Lesson: "), "{}", rendered.text);
    let lessons = store.lessons(&["pipe|and:colon#7".into()]).unwrap();
    assert_eq!(lessons, vec![kept]);
    let sizes = store.table_sizes().unwrap();
    assert_eq!(
        sizes.iter().find(|s| s.table == "lessons").unwrap().entries,
        1
    );
    let report = store.check().unwrap();
    assert!(report.is_consistent(), "{:?}", report.problems);
}

#[test]
fn fact_times_an_earlier_release_left_stale_are_taken_from_the_fact_records() {
    let dir = tempfile::tempdir().unwrap();
    schema_2_store(dir.path());
    raw_lmdb_edit(&dir.path().join("store"), "fact_times", |db, txn| {
        let (key, _) = db.iter(txn).unwrap().nth(11).unwrap().unwrap();
        let key = key.to_vec();
        db.put(txn, &key, &[0u8; 32]).unwrap();
        let (key, _) = db.iter(txn).unwrap().nth(12).unwrap().unwrap();
        let key = key.to_vec();
        db.delete(txn, &key).unwrap();
    });
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_same_transcript(&transcript(&store), &fixture_transcript());
    assert!(store.check().unwrap().is_consistent());
}

#[test]
fn two_processes_opening_a_schema_2_store_at_once_migrate_it_once() {
    let dir = tempfile::tempdir().unwrap();
    schema_2_store(dir.path());
    let spawn = || {
        strata_command(dir.path(), &["check"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("consistent"), "{}", stdout(&out));
    }
    let store = EmbeddedStore::open(dir.path()).unwrap();
    assert_eq!(
        store.generation().unwrap(),
        4,
        "the fixture's two batches, then one migration to compact records and one sealing them"
    );
    assert_same_transcript(&transcript(&store), &fixture_transcript());
}

#[test]
fn a_schema_1_store_is_migrated_on_open_keeping_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let original_dir = dir.path().join("original");
    schema_2_store(&original_dir);
    let rows = raw_lmdb_dump(&original_dir.join("store"), &ALL);
    assert!(rows["episodes"].len() >= 300 && !rows["skills"].is_empty());

    let legacy_dir = dir.path().join("legacy");
    std::fs::create_dir_all(&legacy_dir).unwrap();
    write_legacy(&legacy_dir.join("strata.redb"), &rows);

    let migrated = EmbeddedStore::open(&legacy_dir).unwrap();
    assert_same_transcript(&transcript(&migrated), &fixture_transcript());
    assert!(migrated.check().unwrap().is_consistent());
    assert!(migrated.identity().unwrap().is_some());
    assert!(!legacy_dir.join("strata.redb").exists());
    assert!(
        legacy_dir.join("strata.redb.migrated").is_file(),
        "the old file is kept, not deleted"
    );
    drop(migrated);
    assert_eq!(schema_of(&legacy_dir), "4");

    // The CLI opens it as any other store, and the migration happens once.
    let out = strata(&legacy_dir, &["check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_same_transcript(
        &transcript(&EmbeddedStore::open(&legacy_dir).unwrap()),
        &fixture_transcript(),
    );
}
