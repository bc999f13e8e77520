use std::collections::BTreeSet;

use redb::{ReadTransaction, ReadableDatabase, ReadableTable, ReadableTableMetadata};

use super::tables::*;
use super::{EmbeddedStore, backend, keys};
use crate::learning::{CodeUnit, Lesson, Skill, SkillDraft};
use crate::model::{EntityKey, FactEdge, MemoryEpisode, Supersession, Timestamp};
use crate::store::{
    ApplyReport, EntityLink, IntegrityReport, MemoryStore, StoreError, StoreStats, TimelineQuery,
    WriteBatch,
};

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

impl EmbeddedStore {
    pub(super) fn read(&self) -> Result<ReadTransaction, StoreError> {
        self.db.begin_read().map_err(backend)
    }

    fn episode_in(
        txn: &ReadTransaction,
        fingerprint: &str,
    ) -> Result<Option<MemoryEpisode>, StoreError> {
        let table = txn.open_table(EPISODES).map_err(backend)?;
        table
            .get(fingerprint)
            .map_err(backend)?
            .map(|v| decode("episodes", fingerprint.as_bytes(), v.value()))
            .transpose()
    }

    fn supersessions_in(
        txn: &ReadTransaction,
        skeys: impl IntoIterator<Item = Vec<u8>>,
    ) -> Result<Vec<Supersession>, StoreError> {
        let table = txn.open_table(SUPERSEDES).map_err(backend)?;
        let mut out = Vec::new();
        for key in skeys {
            if let Some(v) = table.get(key.as_slice()).map_err(backend)? {
                out.push(decode("supersedes", &key, v.value())?);
            }
        }
        Ok(out)
    }
}

impl MemoryStore for EmbeddedStore {
    fn describe(&self) -> String {
        format!("embedded ({})", self.path.display())
    }

    fn apply(&self, batch: &WriteBatch) -> Result<ApplyReport, StoreError> {
        self.apply_batch(batch)
    }

    fn episode(&self, fingerprint: &str) -> Result<Option<MemoryEpisode>, StoreError> {
        Self::episode_in(&self.read()?, fingerprint)
    }

    fn code_units_of_service(&self, service: &str) -> Result<Vec<CodeUnit>, StoreError> {
        let txn = self.read()?;
        let index = txn.open_multimap_table(SERVICE_CODE).map_err(backend)?;
        let units = txn.open_table(CODE_UNITS).map_err(backend)?;
        let mut out = Vec::new();
        for key in index.get(service).map_err(backend)? {
            let key = key.map_err(backend)?;
            let key = key.value();
            if let Some(v) = units.get(key).map_err(backend)? {
                out.push(decode("code_units", key.as_bytes(), v.value())?);
            }
        }
        Ok(out)
    }

    fn code_unit(&self, embedding_ref: &str) -> Result<Option<CodeUnit>, StoreError> {
        let txn = self.read()?;
        let units = txn.open_table(CODE_UNITS).map_err(backend)?;
        units
            .get(embedding_ref)
            .map_err(backend)?
            .map(|v| decode("code_units", embedding_ref.as_bytes(), v.value()))
            .transpose()
    }

    fn skills(&self) -> Result<Vec<Skill>, StoreError> {
        let txn = self.read()?;
        let table = txn.open_table(SKILLS).map_err(backend)?;
        let mut out = Vec::new();
        for row in table.iter().map_err(backend)? {
            let (k, v) = row.map_err(backend)?;
            out.push(decode("skills", k.value().as_bytes(), v.value())?);
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
        let txn = self.read()?;
        let lessons = txn.open_table(LESSONS).map_err(backend)?;
        lessons
            .get(fingerprint)
            .map_err(backend)?
            .map(|v| decode("lessons", fingerprint.as_bytes(), v.value()))
            .transpose()
    }

    fn timeline(&self, query: &TimelineQuery) -> Result<Vec<MemoryEpisode>, StoreError> {
        let txn = self.read()?;
        let known = |e: &MemoryEpisode| query.known_at.is_none_or(|k| e.ingested_at <= k);
        if let Some(entity) = &query.entity {
            let mut fps = BTreeSet::new();
            for fact in self.entity_facts(entity)? {
                fps.insert(fact.episode);
            }
            let mut episodes = Vec::with_capacity(fps.len());
            for fp in fps {
                if let Some(e) = Self::episode_in(&txn, &fp)?.filter(known) {
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
        let timeline = txn.open_table(TIMELINE).map_err(backend)?;
        let episodes = txn.open_table(EPISODES).map_err(backend)?;
        let mut out = Vec::with_capacity(query.limit.min(4096));
        let mut skipped = 0;
        for row in timeline.iter().map_err(backend)?.rev() {
            if out.len() >= query.limit {
                break;
            }
            let (key, _) = row.map_err(backend)?;
            let (_, fp) = key.value();
            let Some(bytes) = episodes.get(fp).map_err(backend)? else {
                return Err(StoreError::Corrupt {
                    table: "timeline",
                    key: fp.to_string(),
                    message: "timeline row without an episode".into(),
                });
            };
            let episode: MemoryEpisode = decode("episodes", fp.as_bytes(), bytes.value())?;
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
        let table = txn.open_table(FACTS).map_err(backend)?;
        let (lo, hi) = keys::prefix_range(fingerprint);
        let mut out = Vec::new();
        for row in table.range(lo.as_slice()..hi.as_slice()).map_err(backend)? {
            let (k, v) = row.map_err(backend)?;
            out.push(decode("facts", k.value(), v.value())?);
        }
        Ok(out)
    }

    fn entity_facts(&self, entity: &EntityKey) -> Result<Vec<FactEdge>, StoreError> {
        let txn = self.read()?;
        let index = txn.open_multimap_table(ENTITY_FACTS).map_err(backend)?;
        let facts = txn.open_table(FACTS).map_err(backend)?;
        let mut out = Vec::new();
        for fkey in index
            .get(keys::entity(entity).as_slice())
            .map_err(backend)?
        {
            let fkey = fkey.map_err(backend)?;
            if let Some(v) = facts.get(fkey.value()).map_err(backend)? {
                out.push(decode("facts", fkey.value(), v.value())?);
            }
        }
        Ok(out)
    }

    fn supersedes(&self, fingerprint: &str) -> Result<Vec<Supersession>, StoreError> {
        let txn = self.read()?;
        let table = txn.open_table(SUPERSEDES).map_err(backend)?;
        let (lo, hi) = keys::prefix_range(fingerprint);
        let mut out = Vec::new();
        for row in table.range(lo.as_slice()..hi.as_slice()).map_err(backend)? {
            let (k, v) = row.map_err(backend)?;
            out.push(decode("supersedes", k.value(), v.value())?);
        }
        Ok(out)
    }

    fn superseded_by(&self, fingerprint: &str) -> Result<Vec<Supersession>, StoreError> {
        let txn = self.read()?;
        let index = txn.open_multimap_table(SUPERSEDED_BY).map_err(backend)?;
        let mut skeys = Vec::new();
        for k in index.get(fingerprint).map_err(backend)? {
            skeys.push(k.map_err(backend)?.value().to_vec());
        }
        Self::supersessions_in(&txn, skeys)
    }

    fn episodes_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<(u64, MemoryEpisode)>, StoreError> {
        let txn = self.read()?;
        let log = txn.open_table(INGEST_LOG).map_err(backend)?;
        let episodes = txn.open_table(EPISODES).map_err(backend)?;
        let mut out = Vec::new();
        for row in log
            .range(after.saturating_add(1)..)
            .map_err(backend)?
            .take(limit)
        {
            let (seq, fp) = row.map_err(backend)?;
            let fp = fp.value();
            let bytes = episodes
                .get(fp)
                .map_err(backend)?
                .ok_or_else(|| StoreError::Corrupt {
                    table: "ingest_log",
                    key: fp.to_string(),
                    message: "log row without an episode".into(),
                })?;
            out.push((
                seq.value(),
                decode("episodes", fp.as_bytes(), bytes.value())?,
            ));
        }
        Ok(out)
    }

    fn entity_links(&self, entity: &EntityKey) -> Result<Vec<EntityLink>, StoreError> {
        let txn = self.read()?;
        let index = txn.open_multimap_table(ENTITY_FACTS).map_err(backend)?;
        let times = txn.open_table(FACT_TIMES).map_err(backend)?;
        let episodes = txn.open_table(EPISODE_TIMES).map_err(backend)?;
        let opt = |ms: i64| (ms != i64::MAX).then(|| Timestamp::from_millis(ms));
        let mut out = Vec::new();
        for fkey in index
            .get(keys::entity(entity).as_slice())
            .map_err(backend)?
        {
            let fkey = fkey.map_err(backend)?;
            let key = fkey.value();
            let corrupt = |message: &str| StoreError::Corrupt {
                table: "fact_times",
                key: keys::display(key),
                message: message.to_string(),
            };
            let (fp, relation) =
                keys::fact_parts(key).ok_or_else(|| corrupt("malformed fact key"))?;
            let (t_valid, t_invalid, ingested, expired) = times
                .get(key)
                .map_err(backend)?
                .ok_or_else(|| corrupt("fact without times"))?
                .value();
            let (concluded, episode_ingested, episode_valid) = episodes
                .get(fp)
                .map_err(backend)?
                .ok_or_else(|| corrupt("fact of a missing episode"))?
                .value();
            out.push(EntityLink {
                episode: fp.to_string(),
                relation,
                t_valid: Timestamp::from_millis(t_valid),
                t_invalid: opt(t_invalid),
                ingested_at: Timestamp::from_millis(ingested),
                expired_at: opt(expired),
                episode_concluded_at: Timestamp::from_millis(concluded),
                episode_ingested_at: Timestamp::from_millis(episode_ingested),
                episode_t_valid: Timestamp::from_millis(episode_valid),
            });
        }
        Ok(out)
    }

    fn entities(&self) -> Result<Vec<EntityKey>, StoreError> {
        let txn = self.read()?;
        let table = txn.open_table(ENTITIES).map_err(backend)?;
        let mut out = Vec::new();
        for row in table.iter().map_err(backend)? {
            let (k, v) = row.map_err(backend)?;
            let entity: crate::model::MemoryEntity = decode("entities", k.value(), v.value())?;
            out.push(entity.key);
        }
        Ok(out)
    }

    fn stats(&self) -> Result<StoreStats, StoreError> {
        let txn = self.read()?;
        let counters = txn.open_table(COUNTERS).map_err(backend)?;
        let count = |name: &str| -> Result<u64, StoreError> {
            Ok(counters
                .get(name)
                .map_err(backend)?
                .map_or(0, |v| v.value()))
        };
        Ok(StoreStats {
            episodes: txn
                .open_table(EPISODES)
                .map_err(backend)?
                .len()
                .map_err(backend)?,
            entities: txn
                .open_table(ENTITIES)
                .map_err(backend)?
                .len()
                .map_err(backend)?,
            mentions: count(COUNT_MENTIONS)?,
            resolved_by: count(COUNT_RESOLVED_BY)?,
            supersedes: txn
                .open_table(SUPERSEDES)
                .map_err(backend)?
                .len()
                .map_err(backend)?,
            invalidated_edges: count(COUNT_INVALIDATED)?,
        })
    }

    fn check(&self) -> Result<IntegrityReport, StoreError> {
        self.check_integrity()
    }
}
