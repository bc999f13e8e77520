use std::collections::{HashMap, HashSet};

use redb::{ReadableMultimapTable, ReadableTable, ReadableTableMetadata};

use super::read::decode;
use super::tables::*;
use super::{EmbeddedStore, backend, keys};
use crate::model::{FactEdge, MemoryEpisode, Relation, Supersession};
use crate::store::{EpisodeDraft, IntegrityReport, StoreError};

impl EmbeddedStore {
    /// Walks every table once and cross-checks indexes, references and counters.
    pub(super) fn check_integrity(&self) -> Result<IntegrityReport, StoreError> {
        let txn = self.read()?;
        let episodes = txn.open_table(EPISODES).map_err(backend)?;
        let drafts = txn.open_table(DRAFTS).map_err(backend)?;
        let lessons = txn.open_table(LESSONS).map_err(backend)?;
        let entities = txn.open_table(ENTITIES).map_err(backend)?;
        let facts = txn.open_table(FACTS).map_err(backend)?;
        let entity_facts = txn.open_multimap_table(ENTITY_FACTS).map_err(backend)?;
        let supersedes = txn.open_table(SUPERSEDES).map_err(backend)?;
        let superseded_by = txn.open_multimap_table(SUPERSEDED_BY).map_err(backend)?;
        let timeline = txn.open_table(TIMELINE).map_err(backend)?;
        let counters = txn.open_table(COUNTERS).map_err(backend)?;
        let fact_times = txn.open_table(FACT_TIMES).map_err(backend)?;
        let episode_times = txn.open_table(EPISODE_TIMES).map_err(backend)?;
        let mut report = IntegrityReport::default();
        let mut problems = Vec::new();

        let mut facts_per_episode: HashMap<String, usize> = HashMap::new();
        let mut counts: HashMap<&str, u64> = HashMap::new();
        let mut entity_index: HashSet<(Vec<u8>, Vec<u8>)> = HashSet::new();
        let mut closed: HashMap<Vec<u8>, FactEdge> = HashMap::new();
        for row in facts.iter().map_err(backend)? {
            let (k, v) = row.map_err(backend)?;
            let key = k.value();
            let f: FactEdge = decode("facts", key, v.value())?;
            report.checked_facts += 1;
            let shown = keys::display(key);
            if keys::fact(&f.episode, f.relation, &f.entity) != key {
                problems.push(format!("fact key {shown} holds another fact"));
            }
            *facts_per_episode.entry(f.episode.clone()).or_default() += 1;
            let ekey = keys::entity(&f.entity);
            if entities.get(ekey.as_slice()).map_err(backend)?.is_none() {
                problems.push(format!("fact {shown} names a missing entity"));
            }
            entity_index.insert((ekey, key.to_vec()));
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
            if fact_times.get(key).map_err(backend)?.map(|t| t.value())
                != Some(super::write::times_of(&f))
            {
                problems.push(format!("fact {shown} has stale or missing compact times"));
            }
            if episode_times
                .get(f.episode.as_str())
                .map_err(backend)?
                .is_none()
            {
                problems.push(format!("fact {shown}: episode has no compact times"));
            }
            if f.t_invalid.is_some() {
                closed.insert(key.to_vec(), f);
            }
        }

        let mut indexed = 0usize;
        for row in entity_facts.iter().map_err(backend)? {
            let (ekey, values) = row.map_err(backend)?;
            for fkey in values {
                let fkey = fkey.map_err(backend)?;
                indexed += 1;
                if !entity_index.contains(&(ekey.value().to_vec(), fkey.value().to_vec())) {
                    problems.push(format!(
                        "entity index row {} -> {} has no fact",
                        keys::display(ekey.value()),
                        keys::display(fkey.value())
                    ));
                }
            }
        }
        if indexed != entity_index.len() {
            problems.push(format!(
                "entity index has {indexed} rows for {} facts",
                entity_index.len()
            ));
        }

        for row in episodes.iter().map_err(backend)? {
            let (k, v) = row.map_err(backend)?;
            let fp = k.value();
            let e: MemoryEpisode = decode("episodes", fp.as_bytes(), v.value())?;
            report.checked_episodes += 1;
            if e.incident_fingerprint != fp {
                problems.push(format!(
                    "episode key {fp:?} holds {:?}",
                    e.incident_fingerprint
                ));
            }
            let have = facts_per_episode.remove(fp).unwrap_or(0);
            match drafts.get(fp).map_err(backend)? {
                None => problems.push(format!("episode {fp:?} has no draft")),
                Some(d) => {
                    let d: EpisodeDraft = decode("drafts", fp.as_bytes(), d.value())?;
                    if d.facts.len() != have {
                        problems.push(format!(
                            "episode {fp:?}: draft lists {} facts, store holds {have}",
                            d.facts.len()
                        ));
                    }
                    let expected = crate::learning::render(
                        fp,
                        &d.resolution_nl,
                        d.facts.iter().map(|f| (f.relation, &f.entity)),
                    );
                    let stored: Option<crate::learning::Lesson> = lessons
                        .get(fp)
                        .map_err(backend)?
                        .map(|l| decode("lessons", fp.as_bytes(), l.value()))
                        .transpose()?;
                    if stored.as_ref() != Some(&expected) {
                        problems.push(format!(
                            "episode {fp:?}: lesson missing or not the one its facts render"
                        ));
                    }
                }
            }
            if timeline
                .get((e.concluded_at.millis(), fp))
                .map_err(backend)?
                .is_none()
            {
                problems.push(format!("episode {fp:?} missing from the timeline"));
            }
        }
        for fp in facts_per_episode.keys() {
            problems.push(format!("facts name a missing episode {fp:?}"));
        }
        let log_len = txn
            .open_table(INGEST_LOG)
            .map_err(backend)?
            .len()
            .map_err(backend)?;
        if log_len != report.checked_episodes {
            problems.push(format!(
                "ingest log has {log_len} rows for {} episodes",
                report.checked_episodes
            ));
        }
        let timeline_len = timeline.len().map_err(backend)?;
        if timeline_len != report.checked_episodes {
            problems.push(format!(
                "timeline has {timeline_len} rows for {} episodes",
                report.checked_episodes
            ));
        }
        for name in [COUNT_MENTIONS, COUNT_RESOLVED_BY, COUNT_INVALIDATED] {
            let stored = counters
                .get(name)
                .map_err(backend)?
                .map_or(0, |v| v.value());
            let actual = counts.get(name).copied().unwrap_or(0);
            if stored != actual {
                problems.push(format!(
                    "counter {name} says {stored}, recount says {actual}"
                ));
            }
        }

        let mut lineage_index = HashSet::new();
        for row in superseded_by.iter().map_err(backend)? {
            let (prior, values) = row.map_err(backend)?;
            for skey in values {
                lineage_index.insert((
                    prior.value().to_string(),
                    skey.map_err(backend)?.value().to_vec(),
                ));
            }
        }
        for row in supersedes.iter().map_err(backend)? {
            let (k, v) = row.map_err(backend)?;
            let s: Supersession = decode("supersedes", k.value(), v.value())?;
            report.checked_supersessions += 1;
            let shown = keys::display(k.value());
            for fp in [&s.episode, &s.prior] {
                if episodes.get(fp.as_str()).map_err(backend)?.is_none() {
                    problems.push(format!("supersession {shown} names a missing episode"));
                }
            }
            if !lineage_index.remove(&(s.prior.clone(), k.value().to_vec())) {
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
