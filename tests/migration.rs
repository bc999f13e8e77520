//! A store of the single-process layout (schema 1, one redb file) is migrated on open into
//! the shared layout, keeping every record; the old file is kept beside it.

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
        store.episodes_since(0, usize::MAX).unwrap()
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

#[test]
fn a_schema_1_store_is_migrated_on_open_keeping_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let original_dir = dir.path().join("original");
    let original = EmbeddedStore::open(&original_dir).unwrap();
    strata::demo::seed(&original).unwrap();
    let expected = transcript(&original);
    let original_id = original.identity().unwrap();
    drop(original);
    let rows = raw_lmdb_dump(&original_dir.join("store"), &ALL);
    assert!(rows["episodes"].len() >= 300 && !rows["skills"].is_empty());

    let legacy_dir = dir.path().join("legacy");
    std::fs::create_dir_all(&legacy_dir).unwrap();
    write_legacy(&legacy_dir.join("strata.redb"), &rows);

    let migrated = EmbeddedStore::open(&legacy_dir).unwrap();
    assert_eq!(transcript(&migrated), expected);
    assert!(migrated.check().unwrap().is_consistent());
    assert!(migrated.identity().unwrap().is_some());
    assert_ne!(
        migrated.identity().unwrap(),
        original_id,
        "a store of its own"
    );
    assert!(!legacy_dir.join("strata.redb").exists());
    assert!(
        legacy_dir.join("strata.redb.migrated").is_file(),
        "the old file is kept, not deleted"
    );
    drop(migrated);

    // The CLI opens it as any other store, and the migration happens once.
    let out = strata(&legacy_dir, &["check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        transcript(&EmbeddedStore::open(&legacy_dir).unwrap()),
        expected
    );
}
