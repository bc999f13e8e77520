//! Batches: validated here against what the graph holds (the same rules as the embedded
//! store), then written by one atomic query, guarded against other writers (see [`super::guard`]).
//! A rejected batch sends no write at all.

use std::collections::{BTreeSet, HashMap};

use super::read::distinct;
use super::{FalkorStore, Param, cypher};
use crate::learning::{CodeUnit, Skill, SkillDraft};
use crate::model::{EntityKey, FactEdge, Provenance, Relation, Timestamp};
use crate::store::{
    ApplyReport, BatchItem, EpisodeDraft, FactDraft, KnowledgeTime, MemoryStore, StoreError,
    SupersedeDraft, WriteBatch, rules,
};

type FactKey = (String, Relation, EntityKey);

/// Records a batch may have and still go to the graph as one query, well inside the server-side
/// timeout; a larger one is written in chunks of [`CHUNK_RECORDS`].
pub(super) const ONE_QUERY_RECORDS: usize = 10_000;
const CHUNK_RECORDS: usize = 2_000;

/// What one batch will write, as the parameters of [`cypher::WRITE_BATCH`].
#[derive(Default)]
pub(super) struct Plan {
    episodes: Vec<Param>,
    entities: Vec<Param>,
    mentions: Vec<Param>,
    resolved: Vec<Param>,
    close_mentions: Vec<Param>,
    close_resolved: Vec<Param>,
    lineage: Vec<Param>,
    skills: Vec<Param>,
    code_units: Vec<Param>,
    versions: Vec<Param>,
    corrections: Vec<Param>,
}

impl Plan {
    pub(super) fn is_empty(&self) -> bool {
        [
            &self.episodes,
            &self.entities,
            &self.mentions,
            &self.resolved,
            &self.close_mentions,
            &self.close_resolved,
            &self.lineage,
            &self.skills,
            &self.code_units,
            &self.versions,
            &self.corrections,
        ]
        .iter()
        .all(|l| l.is_empty())
    }

    pub(super) fn params(self) -> Vec<(&'static str, Param)> {
        vec![
            ("episodes", Param::List(self.episodes)),
            ("entities", Param::List(self.entities)),
            ("mentions", Param::List(self.mentions)),
            ("resolved", Param::List(self.resolved)),
            ("close_mentions", Param::List(self.close_mentions)),
            ("close_resolved", Param::List(self.close_resolved)),
            ("lineage", Param::List(self.lineage)),
            ("skills", Param::List(self.skills)),
            ("code_units", Param::List(self.code_units)),
            ("versions", Param::List(self.versions)),
            ("corrections", Param::List(self.corrections)),
        ]
    }

    /// A version of a corrected record (see [`super::versions`]).
    pub(super) fn version(
        &mut self,
        record: String,
        kind: &'static str,
        known_from: Timestamp,
        body: &impl serde::Serialize,
    ) -> Result<(), StoreError> {
        let body = serde_json::to_string(body)
            .map_err(|e| StoreError::Internal(format!("cannot encode a version: {e}")))?;
        self.versions.push(Param::Map(vec![
            ("record", Param::Str(record)),
            ("kind", Param::from(kind)),
            ("at", Param::Int(known_from.millis())),
            ("body", Param::Str(body)),
        ]));
        Ok(())
    }

    /// An entry of the corrections log.
    pub(super) fn correction(
        &mut self,
        record: &crate::correct::CorrectionRecord,
    ) -> Result<(), StoreError> {
        let body = serde_json::to_string(record)
            .map_err(|e| StoreError::Internal(format!("cannot encode a correction: {e}")))?;
        self.corrections.push(Param::Map(vec![
            (
                "seq",
                Param::Int(i64::try_from(record.sequence).unwrap_or(i64::MAX)),
            ),
            ("at", Param::Int(record.recorded_at.millis())),
            ("body", Param::Str(body)),
        ]));
        Ok(())
    }

    fn skill(&mut self, skill: &Skill) -> Result<(), StoreError> {
        let body = serde_json::to_string(skill).map_err(|e| {
            StoreError::Internal(format!("cannot encode skill {}: {e}", skill.name))
        })?;
        self.skills.push(Param::Map(vec![
            ("name", Param::from(skill.name.as_str())),
            ("version", Param::Int(i64::from(skill.version))),
            ("at", Param::Int(skill.recorded_at.millis())),
            ("body", Param::Str(body)),
        ]));
        Ok(())
    }
}

fn provenance_params(p: &Provenance) -> [(&'static str, Param); 3] {
    [
        ("source", Param::from(p.source.as_str())),
        ("status", Param::from(p.status.as_str())),
        ("conf", Param::Float(p.confidence_score)),
    ]
}

fn entity_params(e: &EntityKey) -> [(&'static str, Param); 2] {
    [
        ("t", Param::from(e.entity_type.as_str())),
        ("r", Param::from(e.entity_ref.as_str())),
    ]
}

/// A stored episode's content in the form it was ingested, for the idempotency check.
/// Skills are not part of it (they live on as versions of their own).
fn comparable(mut d: EpisodeDraft) -> EpisodeDraft {
    d.facts.sort_by(|a, b| {
        (a.relation, &a.entity, a.t_valid, a.t_invalid).cmp(&(
            b.relation,
            &b.entity,
            b.t_valid,
            b.t_invalid,
        ))
    });
    d.supersedes.sort_by(|a, b| {
        (&a.prior, &a.entity, a.t_invalid).cmp(&(&b.prior, &b.entity, b.t_invalid))
    });
    d.skills.clear();
    d
}

/// Everything the batch's checks need to know about the graph, read up front.
struct Known {
    episodes: HashMap<String, EpisodeDraft>,
    facts: HashMap<FactKey, FactEdge>,
    lineage: BTreeSet<(String, String, EntityKey)>,
    entities: BTreeSet<EntityKey>,
    skills: HashMap<String, Skill>,
    /// Every stored version of the skills a restore brings, by (name, version).
    skill_versions: HashMap<(String, u32), Skill>,
    code_units: HashMap<String, CodeUnit>,
    high_water: Option<Timestamp>,
    /// Corrections the graph has logged (read only for a batch that restores some).
    corrections_recorded: u64,
}

impl Known {
    /// Adds what the graph holds for the next chunk to what the chunks before it would have
    /// made of it; what those already changed (a fact they closed) stays as they left it.
    fn absorb(&mut self, read: Known) {
        for (fp, e) in read.episodes {
            self.episodes.entry(fp).or_insert(e);
        }
        for (key, f) in read.facts {
            self.facts.entry(key).or_insert(f);
        }
        self.lineage.extend(read.lineage);
        self.entities.extend(read.entities);
        for (name, s) in read.skills {
            self.skills.entry(name).or_insert(s);
        }
        for (key, s) in read.skill_versions {
            self.skill_versions.entry(key).or_insert(s);
        }
        for (r, u) in read.code_units {
            self.code_units.entry(r).or_insert(u);
        }
        self.high_water = self.high_water.max(read.high_water);
        self.corrections_recorded = self.corrections_recorded.max(read.corrections_recorded);
    }
}

impl FalkorStore {
    fn read_known(&self, items: &[&BatchItem], tail: Tail<'_>) -> Result<Known, StoreError> {
        let code_units = tail.code_units;
        let fps = distinct(items.iter().flat_map(|i| {
            std::iter::once(i.draft.incident_fingerprint.clone())
                .chain(i.draft.supersedes.iter().map(|s| s.prior.clone()))
        }));
        let stored = self.episodes(&fps)?;
        let stored_fps: Vec<String> = stored
            .iter()
            .map(|e| e.incident_fingerprint.clone())
            .collect();
        let facts = self.facts_of(&stored_fps)?;
        let lineage = self.supersedes_of(&stored_fps)?;
        let mut episodes = HashMap::new();
        for e in stored {
            let fp = e.incident_fingerprint.clone();
            let draft = EpisodeDraft {
                facts: facts
                    .iter()
                    .filter(|f| f.episode == fp)
                    .map(|f| FactDraft {
                        relation: f.relation,
                        entity: f.entity.clone(),
                        t_valid: f.t_valid,
                        t_invalid: if f.superseded_by.is_some() {
                            None
                        } else {
                            f.t_invalid
                        },
                    })
                    .collect(),
                supersedes: lineage
                    .iter()
                    .filter(|s| s.episode == fp)
                    .map(|s| SupersedeDraft {
                        prior: s.prior.clone(),
                        entity: s.entity.clone(),
                        t_invalid: s.t_valid,
                    })
                    .collect(),
                incident_fingerprint: e.incident_fingerprint,
                summary_nl: e.summary_nl,
                resolution_nl: e.resolution_nl,
                concluded_at: e.concluded_at,
                t_valid: e.t_valid,
                provenance: e.provenance,
                skills: Vec::new(),
            };
            episodes.insert(fp, comparable(draft));
        }
        let keys: BTreeSet<&EntityKey> = items
            .iter()
            .flat_map(|i| i.draft.facts.iter().map(|f| &f.entity))
            .collect();
        let mut entities = BTreeSet::new();
        if !keys.is_empty() {
            let list = Param::List(
                keys.iter()
                    .map(|k| Param::Map(entity_params(k).to_vec()))
                    .collect(),
            );
            entities.extend(
                self.query(cypher::EXISTING_ENTITIES, &[("keys", list)])?
                    .decode(|r| super::read::entity(r, 0))?,
            );
        }
        let names = distinct(
            items
                .iter()
                .flat_map(|i| i.draft.skills.iter().map(|s| s.name.clone())),
        );
        let refs = distinct(code_units.iter().map(|(_, u)| u.embedding_ref.clone()));
        let restored = distinct(tail.skill_versions.iter().map(|(_, s)| s.name.clone()));
        Ok(Known {
            episodes,
            facts: facts
                .into_iter()
                .map(|f| ((f.episode.clone(), f.relation, f.entity.clone()), f))
                .collect(),
            lineage: lineage
                .into_iter()
                .map(|s| (s.episode, s.prior, s.entity))
                .collect(),
            entities,
            skills: self
                .latest_skills(&names)?
                .into_iter()
                .map(|s| (s.name.clone(), s))
                .collect(),
            skill_versions: self
                .skill_versions(&restored)?
                .into_iter()
                .map(|s| ((s.name.clone(), s.version), s))
                .collect(),
            code_units: self
                .code_units_by_ref(&refs)?
                .into_iter()
                .map(|u| (u.embedding_ref.clone(), u))
                .collect(),
            high_water: self.high_water()?,
            corrections_recorded: if tail.restored_versions.is_none_or(|p| p.records.is_empty()) {
                0
            } else {
                self.corrections_recorded()?
            },
        })
    }

    pub(super) fn apply_batch(&self, batch: &WriteBatch) -> Result<ApplyReport, StoreError> {
        if batch.items.len() > ONE_QUERY_RECORDS {
            return self.apply_in_chunks(batch);
        }
        let items: Vec<&BatchItem> = batch.items.iter().collect();
        let tail = Tail::of(batch);
        self.write_guarded(|| {
            // Read in each attempt, after the generation it is guarded by: the batch is
            // stamped as of its own write, not of when it was first tried.
            let turn = Timestamp::now();
            let mut known = self.read_known(&items, tail)?;
            plan_chunk(&mut known, &items, tail, turn)
        })
    }

    /// A batch too large for one query: checked whole against the graph first, chunk by chunk
    /// exactly as it will be written (a refusal anywhere writes nothing), then written one
    /// guarded query per chunk under a `StrataIngest` marker that stays `partial` until the
    /// last chunk lands. Stopped part way, it says so ([`StoreError::Partial`]); written again,
    /// the chunks already there are unchanged and the rest complete it.
    fn apply_in_chunks(&self, batch: &WriteBatch) -> Result<ApplyReport, StoreError> {
        let order = prior_first(&batch.items);
        let chunks: Vec<&[&BatchItem]> = order.chunks(CHUNK_RECORDS).collect();
        let units_of = |i: usize| -> Tail<'_> {
            if i + 1 == chunks.len() {
                Tail::of(batch)
            } else {
                Tail::default()
            }
        };
        let mut simulated: Option<Known> = None;
        for (i, chunk) in chunks.iter().enumerate() {
            let read = self.read_known(chunk, units_of(i))?;
            let known = match &mut simulated {
                Some(known) => {
                    known.absorb(read);
                    known
                }
                None => simulated.insert(read),
            };
            plan_chunk(known, chunk, units_of(i), Timestamp::now())?;
        }
        drop(simulated);

        let marker = Marker::of(batch, chunks.len());
        let partial = |written: usize, cause: &StoreError| StoreError::Partial {
            store: self.url.to_string(),
            file: marker.file.clone(),
            records: batch.items.len(),
            chunks: chunks.len(),
            written,
            cause: cause.to_string(),
        };
        // Failing here, nothing of the file was written: the error is the plain one.
        self.query(cypher::INGEST_STARTED, &marker.started())?;
        let mut report = ApplyReport::default();
        for (i, chunk) in chunks.iter().enumerate() {
            let written = self
                .write_guarded(|| {
                    let turn = Timestamp::now();
                    let mut known = self.read_known(chunk, units_of(i))?;
                    plan_chunk(&mut known, chunk, units_of(i), turn)
                })
                .map_err(|e| {
                    if i > 0 {
                        return partial(i, &e);
                    }
                    // The first chunk did not land: unless an earlier run of this file wrote
                    // some, there is nothing partial to report or complete.
                    if let Err(unmarked) =
                        self.query(cypher::INGEST_NOT_WRITTEN, &marker.progress(0))
                    {
                        tracing::warn!(error = %unmarked, "cannot mark the ingest as not written");
                    }
                    e
                })?;
            report.add(&written);
            self.query(cypher::INGEST_PROGRESS, &marker.progress(i + 1))
                .map_err(|e| partial(i + 1, &e))?;
            tracing::info!(graph = %self.url, chunk = i + 1, of = chunks.len(), "chunk written");
        }
        self.query(cypher::INGEST_COMPLETE, &marker.complete())
            .map_err(|e| partial(chunks.len(), &e))?;
        Ok(report)
    }

    pub(super) fn add_skill_versions(
        &self,
        drafts: &[SkillDraft],
        recorded_at: KnowledgeTime,
    ) -> Result<usize, StoreError> {
        self.write_guarded(|| {
            let recorded_at = recorded_at.resolve(Timestamp::now());
            rules::skills_recorded_at(recorded_at, self.high_water()?)?;
            let names = distinct(drafts.iter().map(|d| d.name.clone()));
            let mut latest: HashMap<String, Skill> = self
                .latest_skills(&names)?
                .into_iter()
                .map(|s| (s.name.clone(), s))
                .collect();
            let mut plan = Plan::default();
            for draft in drafts {
                let previous = latest.get(&draft.name);
                let Some(next) = Skill::next_if_changed(previous, draft, None, recorded_at) else {
                    continue;
                };
                plan.skill(&next)?;
                latest.insert(next.name.clone(), next);
            }
            let written = plan.skills.len();
            Ok((plan, written))
        })
    }
}

/// Everything a chunk writes: its episodes, then their supersessions (a prior anywhere in the
/// chunk or already in the graph is found), then code units. Items stamped at commit are
/// stamped `turn`, when this attempt to write them began.
/// What a batch writes besides its episodes, with its last chunk.
#[derive(Clone, Copy, Default)]
struct Tail<'a> {
    code_units: &'a [(String, CodeUnit)],
    skill_versions: &'a [(String, Skill)],
    restored_versions: Option<&'a crate::correct::Plan>,
}

impl<'a> Tail<'a> {
    fn of(batch: &'a WriteBatch) -> Self {
        Tail {
            code_units: &batch.code_units,
            skill_versions: &batch.skill_versions,
            restored_versions: Some(&batch.restored_versions),
        }
    }
}

fn plan_chunk(
    known: &mut Known,
    items: &[&BatchItem],
    tail: Tail<'_>,
    turn: Timestamp,
) -> Result<(Plan, ApplyReport), StoreError> {
    let code_units = tail.code_units;
    let mut plan = Plan::default();
    let mut report = ApplyReport::default();
    for item in items {
        report.records += 1;
        plan_episode(
            known,
            &mut plan,
            &mut report,
            item,
            item.ingested_at.resolve(turn),
        )?;
    }
    for item in items {
        let at = item.ingested_at.resolve(turn);
        plan_supersessions(known, &mut plan, &mut report, item, at)?;
    }
    for (origin, skill) in tail.skill_versions {
        let key = (skill.name.clone(), skill.version);
        let previous = skill.version > 1
            && known
                .skill_versions
                .contains_key(&(skill.name.clone(), skill.version - 1));
        if rules::restored_skill_version(origin, skill, known.skill_versions.get(&key), previous)? {
            plan.skill(skill)?;
            known.skill_versions.insert(key, skill.clone());
            report.new_skill_versions += 1;
        }
    }
    for (origin, unit) in code_units {
        match known.code_units.get(&unit.embedding_ref) {
            Some(stored) if stored == unit => {}
            Some(stored) => return Err(rules::code_unit_owner(origin, unit, stored)),
            None => {
                plan.code_units.push(Param::Map(vec![
                    ("ref", Param::from(unit.embedding_ref.as_str())),
                    ("repo", Param::from(unit.repo.as_str())),
                    ("path", Param::from(unit.path.as_str())),
                    ("service", Param::from(unit.service.as_str())),
                ]));
                known
                    .code_units
                    .insert(unit.embedding_ref.clone(), unit.clone());
                report.new_code_units += 1;
            }
        }
    }
    if let Some(restored) = tail.restored_versions {
        super::versions::add_versions(&mut plan, restored, known.corrections_recorded)?;
        known.corrections_recorded += restored.records.len() as u64;
    }
    Ok((plan, report))
}

/// The batch's items with every prior it supersedes before it (otherwise in file order), so
/// that a chunk never supersedes an episode a later chunk brings.
fn prior_first(items: &[BatchItem]) -> Vec<&BatchItem> {
    let at: HashMap<&str, usize> = items
        .iter()
        .enumerate()
        .map(|(i, item)| (item.draft.incident_fingerprint.as_str(), i))
        .collect();
    let mut placed = vec![false; items.len()];
    let mut order = Vec::with_capacity(items.len());
    for start in 0..items.len() {
        // Depth first over in-batch priors, without recursion (a chain can be as long as the
        // file); a cycle is cut where it closes.
        let mut stack = vec![(start, 0usize)];
        let mut open = std::collections::HashSet::new();
        while let Some((i, next)) = stack.pop() {
            if placed[i] {
                continue;
            }
            open.insert(i);
            let priors = &items[i].draft.supersedes;
            if let Some(s) = priors.get(next) {
                stack.push((i, next + 1));
                if let Some(&p) = at.get(s.prior.as_str())
                    && !placed[p]
                    && !open.contains(&p)
                {
                    stack.push((p, 0));
                }
                continue;
            }
            placed[i] = true;
            open.remove(&i);
            order.push(&items[i]);
        }
    }
    order
}

/// The `StrataIngest` marker of a chunked batch: its digest (the same records give the same
/// one, so running the file again finds it), the file it came from, and its size.
struct Marker {
    digest: String,
    file: String,
    records: usize,
    chunks: usize,
}

impl Marker {
    /// The digest folds a UUIDv5 (SHA-1) of each record: stable across Strata builds and Rust
    /// releases, as a marker that outlives the process must be.
    fn of(batch: &WriteBatch, chunks: usize) -> Marker {
        let space = uuid::Uuid::NAMESPACE_OID;
        let mut folded = Vec::with_capacity(16 * (batch.items.len() + batch.code_units.len()));
        for item in &batch.items {
            let bytes = serde_json::to_vec(&item.draft)
                .unwrap_or_else(|_| format!("{:?}", item.draft).into_bytes());
            folded.extend_from_slice(uuid::Uuid::new_v5(&space, &bytes).as_bytes());
        }
        for (_, unit) in &batch.code_units {
            folded.extend_from_slice(
                uuid::Uuid::new_v5(&space, unit.embedding_ref.as_bytes()).as_bytes(),
            );
        }
        for (_, skill) in &batch.skill_versions {
            let bytes =
                serde_json::to_vec(skill).unwrap_or_else(|_| format!("{skill:?}").into_bytes());
            folded.extend_from_slice(uuid::Uuid::new_v5(&space, &bytes).as_bytes());
        }
        let origin = batch.items.first().map_or("", |i| i.origin.as_str());
        Marker {
            digest: uuid::Uuid::new_v5(&space, &folded).simple().to_string(),
            file: file_of(origin).to_string(),
            records: batch.items.len(),
            chunks,
        }
    }

    fn started(&self) -> Vec<(&'static str, Param)> {
        vec![
            ("digest", Param::from(self.digest.as_str())),
            ("file", Param::from(self.file.as_str())),
            ("records", Param::Int(to_i64(self.records))),
            ("chunks", Param::Int(to_i64(self.chunks))),
            ("at", Param::Int(Timestamp::now().millis())),
        ]
    }

    fn progress(&self, written: usize) -> Vec<(&'static str, Param)> {
        vec![
            ("digest", Param::from(self.digest.as_str())),
            ("written", Param::Int(to_i64(written))),
        ]
    }

    fn complete(&self) -> Vec<(&'static str, Param)> {
        vec![
            ("digest", Param::from(self.digest.as_str())),
            ("at", Param::Int(Timestamp::now().millis())),
        ]
    }
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `FILE` of an origin `FILE:LINE`.
fn file_of(origin: &str) -> &str {
    match origin.rsplit_once(':') {
        Some((file, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => file,
        _ => origin,
    }
}

fn plan_episode(
    known: &mut Known,
    plan: &mut Plan,
    report: &mut ApplyReport,
    item: &BatchItem,
    at: Timestamp,
) -> Result<(), StoreError> {
    let d = &item.draft;
    let fp = d.incident_fingerprint.as_str();
    if let Some(stored) = known.episodes.get(fp) {
        let new = comparable(d.clone());
        if *stored == new {
            report.unchanged_episodes += 1;
            return Ok(());
        }
        return Err(rules::rewritten(item, stored, &new));
    }
    rules::knowledge_time(item, at, known.high_water)?;
    let mut episode = vec![
        ("fp", Param::from(fp)),
        ("summary", Param::from(d.summary_nl.as_str())),
        ("resolution", Param::from(d.resolution_nl.as_str())),
        ("concluded", Param::Int(d.concluded_at.millis())),
        ("tv", Param::Int(d.t_valid.millis())),
        ("at", Param::Int(at.millis())),
    ];
    episode.extend(provenance_params(&d.provenance));
    plan.episodes.push(Param::Map(episode));
    report.new_episodes += 1;
    for skill in &d.skills {
        let previous = known.skills.get(&skill.name);
        if previous.is_none() {
            rules::first_skill_version(&item.origin, skill)?;
        }
        let Some(next) = Skill::next_if_changed(previous, skill, Some((fp, d.concluded_at)), at)
        else {
            continue;
        };
        plan.skill(&next)?;
        known.skills.insert(next.name.clone(), next);
        report.new_skill_versions += 1;
    }
    for fact in &d.facts {
        if known.entities.insert(fact.entity.clone()) {
            let mut entity = entity_params(&fact.entity).to_vec();
            entity.push(("at", Param::Int(at.millis())));
            plan.entities.push(Param::Map(entity));
            report.new_entities += 1;
        }
        let edge = fact.stamp(fp, at, &d.provenance);
        let mut params = vec![("fp", Param::from(fp))];
        params.extend(entity_params(&fact.entity));
        params.extend([
            ("tv", Param::Int(edge.t_valid.millis())),
            ("ti", Param::from(edge.t_invalid.map(Timestamp::millis))),
            ("at", Param::Int(edge.ingested_at.millis())),
            ("ex", Param::from(edge.expired_at.map(Timestamp::millis))),
        ]);
        params.extend(provenance_params(&d.provenance));
        match fact.relation {
            Relation::Mentions => plan.mentions.push(Param::Map(params)),
            Relation::ResolvedBy => plan.resolved.push(Param::Map(params)),
        }
        known
            .facts
            .insert((fp.to_string(), fact.relation, fact.entity.clone()), edge);
        report.new_facts += 1;
    }
    known.episodes.insert(fp.to_string(), comparable(d.clone()));
    Ok(())
}

fn plan_supersessions(
    known: &mut Known,
    plan: &mut Plan,
    report: &mut ApplyReport,
    item: &BatchItem,
    at: Timestamp,
) -> Result<(), StoreError> {
    let d = &item.draft;
    let fp = d.incident_fingerprint.as_str();
    let high_water = known.high_water;
    for (i, s) in d.supersedes.iter().enumerate() {
        if !known.episodes.contains_key(&s.prior) {
            return Err(rules::unknown_prior(item, i, s));
        }
        let mut found = false;
        for relation in Relation::ALL {
            let key = (s.prior.clone(), relation, s.entity.clone());
            let Some(edge) = known.facts.get_mut(&key) else {
                continue;
            };
            found = true;
            if rules::closes(item, at, i, s, relation, edge, || {
                rules::knowledge_time(item, at, high_water)
            })? {
                edge.t_invalid = Some(s.t_invalid);
                edge.expired_at = Some(at);
                edge.superseded_by = Some(fp.to_string());
                let mut params = vec![("fp", Param::from(s.prior.as_str()))];
                params.extend(entity_params(&s.entity));
                params.extend([
                    ("ti", Param::Int(s.t_invalid.millis())),
                    ("ex", Param::Int(at.millis())),
                ]);
                match relation {
                    Relation::Mentions => plan.close_mentions.push(Param::Map(params)),
                    Relation::ResolvedBy => plan.close_resolved.push(Param::Map(params)),
                }
                report.closed_facts += 1;
            }
        }
        if !found {
            return Err(rules::no_fact_to_close(item, i, s));
        }
        if known
            .lineage
            .insert((fp.to_string(), s.prior.clone(), s.entity.clone()))
        {
            let mut params = vec![
                ("fp", Param::from(fp)),
                ("prior", Param::from(s.prior.as_str())),
            ];
            params.extend(entity_params(&s.entity));
            params.extend([
                ("tv", Param::Int(s.t_invalid.millis())),
                ("at", Param::Int(at.millis())),
            ]);
            params.extend(provenance_params(&d.provenance));
            plan.lineage.push(Param::Map(params));
            report.new_supersessions += 1;
        }
    }
    Ok(())
}
