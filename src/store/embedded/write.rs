use heed::RwTxn;
use serde::Serialize;

use super::read::{decode, get_json};
use super::table::Table;
use super::tables::{self, Tables};
use super::{EmbeddedStore, keys, records};
use crate::learning::{CodeUnit, Skill, SkillDraft};
use crate::model::{MemoryEntity, Relation, Supersession, Timestamp};
use crate::store::{ApplyReport, BatchItem, KnowledgeTime, StoreError, WriteBatch, rules};

impl EmbeddedStore {
    pub(crate) fn apply_batch(&self, batch: &WriteBatch) -> Result<ApplyReport, StoreError> {
        self.write("write to the store", |txn, t| {
            let report = apply_in(txn, *t, batch)?;
            Ok((report, changed(&report)))
        })
    }

    /// [`crate::store::MemoryStore::apply_chunks`] in one write transaction: each chunk's
    /// episodes are written as it comes and only what the supersessions need is kept for
    /// after the last one, so memory follows the chunk, not the batch.
    pub(crate) fn apply_chunks_in_one(
        &self,
        tail: &mut crate::store::TailSource<'_>,
        items: &mut crate::store::ChunkSource<'_>,
    ) -> Result<ApplyReport, StoreError> {
        let shared = self.shared.clone();
        self.write("write to the store", |txn, t| {
            let mut w = Writer::start(txn, *t)?;
            let mut report = ApplyReport::default();
            let mut superseding: Vec<BatchItem> = Vec::new();
            // The first error is kept here too: a source that went on after it (or dropped it)
            // still commits nothing.
            let mut first_error: Option<String> = None;
            let fed = items(&mut |chunk| {
                if let Some(e) = &first_error {
                    return Err(StoreError::Internal(format!(
                        "an earlier chunk failed: {e}"
                    )));
                }
                let written = (|| -> Result<(), StoreError> {
                    for item in chunk {
                        report.records += 1;
                        w.write_episode(&item, &mut report)?;
                        if !item.draft.supersedes.is_empty() {
                            superseding.push(supersedes_only(item));
                        }
                    }
                    Ok(())
                })();
                if let Err(e) = &written {
                    first_error = Some(e.to_string());
                }
                shared.release_mapped_pages();
                written
            });
            fed?;
            if let Some(e) = first_error {
                return Err(StoreError::Internal(e));
            }
            // Supersessions run after every episode so a target anywhere in the batch is found.
            for (i, item) in superseding.iter().enumerate() {
                w.write_supersessions(item, &mut report)?;
                if (i + 1).is_multiple_of(RELEASE_EVERY_SUPERSESSIONS) {
                    shared.release_mapped_pages();
                }
            }
            let tail = tail()?;
            w.finish(&tail, &mut report)?;
            Ok((report, changed(&report)))
        })
    }

    pub(crate) fn add_skill_versions(
        &self,
        drafts: &[SkillDraft],
        recorded_at: KnowledgeTime,
    ) -> Result<usize, StoreError> {
        self.write("add skills", |txn, t| {
            let recorded_at = recorded_at.resolve(Timestamp::now());
            // Knowledge time only moves forward, for skills as for episodes.
            let high_water = high_water(txn, t)?;
            rules::skills_recorded_at(
                recorded_at,
                (high_water != i64::MIN).then(|| Timestamp::from_millis(high_water)),
            )?;
            tables::meta_put(
                t,
                txn,
                tables::KNOWLEDGE_HIGH_WATER,
                &recorded_at.millis().to_string(),
            )?;
            let mut written = 0;
            for draft in drafts {
                let latest = latest_skill(txn, t, &draft.name)?;
                let Some(next) = Skill::next_if_changed(latest.as_ref(), draft, None, recorded_at)
                else {
                    continue;
                };
                put_json(
                    txn,
                    &t.skills,
                    skill_key(&next.name, next.version).as_bytes(),
                    &next,
                )?;
                written += 1;
            }
            Ok((written, written > 0))
        })
    }
}

fn high_water(txn: &RwTxn, t: &Tables) -> Result<i64, StoreError> {
    match tables::meta_get(t, txn, tables::KNOWLEDGE_HIGH_WATER)? {
        None => Ok(i64::MIN),
        Some(v) => v.parse().map_err(|_| {
            t.meta.corrupt(
                tables::KNOWLEDGE_HIGH_WATER.as_bytes(),
                format!("{v:?} is not a time in milliseconds"),
            )
        }),
    }
}

fn apply_in(txn: &mut RwTxn, t: Tables, batch: &WriteBatch) -> Result<ApplyReport, StoreError> {
    let mut w = Writer::start(txn, t)?;
    let mut report = ApplyReport::default();
    for item in &batch.items {
        report.records += 1;
        w.write_episode(item, &mut report)?;
    }
    // Supersessions run after every episode so a target anywhere in the batch is found.
    for item in &batch.items {
        w.write_supersessions(item, &mut report)?;
    }
    w.finish(batch, &mut report)?;
    Ok(report)
}

/// Whether a batch changed the store (and so moves its generation).
fn changed(report: &ApplyReport) -> bool {
    report.new_episodes
        + report.closed_facts
        + report.new_supersessions
        + report.new_code_units
        + report.new_skill_versions
        > 0
}

/// Supersessions written between releases of the store's mapped pages (see
/// [`crate::lmdb::SharedEnv::release_mapped_pages`]); a chunk of episodes releases them too.
const RELEASE_EVERY_SUPERSESSIONS: usize = 1_000;

/// What writing an item's supersessions reads of it: the texts and facts are written already.
fn supersedes_only(mut item: BatchItem) -> BatchItem {
    item.draft.summary_nl = String::new();
    item.draft.resolution_nl = String::new();
    item.draft.facts = Vec::new();
    item.draft.skills = Vec::new();
    item
}

#[derive(Default)]
struct Counts {
    mentions: u64,
    resolved_by: u64,
    invalidated: u64,
}

struct Writer<'a, 'e> {
    txn: &'a mut RwTxn<'e>,
    t: Tables,
    pending: Counts,
    /// The latest knowledge time recorded before this batch: nothing may be written before it.
    high_water: i64,
    newest: i64,
    /// The clock when this writer's turn began: the knowledge time of items stamped at commit.
    /// No other batch can commit between it and this one's commit.
    turn_began: Timestamp,
}

pub(super) fn skill_key(name: &str, version: u32) -> String {
    format!("{name}\0{version:010}")
}

fn latest_skill(txn: &RwTxn, t: &Tables, name: &str) -> Result<Option<Skill>, StoreError> {
    let from = format!("{name}\0");
    let to = format!("{name}\u{1}");
    let range = (
        std::ops::Bound::Included(from.as_bytes()),
        std::ops::Bound::Excluded(to.as_bytes()),
    );
    let last = t.skills.rev_range(txn, &range)?.next().transpose()?;
    last.map(|(k, v)| decode("skills", k, v)).transpose()
}

fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(value)
        .map_err(|e| StoreError::Internal(format!("cannot encode a record: {e}")))
}

fn put_json<T: Serialize>(
    txn: &mut RwTxn,
    table: &Table,
    key: &[u8],
    value: &T,
) -> Result<(), StoreError> {
    table.put(txn, key, &encode(value)?)
}

fn put(txn: &mut RwTxn, table: &Table, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
    table.put(txn, key, value)
}

impl<'a, 'e> Writer<'a, 'e> {
    fn start(txn: &'a mut RwTxn<'e>, t: Tables) -> Result<Self, StoreError> {
        let high_water = high_water(txn, &t)?;
        Ok(Writer {
            txn,
            t,
            pending: Counts::default(),
            high_water,
            newest: high_water,
            turn_began: Timestamp::now(),
        })
    }

    /// The knowledge time `item` is recorded with.
    fn at(&self, item: &BatchItem) -> Timestamp {
        item.ingested_at.resolve(self.turn_began)
    }

    /// What every batch ends with: its code units, restored skill versions and restored
    /// versions of corrected records, the counters, the knowledge high-water.
    fn finish(&mut self, tail: &WriteBatch, report: &mut ApplyReport) -> Result<(), StoreError> {
        for (origin, skill) in &tail.skill_versions {
            if self.write_skill_version(origin, skill)? {
                report.new_skill_versions += 1;
            }
        }
        for (origin, unit) in &tail.code_units {
            if self.write_code_unit(origin, unit)? {
                report.new_code_units += 1;
            }
        }
        if let Some(latest) =
            super::versions::write_plan(self.txn, &self.t, &tail.restored_versions)?
        {
            self.newest = self.newest.max(latest.millis());
        }
        self.flush_counts()?;
        if self.newest > self.high_water {
            tables::meta_put(
                &self.t,
                self.txn,
                tables::KNOWLEDGE_HIGH_WATER,
                &self.newest.to_string(),
            )?;
        }
        Ok(())
    }
}

impl Writer<'_, '_> {
    /// Records a code unit once; another owner for the same file is refused.
    fn write_code_unit(&mut self, origin: &str, unit: &CodeUnit) -> Result<bool, StoreError> {
        let key = unit.embedding_ref.as_bytes();
        let stored: Option<CodeUnit> = get_json(&self.t.code_units, self.txn, key)?;
        match stored {
            Some(s) if s == *unit => Ok(false),
            Some(s) => Err(rules::code_unit_owner(origin, unit, &s)),
            None => {
                put_json(self.txn, &self.t.code_units, key, unit)?;
                put(self.txn, &self.t.service_code, unit.service.as_bytes(), key)?;
                Ok(true)
            }
        }
    }

    /// Records a skill version exactly as given (see [`rules::restored_skill_version`]).
    fn write_skill_version(&mut self, origin: &str, skill: &Skill) -> Result<bool, StoreError> {
        let key = skill_key(&skill.name, skill.version);
        let stored: Option<Skill> = get_json(&self.t.skills, self.txn, key.as_bytes())?;
        let previous = skill.version > 1
            && self.t.skills.contains(
                self.txn,
                skill_key(&skill.name, skill.version - 1).as_bytes(),
            )?;
        if !rules::restored_skill_version(origin, skill, stored.as_ref(), previous)? {
            return Ok(false);
        }
        put_json(self.txn, &self.t.skills, key.as_bytes(), skill)?;
        self.newest = self.newest.max(skill.recorded_at.millis());
        Ok(true)
    }

    /// Writes the skill's next version unless it would say the same as the latest.
    fn write_skill(
        &mut self,
        origin: &str,
        draft: &SkillDraft,
        episode: Option<(&str, Timestamp)>,
        recorded_at: Timestamp,
    ) -> Result<bool, StoreError> {
        let latest = latest_skill(self.txn, &self.t, &draft.name)?;
        if latest.is_none() {
            rules::first_skill_version(origin, draft)?;
        }
        let Some(next) = Skill::next_if_changed(latest.as_ref(), draft, episode, recorded_at)
        else {
            return Ok(false);
        };
        let key = skill_key(&next.name, next.version);
        put_json(self.txn, &self.t.skills, key.as_bytes(), &next)?;
        Ok(true)
    }

    fn write_episode(
        &mut self,
        item: &BatchItem,
        report: &mut ApplyReport,
    ) -> Result<(), StoreError> {
        let t = self.t;
        let d = &item.draft;
        let fp = d.incident_fingerprint.as_str();
        let stored = t.episodes.get(self.txn, fp.as_bytes())?;
        if let Some(bytes) = stored {
            let stored = records::draft(fp.as_bytes(), bytes)?;
            if &stored == d {
                report.unchanged_episodes += 1;
                return Ok(());
            }
            return Err(rules::rewritten(item, &stored, d));
        }
        let at = self.at(item);
        self.check_knowledge_time(item, at)?;
        put(
            self.txn,
            &t.episodes,
            fp.as_bytes(),
            &records::encode_episode(d, at)?,
        )?;
        put(
            self.txn,
            &t.timeline,
            &keys::timeline(d.concluded_at.millis(), fp),
            &[],
        )?;
        let sequence = match t.ingest_log.last(self.txn)? {
            None => 1,
            Some((k, _)) => keys::sequence_of(k)
                .and_then(|last| last.checked_add(1))
                .ok_or_else(|| t.ingest_log.corrupt(k, "not a sequence number"))?,
        };
        put(
            self.txn,
            &t.ingest_log,
            &keys::sequence(sequence),
            fp.as_bytes(),
        )?;
        put(
            self.txn,
            &t.episode_times,
            fp.as_bytes(),
            &keys::times([d.concluded_at.millis(), at.millis(), d.t_valid.millis()]),
        )?;
        report.new_episodes += 1;
        for skill in &d.skills {
            if self.write_skill(&item.origin, skill, Some((fp, d.concluded_at)), at)? {
                report.new_skill_versions += 1;
            }
        }

        // In key order: a file in fingerprint order then only ever appends to the facts table,
        // whose pages LMDB then fills instead of splitting them in the middle.
        let mut facts: Vec<(Vec<u8>, &crate::store::FactDraft)> = d
            .facts
            .iter()
            .map(|f| (keys::fact(fp, f.relation, &f.entity), f))
            .collect();
        facts.sort_by(|a, b| a.0.cmp(&b.0));
        for (fkey, fact) in facts {
            let ekey = keys::entity(&fact.entity);
            if !t.entities.contains(self.txn, &ekey)? {
                let entity = MemoryEntity {
                    key: fact.entity.clone(),
                    ingested_at: at,
                };
                put(
                    self.txn,
                    &t.entities,
                    &ekey,
                    &records::encode_entity(&entity)?,
                )?;
                report.new_entities += 1;
            }
            let edge = fact.stamp(fp, at, &d.provenance);
            put(self.txn, &t.facts, &fkey, &records::encode_fact(&edge)?)?;
            let link = records::encode_link(&edge, [d.concluded_at, at, d.t_valid])?;
            put(self.txn, &t.entity_facts, &ekey, &link)?;
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
        let t = self.t;
        let d = &item.draft;
        let fp = d.incident_fingerprint.as_str();
        let at = self.at(item);
        for (i, s) in d.supersedes.iter().enumerate() {
            if !t.episodes.contains(self.txn, s.prior.as_bytes())? {
                return Err(rules::unknown_prior(item, i, s));
            }
            let mut found = false;
            for relation in Relation::ALL {
                let fkey = keys::fact(&s.prior, relation, &s.entity);
                let Some(mut edge) = t
                    .facts
                    .get(self.txn, &fkey)?
                    .map(|bytes| records::fact(&fkey, bytes))
                    .transpose()?
                else {
                    continue;
                };
                found = true;
                if rules::closes(item, at, i, s, relation, &edge, || {
                    self.check_knowledge_time(item, at)
                })? {
                    let episode = self.episode_times(&s.prior)?;
                    let ekey = keys::entity(&s.entity);
                    let stale = records::encode_link(&edge, episode)?;
                    edge.t_invalid = Some(s.t_invalid);
                    edge.expired_at = Some(at);
                    edge.superseded_by = Some(fp.to_string());
                    put(self.txn, &t.facts, &fkey, &records::encode_fact(&edge)?)?;
                    if !t
                        .entity_facts
                        .delete_one_duplicate(self.txn, &ekey, &stale)?
                    {
                        return Err(t.entity_facts.corrupt(
                            &ekey,
                            format!("no link to the fact {}", keys::display(&fkey)),
                        ));
                    }
                    let link = records::encode_link(&edge, episode)?;
                    put(self.txn, &t.entity_facts, &ekey, &link)?;
                    self.pending.invalidated += 1;
                    report.closed_facts += 1;
                }
            }
            if !found {
                return Err(rules::no_fact_to_close(item, i, s));
            }
            let skey = keys::supersession(fp, &s.prior, &s.entity);
            if !t.supersedes.contains(self.txn, &skey)? {
                let lineage = Supersession {
                    episode: fp.to_string(),
                    prior: s.prior.clone(),
                    entity: s.entity.clone(),
                    t_valid: s.t_invalid,
                    t_invalid: None,
                    ingested_at: at,
                    expired_at: None,
                    provenance: d.provenance.clone(),
                    reviews: Vec::new(),
                };
                put(
                    self.txn,
                    &t.supersedes,
                    &skey,
                    &records::encode_supersession(&lineage)?,
                )?;
                put(self.txn, &t.superseded_by, s.prior.as_bytes(), &skey)?;
                report.new_supersessions += 1;
            }
        }
        Ok(())
    }

    /// (concluded_at, ingested_at, t_valid) of a stored episode.
    fn episode_times(&self, fingerprint: &str) -> Result<[Timestamp; 3], StoreError> {
        self.t
            .times_of_episode(self.txn, fingerprint.as_bytes())?
            .ok_or_else(|| {
                self.t
                    .episode_times
                    .corrupt(fingerprint.as_bytes(), "a stored episode without its times")
            })
    }

    /// Knowledge time only moves forward: what memory knew at an earlier K is never rewritten.
    fn check_knowledge_time(&mut self, item: &BatchItem, at: Timestamp) -> Result<(), StoreError> {
        rules::knowledge_time(
            item,
            at,
            (self.high_water != i64::MIN).then(|| Timestamp::from_millis(self.high_water)),
        )?;
        self.newest = self.newest.max(at.millis());
        Ok(())
    }

    fn flush_counts(&mut self) -> Result<(), StoreError> {
        let pending = std::mem::take(&mut self.pending);
        for (name, delta) in [
            (tables::COUNT_MENTIONS, pending.mentions),
            (tables::COUNT_RESOLVED_BY, pending.resolved_by),
            (tables::COUNT_INVALIDATED, pending.invalidated),
        ] {
            if delta > 0 {
                tables::add_to_counter(&self.t, self.txn, name, delta)?;
            }
        }
        Ok(())
    }
}
