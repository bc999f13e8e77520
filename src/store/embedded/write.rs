use redb::{ReadableTable, Table, WriteTransaction};
use serde::Serialize;

use super::read::decode;
use super::tables::*;
use super::{EmbeddedStore, backend, keys};
use crate::learning::{CodeUnit, Skill, SkillDraft};
use crate::model::{FactEdge, MemoryEntity, MemoryEpisode, Relation, Supersession, Timestamp};
use crate::store::{ApplyReport, BatchItem, EpisodeDraft, StoreError, WriteBatch, rules};

impl EmbeddedStore {
    pub(crate) fn apply_batch(&self, batch: &WriteBatch) -> Result<ApplyReport, StoreError> {
        let mut txn = self.db.begin_write().map_err(backend)?;
        txn.set_quick_repair(true);
        let report = apply_in(&txn, batch)?;
        txn.commit().map_err(backend)?;
        Ok(report)
    }
}

fn apply_in(txn: &WriteTransaction, batch: &WriteBatch) -> Result<ApplyReport, StoreError> {
    let mut t = Tables {
        episodes: txn.open_table(EPISODES).map_err(backend)?,
        lessons: txn.open_table(LESSONS).map_err(backend)?,
        skills: txn.open_table(SKILLS).map_err(backend)?,
        code_units: txn.open_table(CODE_UNITS).map_err(backend)?,
        service_code: txn.open_multimap_table(SERVICE_CODE).map_err(backend)?,
        drafts: txn.open_table(DRAFTS).map_err(backend)?,
        entities: txn.open_table(ENTITIES).map_err(backend)?,
        facts: txn.open_table(FACTS).map_err(backend)?,
        entity_facts: txn.open_multimap_table(ENTITY_FACTS).map_err(backend)?,
        supersedes: txn.open_table(SUPERSEDES).map_err(backend)?,
        superseded_by: txn.open_multimap_table(SUPERSEDED_BY).map_err(backend)?,
        timeline: txn.open_table(TIMELINE).map_err(backend)?,
        ingest_log: txn.open_table(INGEST_LOG).map_err(backend)?,
        fact_times: txn.open_table(FACT_TIMES).map_err(backend)?,
        episode_times: txn.open_table(EPISODE_TIMES).map_err(backend)?,
        counters: txn.open_table(COUNTERS).map_err(backend)?,
        pending: Counts::default(),
        high_water: i64::MIN,
        newest: i64::MIN,
    };
    let mut meta = txn.open_table(META).map_err(backend)?;
    t.high_water = meta
        .get(KNOWLEDGE_HIGH_WATER)
        .map_err(backend)?
        .and_then(|v| v.value().parse().ok())
        .unwrap_or(i64::MIN);
    t.newest = t.high_water;
    let mut report = ApplyReport::default();
    for item in &batch.items {
        report.records += 1;
        t.write_episode(item, &mut report)?;
    }
    // Supersessions run after every episode so a target anywhere in the batch is found.
    for item in &batch.items {
        t.write_supersessions(item, &mut report)?;
    }
    for (origin, unit) in &batch.code_units {
        if t.write_code_unit(origin, unit)? {
            report.new_code_units += 1;
        }
    }
    t.flush_counts()?;
    if t.newest > t.high_water {
        meta.insert(KNOWLEDGE_HIGH_WATER, t.newest.to_string().as_str())
            .map_err(backend)?;
    }
    Ok(report)
}

#[derive(Default)]
struct Counts {
    mentions: u64,
    resolved_by: u64,
    invalidated: u64,
}

struct Tables<'t> {
    episodes: Table<'t, &'static str, &'static [u8]>,
    drafts: Table<'t, &'static str, &'static [u8]>,
    entities: Table<'t, &'static [u8], &'static [u8]>,
    facts: Table<'t, &'static [u8], &'static [u8]>,
    entity_facts: redb::MultimapTable<'t, &'static [u8], &'static [u8]>,
    supersedes: Table<'t, &'static [u8], &'static [u8]>,
    superseded_by: redb::MultimapTable<'t, &'static str, &'static [u8]>,
    timeline: Table<'t, (i64, &'static str), ()>,
    ingest_log: Table<'t, u64, &'static str>,
    fact_times: Table<'t, &'static [u8], (i64, i64, i64, i64)>,
    episode_times: Table<'t, &'static str, (i64, i64, i64)>,
    counters: Table<'t, &'static str, u64>,
    lessons: Table<'t, &'static str, &'static [u8]>,
    skills: Table<'t, &'static str, &'static [u8]>,
    code_units: Table<'t, &'static str, &'static [u8]>,
    service_code: redb::MultimapTable<'t, &'static str, &'static str>,
    pending: Counts,
    /// The latest knowledge time recorded before this batch: nothing may be written before it.
    high_water: i64,
    newest: i64,
}

pub(super) fn skill_key(name: &str, version: u32) -> String {
    format!("{name}\0{version:010}")
}

fn latest_skill(
    table: &impl ReadableTable<&'static str, &'static [u8]>,
    name: &str,
) -> Result<Option<Skill>, StoreError> {
    let from = format!("{name}\0");
    let to = format!("{name}\u{1}");
    let last = table
        .range(from.as_str()..to.as_str())
        .map_err(backend)?
        .next_back()
        .transpose()
        .map_err(backend)?;
    last.map(|(k, v)| decode("skills", k.value().as_bytes(), v.value()))
        .transpose()
}

impl EmbeddedStore {
    pub(crate) fn add_skill_versions(
        &self,
        drafts: &[SkillDraft],
        recorded_at: Timestamp,
    ) -> Result<usize, StoreError> {
        let txn = self.db.begin_write().map_err(backend)?;
        let mut written = 0;
        {
            // Knowledge time only moves forward, for skills as for episodes.
            let mut meta = txn.open_table(META).map_err(backend)?;
            let high_water: i64 = meta
                .get(KNOWLEDGE_HIGH_WATER)
                .map_err(backend)?
                .and_then(|v| v.value().parse().ok())
                .unwrap_or(i64::MIN);
            rules::skills_recorded_at(
                recorded_at,
                (high_water != i64::MIN).then(|| Timestamp::from_millis(high_water)),
            )?;
            meta.insert(
                KNOWLEDGE_HIGH_WATER,
                recorded_at.millis().to_string().as_str(),
            )
            .map_err(backend)?;
            let mut table = txn.open_table(SKILLS).map_err(backend)?;
            for draft in drafts {
                let latest = latest_skill(&table, &draft.name)?;
                let Some(next) = Skill::next_if_changed(latest.as_ref(), draft, None, recorded_at)
                else {
                    continue;
                };
                let key = skill_key(&next.name, next.version);
                table
                    .insert(key.as_str(), encode(&next)?.as_slice())
                    .map_err(backend)?;
                written += 1;
            }
        }
        txn.commit().map_err(backend)?;
        Ok(written)
    }
}

fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(value).map_err(backend)
}

impl Tables<'_> {
    /// Records a code unit once; another owner for the same file is refused.
    fn write_code_unit(&mut self, origin: &str, unit: &CodeUnit) -> Result<bool, StoreError> {
        let key = unit.embedding_ref.as_str();
        let stored: Option<CodeUnit> = self
            .code_units
            .get(key)
            .map_err(backend)?
            .map(|v| decode("code_units", key.as_bytes(), v.value()))
            .transpose()?;
        match stored {
            Some(s) if s == *unit => Ok(false),
            Some(s) => Err(rules::code_unit_owner(origin, unit, &s)),
            None => {
                self.code_units
                    .insert(key, encode(unit)?.as_slice())
                    .map_err(backend)?;
                self.service_code
                    .insert(unit.service.as_str(), key)
                    .map_err(backend)?;
                Ok(true)
            }
        }
    }

    /// Writes the skill's next version unless it would say the same as the latest.
    fn write_skill(
        &mut self,
        origin: &str,
        draft: &SkillDraft,
        episode: Option<(&str, Timestamp)>,
        recorded_at: Timestamp,
    ) -> Result<bool, StoreError> {
        let latest = latest_skill(&self.skills, &draft.name)?;
        if latest.is_none() {
            rules::first_skill_version(origin, draft)?;
        }
        let Some(next) = Skill::next_if_changed(latest.as_ref(), draft, episode, recorded_at)
        else {
            return Ok(false);
        };
        let key = skill_key(&next.name, next.version);
        self.skills
            .insert(key.as_str(), encode(&next)?.as_slice())
            .map_err(backend)?;
        Ok(true)
    }

    fn write_episode(
        &mut self,
        item: &BatchItem,
        report: &mut ApplyReport,
    ) -> Result<(), StoreError> {
        let d = &item.draft;
        let fp = d.incident_fingerprint.as_str();
        let stored = self
            .drafts
            .get(fp)
            .map_err(backend)?
            .map(|v| decode::<EpisodeDraft>("drafts", fp.as_bytes(), v.value()))
            .transpose()?;
        if let Some(stored) = stored {
            if &stored == d {
                report.unchanged_episodes += 1;
                return Ok(());
            }
            return Err(rules::rewritten(item, &stored, d));
        }
        self.check_knowledge_time(item)?;
        let episode = MemoryEpisode {
            incident_fingerprint: d.incident_fingerprint.clone(),
            summary_nl: d.summary_nl.clone(),
            resolution_nl: d.resolution_nl.clone(),
            concluded_at: d.concluded_at,
            t_valid: d.t_valid,
            ingested_at: item.ingested_at,
            provenance: d.provenance.clone(),
        };
        self.episodes
            .insert(fp, encode(&episode)?.as_slice())
            .map_err(backend)?;
        self.drafts
            .insert(fp, encode(d)?.as_slice())
            .map_err(backend)?;
        self.timeline
            .insert((d.concluded_at.millis(), fp), ())
            .map_err(backend)?;
        let sequence = self
            .ingest_log
            .last()
            .map_err(backend)?
            .map_or(1, |(k, _)| k.value() + 1);
        self.ingest_log.insert(sequence, fp).map_err(backend)?;
        self.episode_times
            .insert(
                fp,
                (
                    d.concluded_at.millis(),
                    item.ingested_at.millis(),
                    d.t_valid.millis(),
                ),
            )
            .map_err(backend)?;
        report.new_episodes += 1;
        let lesson = crate::learning::render(
            fp,
            &d.resolution_nl,
            d.facts.iter().map(|f| (f.relation, &f.entity)),
        );
        self.lessons
            .insert(fp, encode(&lesson)?.as_slice())
            .map_err(backend)?;
        for skill in &d.skills {
            if self.write_skill(
                &item.origin,
                skill,
                Some((fp, d.concluded_at)),
                item.ingested_at,
            )? {
                report.new_skill_versions += 1;
            }
        }

        for fact in &d.facts {
            let ekey = keys::entity(&fact.entity);
            if self
                .entities
                .get(ekey.as_slice())
                .map_err(backend)?
                .is_none()
            {
                let entity = MemoryEntity {
                    key: fact.entity.clone(),
                    ingested_at: item.ingested_at,
                };
                self.entities
                    .insert(ekey.as_slice(), encode(&entity)?.as_slice())
                    .map_err(backend)?;
                report.new_entities += 1;
            }
            let edge = fact.stamp(fp, item.ingested_at, &d.provenance);
            let fkey = keys::fact(fp, fact.relation, &fact.entity);
            self.facts
                .insert(fkey.as_slice(), encode(&edge)?.as_slice())
                .map_err(backend)?;
            self.entity_facts
                .insert(ekey.as_slice(), fkey.as_slice())
                .map_err(backend)?;
            self.fact_times
                .insert(fkey.as_slice(), times_of(&edge))
                .map_err(backend)?;
            match fact.relation {
                Relation::Mentions => self.pending.mentions += 1,
                Relation::ResolvedBy => self.pending.resolved_by += 1,
            }
            if edge.t_invalid.is_some() {
                self.pending.invalidated += 1;
            }
            report.new_facts += 1;
        }
        Ok(())
    }

    fn write_supersessions(
        &mut self,
        item: &BatchItem,
        report: &mut ApplyReport,
    ) -> Result<(), StoreError> {
        let d = &item.draft;
        let fp = d.incident_fingerprint.as_str();
        for (i, s) in d.supersedes.iter().enumerate() {
            if self
                .episodes
                .get(s.prior.as_str())
                .map_err(backend)?
                .is_none()
            {
                return Err(rules::unknown_prior(item, i, s));
            }
            let mut found = false;
            for relation in Relation::ALL {
                let fkey = keys::fact(&s.prior, relation, &s.entity);
                let Some(mut edge) = self
                    .facts
                    .get(fkey.as_slice())
                    .map_err(backend)?
                    .map(|v| decode::<FactEdge>("facts", &fkey, v.value()))
                    .transpose()?
                else {
                    continue;
                };
                found = true;
                if rules::closes(item, i, s, relation, &edge, || {
                    self.check_knowledge_time(item)
                })? {
                    edge.t_invalid = Some(s.t_invalid);
                    edge.expired_at = Some(item.ingested_at);
                    edge.superseded_by = Some(fp.to_string());
                    self.facts
                        .insert(fkey.as_slice(), encode(&edge)?.as_slice())
                        .map_err(backend)?;
                    self.fact_times
                        .insert(fkey.as_slice(), times_of(&edge))
                        .map_err(backend)?;
                    self.pending.invalidated += 1;
                    report.closed_facts += 1;
                }
            }
            if !found {
                return Err(rules::no_fact_to_close(item, i, s));
            }
            let skey = keys::supersession(fp, &s.prior, &s.entity);
            if self
                .supersedes
                .get(skey.as_slice())
                .map_err(backend)?
                .is_none()
            {
                let lineage = Supersession {
                    episode: fp.to_string(),
                    prior: s.prior.clone(),
                    entity: s.entity.clone(),
                    t_valid: s.t_invalid,
                    t_invalid: None,
                    ingested_at: item.ingested_at,
                    expired_at: None,
                    provenance: d.provenance.clone(),
                };
                self.supersedes
                    .insert(skey.as_slice(), encode(&lineage)?.as_slice())
                    .map_err(backend)?;
                self.superseded_by
                    .insert(s.prior.as_str(), skey.as_slice())
                    .map_err(backend)?;
                report.new_supersessions += 1;
            }
        }
        Ok(())
    }

    /// Knowledge time only moves forward: what memory knew at an earlier K is never rewritten.
    fn check_knowledge_time(&mut self, item: &BatchItem) -> Result<(), StoreError> {
        rules::knowledge_time(
            item,
            (self.high_water != i64::MIN).then(|| Timestamp::from_millis(self.high_water)),
        )?;
        self.newest = self.newest.max(item.ingested_at.millis());
        Ok(())
    }

    fn flush_counts(&mut self) -> Result<(), StoreError> {
        let pending = std::mem::take(&mut self.pending);
        for (name, delta) in [
            (COUNT_MENTIONS, pending.mentions),
            (COUNT_RESOLVED_BY, pending.resolved_by),
            (COUNT_INVALIDATED, pending.invalidated),
        ] {
            if delta == 0 {
                continue;
            }
            let current = self
                .counters
                .get(name)
                .map_err(backend)?
                .map_or(0, |v| v.value());
            self.counters
                .insert(name, current + delta)
                .map_err(backend)?;
        }
        Ok(())
    }
}

pub(super) fn times_of(f: &FactEdge) -> (i64, i64, i64, i64) {
    let ms = |t: Option<crate::model::Timestamp>| t.map_or(i64::MAX, |t| t.millis());
    (
        f.t_valid.millis(),
        ms(f.t_invalid),
        f.ingested_at.millis(),
        ms(f.expired_at),
    )
}
