use std::collections::{HashMap, HashSet};

use heed::RoTxn;

use super::read::decode;
use super::table::{Row, Table};
use super::tables::{self, COUNT_INVALIDATED, COUNT_MENTIONS, COUNT_RESOLVED_BY, GENERATION};
use super::{EmbeddedStore, keys, records};
use crate::model::{FactEdge, Relation, Supersession};
use crate::store::{IntegrityReport, StoreError};

/// Every bad row is a problem of its own, and the walk goes on: `check` lists them all.
struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, problem: impl Into<String>) {
        self.0.push(problem.into());
    }

    /// `result`'s value, or its error noted and `None`.
    fn keep<T>(&mut self, result: Result<T, StoreError>) -> Option<T> {
        result.map_err(|e| self.add(e.to_string())).ok()
    }

    /// Every row of `table` that reads: checksums, order and the header's count are checked
    /// by the walk, and each failure is a problem.
    fn rows<'t>(&mut self, table: &Table, txn: &'t RoTxn) -> Vec<Row<'t>> {
        let Some(rows) = self.keep(table.iter(txn)) else {
            return Vec::new();
        };
        rows.filter_map(|row| self.keep(row)).collect()
    }
}

impl EmbeddedStore {
    /// Walks every table once, in one snapshot: every value's checksum, every table's order
    /// and count, and then the cross-checks between tables (indexes, references, counters).
    /// A bad row is listed and the walk goes on. The generation recorded outside the store's
    /// file tells a store rolled back to an older copy.
    pub(super) fn check_integrity(&self) -> Result<IntegrityReport, StoreError> {
        let txn = self.read()?;
        let t = &self.tables;
        let mut report = IntegrityReport::default();
        let mut p = Problems(Vec::new());

        // Tables no cross-check below walks whole.
        for table in [
            &t.timeline,
            &t.episode_times,
            &t.ingest_log,
            &t.counters,
            &t.skills,
            &t.code_units,
            &t.service_code,
            &t.meta,
        ] {
            p.rows(table, &txn);
        }
        for name in [
            COUNT_MENTIONS,
            COUNT_RESOLVED_BY,
            COUNT_INVALIDATED,
            GENERATION,
        ] {
            p.keep(tables::counter(t, &txn, name));
        }

        let mut facts_per_episode: HashMap<String, usize> = HashMap::new();
        let mut counts: HashMap<&str, u64> = HashMap::new();
        let mut entity_index: HashSet<(Vec<u8>, Vec<u8>)> = HashSet::new();
        let mut closed: HashMap<Vec<u8>, FactEdge> = HashMap::new();
        for (key, v) in p.rows(&t.facts, &txn) {
            let Some(f) = p.keep(records::fact(key, v)) else {
                continue;
            };
            report.checked_facts += 1;
            let shown = keys::display(key);
            *facts_per_episode.entry(f.episode.clone()).or_default() += 1;
            let ekey = keys::entity(&f.entity);
            if p.keep(t.entities.contains(&txn, &ekey)) == Some(false) {
                p.add(format!("fact {shown} names a missing entity"));
            }
            match p.keep(t.times_of_episode(&txn, f.episode.as_bytes())) {
                Some(Some(times)) => {
                    if let Some(link) = p.keep(records::encode_link(&f, times)) {
                        entity_index.insert((ekey, link));
                    }
                }
                Some(None) => p.add(format!("fact {shown}: its episode has no times")),
                None => {}
            }
            match (f.t_invalid, f.expired_at) {
                (Some(end), Some(_)) => {
                    *counts.entry(COUNT_INVALIDATED).or_default() += 1;
                    if end <= f.t_valid {
                        p.add(format!("fact {shown} ends before it begins"));
                    }
                }
                (None, None) => {}
                _ => p.add(format!(
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
        for (ekey, link) in p.rows(&t.entity_facts, &txn) {
            indexed += 1;
            if !entity_index.contains(&(ekey.to_vec(), link.to_vec())) {
                p.add(format!(
                    "entity index row {} -> {} has no fact, or times other than its fact's",
                    keys::display(ekey),
                    records::link_display(link)
                ));
            }
        }
        if indexed != entity_index.len() {
            p.add(format!(
                "entity index has {indexed} rows for {} facts",
                entity_index.len()
            ));
        }

        for (k, v) in p.rows(&t.entities, &txn) {
            p.keep(records::entity(k, v));
        }

        let mut episodes = 0u64;
        for (k, v) in p.rows(&t.episodes, &txn) {
            episodes += 1;
            let fp = String::from_utf8_lossy(k).into_owned();
            let (Some(e), Some(d)) = (p.keep(records::episode(k, v)), p.keep(records::draft(k, v)))
            else {
                continue;
            };
            report.checked_episodes += 1;
            let have = facts_per_episode.remove(&fp).unwrap_or(0);
            if d.facts.len() != have {
                p.add(format!(
                    "episode {fp:?}: draft lists {} facts, store holds {have}",
                    d.facts.len()
                ));
            }
            if let Some(times) = p.keep(t.times_of_episode(&txn, k))
                && times != Some([e.concluded_at, e.ingested_at, e.t_valid])
            {
                p.add(format!("episode {fp:?} has stale or missing compact times"));
            }
            let timeline_key = keys::timeline(e.concluded_at.millis(), &fp);
            if p.keep(t.timeline.contains(&txn, &timeline_key)) == Some(false) {
                p.add(format!("episode {fp:?} missing from the timeline"));
            }
        }
        for fp in facts_per_episode.keys() {
            p.add(format!("facts name a missing episode {fp:?}"));
        }
        for (k, v) in p.rows(&t.lessons, &txn) {
            let Some(kept) = p.keep(decode::<crate::learning::Lesson>("lessons", k, v)) else {
                continue;
            };
            if kept.episode.as_bytes() != k || p.keep(t.episodes.contains(&txn, k)) == Some(false) {
                p.add(format!(
                    "kept lesson {} names no stored episode",
                    keys::display(k)
                ));
            }
        }
        for (table, len) in [("ingest log", &t.ingest_log), ("timeline", &t.timeline)] {
            if let Some(n) = p.keep(len.len(&txn))
                && n != episodes
            {
                p.add(format!("{table} has {n} rows for {episodes} episodes"));
            }
        }
        for name in [COUNT_MENTIONS, COUNT_RESOLVED_BY, COUNT_INVALIDATED] {
            let actual = counts.get(name).copied().unwrap_or(0);
            if let Some(stored) = p.keep(tables::counter(t, &txn, name))
                && stored != actual
            {
                p.add(format!(
                    "counter {name} says {stored}, recount says {actual}"
                ));
            }
        }

        let mut lineage_index = HashSet::new();
        for (prior, skey) in p.rows(&t.superseded_by, &txn) {
            lineage_index.insert((String::from_utf8_lossy(prior).into_owned(), skey.to_vec()));
        }
        for (k, v) in p.rows(&t.supersedes, &txn) {
            let Some(s): Option<Supersession> = p.keep(records::supersession(k, v)) else {
                continue;
            };
            report.checked_supersessions += 1;
            let shown = keys::display(k);
            for fp in [&s.episode, &s.prior] {
                if p.keep(t.episodes.contains(&txn, fp.as_bytes())) == Some(false) {
                    p.add(format!("supersession {shown} names a missing episode"));
                }
            }
            if !lineage_index.remove(&(s.prior.clone(), k.to_vec())) {
                p.add(format!(
                    "supersession {shown} missing from the lineage index"
                ));
            }
            let closes = Relation::ALL.iter().any(|r| {
                closed
                    .get(&keys::fact(&s.prior, *r, &s.entity))
                    .is_some_and(|f| f.t_invalid == Some(s.t_valid))
            });
            if !closes {
                p.add(format!(
                    "supersession {shown} did not close the prior's fact"
                ));
            }
        }
        for (prior, skey) in lineage_index {
            p.add(format!(
                "lineage index row {prior:?} -> {} has no supersession",
                keys::display(&skey)
            ));
        }
        self.check_generation(&txn, &mut p);
        if let Some(problems) = p.keep(self.check_versions(&txn)) {
            p.0.extend(problems);
        }
        report.problems = p.0;
        Ok(report)
    }

    /// The store's generation against the one its last write recorded outside its file.
    fn check_generation(&self, txn: &RoTxn, p: &mut Problems) {
        let Some(recorded) = self.generation.read() else {
            return;
        };
        let (Some(Some(id)), Some(now)) = (
            p.keep(tables::meta_get(&self.tables, txn, tables::STORE_ID)),
            p.keep(tables::counter(&self.tables, txn, GENERATION)),
        ) else {
            return;
        };
        let file = self.generation.path().display();
        if recorded.store_id != id {
            p.add(format!(
                "{file} records store {} but this store is {id}: it is not the store last \
                 written here (restored from another one, or made anew)",
                recorded.store_id
            ));
        } else if recorded.generation > now {
            p.add(format!(
                "the store is at generation {now}, but generation {} was recorded in {file}: \
                 it was rolled back to an older copy, and what was written since is not in it",
                recorded.generation
            ));
        }
    }
}
