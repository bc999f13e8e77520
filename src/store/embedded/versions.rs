//! Versions along knowledge time in the embedded store: the `versions` table holds, for each
//! corrected record, every version after its first (the record as written stays where it
//! is), keyed `kind \0 record key \0 known_from`; the `corrections` table is the log of what
//! reviewers said. Reads attach a record's versions to it ([`crate::model`] picks the one
//! known at K); a store without corrections reads no more than before.

use std::collections::HashMap;
use std::ops::Bound;

use heed::{RoTxn, RwTxn};

use super::read::decode;
use super::table::Table;
use super::tables::{self, Tables};
use super::{EmbeddedStore, keys, records};
use crate::correct::{
    CorrectReport, CorrectionBatch, CorrectionReader, CorrectionRecord, Plan, SupersessionRef,
};
use crate::model::{EntityKey, FactEdge, FactVersion, MemoryEpisode, Supersession, Timestamp};
use crate::store::{EntityLink, StoreError};

const EPISODE: &[u8] = b"e";
const FACT: &[u8] = b"f";
const SUPERSESSION: &[u8] = b"s";

fn prefix(kind: &[u8], record: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(kind.len() + record.len() + 2);
    key.extend_from_slice(kind);
    key.push(0);
    key.extend_from_slice(record);
    key.push(0);
    key
}

/// The key of `record`'s version from `known_from`: time big-endian, sign bit flipped.
fn key(kind: &[u8], record: &[u8], known_from: Timestamp) -> Vec<u8> {
    let mut key = prefix(kind, record);
    key.extend_from_slice(&((known_from.millis() as u64) ^ (1 << 63)).to_be_bytes());
    key
}

/// A row of a table: its key and value.
type Row<'t> = (&'t [u8], &'t [u8]);

/// Every (key, value) of the versions whose key starts with `lo`, in order.
fn scan<'t>(t: &Tables, txn: &'t RoTxn, lo: Vec<u8>) -> Result<Vec<Row<'t>>, StoreError> {
    let mut hi = lo.clone();
    if let Some(last) = hi.last_mut() {
        *last += 1;
    }
    let range = (
        Bound::Included(lo.as_slice()),
        Bound::Excluded(hi.as_slice()),
    );
    let mut out = Vec::new();
    for row in t.versions.range(txn, &range)? {
        out.push(row?);
    }
    Ok(out)
}

fn of_record<T: serde::de::DeserializeOwned>(
    t: &Tables,
    txn: &RoTxn,
    kind: &[u8],
    record: &[u8],
) -> Result<Vec<T>, StoreError> {
    scan(t, txn, prefix(kind, record))?
        .into_iter()
        .map(|(k, v)| decode("versions", k, v))
        .collect()
}

/// Whether any record has been corrected: when not, reads attach nothing.
pub(super) fn any(t: &Tables, txn: &RoTxn) -> Result<bool, StoreError> {
    Ok(t.versions.len(txn)? > 0)
}

pub(super) fn attach_episode(
    t: &Tables,
    txn: &RoTxn,
    episode: &mut MemoryEpisode,
) -> Result<(), StoreError> {
    if any(t, txn)? {
        episode.versions = of_record(t, txn, EPISODE, episode.incident_fingerprint.as_bytes())?;
    }
    Ok(())
}

/// Attaches versions to facts of any episodes.
pub(super) fn attach_facts(
    t: &Tables,
    txn: &RoTxn,
    facts: &mut [FactEdge],
) -> Result<(), StoreError> {
    if !any(t, txn)? {
        return Ok(());
    }
    let mut by_episode: HashMap<String, HashMap<Vec<u8>, Vec<FactVersion>>> = HashMap::new();
    for fact in facts.iter_mut() {
        let versions = match by_episode.get_mut(&fact.episode) {
            Some(v) => v,
            None => {
                let mut found: HashMap<Vec<u8>, Vec<FactVersion>> = HashMap::new();
                let lo = prefix(FACT, fact.episode.as_bytes());
                for (k, v) in scan(t, txn, lo)? {
                    let record = k.get(2..k.len().saturating_sub(9)).unwrap_or_default();
                    found
                        .entry(record.to_vec())
                        .or_default()
                        .push(decode("versions", k, v)?);
                }
                by_episode.entry(fact.episode.clone()).or_insert(found)
            }
        };
        let fkey = keys::fact(&fact.episode, fact.relation, &fact.entity);
        fact.versions = versions.get(&fkey).cloned().unwrap_or_default();
    }
    Ok(())
}

pub(super) fn attach_link(
    t: &Tables,
    txn: &RoTxn,
    entity: &EntityKey,
    link: &mut EntityLink,
) -> Result<(), StoreError> {
    let fkey = keys::fact(&link.episode, link.relation, entity);
    link.versions = of_record(t, txn, FACT, &fkey)?;
    Ok(())
}

pub(super) fn attach_reviews(
    t: &Tables,
    txn: &RoTxn,
    lineage: &mut [Supersession],
) -> Result<(), StoreError> {
    if !any(t, txn)? {
        return Ok(());
    }
    for s in lineage {
        let skey = keys::supersession(&s.episode, &s.prior, &s.entity);
        s.reviews = of_record(t, txn, SUPERSESSION, &skey)?;
    }
    Ok(())
}

/// The store as a plan of corrections reads it, inside the write transaction.
struct InTxn<'a, 't> {
    t: &'a Tables,
    txn: &'a RoTxn<'t>,
}

impl CorrectionReader for InTxn<'_, '_> {
    fn episode(&self, fingerprint: &str) -> Result<Option<MemoryEpisode>, StoreError> {
        let Some(bytes) = self.t.episodes.get(self.txn, fingerprint.as_bytes())? else {
            return Ok(None);
        };
        let mut e = records::episode(fingerprint.as_bytes(), bytes)?;
        attach_episode(self.t, self.txn, &mut e)?;
        Ok(Some(e))
    }

    fn facts(&self, fingerprint: &str) -> Result<Vec<FactEdge>, StoreError> {
        let (lo, hi) = keys::prefix_range(fingerprint);
        let range = (
            Bound::Included(lo.as_slice()),
            Bound::Excluded(hi.as_slice()),
        );
        let mut out = Vec::new();
        for row in self.t.facts.range(self.txn, &range)? {
            let (k, v) = row?;
            out.push(records::fact(k, v)?);
        }
        attach_facts(self.t, self.txn, &mut out)?;
        Ok(out)
    }

    fn supersession(&self, s: &SupersessionRef) -> Result<Option<Supersession>, StoreError> {
        let skey = keys::supersession(&s.episode, &s.prior, &s.entity());
        let Some(bytes) = self.t.supersedes.get(self.txn, &skey)? else {
            return Ok(None);
        };
        let mut found = [records::supersession(&skey, bytes)?];
        attach_reviews(self.t, self.txn, &mut found)?;
        let [found] = found;
        Ok(Some(found))
    }
}

fn put_json<T: serde::Serialize>(
    txn: &mut RwTxn,
    table: &Table,
    key: &[u8],
    value: &T,
) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec(value)
        .map_err(|e| StoreError::Internal(format!("cannot encode a record: {e}")))?;
    table.put(txn, key, &bytes)
}

/// Writes a plan's versions, and its corrections numbered after those the store holds;
/// returns the latest knowledge time it wrote, if it wrote any.
pub(super) fn write_plan(
    txn: &mut RwTxn,
    t: &Tables,
    plan: &Plan,
) -> Result<Option<Timestamp>, StoreError> {
    let mut latest: Option<Timestamp> = None;
    for (fp, v) in &plan.episode_versions {
        put_json(
            txn,
            &t.versions,
            &key(EPISODE, fp.as_bytes(), v.known_from),
            v,
        )?;
        latest = latest.max(Some(v.known_from));
    }
    for (f, v) in &plan.fact_versions {
        let fkey = keys::fact(&f.episode, f.relation, &f.entity);
        put_json(txn, &t.versions, &key(FACT, &fkey, v.known_from), v)?;
        latest = latest.max(Some(v.known_from));
    }
    for (s, review) in &plan.reviews {
        let skey = keys::supersession(&s.episode, &s.prior, &s.entity());
        put_json(
            txn,
            &t.versions,
            &key(SUPERSESSION, &skey, review.recorded_at),
            review,
        )?;
        latest = latest.max(Some(review.recorded_at));
    }
    let mut sequence = t.corrections.len(txn)?;
    for record in &plan.records {
        sequence += 1;
        let record = CorrectionRecord {
            sequence,
            ..record.clone()
        };
        put_json(txn, &t.corrections, &keys::sequence(sequence), &record)?;
        latest = latest.max(Some(record.recorded_at));
    }
    Ok(latest)
}

impl EmbeddedStore {
    pub(crate) fn correct_batch(
        &self,
        batch: &CorrectionBatch,
    ) -> Result<CorrectReport, StoreError> {
        self.write("record corrections", |txn, t| {
            let high = match tables::meta_get(t, txn, tables::KNOWLEDGE_HIGH_WATER)? {
                Some(v) => Some(Timestamp::from_millis(v.parse().map_err(|_| {
                    t.meta.corrupt(
                        tables::KNOWLEDGE_HIGH_WATER.as_bytes(),
                        format!("{v:?} is not a time in milliseconds"),
                    )
                })?)),
                None => None,
            };
            let at = batch.at.resolve(Timestamp::now());
            let plan = crate::correct::plan(&InTxn { t, txn }, batch, at, high)?;
            write_plan(txn, t, &plan)?;
            if high.is_none_or(|h| at > h) {
                tables::meta_put(
                    t,
                    txn,
                    tables::KNOWLEDGE_HIGH_WATER,
                    &at.millis().to_string(),
                )?;
            }
            let changed = plan.report.corrections > 0;
            Ok((plan.report, changed))
        })
    }

    /// Up to `limit` rows of the correction log after sequence `after`.
    pub(crate) fn correction_log_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<CorrectionRecord>, StoreError> {
        let txn = self.read()?;
        let from = keys::sequence(after.saturating_add(1));
        let range = (Bound::Included(from.as_slice()), Bound::Unbounded);
        let mut out = Vec::new();
        for row in self.tables.corrections.range(&txn, &range)? {
            if out.len() >= limit {
                break;
            }
            let (k, v) = row?;
            out.push(decode("corrections", k, v)?);
        }
        Ok(out)
    }

    pub(crate) fn correction_log(&self) -> Result<Vec<CorrectionRecord>, StoreError> {
        let txn = self.read()?;
        let mut out = Vec::new();
        for row in self.tables.corrections.iter(&txn)? {
            let (k, v) = row?;
            out.push(decode("corrections", k, v)?);
        }
        Ok(out)
    }
}

impl EmbeddedStore {
    /// The versions' intervals and the corrections log, checked (see [`crate::correct::check`]).
    pub(super) fn check_versions(&self, txn: &RoTxn) -> Result<Vec<String>, StoreError> {
        use crate::correct::check::VersionedRecord;
        let t = &self.tables;
        let mut records: Vec<VersionedRecord> = Vec::new();
        let mut current: Option<(Vec<u8>, VersionedRecord)> = None;
        for row in t.versions.iter(txn)? {
            let (k, v) = row?;
            let (Some(kind), Some(record), Some(time)) = (
                k.first(),
                k.get(2..k.len().saturating_sub(9)),
                k.get(k.len().saturating_sub(8)..)
                    .and_then(|b| <[u8; 8]>::try_from(b).ok()),
            ) else {
                return Err(t.versions.corrupt(k, "malformed key"));
            };
            let start = Timestamp::from_millis((u64::from_be_bytes(time) ^ (1 << 63)) as i64);
            let head = k[..k.len() - 8].to_vec();
            if current.as_ref().is_none_or(|(h, _)| *h != head) {
                records.extend(current.take().map(|(_, r)| r));
                let (what, first_known) = match *kind {
                    b'e' => (
                        format!("episode {:?}", keys::display(record)),
                        t.times_of_episode(txn, record)?
                            .map(|[_, ingested, _]| ingested),
                    ),
                    b'f' => (
                        format!("fact {}", keys::display(record)),
                        t.facts
                            .get(txn, record)?
                            .map(|bytes| records::fact(record, bytes))
                            .transpose()?
                            .map(|f| f.ingested_at),
                    ),
                    _ => (
                        format!("supersession {}", keys::display(record)),
                        t.supersedes
                            .get(txn, record)?
                            .map(|bytes| records::supersession(record, bytes))
                            .transpose()?
                            .map(|s| s.ingested_at),
                    ),
                };
                current = Some((
                    head,
                    VersionedRecord {
                        what,
                        first_known,
                        starts: Vec::new(),
                        intervals: Vec::new(),
                    },
                ));
            }
            if let Some((_, r)) = &mut current {
                r.starts.push(start);
                if *kind == b'f' {
                    let version: FactVersion = decode("versions", k, v)?;
                    if version.known_from != start {
                        return Err(t
                            .versions
                            .corrupt(k, "its key and its version disagree on when it begins"));
                    }
                    r.intervals.push((version.t_valid, version.t_invalid));
                }
            }
        }
        records.extend(current.map(|(_, r)| r));
        let high = tables::meta_get(t, txn, tables::KNOWLEDGE_HIGH_WATER)?
            .and_then(|v| v.parse().ok())
            .map(Timestamp::from_millis);
        let mut log = Vec::new();
        for row in t.corrections.iter(txn)? {
            let (k, v) = row?;
            log.push(decode("corrections", k, v)?);
        }
        Ok(crate::correct::check::check_versions(&records, &log, high))
    }
}
