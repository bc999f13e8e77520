use std::collections::{HashMap, HashSet};

use super::read::decode;
use super::tables::{self, COUNT_INVALIDATED, COUNT_MENTIONS, COUNT_RESOLVED_BY};
use super::{EmbeddedStore, backend, keys, records};
use crate::model::{FactEdge, Relation, Supersession};
use crate::store::{IntegrityReport, StoreError};

impl EmbeddedStore {
    /// Walks every table once, in one snapshot, and cross-checks indexes, references and
    /// counters.
    pub(super) fn check_integrity(&self) -> Result<IntegrityReport, StoreError> {
        let txn = self.read()?;
        let t = &self.tables;
        let mut report = IntegrityReport::default();
        let mut problems = Vec::new();

        let mut facts_per_episode: HashMap<String, usize> = HashMap::new();
        let mut counts: HashMap<&str, u64> = HashMap::new();
        let mut entity_index: HashSet<(Vec<u8>, Vec<u8>)> = HashSet::new();
        let mut closed: HashMap<Vec<u8>, FactEdge> = HashMap::new();
        for row in t.facts.iter(&txn).map_err(backend)? {
            let (key, v) = row.map_err(backend)?;
            let f: FactEdge = records::fact(key, v)?;
            report.checked_facts += 1;
            let shown = keys::display(key);
            *facts_per_episode.entry(f.episode.clone()).or_default() += 1;
            let ekey = keys::entity(&f.entity);
            if t.entities.get(&txn, &ekey).map_err(backend)?.is_none() {
                problems.push(format!("fact {shown} names a missing entity"));
            }
            match t
                .times_of_episode(&txn, f.episode.as_bytes())
                .map_err(backend)?
            {
                Some(times) => {
                    let link = records::encode_link(&f, times)?;
                    entity_index.insert((ekey, link));
                }
                None => problems.push(format!("fact {shown}: its episode has no times")),
            }
            match (f.t_invalid, f.expired_at) {
                (Some(end), Some(_)) => {
                    *counts.entry(COUNT_INVALIDATED).or_default() += 1;
                    if end <= f.t_valid {
                        problems.push(format!("fact {shown} ends before it begins"));
                    }
                }
                (None, None) => {}
                _ => problems.push(format!(
                    "fact {shown} has t_invalid and expired_at out of step"
                )),
            }
            let name = match f.relation {
                Relation::Mentions => COUNT_MENTIONS,
                Relation::ResolvedBy => COUNT_RESOLVED_BY,
            };
            *counts.entry(name).or_default() += 1;
            if f.t_invalid.is_some() {
                closed.insert(key.to_vec(), f);
            }
        }

        let mut indexed = 0usize;
        for row in t.entity_facts.iter(&txn).map_err(backend)? {
            let (ekey, link) = row.map_err(backend)?;
            indexed += 1;
            if !entity_index.contains(&(ekey.to_vec(), link.to_vec())) {
                problems.push(format!(
                    "entity index row {} -> {} has no fact, or times other than its fact's",
                    keys::display(ekey),
                    records::link_display(link)
                ));
            }
        }
        if indexed != entity_index.len() {
            problems.push(format!(
                "entity index has {indexed} rows for {} facts",
                entity_index.len()
            ));
        }

        for row in t.episodes.iter(&txn).map_err(backend)? {
            let (k, v) = row.map_err(backend)?;
            let fp = String::from_utf8_lossy(k).into_owned();
            let e = records::episode(k, v)?;
            let d = records::draft(k, v)?;
            report.checked_episodes += 1;
            let have = facts_per_episode.remove(&fp).unwrap_or(0);
            if d.facts.len() != have {
                problems.push(format!(
                    "episode {fp:?}: draft lists {} facts, store holds {have}",
                    d.facts.len()
                ));
            }
            if t.times_of_episode(&txn, k).map_err(backend)?
                != Some([e.concluded_at, e.ingested_at, e.t_valid])
            {
                problems.push(format!("episode {fp:?} has stale or missing compact times"));
            }
            if t.timeline
                .get(&txn, &keys::timeline(e.concluded_at.millis(), &fp))
                .map_err(backend)?
                .is_none()
            {
                problems.push(format!("episode {fp:?} missing from the timeline"));
            }
        }
        for fp in facts_per_episode.keys() {
            problems.push(format!("facts name a missing episode {fp:?}"));
        }
        for row in t.lessons.iter(&txn).map_err(backend)? {
            let (k, v) = row.map_err(backend)?;
            let kept: crate::learning::Lesson = decode("lessons", k, v)?;
            if kept.episode.as_bytes() != k || t.episodes.get(&txn, k).map_err(backend)?.is_none() {
                problems.push(format!(
                    "kept lesson {} names no stored episode",
                    keys::display(k)
                ));
            }
        }
        let log_len = t.ingest_log.len(&txn).map_err(backend)?;
        if log_len != report.checked_episodes {
            problems.push(format!(
                "ingest log has {log_len} rows for {} episodes",
                report.checked_episodes
            ));
        }
        let timeline_len = t.timeline.len(&txn).map_err(backend)?;
        if timeline_len != report.checked_episodes {
            problems.push(format!(
                "timeline has {timeline_len} rows for {} episodes",
                report.checked_episodes
            ));
        }
        for name in [COUNT_MENTIONS, COUNT_RESOLVED_BY, COUNT_INVALIDATED] {
            let stored = tables::counter(t, &txn, name)?;
            let actual = counts.get(name).copied().unwrap_or(0);
            if stored != actual {
                problems.push(format!(
                    "counter {name} says {stored}, recount says {actual}"
                ));
            }
        }

        let mut lineage_index = HashSet::new();
        for row in t.superseded_by.iter(&txn).map_err(backend)? {
            let (prior, skey) = row.map_err(backend)?;
            lineage_index.insert((String::from_utf8_lossy(prior).into_owned(), skey.to_vec()));
        }
        for row in t.supersedes.iter(&txn).map_err(backend)? {
            let (k, v) = row.map_err(backend)?;
            let s: Supersession = records::supersession(k, v)?;
            report.checked_supersessions += 1;
            let shown = keys::display(k);
            for fp in [&s.episode, &s.prior] {
                if t.episodes
                    .get(&txn, fp.as_bytes())
                    .map_err(backend)?
                    .is_none()
                {
                    problems.push(format!("supersession {shown} names a missing episode"));
                }
            }
            if !lineage_index.remove(&(s.prior.clone(), k.to_vec())) {
                problems.push(format!(
                    "supersession {shown} missing from the lineage index"
                ));
            }
            let closes = Relation::ALL.iter().any(|r| {
                closed
                    .get(&keys::fact(&s.prior, *r, &s.entity))
                    .is_some_and(|f| f.t_invalid == Some(s.t_valid))
            });
            if !closes {
                problems.push(format!(
                    "supersession {shown} did not close the prior's fact"
                ));
            }
        }
        for (prior, skey) in lineage_index {
            problems.push(format!(
                "lineage index row {prior:?} -> {} has no supersession",
                keys::display(&skey)
            ));
        }
        report.problems = problems;
        Ok(report)
    }
}
