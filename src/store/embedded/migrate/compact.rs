//! Schema 2 (JSON records, a draft beside each episode, fact times in their own table) to
//! schema 3 ([`crate::store::embedded::records`]), in one write transaction: every record is
//! rewritten in its compact form or nothing is. What schema 3 derives instead of storing (an
//! episode's draft, a fact's times, a lesson that renders the same) is checked against what
//! was stored before it is dropped; a lesson that renders differently today is kept as stored.

use std::ops::Bound;

use heed::types::Bytes;
use heed::{CommitOrAbort, Database, RwTxn};

use super::JsonTables;
use crate::learning::Lesson;
use crate::lmdb::{SharedEnv, WriterLock};
use crate::model::{FactEdge, MemoryEntity, MemoryEpisode, Supersession};
use crate::store::embedded::tables::{self, SCHEMA_JSON, SCHEMA_VERSION, Tables};
use crate::store::embedded::{keys, records};
use crate::store::{EpisodeDraft, StoreError};

type Db<'e> = Database<'e, Bytes, Bytes>;

/// Rows read before they are written back: bounds the memory a migration holds at once.
const CHUNK: usize = 8_192;

/// What becomes of one row.
enum Rewrite {
    Put(Vec<u8>),
    Delete,
}

/// Rewrites the store at schema 2 as schema 3; `false` when another process already did.
pub(in crate::store::embedded) fn to_compact(
    shared: &SharedEnv,
    lock: &WriterLock,
    t: &Tables,
) -> Result<bool, StoreError> {
    let _turn = lock.acquire(WriterLock::default_wait())?;
    let txn = shared.env.write_txn()?;
    let done = shared.env.create_databases_and_commit(
        txn,
        |dbo, txn| -> Result<CommitOrAbort<(), ()>, StoreError> {
            let schema = tables::meta_get(t, txn, tables::SCHEMA)?;
            if schema != Some(SCHEMA_JSON.to_string()) {
                return Ok(CommitOrAbort::Abort(()));
            }
            let json = JsonTables::create(*t, dbo, txn)?;
            let counts = rewrite_all(txn, &json)?;
            tracing::info!(
                episodes = counts[0],
                facts = counts[1],
                supersessions = counts[2],
                entities = counts[3],
                lessons_kept = counts[4],
                "migrated the store to compact records (schema {SCHEMA_VERSION})"
            );
            // SAFETY: the two handles were opened in this transaction and are not used after
            // it; this release opens neither table anywhere else.
            unsafe {
                json.drafts.remove(txn)?;
                json.fact_times.remove(txn)?;
            }
            tables::meta_put(t, txn, tables::SCHEMA, &SCHEMA_VERSION.to_string())?;
            tables::add_to_counter(t, txn, tables::GENERATION, 1)?;
            Ok(CommitOrAbort::Commit(()))
        },
    )?;
    Ok(matches!(done, CommitOrAbort::Commit(())))
}

/// Rewrites each table; returns the episodes, facts, supersessions and entities rewritten
/// and the lessons kept.
fn rewrite_all(txn: &mut RwTxn, json: &JsonTables<'_>) -> Result<[u64; 5], StoreError> {
    let t = &json.t;
    let drafts = json.drafts;
    let fact_times = json.fact_times;
    let draft_of = |txn: &RwTxn, fp: &[u8]| -> Result<EpisodeDraft, StoreError> {
        let bytes = drafts
            .get(txn, fp)?
            .ok_or_else(|| missing("episode", fp, "has no draft"))?;
        json_record("drafts", fp, bytes)
    };

    let episodes = rewrite(txn, t.episodes, |txn, fp, bytes| {
        let episode: MemoryEpisode = json_record("episodes", fp, bytes)?;
        let draft = draft_of(txn, fp)?;
        if draft.incident_fingerprint.as_bytes() != fp
            || episode.incident_fingerprint.as_bytes() != fp
            || (draft.concluded_at, draft.t_valid) != (episode.concluded_at, episode.t_valid)
        {
            return Err(missing("episode", fp, "and its draft disagree"));
        }
        Ok(Some(Rewrite::Put(records::encode_episode(
            &draft,
            episode.ingested_at,
        )?)))
    })?;

    let facts = rewrite(txn, t.facts, |txn, key, bytes| {
        let fact: FactEdge = json_record("facts", key, bytes)?;
        let encoded = records::encode_fact(&fact)?;
        let times = fact_times.get(txn, key)?;
        if times.and_then(keys::times_of::<4>) != records::fact_times(&encoded) {
            return Err(missing(
                "fact",
                key,
                "has times that disagree with its record",
            ));
        }
        Ok(Some(Rewrite::Put(encoded)))
    })?;

    let supersessions = rewrite(txn, t.supersedes, |_, key, bytes| {
        let s: Supersession = json_record("supersedes", key, bytes)?;
        Ok(Some(Rewrite::Put(records::encode_supersession(&s)?)))
    })?;

    let entities = rewrite(txn, t.entities, |_, key, bytes| {
        let e: MemoryEntity = json_record("entities", key, bytes)?;
        Ok(Some(Rewrite::Put(records::encode_entity(&e)?)))
    })?;

    let mut kept = 0;
    rewrite(txn, t.lessons, |txn, fp, bytes| {
        let stored: Lesson = json_record("lessons", fp, bytes)?;
        let draft = draft_of(txn, fp)?;
        let rendered = crate::learning::render(
            &draft.incident_fingerprint,
            &draft.resolution_nl,
            draft.facts.iter().map(|f| (f.relation, &f.entity)),
        );
        if rendered == stored {
            Ok(Some(Rewrite::Delete))
        } else {
            kept += 1;
            Ok(None)
        }
    })?;
    Ok([episodes, facts, supersessions, entities, kept])
}

/// Walks `db` in chunks of [`CHUNK`] keys, asking `decide` what becomes of each row (`None`:
/// it stays), and applies the answers between chunks; returns the rows rewritten.
fn rewrite(
    txn: &mut RwTxn,
    db: Db<'_>,
    mut decide: impl FnMut(&RwTxn, &[u8], &[u8]) -> Result<Option<Rewrite>, StoreError>,
) -> Result<u64, StoreError> {
    let mut after: Option<Vec<u8>> = None;
    let mut rewritten = 0;
    loop {
        let mut chunk: Vec<(Vec<u8>, Option<Rewrite>)> = Vec::with_capacity(CHUNK);
        {
            let lower = match &after {
                Some(key) => Bound::Excluded(key.as_slice()),
                None => Bound::Unbounded,
            };
            let range = (lower, Bound::Unbounded);
            for row in db.range(txn, &range)?.take(CHUNK) {
                let (key, bytes) = row?;
                chunk.push((key.to_vec(), decide(txn, key, bytes)?));
            }
        }
        let Some((last, _)) = chunk.last() else {
            return Ok(rewritten);
        };
        after = Some(last.clone());
        for (key, change) in chunk {
            match change {
                Some(Rewrite::Put(value)) => {
                    db.put(txn, &key, &value)?;
                    rewritten += 1;
                }
                Some(Rewrite::Delete) => {
                    db.delete(txn, &key)?;
                }
                None => {}
            }
        }
    }
}

fn json_record<T: serde::de::DeserializeOwned>(
    table: &'static str,
    key: &[u8],
    bytes: &[u8],
) -> Result<T, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
        table,
        key: keys::display(key),
        message: format!("cannot migrate a schema-2 record: {e}"),
    })
}

fn missing(what: &str, key: &[u8], problem: &str) -> StoreError {
    StoreError::Migration(format!(
        "cannot migrate to compact records: {what} {} {problem}",
        keys::display(key)
    ))
}
