use std::collections::BTreeSet;

use heed::RoTxn;

use super::table::Table;
use super::tables::{self, Tables};
use super::{EmbeddedStore, keys, records};
use crate::learning::{CodeUnit, Lesson, Skill, SkillDraft};
use crate::model::{EntityKey, FactEdge, MemoryEntity, MemoryEpisode, Supersession};
use crate::store::{
    ApplyReport, EntityLink, IntegrityReport, KeyPage, LogPage, MemoryStore, StoreError,
    StoreStats, TimelineQuery, WriteBatch,
};

/// A record of a JSON table (skills, code units, and lessons kept from an earlier release).
pub(super) fn decode<T: serde::de::DeserializeOwned>(
    table: &'static str,
    key: &[u8],
    bytes: &[u8],
) -> Result<T, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
        table,
        key: keys::describe(table, key),
        message: e.to_string(),
    })
}

/// The decoded value at `key` of a JSON table.
pub(super) fn get_json<T: serde::de::DeserializeOwned>(
    table: &Table,
    txn: &RoTxn,
    key: &[u8],
) -> Result<Option<T>, StoreError> {
    table
        .get(txn, key)?
        .map(|v| decode(table.name(), key, v))
        .transpose()
}

/// Every value stored under `key` of a table of duplicates.
pub(super) fn duplicates(
    table: &Table,
    txn: &RoTxn,
    key: &[u8],
) -> Result<Vec<Vec<u8>>, StoreError> {
    let mut out = Vec::new();
    for row in table.duplicates(txn, key)? {
        out.push(row?.1.to_vec());
    }
    Ok(out)
}

/// Every record whose key starts with `first\0`, decoded by `decode`.
fn prefixed<T>(
    table: &Table,
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
    for row in table.range(txn, &range)? {
        let (k, v) = row?;
        out.push(decode(k, v)?);
    }
    Ok(out)
}

/// The record at `key`, decoded by `decode`.
fn get<T>(
    table: &Table,
    txn: &RoTxn,
    key: &[u8],
    decode: fn(&[u8], &[u8]) -> Result<T, StoreError>,
) -> Result<Option<T>, StoreError> {
    table.get(txn, key)?.map(|v| decode(key, v)).transpose()
}

/// What a page of the ingest log (after `after`, at most `limit` rows) reads: each row's
/// episode as `read` gives it from the fingerprint, the rows that cannot be read with why,
/// and the last sequence covered.
type Walked<T> = (Vec<(u64, T)>, Vec<(u64, StoreError)>, u64);

fn walk_log<T>(
    t: &Tables,
    txn: &RoTxn,
    after: u64,
    limit: usize,
    read: impl Fn(&str) -> Result<Option<T>, StoreError>,
) -> Result<Walked<T>, StoreError> {
    let from = keys::sequence(after.saturating_add(1));
    let range = (
        std::ops::Bound::Included(from.as_slice()),
        std::ops::Bound::Unbounded,
    );
    let (mut found, mut unreadable, mut last) = (Vec::new(), Vec::new(), 0);
    // The log is dense (1, 2, 3…): a row that cannot be read is the one after the last.
    let mut expected = after.saturating_add(1);
    for row in t.ingest_log.range(txn, &range)?.take(limit) {
        let seq = match &row {
            Ok((key, _)) => keys::sequence_of(key).unwrap_or(expected),
            Err(_) => expected,
        };
        expected = seq.saturating_add(1);
        last = seq;
        let value = row.and_then(|(key, fp)| {
            let fp = std::str::from_utf8(fp)
                .map_err(|_| t.ingest_log.corrupt(key, "fingerprint not UTF-8"))?;
            read(fp)?.ok_or_else(|| t.ingest_log.corrupt(key, "log row without an episode"))
        });
        match value {
            Ok(v) => found.push((seq, v)),
            Err(e) => unreadable.push((seq, e)),
        }
    }
    Ok((found, unreadable, last))
}

fn episode_in(
    t: &Tables,
    txn: &RoTxn,
    fingerprint: &str,
) -> Result<Option<MemoryEpisode>, StoreError> {
    let mut episode = get(&t.episodes, txn, fingerprint.as_bytes(), records::episode)?;
    if let Some(e) = &mut episode {
        super::versions::attach_episode(t, txn, e)?;
    }
    Ok(episode)
}

/// The lesson an earlier release stored where it differs from today's rendering, or else
/// the lesson rendered from the episode's draft.
pub(super) fn lesson_in(
    t: &Tables,
    txn: &RoTxn,
    fingerprint: &str,
) -> Result<Option<Lesson>, StoreError> {
    if let Some(kept) = get_json(&t.lessons, txn, fingerprint.as_bytes())? {
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
    super::versions::attach_facts(t, txn, &mut out)?;
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
        tail: &mut crate::store::TailSource<'_>,
        items: &mut crate::store::ChunkSource<'_>,
    ) -> Result<ApplyReport, StoreError> {
        self.apply_chunks_in_one(tail, items)
    }

    fn chunks_in_one_transaction(&self) -> bool {
        true
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

    /// The dates alone: a correction changes an episode's texts, never when it concluded,
    /// so its versions are not read.
    fn episode_dates(
        &self,
        fingerprints: &[String],
    ) -> Result<Vec<(String, crate::model::Timestamp)>, StoreError> {
        let txn = self.read()?;
        let mut out = Vec::with_capacity(fingerprints.len());
        for fp in fingerprints {
            let date = get(
                &self.tables.episodes,
                &txn,
                fp.as_bytes(),
                records::episode_concluded_at,
            )?;
            out.extend(date.map(|d| (fp.clone(), d)));
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
            out.extend(get_json(&t.code_units, &txn, &key)?);
        }
        Ok(out)
    }

    fn code_unit(&self, embedding_ref: &str) -> Result<Option<CodeUnit>, StoreError> {
        get_json(
            &self.tables.code_units,
            &*self.read()?,
            embedding_ref.as_bytes(),
        )
    }

    fn skills(&self) -> Result<Vec<Skill>, StoreError> {
        let txn = self.read()?;
        let mut out = Vec::new();
        for row in self.tables.skills.iter(&txn)? {
            let (k, v) = row?;
            out.push(decode("skills", k, v)?);
        }
        Ok(out)
    }

    fn add_skills(
        &self,
        drafts: &[SkillDraft],
        recorded_at: crate::store::KnowledgeTime,
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
        let corrupt = |key: &[u8], message: &str| t.timeline.corrupt(key, message);
        let episode_of = |key: &[u8]| -> Result<MemoryEpisode, StoreError> {
            let (_, fp) = keys::timeline_parts(key).ok_or_else(|| corrupt(key, "malformed key"))?;
            episode_in(t, &txn, fp)?.ok_or_else(|| corrupt(key, "timeline row without an episode"))
        };
        if query.known_at.is_none() {
            // Every row counts: skip by key alone, from whichever end is nearer.
            let total = t.timeline.len(&txn)? as usize;
            let end = query.offset.saturating_add(query.limit).min(total);
            if query.offset >= end {
                return Ok(Vec::new());
            }
            let from_oldest = total - end;
            let keys: Vec<&[u8]> = if from_oldest < query.offset {
                let mut keys = t
                    .timeline
                    .iter(&txn)?
                    .skip(from_oldest)
                    .take(end - query.offset)
                    .map(|row| row.map(|(k, _)| k))
                    .collect::<Result<Vec<_>, _>>()?;
                keys.reverse();
                keys
            } else {
                t.timeline
                    .rev_iter(&txn)?
                    .skip(query.offset)
                    .take(end - query.offset)
                    .map(|row| row.map(|(k, _)| k))
                    .collect::<Result<Vec<_>, _>>()?
            };
            return keys.into_iter().map(episode_of).collect();
        }
        let mut out = Vec::with_capacity(query.limit.min(4096));
        let mut skipped = 0;
        for row in t.timeline.rev_iter(&txn)? {
            if out.len() >= query.limit {
                break;
            }
            let (key, _) = row?;
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
        let txn = self.read()?;
        let mut facts = prefixed(&self.tables.facts, &txn, fingerprint, records::fact)?;
        super::versions::attach_facts(&self.tables, &txn, &mut facts)?;
        Ok(facts)
    }

    fn entity_facts(&self, entity: &EntityKey) -> Result<Vec<FactEdge>, StoreError> {
        entity_facts_in(&self.tables, &*self.read()?, entity)
    }

    fn supersedes(&self, fingerprint: &str) -> Result<Vec<Supersession>, StoreError> {
        let txn = self.read()?;
        let mut lineage = prefixed(
            &self.tables.supersedes,
            &txn,
            fingerprint,
            records::supersession,
        )?;
        super::versions::attach_reviews(&self.tables, &txn, &mut lineage)?;
        Ok(lineage)
    }

    fn superseded_by(&self, fingerprint: &str) -> Result<Vec<Supersession>, StoreError> {
        let txn = self.read()?;
        let t = &self.tables;
        let mut out = Vec::new();
        for skey in duplicates(&t.superseded_by, &txn, fingerprint.as_bytes())? {
            out.extend(get(&t.supersedes, &txn, &skey, records::supersession)?);
        }
        super::versions::attach_reviews(t, &txn, &mut out)?;
        Ok(out)
    }

    fn episodes_since(&self, after: u64, limit: usize) -> Result<LogPage, StoreError> {
        let txn = self.read()?;
        let t = &self.tables;
        let (episodes, unreadable, last) =
            walk_log(t, &txn, after, limit, |fp| episode_in(t, &txn, fp))?;
        Ok(LogPage {
            episodes,
            unreadable,
            last,
        })
    }

    fn episode_keys_since(&self, after: u64, limit: usize) -> Result<KeyPage, StoreError> {
        let txn = self.read()?;
        let t = &self.tables;
        let (keys, unreadable, last) = walk_log(t, &txn, after, limit, |fp| {
            Ok(t.times_of_episode(&txn, fp.as_bytes())?
                .map(|[_, ingested_at, _]| (ingested_at, fp.to_string())))
        })?;
        Ok(KeyPage {
            keys: keys.into_iter().map(|(_, k)| k).collect(),
            unreadable,
            last,
        })
    }

    fn entity_links(&self, entity: &EntityKey) -> Result<Vec<EntityLink>, StoreError> {
        let txn = self.read()?;
        let corrected = super::versions::any(&self.tables, &txn)?;
        let mut out = Vec::new();
        for row in self
            .tables
            .entity_facts
            .duplicates(&txn, &keys::entity(entity))?
        {
            let mut link = records::link(row?.1)?;
            if corrected {
                super::versions::attach_link(&self.tables, &txn, entity, &mut link)?;
            }
            out.push(link);
        }
        Ok(out)
    }

    fn hubs(&self, min: u64) -> Result<Option<Vec<EntityKey>>, StoreError> {
        let txn = self.read()?;
        let mut counted: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut current: Option<(Vec<u8>, u64)> = None;
        // One pass over the entity → fact index, keys in order, duplicates together.
        for (i, row) in self.tables.entity_facts.iter(&txn)?.enumerate() {
            let (key, _) = row?;
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

    fn entity_records(&self) -> Result<Vec<MemoryEntity>, StoreError> {
        let txn = self.read()?;
        let mut out = Vec::new();
        for (i, row) in self.tables.entities.iter(&txn)?.enumerate() {
            let (k, v) = row?;
            out.push(records::entity(k, v)?);
            self.release_while_scanning(i);
        }
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    fn code_units(&self) -> Result<Vec<CodeUnit>, StoreError> {
        let txn = self.read()?;
        let mut out: Vec<CodeUnit> = Vec::new();
        for row in self.tables.code_units.iter(&txn)? {
            let (k, v) = row?;
            out.push(decode("code_units", k, v)?);
        }
        out.sort_by(|a, b| a.embedding_ref.cmp(&b.embedding_ref));
        Ok(out)
    }

    fn entities(&self) -> Result<Vec<EntityKey>, StoreError> {
        let txn = self.read()?;
        let mut out = Vec::new();
        for (i, row) in self.tables.entities.iter(&txn)?.enumerate() {
            let (k, v) = row?;
            out.push(records::entity(k, v)?.key);
            self.release_while_scanning(i);
        }
        Ok(out)
    }

    fn stats(&self) -> Result<StoreStats, StoreError> {
        let txn = self.read()?;
        let t = &self.tables;
        let len = |table: &Table| table.len(&txn);
        Ok(StoreStats {
            episodes: len(&t.episodes)?,
            entities: len(&t.entities)?,
            mentions: tables::counter(t, &txn, tables::COUNT_MENTIONS)?,
            resolved_by: tables::counter(t, &txn, tables::COUNT_RESOLVED_BY)?,
            supersedes: len(&t.supersedes)?,
            invalidated_edges: tables::counter(t, &txn, tables::COUNT_INVALIDATED)?,
        })
    }

    fn episode_count(&self) -> Result<u64, StoreError> {
        self.tables.episodes.len(&*self.read()?)
    }

    fn correct(
        &self,
        batch: &crate::correct::CorrectionBatch,
    ) -> Result<crate::correct::CorrectReport, StoreError> {
        self.correct_batch(batch)
    }

    fn corrections(&self) -> Result<Vec<crate::correct::CorrectionRecord>, StoreError> {
        self.correction_log()
    }

    fn corrections_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<crate::correct::CorrectionRecord>, StoreError> {
        self.correction_log_since(after, limit)
    }

    fn correction_count(&self) -> Result<u64, StoreError> {
        self.tables.corrections.len(&*self.read()?)
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
