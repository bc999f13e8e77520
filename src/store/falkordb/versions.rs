//! Versions along knowledge time on FalkorDB. The seed's labels and properties stay as they
//! are; corrections add two labels of their own:
//! `(:MemoryVersion {record, kind, known_from, body})`, one node per version after a record's
//! first (`record` names the episode, fact or supersession as a JSON array, `body` is the
//! version as JSON), and `(:MemoryCorrection {sequence, recorded_at, body})`, the log of
//! what reviewers said. A graph without them reads exactly as before.

use std::collections::HashMap;

use super::read::decode_json;
use super::write::Plan;
use super::{FalkorStore, Param, cypher};
use crate::correct::{
    CorrectReport, CorrectionBatch, CorrectionReader, CorrectionRecord, SupersessionRef,
};
use crate::model::{EntityKey, FactEdge, MemoryEpisode, Relation, Supersession, Timestamp};
use crate::store::{EntityLink, MemoryStore, StoreError};

fn episode_record(fp: &str) -> String {
    serde_json::json!(["episode", fp]).to_string()
}

fn fact_record(fp: &str, relation: Relation, e: &EntityKey) -> String {
    serde_json::json!(["fact", fp, relation.as_str(), e.entity_type, e.entity_ref]).to_string()
}

fn supersession_record(episode: &str, prior: &str, e: &EntityKey) -> String {
    serde_json::json!(["supersession", episode, prior, e.entity_type, e.entity_ref]).to_string()
}

/// Adds a plan of corrections' versions to `plan`, and its corrections numbered after the
/// `recorded` ones the graph holds.
pub(super) fn add_versions(
    plan: &mut Plan,
    planned: &crate::correct::Plan,
    recorded: u64,
) -> Result<(), StoreError> {
    for (fp, v) in &planned.episode_versions {
        plan.version(episode_record(fp), "episode", v.known_from, v)?;
    }
    for (f, v) in &planned.fact_versions {
        plan.version(
            fact_record(&f.episode, f.relation, &f.entity),
            "fact",
            v.known_from,
            v,
        )?;
    }
    for (s, review) in &planned.reviews {
        plan.version(
            supersession_record(&s.episode, &s.prior, &s.entity()),
            "supersession",
            review.recorded_at,
            review,
        )?;
    }
    for (sequence, record) in (recorded + 1..).zip(&planned.records) {
        plan.correction(&CorrectionRecord {
            sequence,
            ..record.clone()
        })?;
    }
    Ok(())
}

impl FalkorStore {
    /// The bodies of every version of these records, each record's in knowledge-time order.
    fn versions_of(
        &self,
        records: Vec<String>,
    ) -> Result<HashMap<String, Vec<String>>, StoreError> {
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        if records.is_empty() {
            return Ok(out);
        }
        let mut records = records;
        records.sort();
        records.dedup();
        let rows = self.query(
            cypher::VERSIONS_OF,
            &[(
                "keys",
                Param::List(records.into_iter().map(Param::Str).collect()),
            )],
        )?;
        for row in rows.iter() {
            out.entry(row.string(0)?).or_default().push(row.string(1)?);
        }
        Ok(out)
    }

    pub(super) fn attach_episodes(&self, episodes: &mut [MemoryEpisode]) -> Result<(), StoreError> {
        let found = self.versions_of(
            episodes
                .iter()
                .map(|e| episode_record(&e.incident_fingerprint))
                .collect(),
        )?;
        for e in episodes {
            if let Some(bodies) = found.get(&episode_record(&e.incident_fingerprint)) {
                e.versions = decoded(bodies)?;
            }
        }
        Ok(())
    }

    pub(super) fn attach_facts(&self, facts: &mut [FactEdge]) -> Result<(), StoreError> {
        let record = |f: &FactEdge| fact_record(&f.episode, f.relation, &f.entity);
        let found = self.versions_of(facts.iter().map(record).collect())?;
        for f in facts {
            if let Some(bodies) = found.get(&record(f)) {
                f.versions = decoded(bodies)?;
            }
        }
        Ok(())
    }

    pub(super) fn attach_links(
        &self,
        entity: &EntityKey,
        links: &mut [EntityLink],
    ) -> Result<(), StoreError> {
        let record = |l: &EntityLink| fact_record(&l.episode, l.relation, entity);
        let found = self.versions_of(links.iter().map(record).collect())?;
        for l in links {
            if let Some(bodies) = found.get(&record(l)) {
                l.versions = decoded(bodies)?;
            }
        }
        Ok(())
    }

    pub(super) fn attach_reviews(&self, lineage: &mut [Supersession]) -> Result<(), StoreError> {
        let record = |s: &Supersession| supersession_record(&s.episode, &s.prior, &s.entity);
        let found = self.versions_of(lineage.iter().map(record).collect())?;
        for s in lineage {
            if let Some(bodies) = found.get(&record(s)) {
                s.reviews = decoded(bodies)?;
            }
        }
        Ok(())
    }

    /// Whether any version of this kind (`fact`, `supersession`, `episode`) exists.
    pub(super) fn any_versions(&self, kind: &str) -> Result<bool, StoreError> {
        Ok(self
            .query(cypher::ANY_VERSION, &[("kind", Param::from(kind))])?
            .first()
            .is_some())
    }

    pub(super) fn correct_batch(
        &self,
        batch: &CorrectionBatch,
    ) -> Result<CorrectReport, StoreError> {
        self.write_guarded(|| {
            let at = batch.at.resolve(Timestamp::now());
            let high = self.high_water()?;
            let planned = crate::correct::plan(&Reader(self), batch, at, high)?;
            let mut plan = Plan::default();
            add_versions(&mut plan, &planned, self.corrections_recorded()?)?;
            Ok((plan, planned.report))
        })
    }

    pub(super) fn corrections_recorded(&self) -> Result<u64, StoreError> {
        self.query(cypher::CORRECTION_COUNT, &[])?.count()
    }

    /// Up to `limit` corrections of the log after sequence `after`, in order.
    pub(super) fn correction_log_after(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<CorrectionRecord>, StoreError> {
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        self.query(
            cypher::CORRECTIONS_AFTER,
            &[
                ("after", Param::Int(after)),
                ("limit", super::read::count(limit)),
            ],
        )?
        .decode(|r| decode_json("corrections", &r.string(0)?))
    }

    pub(super) fn correction_log(&self) -> Result<Vec<CorrectionRecord>, StoreError> {
        self.query(cypher::CORRECTIONS, &[])?
            .decode(|r| decode_json("corrections", &r.string(0)?))
    }

    /// Every version's kind, record and start, for `check`.
    pub(super) fn check_versions(&self) -> Result<Vec<String>, StoreError> {
        use crate::correct::check::VersionedRecord;
        let rows = self.query(cypher::ALL_VERSIONS, &[])?;
        let mut records: Vec<VersionedRecord> = Vec::new();
        let mut last: Option<String> = None;
        for row in rows.iter() {
            let (kind, record, start, body) = (
                row.string(0)?,
                row.string(1)?,
                Timestamp::from_millis(row.int(2)?),
                row.string(3)?,
            );
            if last.as_deref() != Some(record.as_str()) {
                let parts: Vec<String> = serde_json::from_str(&record).unwrap_or_default();
                let first_known = self.first_known(&kind, &parts)?;
                records.push(VersionedRecord {
                    what: format!("{kind} {}", parts.get(1..).unwrap_or_default().join("|")),
                    first_known,
                    starts: Vec::new(),
                    intervals: Vec::new(),
                });
                last = Some(record.clone());
            }
            if let Some(r) = records.last_mut() {
                r.starts.push(start);
                if kind == "fact" {
                    let v: crate::model::FactVersion = decode_json("versions", &body)?;
                    r.intervals.push((v.t_valid, v.t_invalid));
                }
            }
        }
        Ok(crate::correct::check::check_versions(
            &records,
            &self.correction_log()?,
            self.high_water()?,
        ))
    }

    /// When the record a version belongs to was first known; `None`: no such record.
    fn first_known(&self, kind: &str, parts: &[String]) -> Result<Option<Timestamp>, StoreError> {
        let entity = |i: usize| EntityKey {
            entity_type: parts.get(i).cloned().unwrap_or_default(),
            entity_ref: parts.get(i + 1).cloned().unwrap_or_default(),
        };
        let fp = parts.get(1).cloned().unwrap_or_default();
        Ok(match kind {
            "episode" => self.episode(&fp)?.map(|e| e.ingested_at),
            "fact" => {
                let relation = parts.get(2).map(String::as_str).unwrap_or_default();
                self.facts(&fp)?
                    .into_iter()
                    .find(|f| f.relation.as_str() == relation && f.entity == entity(3))
                    .map(|f| f.ingested_at)
            }
            _ => {
                let prior = parts.get(2).cloned().unwrap_or_default();
                self.supersedes(&fp)?
                    .into_iter()
                    .find(|s| s.prior == prior && s.entity == entity(3))
                    .map(|s| s.ingested_at)
            }
        })
    }
}

fn decoded<T: serde::de::DeserializeOwned>(bodies: &[String]) -> Result<Vec<T>, StoreError> {
    bodies.iter().map(|b| decode_json("versions", b)).collect()
}

/// The graph as a plan of corrections reads it.
struct Reader<'a>(&'a FalkorStore);

impl CorrectionReader for Reader<'_> {
    fn episode(&self, fingerprint: &str) -> Result<Option<MemoryEpisode>, StoreError> {
        self.0.episode(fingerprint)
    }

    fn facts(&self, fingerprint: &str) -> Result<Vec<FactEdge>, StoreError> {
        self.0.facts(fingerprint)
    }

    fn supersession(&self, s: &SupersessionRef) -> Result<Option<Supersession>, StoreError> {
        let entity = s.entity();
        Ok(self
            .0
            .supersedes(&s.episode)?
            .into_iter()
            .find(|x| x.prior == s.prior && x.entity == entity))
    }
}
