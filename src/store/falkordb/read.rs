use std::collections::BTreeSet;
use std::collections::HashMap;

use super::cypher;
use super::rows::{Row, Rows};
use super::{FalkorStore, IngestCursor, Param};
use crate::learning::{CodeUnit, Lesson, Skill, SkillDraft};
use crate::model::{
    EntityKey, FactEdge, MemoryEntity, MemoryEpisode, Provenance, Relation, Supersession, Timestamp,
};
use crate::store::{
    ApplyReport, EntityLink, IntegrityReport, LogPage, MemoryStore, StoreError, StoreStats,
    TimelineQuery, WriteBatch,
};

/// From this offset on, a page of the whole timeline may be read from its oldest end.
const DEEP_PAGE: usize = 16;

pub(super) fn episode(row: &Row<'_>) -> Result<MemoryEpisode, StoreError> {
    Ok(MemoryEpisode {
        incident_fingerprint: row.string(0)?,
        summary_nl: row.opt_string(1)?.unwrap_or_default(),
        resolution_nl: row.opt_string(2)?.unwrap_or_default(),
        concluded_at: row.time(3)?,
        t_valid: row.time(4)?,
        ingested_at: row.time(5)?,
        provenance: provenance(row, 6)?,
        versions: Vec::new(),
    })
}

fn provenance(row: &Row<'_>, from: usize) -> Result<Provenance, StoreError> {
    Ok(Provenance {
        source: row.opt_string(from)?.unwrap_or_default(),
        status: row.opt_string(from + 1)?.unwrap_or_default(),
        confidence_score: row.float(from + 2)?,
    })
}

pub(super) fn relation(name: &str) -> Result<Relation, StoreError> {
    match name {
        "MENTIONS" => Ok(Relation::Mentions),
        "RESOLVED_BY" => Ok(Relation::ResolvedBy),
        other => Err(super::rows::malformed(format!(
            "unexpected relationship type {other:?}"
        ))),
    }
}

pub(super) fn entity(row: &Row<'_>, from: usize) -> Result<EntityKey, StoreError> {
    Ok(EntityKey {
        entity_type: row.string(from)?,
        entity_ref: row.string(from + 1)?,
    })
}

pub(super) fn fact(row: &Row<'_>) -> Result<FactEdge, StoreError> {
    Ok(FactEdge {
        episode: row.string(0)?,
        relation: relation(&row.string(1)?)?,
        entity: entity(row, 2)?,
        t_valid: row.time(4)?,
        t_invalid: row.opt_time(5)?,
        ingested_at: row.time(6)?,
        expired_at: row.opt_time(7)?,
        superseded_by: row.opt_string(8)?,
        provenance: provenance(row, 9)?,
        versions: Vec::new(),
    })
}

pub(super) fn lineage(row: &Row<'_>) -> Result<Supersession, StoreError> {
    Ok(Supersession {
        episode: row.string(0)?,
        prior: row.string(1)?,
        entity: entity(row, 2)?,
        t_valid: row.time(4)?,
        t_invalid: row.opt_time(5)?,
        ingested_at: row.time(6)?,
        expired_at: row.opt_time(7)?,
        provenance: provenance(row, 8)?,
        reviews: Vec::new(),
    })
}

/// The order the embedded store keeps facts in: relation, then entity.
pub(super) fn sort_facts(facts: &mut [FactEdge]) {
    facts.sort_by(|a, b| {
        (&a.episode, a.relation.as_str(), &a.entity).cmp(&(
            &b.episode,
            b.relation.as_str(),
            &b.entity,
        ))
    });
}

fn entity_params(e: &EntityKey) -> [(&'static str, Param); 2] {
    [
        ("t", Param::from(e.entity_type.as_str())),
        ("r", Param::from(e.entity_ref.as_str())),
    ]
}

pub(super) fn fingerprints(fps: impl IntoIterator<Item = String>) -> Param {
    Param::List(fps.into_iter().map(Param::Str).collect())
}

pub(super) fn decode_json<T: serde::de::DeserializeOwned>(
    what: &'static str,
    body: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(body).map_err(|e| StoreError::Corrupt {
        table: what,
        key: String::new(),
        message: e.to_string(),
    })
}

pub(super) fn code_unit(row: &Row<'_>) -> Result<CodeUnit, StoreError> {
    Ok(CodeUnit {
        repo: row.string(0)?,
        path: row.string(1)?,
        service: row.string(2)?,
        embedding_ref: row.string(3)?,
    })
}

impl FalkorStore {
    /// Runs a template that unwinds `$keys` and decodes its rows; no keys, no query.
    fn for_keys<T>(
        &self,
        template: &'static str,
        keys: &[String],
        decode: impl Fn(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        self.query(template, &[("keys", fingerprints(keys.iter().cloned()))])?
            .decode(decode)
    }

    /// The facts of these episodes, in the embedded store's order.
    pub(super) fn facts_of(&self, fps: &[String]) -> Result<Vec<FactEdge>, StoreError> {
        let mut facts = self.for_keys(cypher::FACTS_OF_EPISODES, fps, fact)?;
        sort_facts(&mut facts);
        self.attach_facts(&mut facts)?;
        Ok(facts)
    }

    /// The lineage edges these episodes wrote, by prior then entity.
    pub(super) fn supersedes_of(&self, fps: &[String]) -> Result<Vec<Supersession>, StoreError> {
        let mut out = self.for_keys(cypher::SUPERSEDES_OF_EPISODES, fps, lineage)?;
        out.sort_by(|a, b| {
            (&a.episode, &a.prior, &a.entity).cmp(&(&b.episode, &b.prior, &b.entity))
        });
        self.attach_reviews(&mut out)?;
        Ok(out)
    }

    pub(super) fn latest_skills(&self, names: &[String]) -> Result<Vec<Skill>, StoreError> {
        self.for_keys(cypher::LATEST_SKILLS, names, |r| {
            decode_json("skills", &r.string(0)?)
        })
    }

    /// Every stored version of the skills named, by (name, version).
    pub(super) fn skill_versions(&self, names: &[String]) -> Result<Vec<Skill>, StoreError> {
        self.for_keys(cypher::SKILL_VERSIONS, names, |r| {
            decode_json("skills", &r.string(0)?)
        })
    }

    pub(super) fn code_units_by_ref(&self, refs: &[String]) -> Result<Vec<CodeUnit>, StoreError> {
        self.for_keys(cypher::CODE_UNITS_BY_REF, refs, code_unit)
    }

    /// The latest knowledge time recorded, by episodes and skills alike.
    pub(super) fn high_water(&self) -> Result<Option<Timestamp>, StoreError> {
        let rows = self.query(cypher::HIGH_WATER, &[])?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        Ok(row
            .opt_int(0)?
            .into_iter()
            .chain(row.opt_int(1)?)
            .chain(row.opt_int(2)?)
            .max()
            .map(Timestamp::from_millis))
    }
}

impl FalkorStore {
    /// A page of the timeline, as written.
    fn timeline_page(&self, query: &TimelineQuery) -> Result<Vec<MemoryEpisode>, StoreError> {
        // A deep page of the whole timeline is read from the oldest end when that is nearer:
        // the server then sorts and skips the few rows after it, not all before it.
        if query.entity.is_none() && query.known_at.is_none() && query.offset >= DEEP_PAGE {
            let total = self.query(cypher::STATS[0], &[])?.count()? as usize;
            let end = query.offset.saturating_add(query.limit).min(total);
            if query.offset >= end {
                return Ok(Vec::new());
            }
            if total - end < query.offset {
                let page = [
                    ("offset", count(total - end)),
                    ("limit", count(end - query.offset)),
                ];
                let mut episodes = self
                    .query(cypher::TIMELINE_OLDEST_FIRST, &page)?
                    .decode(episode)?;
                episodes.reverse();
                return Ok(episodes);
            }
        }
        let known = query.known_at.map_or(i64::MAX, Timestamp::millis);
        let page = [
            ("K", Param::Int(known)),
            ("offset", count(query.offset)),
            ("limit", count(query.limit)),
        ];
        let rows = match &query.entity {
            Some(e) => {
                let mut params = entity_params(e).to_vec();
                params.extend(page);
                self.query(cypher::TIMELINE_OF_ENTITY, &params)?
            }
            None => self.query(cypher::TIMELINE, &page)?,
        };
        rows.decode(episode)
    }

    /// Up to `limit` rows of the ingest log after the cursor: the rest of its batch, then the
    /// next batches a window of generations at a time, the window doubling while the page is
    /// short, up to the store's generation (a batch of corrections counts a generation and
    /// writes no episode, so an empty window proves nothing).
    fn log_after_key(&self, cursor: IngestCursor, limit: usize) -> Result<Rows, StoreError> {
        let mut rows = self.query(
            cypher::EPISODES_AFTER_KEY,
            &[
                ("seq", Param::Int(cursor.seq)),
                ("at", Param::Int(cursor.ingested_at)),
                ("fp", Param::Str(cursor.fingerprint)),
                ("limit", count(limit)),
            ],
        )?;
        if rows.len() >= limit {
            return Ok(rows);
        }
        let top = i64::try_from(self.generation()?).unwrap_or(i64::MAX);
        let (mut after, mut width) = (cursor.seq, 1i64);
        while rows.len() < limit && after < top {
            let upto = after.saturating_add(width).min(top);
            rows.append(self.query(
                cypher::EPISODES_IN_GENERATIONS,
                &[
                    ("after", Param::Int(after)),
                    ("upto", Param::Int(upto)),
                    ("limit", count(limit - rows.len())),
                ],
            )?);
            after = upto;
            width = width.saturating_mul(2);
        }
        Ok(rows)
    }
}

impl MemoryStore for FalkorStore {
    fn describe(&self) -> String {
        match self.primary_address() {
            Some(primary) => format!("FalkorDB ({}, primary now {primary})", self.url),
            None => format!("FalkorDB ({})", self.url),
        }
    }

    fn apply(&self, batch: &WriteBatch) -> Result<ApplyReport, StoreError> {
        self.apply_batch(batch)
    }

    fn episode(&self, fingerprint: &str) -> Result<Option<MemoryEpisode>, StoreError> {
        Ok(self.episodes(&[fingerprint.to_string()])?.pop())
    }

    fn episodes(&self, fingerprints: &[String]) -> Result<Vec<MemoryEpisode>, StoreError> {
        let mut episodes = self.for_keys(cypher::EPISODES, fingerprints, episode)?;
        self.attach_episodes(&mut episodes)?;
        Ok(episodes)
    }

    fn episode_dates(
        &self,
        fingerprints: &[String],
    ) -> Result<Vec<(String, Timestamp)>, StoreError> {
        self.for_keys(cypher::EPISODE_DATES, fingerprints, |r| {
            Ok((r.string(0)?, r.time(1)?))
        })
    }

    fn lessons(&self, fingerprints: &[String]) -> Result<Vec<Lesson>, StoreError> {
        let episodes = self.episodes(fingerprints)?;
        let facts = self.facts_of(fingerprints)?;
        let mut by_episode: std::collections::HashMap<&str, Vec<&FactEdge>> =
            std::collections::HashMap::new();
        for f in &facts {
            by_episode.entry(f.episode.as_str()).or_default().push(f);
        }
        Ok(episodes
            .iter()
            .map(|e| {
                let fp = e.incident_fingerprint.as_str();
                crate::learning::render(
                    fp,
                    &e.resolution_nl,
                    by_episode
                        .get(fp)
                        .into_iter()
                        .flatten()
                        .map(|f| (f.relation, &f.entity)),
                )
            })
            .collect())
    }

    fn timeline(&self, query: &TimelineQuery) -> Result<Vec<MemoryEpisode>, StoreError> {
        let mut episodes = self.timeline_page(query)?;
        self.attach_episodes(&mut episodes)?;
        Ok(episodes)
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
        self.correction_log_after(after, limit)
    }

    fn correction_count(&self) -> Result<u64, StoreError> {
        self.corrections_recorded()
    }

    fn facts(&self, fingerprint: &str) -> Result<Vec<FactEdge>, StoreError> {
        self.facts_of(&[fingerprint.to_string()])
    }

    fn facts_of_episodes(&self, fingerprints: &[String]) -> Result<Vec<FactEdge>, StoreError> {
        self.facts_of(&distinct(fingerprints.iter().cloned()))
    }

    fn entity_facts(&self, entity: &EntityKey) -> Result<Vec<FactEdge>, StoreError> {
        let mut facts = self
            .query(cypher::ENTITY_FACTS, &entity_params(entity))?
            .decode(fact)?;
        sort_facts(&mut facts);
        self.attach_facts(&mut facts)?;
        Ok(facts)
    }

    fn supersedes(&self, fingerprint: &str) -> Result<Vec<Supersession>, StoreError> {
        self.supersedes_of(&[fingerprint.to_string()])
    }

    fn supersession_marks(
        &self,
        fps: &[String],
        known_at: Option<Timestamp>,
    ) -> Result<Vec<(bool, bool)>, StoreError> {
        // Reviews are read with the lineage edges: a retracted supersession marks nothing.
        if self.any_versions("supersession")? {
            let k = known_at.unwrap_or(Timestamp::MAX);
            let stands = |s: &Supersession| s.stands_at(k);
            return fps
                .iter()
                .map(|fp| {
                    Ok((
                        self.supersedes(fp)?.iter().any(stands),
                        self.superseded_by(fp)?.iter().any(stands),
                    ))
                })
                .collect();
        }
        let marks: HashMap<String, (bool, bool)> = if fps.is_empty() {
            HashMap::new()
        } else {
            self.query(
                cypher::SUPERSESSION_MARKS,
                &[
                    ("keys", fingerprints(fps.iter().cloned())),
                    ("K", Param::Int(known_at.unwrap_or(Timestamp::MAX).millis())),
                ],
            )?
            .decode(|r| Ok((r.string(0)?, (r.int(1)? > 0, r.int(2)? > 0))))?
            .into_iter()
            .collect()
        };
        Ok(fps
            .iter()
            .map(|fp| marks.get(fp).copied().unwrap_or_default())
            .collect())
    }

    fn superseded_by(&self, fingerprint: &str) -> Result<Vec<Supersession>, StoreError> {
        let mut out = self
            .query(cypher::SUPERSEDED_BY, &[("fp", Param::from(fingerprint))])?
            .decode(lineage)?;
        out.sort_by(|a, b| (&a.episode, &a.entity).cmp(&(&b.episode, &b.entity)));
        self.attach_reviews(&mut out)?;
        Ok(out)
    }

    /// Sequences are positions in the ingest log: batch by batch (each batch's episodes carry
    /// its generation), then knowledge time and fingerprint. Only episodes written without a
    /// batch generation (by another agent) can land at an earlier position and shift the rest;
    /// indexes notice that by count and catch up.
    fn episodes_since(&self, after: u64, limit: usize) -> Result<LogPage, StoreError> {
        let limit_param = count(limit);
        let cursor = self
            .ingest_cursor
            .lock()
            .map_err(|_| super::internal_poisoned())?
            .clone();
        let rows = match cursor {
            Some(c) if c.ordinal == after && after > 0 && c.seq > 0 => {
                self.log_after_key(c, limit)?
            }
            _ => self.query(
                cypher::EPISODES_FROM,
                &[
                    ("skip", count(usize::try_from(after).unwrap_or(usize::MAX))),
                    ("limit", limit_param),
                ],
            )?,
        };
        // A node another program wrote without a property Strata needs is reported and
        // passed over; the rows after it are read as usual.
        let mut page = LogPage::default();
        let mut cursor = None;
        for (i, r) in rows.iter().enumerate() {
            let ordinal = after + i as u64 + 1;
            page.last = ordinal;
            let key = (|| Ok::<_, StoreError>((r.int(9)?, r.time(5)?, r.string(0)?)))();
            cursor = key.ok().map(|(seq, at, fp)| IngestCursor {
                ordinal,
                seq,
                ingested_at: at.millis(),
                fingerprint: fp,
            });
            match episode(&r) {
                Ok(e) => page.episodes.push((ordinal, e)),
                Err(e) => page.unreadable.push((ordinal, e)),
            }
        }
        // Each episode with its corrected text, as the embedded store's log reads it.
        if !page.episodes.is_empty() && self.any_versions("episode")? {
            let (ordinals, mut episodes): (Vec<u64>, Vec<MemoryEpisode>) =
                std::mem::take(&mut page.episodes).into_iter().unzip();
            self.attach_episodes(&mut episodes)?;
            page.episodes = ordinals.into_iter().zip(episodes).collect();
        }
        if page.last > after {
            *self
                .ingest_cursor
                .lock()
                .map_err(|_| super::internal_poisoned())? = cursor;
        }
        Ok(page)
    }

    fn entity_links(&self, entity: &EntityKey) -> Result<Vec<EntityLink>, StoreError> {
        let rows = self.query(cypher::ENTITY_LINKS, &entity_params(entity))?;
        let mut links = rows.decode(|r| entity_link(r, 0))?;
        self.attach_links(entity, &mut links)?;
        Ok(links)
    }

    fn entities_touched_by(&self, fingerprints: &[String]) -> Result<Vec<EntityKey>, StoreError> {
        let mut touched: Vec<EntityKey> = self
            .facts_of(fingerprints)?
            .into_iter()
            .map(|f| f.entity)
            .chain(
                self.supersedes_of(fingerprints)?
                    .into_iter()
                    .map(|s| s.entity),
            )
            .collect();
        touched.sort();
        touched.dedup();
        Ok(touched)
    }

    fn supersessions_of_episodes(
        &self,
        fingerprints: &[String],
    ) -> Result<Vec<Supersession>, StoreError> {
        self.supersedes_of(fingerprints)
    }

    fn entity_records(&self) -> Result<Vec<MemoryEntity>, StoreError> {
        let mut out = self.query(cypher::ENTITY_RECORDS, &[])?.decode(|r| {
            Ok(MemoryEntity {
                key: entity(r, 0)?,
                ingested_at: r.time(2)?,
            })
        })?;
        out.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(out)
    }

    fn code_units(&self) -> Result<Vec<CodeUnit>, StoreError> {
        let mut out = self.query(cypher::CODE_UNITS, &[])?.decode(code_unit)?;
        out.sort_by(|a, b| a.embedding_ref.cmp(&b.embedding_ref));
        Ok(out)
    }

    fn unfinished_batches(&self) -> Result<Vec<String>, StoreError> {
        self.query(cypher::CHECK_PARTIAL_INGESTS, &[])?
            .decode(|r| Ok(r.opt_string(0)?.unwrap_or_default()))
    }

    fn entities(&self) -> Result<Vec<EntityKey>, StoreError> {
        let mut out = self
            .query(cypher::ENTITIES, &[])?
            .decode(|r| entity(r, 0))?;
        out.sort();
        Ok(out)
    }

    fn stats(&self) -> Result<StoreStats, StoreError> {
        let mut n = [0u64; 7];
        for (count, template) in n.iter_mut().zip(cypher::STATS) {
            *count = self.query(template, &[])?.count()?;
        }
        Ok(StoreStats {
            episodes: n[0],
            entities: n[1],
            mentions: n[2],
            resolved_by: n[3],
            supersedes: n[4],
            invalidated_edges: n[5] + n[6],
        })
    }

    fn episode_count(&self) -> Result<u64, StoreError> {
        self.query(cypher::STATS[0], &[])?.count()
    }

    fn identity(&self) -> Result<Option<String>, StoreError> {
        Ok(self.store_meta()?.map(|m| m.store_id))
    }

    fn generation(&self) -> Result<u64, StoreError> {
        Ok(self.store_meta()?.map_or(0, |m| m.generation))
    }

    fn durability_warning(&self) -> Option<String> {
        self.persistence_warning()
    }

    fn check(&self) -> Result<IntegrityReport, StoreError> {
        let stats = self.stats()?;
        let mut problems = self.check_versions()?;
        for r in self.query(cypher::CHECK_EPISODES, &[])?.iter() {
            problems.push(format!(
                "episode {:?} lacks incident_fingerprint, concluded_at, t_valid or ingested_at",
                r.opt_string(0)?.unwrap_or_default()
            ));
        }
        for r in self.query(cypher::CHECK_FACTS, &[])?.iter() {
            problems.push(format!(
                "{:?} {} {}|{}: interval t_valid={:?} t_invalid={:?} expired_at={:?} is not a closed-after-begun interval with its recording time",
                r.string(0)?,
                r.string(1)?,
                r.string(2)?,
                r.string(3)?,
                r.opt_time(4)?.map(|t| t.to_string()),
                r.opt_time(5)?.map(|t| t.to_string()),
                r.opt_time(6)?.map(|t| t.to_string()),
            ));
        }
        for r in self.query(cypher::CHECK_LINEAGE, &[])?.iter() {
            problems.push(format!(
                "{:?} SUPERSEDES {:?} about {}|{}, but the prior has no fact about it closed then",
                r.string(0)?,
                r.string(1)?,
                r.string(2)?,
                r.string(3)?,
            ));
        }
        for r in self.query(cypher::CHECK_PARTIAL_INGESTS, &[])?.iter() {
            let file = r.opt_string(0)?.unwrap_or_default();
            problems.push(format!(
                "the ingest of {file:?} ({} records) is partial: {} of {} chunks were written \
                 (started {}); run `strata ingest` on the same file again to complete it",
                r.int(1)?,
                r.int(3)?,
                r.int(2)?,
                r.opt_time(4)?
                    .map_or_else(|| "-".to_string(), |t| t.to_string()),
            ));
        }
        Ok(IntegrityReport {
            checked_episodes: stats.episodes,
            checked_facts: stats.mentions + stats.resolved_by,
            checked_supersessions: stats.supersedes,
            problems,
        })
    }

    fn code_units_of_service(&self, service: &str) -> Result<Vec<CodeUnit>, StoreError> {
        self.query(
            cypher::CODE_UNITS_OF_SERVICE,
            &[("service", Param::from(service))],
        )?
        .decode(code_unit)
    }

    fn code_unit(&self, embedding_ref: &str) -> Result<Option<CodeUnit>, StoreError> {
        Ok(self
            .code_units_by_ref(&[embedding_ref.to_string()])?
            .into_iter()
            .next())
    }

    fn skills(&self) -> Result<Vec<Skill>, StoreError> {
        self.query(cypher::SKILLS, &[])?
            .decode(|r| decode_json("skills", &r.string(0)?))
    }

    fn add_skills(
        &self,
        drafts: &[SkillDraft],
        recorded_at: crate::store::KnowledgeTime,
    ) -> Result<usize, StoreError> {
        self.add_skill_versions(drafts, recorded_at)
    }

    fn lineage_edges(
        &self,
        fingerprint: &str,
        backwards: bool,
        known_at: Timestamp,
    ) -> Result<Option<Vec<Supersession>>, StoreError> {
        let template = if backwards {
            cypher::LINEAGE_STEP_BACKWARDS
        } else {
            cypher::LINEAGE_STEP_FORWARDS
        };
        let mut visited = BTreeSet::from([fingerprint.to_string()]);
        let mut frontier = vec![fingerprint.to_string()];
        let mut edges = Vec::new();
        while !frontier.is_empty() {
            let rows = self.query(
                template,
                &[
                    ("fps", fingerprints(std::mem::take(&mut frontier))),
                    ("K", Param::Int(known_at.millis())),
                ],
            )?;
            for s in rows.decode(lineage)? {
                let next = if backwards { &s.prior } else { &s.episode };
                if visited.insert(next.clone()) {
                    frontier.push(next.clone());
                }
                edges.push(s);
            }
        }
        self.attach_reviews(&mut edges)?;
        Ok(Some(edges))
    }

    fn superseded_by_episodes(
        &self,
        fingerprints: &[String],
    ) -> Result<Vec<Supersession>, StoreError> {
        let fps = distinct(fingerprints.iter().cloned());
        let mut named = self.for_keys(cypher::SUPERSEDED_BY_EPISODES, &fps, lineage)?;
        named.sort_by(|a, b| {
            (&a.prior, &a.episode, &a.entity).cmp(&(&b.prior, &b.episode, &b.entity))
        });
        Ok(named)
    }

    fn entity_links_of(&self, entities: &[EntityKey]) -> Result<Vec<Vec<EntityLink>>, StoreError> {
        let mut out = vec![Vec::new(); entities.len()];
        if entities.is_empty() {
            return Ok(out);
        }
        let keys = Param::List(
            entities
                .iter()
                .map(|k| {
                    Param::Map(vec![
                        ("t", Param::from(k.entity_type.as_str())),
                        ("r", Param::from(k.entity_ref.as_str())),
                    ])
                })
                .collect(),
        );
        for row in self
            .query(cypher::ENTITY_LINKS_OF, &[("keys", keys)])?
            .iter()
        {
            let i = usize::try_from(row.int(0)?).unwrap_or(usize::MAX);
            let link = entity_link(&row, 1)?;
            if let Some(slot) = out.get_mut(i) {
                slot.push(link);
            }
        }
        for (entity, links) in entities.iter().zip(out.iter_mut()) {
            self.attach_links(entity, links)?;
        }
        Ok(out)
    }

    fn hubs(&self, min: u64) -> Result<Option<Vec<EntityKey>>, StoreError> {
        let rows = self.query(
            cypher::HUBS,
            &[("min", Param::Int(i64::try_from(min).unwrap_or(i64::MAX)))],
        )?;
        Ok(Some(rows.decode(|r| {
            Ok(EntityKey {
                entity_type: r.string(0)?,
                entity_ref: r.string(1)?,
            })
        })?))
    }
}

/// An [`EntityLink`] from the columns of [`cypher::ENTITY_LINKS`], starting at `at`.
fn entity_link(r: &Row<'_>, at: usize) -> Result<EntityLink, StoreError> {
    Ok(EntityLink {
        episode: r.string(at)?,
        relation: relation(&r.string(at + 1)?)?,
        t_valid: r.time(at + 2)?,
        t_invalid: r.opt_time(at + 3)?,
        ingested_at: r.time(at + 4)?,
        expired_at: r.opt_time(at + 5)?,
        episode_concluded_at: r.time(at + 6)?,
        episode_ingested_at: r.time(at + 7)?,
        episode_t_valid: r.time(at + 8)?,
        versions: Vec::new(),
    })
}

/// A SKIP or LIMIT: FalkorDB takes at most a signed 32-bit count.
pub(crate) fn count(n: usize) -> Param {
    Param::Int(n.min(i32::MAX as usize) as i64)
}

/// Distinct fingerprints, in order.
pub(super) fn distinct(fps: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    fps.into_iter().filter(|f| seen.insert(f.clone())).collect()
}
