//! Migration of the single-process redb store (schema 1, `strata.redb`) into the shared
//! layout with JSON records (schema 2), inside the transaction that creates it: every record
//! is copied as it is (the values are the same JSON), or nothing is. [`super::compact`] then
//! takes it to today's layout.

use std::path::Path;

use heed::RwTxn;
use heed::types::Bytes;
use redb::{
    MultimapTableDefinition, ReadTransaction, ReadableDatabase, ReadableMultimapTable,
    ReadableTable, TableDefinition, TableError,
};

use super::JsonTables;
use crate::store::StoreError;
use crate::store::embedded::{backend, keys, tables};

type Db<'e> = heed::Database<'e, Bytes, Bytes>;

/// A failure reading the earlier (redb) format.
fn legacy(e: impl std::fmt::Display) -> StoreError {
    StoreError::Migration(e.to_string())
}

const BYTES_BY_STR: [&str; 5] = ["episodes", "drafts", "lessons", "skills", "code_units"];
const BYTES_BY_BYTES: [&str; 3] = ["entities", "facts", "supersedes"];

pub(in crate::store::embedded) fn from_redb(
    path: &Path,
    txn: &mut RwTxn,
    t: &JsonTables<'_>,
) -> Result<(), StoreError> {
    let fail = |e: &dyn std::fmt::Display| StoreError::Open {
        path: path.to_path_buf(),
        message: format!("cannot migrate the old store: {e}"),
    };
    let db = redb::Database::open(path).map_err(|e| match e {
        redb::DatabaseError::DatabaseAlreadyOpen => {
            fail(&"an older Strata process still has it open; stop it and try again")
        }
        other => fail(&other),
    })?;
    let read = db.begin_read().map_err(|e| fail(&e))?;
    let copied = copy_all(&read, txn, t).map_err(|e| fail(&e))?;
    tracing::info!(records = copied, from = %path.display(), "migrating the old store");
    Ok(())
}

/// A table that an older store may not have yet.
fn optional<T>(opened: Result<T, TableError>) -> Result<Option<T>, TableError> {
    match opened {
        Ok(t) => Ok(Some(t)),
        Err(TableError::TableDoesNotExist(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

fn copy_all(
    read: &ReadTransaction,
    txn: &mut RwTxn,
    json: &JsonTables<'_>,
) -> Result<u64, StoreError> {
    let t = &json.t;
    let mut copied = 0u64;
    let mut put = |txn: &mut RwTxn, db: Db<'_>, k: &[u8], v: &[u8]| -> Result<(), StoreError> {
        copied += 1;
        db.put(txn, k, v).map_err(backend)
    };
    let table = |name: &str| {
        json.by_name(name)
            .ok_or_else(|| StoreError::Internal(format!("no table {name} to migrate into")))
    };
    for name in BYTES_BY_STR {
        let def: TableDefinition<&str, &[u8]> = TableDefinition::new(name);
        if let Some(rows) = optional(read.open_table(def)).map_err(legacy)? {
            let db = table(name)?;
            for row in rows.iter().map_err(legacy)? {
                let (k, v) = row.map_err(legacy)?;
                put(txn, db, k.value().as_bytes(), v.value())?;
            }
        }
    }
    for name in BYTES_BY_BYTES {
        let def: TableDefinition<&[u8], &[u8]> = TableDefinition::new(name);
        if let Some(rows) = optional(read.open_table(def)).map_err(legacy)? {
            let db = table(name)?;
            for row in rows.iter().map_err(legacy)? {
                let (k, v) = row.map_err(legacy)?;
                put(txn, db, k.value(), v.value())?;
            }
        }
    }
    let entity_facts: MultimapTableDefinition<&[u8], &[u8]> =
        MultimapTableDefinition::new("entity_facts");
    if let Some(table) = optional(read.open_multimap_table(entity_facts)).map_err(legacy)? {
        for row in table.iter().map_err(legacy)? {
            let (k, values) = row.map_err(legacy)?;
            for v in values {
                put(
                    txn,
                    t.entity_facts.raw(),
                    k.value(),
                    v.map_err(legacy)?.value(),
                )?;
            }
        }
    }
    let superseded_by: MultimapTableDefinition<&str, &[u8]> =
        MultimapTableDefinition::new("superseded_by");
    if let Some(table) = optional(read.open_multimap_table(superseded_by)).map_err(legacy)? {
        for row in table.iter().map_err(legacy)? {
            let (k, values) = row.map_err(legacy)?;
            for v in values {
                put(
                    txn,
                    t.superseded_by.raw(),
                    k.value().as_bytes(),
                    v.map_err(legacy)?.value(),
                )?;
            }
        }
    }
    let service_code: MultimapTableDefinition<&str, &str> =
        MultimapTableDefinition::new("service_code");
    if let Some(table) = optional(read.open_multimap_table(service_code)).map_err(legacy)? {
        for row in table.iter().map_err(legacy)? {
            let (k, values) = row.map_err(legacy)?;
            for v in values {
                put(
                    txn,
                    t.service_code.raw(),
                    k.value().as_bytes(),
                    v.map_err(legacy)?.value().as_bytes(),
                )?;
            }
        }
    }
    let timeline: TableDefinition<(i64, &str), ()> = TableDefinition::new("timeline");
    if let Some(table) = optional(read.open_table(timeline)).map_err(legacy)? {
        for row in table.iter().map_err(legacy)? {
            let (k, _) = row.map_err(legacy)?;
            let (ms, fp) = k.value();
            put(txn, t.timeline.raw(), &keys::timeline(ms, fp), &[])?;
        }
    }
    let fact_times: TableDefinition<&[u8], (i64, i64, i64, i64)> =
        TableDefinition::new("fact_times");
    if let Some(table) = optional(read.open_table(fact_times)).map_err(legacy)? {
        for row in table.iter().map_err(legacy)? {
            let (k, v) = row.map_err(legacy)?;
            let (a, b, c, d) = v.value();
            put(txn, json.fact_times, k.value(), &keys::times([a, b, c, d]))?;
        }
    }
    let episode_times: TableDefinition<&str, (i64, i64, i64)> =
        TableDefinition::new("episode_times");
    if let Some(table) = optional(read.open_table(episode_times)).map_err(legacy)? {
        for row in table.iter().map_err(legacy)? {
            let (k, v) = row.map_err(legacy)?;
            let (a, b, c) = v.value();
            put(
                txn,
                t.episode_times.raw(),
                k.value().as_bytes(),
                &keys::times([a, b, c]),
            )?;
        }
    }
    let ingest_log: TableDefinition<u64, &str> = TableDefinition::new("ingest_log");
    if let Some(table) = optional(read.open_table(ingest_log)).map_err(legacy)? {
        for row in table.iter().map_err(legacy)? {
            let (k, v) = row.map_err(legacy)?;
            put(
                txn,
                t.ingest_log.raw(),
                &keys::sequence(k.value()),
                v.value().as_bytes(),
            )?;
        }
    }
    let counters: TableDefinition<&str, u64> = TableDefinition::new("counters");
    if let Some(table) = optional(read.open_table(counters)).map_err(legacy)? {
        for row in table.iter().map_err(legacy)? {
            let (k, v) = row.map_err(legacy)?;
            put(
                txn,
                t.counters.raw(),
                k.value().as_bytes(),
                &v.value().to_le_bytes(),
            )?;
        }
    }
    let meta: TableDefinition<&str, &str> = TableDefinition::new("meta");
    if let Some(table) = optional(read.open_table(meta)).map_err(legacy)?
        && let Some(v) = table.get(tables::KNOWLEDGE_HIGH_WATER).map_err(legacy)?
    {
        tables::meta_put(t, txn, tables::KNOWLEDGE_HIGH_WATER, v.value())?;
    }
    Ok(copied)
}
