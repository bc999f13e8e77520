//! Schema 2 (JSON records, a draft beside each episode, fact times in their own table) to
//! schema 3 ([`crate::store::embedded::records`]), in one write transaction: every record is
//! rewritten in its compact form or nothing is. Each compact record is decoded again and
//! compared with the JSON one (so what its key now carries, and an episode's fields now read
//! from its draft, are checked); a lesson that renders differently today is kept as stored.
//! The fact times table was an index of the fact records: where it disagreed, the record
//! wins, and the count is logged.
//!
//! The writer lock is held throughout: at a million episodes that is tens of seconds, and a
//! writer in another process waits for it (or gives up after its bound, saying why).

use std::ops::Bound;

use heed::types::Bytes;
use heed::{Database, RwTxn};

use super::JsonTables;
use crate::learning::Lesson;
use crate::lmdb::{SharedEnv, WriterLock};
use crate::model::{FactEdge, MemoryEntity, MemoryEpisode, Supersession};
use crate::store::embedded::read::decode;
use crate::store::embedded::tables::{SCHEMA_COMPACT, SCHEMA_JSON, Tables};
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
    super::step(
        shared,
        lock,
        t,
        (SCHEMA_JSON, SCHEMA_COMPACT),
        |dbo, txn| {
            let json = JsonTables::create(*t, dbo, txn)?;
            let counts = rewrite_all(txn, &json, shared)?;
            tracing::info!(
                episodes = counts.episodes,
                facts = counts.facts,
                fact_times_repaired = counts.times_repaired,
                supersessions = counts.supersessions,
                entities = counts.entities,
                entity_links = counts.links,
                lessons_kept = counts.lessons_kept,
                "migrated the store to compact records (schema {SCHEMA_COMPACT})"
            );
            json.drafts.clear(txn)?;
            json.fact_times.clear(txn)?;
            Ok(())
        },
    )
}

/// What a migration rewrote, repaired and kept.
#[derive(Default)]
struct Counts {
    episodes: u64,
    facts: u64,
    times_repaired: u64,
    supersessions: u64,
    entities: u64,
    links: u64,
    lessons_kept: u64,
}

fn rewrite_all(
    txn: &mut RwTxn,
    json: &JsonTables<'_>,
    shared: &SharedEnv,
) -> Result<Counts, StoreError> {
    let mut counts = Counts::default();
    let t = &json.t;
    let drafts = json.drafts;
    let fact_times = json.fact_times;
    let draft_of = |txn: &RwTxn, fp: &[u8]| -> Result<EpisodeDraft, StoreError> {
        let bytes = drafts
            .get(txn, fp)?
            .ok_or_else(|| missing("episode", fp, "has no draft"))?;
        decode("drafts", fp, bytes)
    };

    counts.episodes = rewrite(shared, txn, t.episodes.raw(), |txn, fp, bytes| {
        let episode: MemoryEpisode = decode("episodes", fp, bytes)?;
        let draft = draft_of(txn, fp)?;
        let encoded = records::encode_episode(&draft, episode.ingested_at)?;
        if records::episode(fp, &encoded)? != episode || records::draft(fp, &encoded)? != draft {
            return Err(missing("episode", fp, "and its draft disagree"));
        }
        Ok(Some(Rewrite::Put(encoded)))
    })?;

    let mut repaired = 0;
    counts.facts = rewrite(shared, txn, t.facts.raw(), |txn, key, bytes| {
        let fact: FactEdge = decode("facts", key, bytes)?;
        let encoded = records::encode_fact(&fact)?;
        if records::fact(key, &encoded)? != fact {
            return Err(missing("fact", key, "holds another fact"));
        }
        let indexed = fact_times.get(txn, key)?.and_then(keys::times_of::<4>);
        if indexed != records::fact_times(&encoded) {
            repaired += 1;
        }
        Ok(Some(Rewrite::Put(encoded)))
    })?;
    counts.times_repaired = repaired;
    counts.links = relink(shared, txn, t)?;

    counts.supersessions = rewrite(shared, txn, t.supersedes.raw(), |_, key, bytes| {
        let s: Supersession = decode("supersedes", key, bytes)?;
        let encoded = records::encode_supersession(&s)?;
        if records::supersession(key, &encoded)? != s {
            return Err(missing("supersession", key, "holds another supersession"));
        }
        Ok(Some(Rewrite::Put(encoded)))
    })?;

    counts.entities = rewrite(shared, txn, t.entities.raw(), |_, key, bytes| {
        let e: MemoryEntity = decode("entities", key, bytes)?;
        let encoded = records::encode_entity(&e)?;
        if records::entity(key, &encoded)? != e {
            return Err(missing("entity", key, "holds another entity"));
        }
        Ok(Some(Rewrite::Put(encoded)))
    })?;

    let mut kept = 0;
    rewrite(shared, txn, t.lessons.raw(), |txn, fp, bytes| {
        let stored: Lesson = decode("lessons", fp, bytes)?;
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
    counts.lessons_kept = kept;
    Ok(counts)
}

/// Writes the entity → fact index again from the (already compact) facts: schema 2 held fact
/// keys there, schema 3 holds links with their times. The index is emptied first; the count
/// written must be the count there was.
fn relink(shared: &SharedEnv, txn: &mut RwTxn, t: &Tables) -> Result<u64, StoreError> {
    let before = t.entity_facts.len(txn)?;
    t.entity_facts.clear(txn)?;
    let mut after: Option<Vec<u8>> = None;
    let mut written = 0;
    loop {
        let mut chunk: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(CHUNK);
        {
            let lower = match &after {
                Some(key) => Bound::Excluded(key.as_slice()),
                None => Bound::Unbounded,
            };
            for row in t.facts.range(txn, &(lower, Bound::Unbounded))?.take(CHUNK) {
                let (key, bytes) = row?;
                let fact = records::fact(key, bytes)?;
                let episode = t
                    .times_of_episode(txn, fact.episode.as_bytes())?
                    .ok_or_else(|| missing("fact", key, "names an episode without times"))?;
                let link = records::encode_link(&fact, episode)?;
                after = Some(key.to_vec());
                chunk.push((keys::entity(&fact.entity), link));
            }
        }
        if chunk.is_empty() {
            break;
        }
        for (ekey, link) in chunk {
            t.entity_facts.put(txn, &ekey, &link)?;
            written += 1;
        }
        shared.release_mapped_pages();
    }
    if written != before {
        return Err(StoreError::Migration(format!(
            "cannot migrate to compact records: the entity index held {before} rows, its facts \
             give {written}"
        )));
    }
    Ok(written)
}

/// Walks `db` in chunks of [`CHUNK`] keys, asking `decide` what becomes of each row (`None`:
/// it stays), and applies the answers between chunks; returns the rows rewritten. Between
/// chunks the store's mapped pages are let go, so memory follows the chunk, not the store.
fn rewrite(
    shared: &SharedEnv,
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
        shared.release_mapped_pages();
    }
}

fn missing(what: &str, key: &[u8], problem: &str) -> StoreError {
    StoreError::Migration(format!(
        "cannot migrate to compact records: {what} {} {problem}",
        keys::display(key)
    ))
}
