use std::collections::BTreeSet;

use heed::RoTxn;

use super::tables::{self, Tables};
use super::{EmbeddedStore, backend, keys, records};
use crate::learning::{CodeUnit, Lesson, Skill, SkillDraft};
use crate::model::{EntityKey, FactEdge, MemoryEpisode, Supersession, Timestamp};
use crate::store::{
    ApplyReport, EntityLink, IntegrityReport, MemoryStore, StoreError, StoreStats, TimelineQuery,
    WriteBatch,
};

/// A record of a JSON table (skills, code units, and lessons kept from an earlier release).
pub(super) fn decode<T: serde::de::DeserializeOwned>(
    table: &'static str,
    key: &[u8],
    bytes: &[u8],
) -> Result<T, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
        table,
        key: keys::display(key),
        message: e.to_string(),
    })
}

/// The decoded value at `key` of a JSON table.
pub(super) fn get_json<T: serde::de::DeserializeOwned>(
    db: &tables::Db,
    name: &'static str,
    txn: &RoTxn,
    key: &[u8],
) -> Result<Option<T>, StoreError> {
    db.get(txn, key)
        .map_err(backend)?
        .map(|v| decode(name, key, v))
        .transpose()
}

/// Every value stored under `key` of a table of duplicates.
pub(super) fn duplicates(
    db: &tables::Db,
    txn: &RoTxn,
    key: &[u8],
) -> Result<Vec<Vec<u8>>, StoreError> {
    let mut out = Vec::new();
    if let Some(iter) = db.get_duplicates(txn, key).map_err(backend)? {
        for row in iter {
            out.push(row.map_err(backend)?.1.to_vec());
        }
    }
    Ok(out)
}

/// Every record whose key starts with `first\0`, decoded by `decode`.
fn prefixed<T>(
    db: &tables::Db,
    txn: &RoTxn,
    first: &str,
    decode: fn(&[u8], &[u8]) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    let (lo, hi) = keys::prefix_range(first);
    let range = (
        std::ops::Bound::Included(lo.as_slice()),
        std::ops::Bound::Excluded(hi.as_slice()),
    );
    let mut out = Vec::new();
    for row in db.range(txn, &range).map_err(backend)? {
        let (k, v) = row.map_err(backend)?;
        out.push(decode(k, v)?);
    }
    Ok(out)
}

/// The record at `key`, decoded by `decode`.
fn get<T>(
    db: &tables::Db,
    txn: &RoTxn,
    key: &[u8],
    decode: fn(&[u8], &[u8]) -> Result<T, StoreError>,
) -> Result<Option<T>, StoreError> {
    db.get(txn, key)
        .map_err(backend)?
        .map(|v| decode(key, v))
        .transpose()
}

fn episode_in(
    t: &Tables,
    txn: &RoTxn,
    fingerprint: &str,
) -> Result<Option<MemoryEpisode>, StoreError> {
    get(&t.episodes, txn, fingerprint.as_bytes(), records::episode)
}

/// The lesson an earlier release stored where it differs from today's rendering, or else
/// the lesson rendered from the episode's draft.
pub(super) fn lesson_in(
    t: &Tables,
    txn: &RoTxn,
    fingerprint: &str,
) -> Result<Option<Lesson>, StoreError> {
    if let Some(kept) = get_json(&t.lessons, "lessons", txn, fingerprint.as_bytes())? {
        return Ok(Some(kept));
    }
    let Some(d) = get(&t.episodes, txn, fingerprint.as_bytes(), records::draft)? else {
        return Ok(None);
    };
    Ok(Some(crate::learning::render(
        &d.incident_fingerprint,
        &d.resolution_nl,
        d.facts.iter().map(|f| (f.relation, &f.entity)),
    )))
}

fn entity_facts_in(
    t: &Tables,
    txn: &RoTxn,
    entity: &EntityKey,
) -> Result<Vec<FactEdge>, StoreError> {
    let ekey = keys::entity(entity);
    let mut out = Vec::new();
    for link in duplicates(&t.entity_facts, txn, &ekey)? {
        let fkey = records::link_fact_key(&ekey, &link)?;
        out.extend(get(&t.facts, txn, &fkey, records::fact)?);
    }
    Ok(out)
}

/// A scan over a whole table lets go of its mapped pages every this many rows: the kernel
/// maps the cached pages around each one it faults in, so a scan of a 65 MB table over a
/// store in the page cache otherwise leaves most of the file resident.
const SCAN_RELEASE_ROWS: usize = 65_536;

impl EmbeddedStore {
    fn release_while_scanning(&self, row: usize) {
        if row > 0 && row.is_multiple_of(SCAN_RELEASE_ROWS) {
            self.shared.release_mapped_pages();
        }
    }
}

impl MemoryStore for EmbeddedStore {
    fn describe(&self) -> String {
        let mode = if self.read_only() { ", read-only" } else { "" };
        format!("embedded ({}{mode})", self.path.display())
    }

    fn read_only(&self) -> bool {
        EmbeddedStore::read_only(self)
    }

    fn apply(&self, batch: &WriteBatch) -> Result<ApplyReport, StoreError> {
        self.apply_batch(batch)
    }

    fn apply_chunks(
        &self,
        code_units: &[(String, crate::learning::CodeUnit)],
        items: &mut crate::store::ChunkSource<'_>,
    ) -> Result<ApplyReport, StoreError> {
        self.apply_chunks_in_one(code_units, items)
    }

    fn episode(&self, fingerprint: &str) -> Result<Option<MemoryEpisode>, StoreError> {
        episode_in(&self.tables, &*self.read()?, fingerprint)
    }

    fn episodes(&self, fingerprints: &[String]) -> Result<Vec<MemoryEpisode>, StoreError> {
        let txn = self.read()?;
        let mut out = Vec::with_capacity(fingerprints.len());
        for fp in fingerprints {
            out.extend(episode_in(&self.tables, &txn, fp)?);
        }
        Ok(out)
    }

    fn lessons(&self, fingerprints: &[String]) -> Result<Vec<Lesson>, StoreError> {
        let txn = self.read()?;
        let mut out = Vec::with_capacity(fingerprints.len());
        for fp in fingerprints {
            out.extend(lesson_in(&self.tables, &txn, fp)?);
        }
        Ok(out)
    }

    fn code_units_of_service(&self, service: &str) -> Result<Vec<CodeUnit>, StoreError> {
        let txn = self.read()?;
        let t = &self.tables;
        let mut out = Vec::new();
        for key in duplicates(&t.service_code, &txn, service.as_bytes())? {
            out.extend(get_json(&t.code_units, "code_units", &txn, &key)?);
        }
        Ok(out)
    }

    fn code_unit(&self, embedding_ref: &str) -> Result<Option<CodeUnit>, StoreError> {
        get_json(
            &self.tables.code_units,
            "code_units",
            &*self.read()?,
            embedding_ref.as_bytes(),
        )
    }

    fn skills(&self) -> Result<Vec<Skill>, StoreError> {
        let txn = self.read()?;
        let mut out = Vec::new();
        for row in self.tables.skills.iter(&txn).map_err(backend)? {
            let (k, v) = row.map_err(backend)?;
            out.push(decode("skills", k, v)?);
        }
        Ok(out)
    }

    fn add_skills(
        &self,
        drafts: &[SkillDraft],
        recorded_at: Timestamp,
    ) -> Result<usize, StoreError> {
        self.add_skill_versions(drafts, recorded_at)
    }

    fn lesson(&self, fingerprint: &str) -> Result<Option<Lesson>, StoreError> {
        lesson_in(&self.tables, &*self.read()?, fingerprint)
    }

    fn timeline(&self, query: &TimelineQuery) -> Result<Vec<MemoryEpisode>, StoreError> {
        let txn = self.read()?;
        let t = &self.tables;
        let known = |e: &MemoryEpisode| query.known_at.is_none_or(|k| e.ingested_at <= k);
        if let Some(entity) = &query.entity {
            let fps: BTreeSet<String> = entity_facts_in(t, &txn, entity)?
                .into_iter()
                .map(|f| f.episode)
                .collect();
            let mut episodes = Vec::with_capacity(fps.len());
            for fp in fps {
                if let Some(e) = episode_in(t, &txn, &fp)?.filter(known) {
                    episodes.push(e);
                }
            }
            episodes.sort_by(|a, b| {
                (b.concluded_at, &b.incident_fingerprint)
                    .cmp(&(a.concluded_at, &a.incident_fingerprint))
            });
            return Ok(episodes
                .into_iter()
                .skip(query.offset)
                .take(query.limit)
                .collect());
        }
        let corrupt = |key: &[u8], message: &str| StoreError::Corrupt {
            table: "timeline",
            key: keys::display(key),
            message: message.into(),
        };
        let episode_of = |key: &[u8]| -> Result<MemoryEpisode, StoreError> {
            let (_, fp) = keys::timeline_parts(key).ok_or_else(|| corrupt(key, "malformed key"))?;
            episode_in(t, &txn, fp)?.ok_or_else(|| corrupt(key, "timeline row without an episode"))
        };
        if query.known_at.is_none() {
            // Every row counts: skip by key alone, from whichever end is nearer.
            let total = t.timeline.len(&txn).map_err(backend)? as usize;
            let end = query.offset.saturating_add(query.limit).min(total);
            if query.offset >= end {
                return Ok(Vec::new());
            }
            let from_oldest = total - end;
            let keys: Vec<&[u8]> = if from_oldest < query.offset {
                let mut keys = t
                    .timeline
                    .iter(&txn)
                    .map_err(backend)?
                    .skip(from_oldest)
                    .take(end - query.offset)
                    .map(|row| row.map(|(k, _)| k).map_err(backend))
                    .collect::<Result<Vec<_>, _>>()?;
                keys.reverse();
                keys
            } else {
                t.timeline
                    .rev_iter(&txn)
                    .map_err(backend)?
                    .skip(query.offset)
                    .take(end - query.offset)
                    .map(|row| row.map(|(k, _)| k).map_err(backend))
                    .collect::<Result<Vec<_>, _>>()?
            };
            return keys.into_iter().map(episode_of).collect();
        }
        let mut out = Vec::with_capacity(query.limit.min(4096));
        let mut skipped = 0;
        for row in t.timeline.rev_iter(&txn).map_err(backend)? {
            if out.len() >= query.limit {
                break;
            }
            let (key, _) = row.map_err(backend)?;
            let episode = episode_of(key)?;
            if !known(&episode) {
                continue;
            }
            if skipped < query.offset {
                skipped += 1;
                continue;
            }
            out.push(episode);
        }
        Ok(out)
    }

    fn facts(&self, fingerprint: &str) -> Result<Vec<FactEdge>, StoreError> {
        prefixed(
            &self.tables.facts,
            &*self.read()?,
            fingerprint,
            records::fact,
        )
    }

    fn entity_facts(&self, entity: &EntityKey) -> Result<Vec<FactEdge>, StoreError> {
        entity_facts_in(&self.tables, &*self.read()?, entity)
    }

    fn supersedes(&self, fingerprint: &str) -> Result<Vec<Supersession>, StoreError> {
        prefixed(
            &self.tables.supersedes,
            &*self.read()?,
            fingerprint,
            records::supersession,
        )
    }

    fn superseded_by(&self, fingerprint: &str) -> Result<Vec<Supersession>, StoreError> {
        let txn = self.read()?;
        let t = &self.tables;
        let mut out = Vec::new();
        for skey in duplicates(&t.superseded_by, &txn, fingerprint.as_bytes())? {
            out.extend(get(&t.supersedes, &txn, &skey, records::supersession)?);
        }
        Ok(out)
    }

    fn episodes_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<(u64, MemoryEpisode)>, StoreError> {
        let txn = self.read()?;
        let t = &self.tables;
        let from = keys::sequence(after.saturating_add(1));
        let range = (
            std::ops::Bound::Included(from.as_slice()),
            std::ops::Bound::Unbounded,
        );
        let mut out = Vec::new();
        for row in t
            .ingest_log
            .range(&txn, &range)
            .map_err(backend)?
            .take(limit)
        {
            let (seq, fp) = row.map_err(backend)?;
            let corrupt = |message: &str| StoreError::Corrupt {
                table: "ingest_log",
                key: String::from_utf8_lossy(fp).into_owned(),
                message: message.into(),
            };
            let seq = keys::sequence_of(seq).ok_or_else(|| corrupt("malformed sequence"))?;
            let fp = std::str::from_utf8(fp).map_err(|_| corrupt("fingerprint not UTF-8"))?;
            let episode =
                episode_in(t, &txn, fp)?.ok_or_else(|| corrupt("log row without an episode"))?;
            out.push((seq, episode));
        }
        Ok(out)
    }

    fn entity_links(&self, entity: &EntityKey) -> Result<Vec<EntityLink>, StoreError> {
        let txn = self.read()?;
        let mut out = Vec::new();
        if let Some(links) = self
            .tables
            .entity_facts
            .get_duplicates(&txn, &keys::entity(entity))
            .map_err(backend)?
        {
            for row in links {
                out.push(records::link(row.map_err(backend)?.1)?);
            }
        }
        Ok(out)
    }

    fn hubs(&self, min: u64) -> Result<Option<Vec<EntityKey>>, StoreError> {
        let txn = self.read()?;
        let mut counted: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut current: Option<(Vec<u8>, u64)> = None;
        // One pass over the entity → fact index, keys in order, duplicates together.
        for (i, row) in self
            .tables
            .entity_facts
            .iter(&txn)
            .map_err(backend)?
            .enumerate()
        {
            let (key, _) = row.map_err(backend)?;
            self.release_while_scanning(i);
            match &mut current {
                Some((k, n)) if k.as_slice() == key => *n += 1,
                _ => {
                    if let Some((k, n)) = current.take()
                        && n >= min
                    {
                        counted.push((n, k));
                    }
                    current = Some((key.to_vec(), 1));
                }
            }
        }
        if let Some((k, n)) = current
            && n >= min
        {
            counted.push((n, k));
        }
        counted.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        Ok(Some(
            counted
                .into_iter()
                .filter_map(|(_, key)| keys::entity_of(&key))
                .collect(),
        ))
    }

    fn entities(&self) -> Result<Vec<EntityKey>, StoreError> {
        let txn = self.read()?;
        let mut out = Vec::new();
        for (i, row) in self
            .tables
            .entities
            .iter(&txn)
            .map_err(backend)?
            .enumerate()
        {
            let (k, v) = row.map_err(backend)?;
            out.push(records::entity(k, v)?.key);
            self.release_while_scanning(i);
        }
        Ok(out)
    }

    fn stats(&self) -> Result<StoreStats, StoreError> {
        let txn = self.read()?;
        let t = &self.tables;
        let len = |db: &tables::Db| db.len(&txn).map_err(backend);
        Ok(StoreStats {
            episodes: len(&t.episodes)?,
            entities: len(&t.entities)?,
            mentions: tables::counter(t, &txn, tables::COUNT_MENTIONS)?,
            resolved_by: tables::counter(t, &txn, tables::COUNT_RESOLVED_BY)?,
            supersedes: len(&t.supersedes)?,
            invalidated_edges: tables::counter(t, &txn, tables::COUNT_INVALIDATED)?,
        })
    }

    fn check(&self) -> Result<IntegrityReport, StoreError> {
        self.check_integrity()
    }

    fn release_mapped_pages(&self) {
        self.shared.release_mapped_pages();
    }

    fn identity(&self) -> Result<Option<String>, StoreError> {
        tables::meta_get(&self.tables, &*self.read()?, tables::STORE_ID)
    }

    fn generation(&self) -> Result<u64, StoreError> {
        tables::counter(&self.tables, &*self.read()?, tables::GENERATION)
    }
}
