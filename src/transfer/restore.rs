//! `strata restore FILE`: the file is read through once and checked whole (its chain line by
//! line, the order of its records, its counts and SHA-256) before anything is written; then
//! read again and written as one batch whose every item carries the knowledge time it was
//! exported with (nothing is restamped): one transaction on the embedded store, the chunked
//! batches ingest uses on FalkorDB (a rerun of a killed restore completes it). Last, the
//! store is read back and compared with the file record by record.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::TransferError;
use super::export::records_in_parallel;
use super::format::{self, Counts, FORMAT, FORMAT_VERSION, Header, Record, Trailer};
use crate::correct::Plan;
use crate::learning::{CodeUnit, Skill};
use crate::model::{MAX_KEY_BYTES, Timestamp};
use crate::store::{
    ApplyReport, BatchItem, EpisodeDraft, FactDraft, KnowledgeTime, MemoryStore, StoreError,
    SupersedeDraft, WriteBatch,
};

/// Episodes handed to the store at a time.
const CHUNK: usize = 1_000;

#[derive(Clone, Copy, Debug, Default)]
pub struct RestoreOptions {
    /// Add to a store that is not empty, with ingest's rules.
    pub merge: bool,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct RestoreReport {
    pub file: String,
    pub counts: Counts,
    pub sha256: String,
    /// `restored`, `resumed` (a killed restore completed), `already_restored`, `merged`.
    pub outcome: &'static str,
    pub applied: ApplyReport,
    /// What built the vectors the file carries, if it carries any (see [`restore_vectors`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vectors: Option<super::format::VectorsInfo>,
}

/// A file read line by line: each line checked against its chain, the bytes between header
/// and trailer hashed.
struct Lines {
    file: String,
    reader: BufReader<File>,
    line: u64,
    chain: u64,
    sha: Sha256,
    raw: Vec<u8>,
    content: Vec<u8>,
}

impl Lines {
    fn open(path: &Path, file: &str) -> Result<Lines, TransferError> {
        let f = File::open(path).map_err(TransferError::io(path))?;
        Ok(Lines {
            file: file.to_string(),
            reader: BufReader::with_capacity(1 << 20, f),
            line: 0,
            chain: 0,
            sha: Sha256::new(),
            raw: Vec::with_capacity(4096),
            content: Vec::with_capacity(4096),
        })
    }

    fn refuse(&self, line: u64, message: impl Into<String>) -> TransferError {
        TransferError::Refused {
            file: self.file.clone(),
            line,
            message: message.into(),
        }
    }

    /// The next line's content (checked against its chain), or `None` at the end of the file.
    fn next_content(&mut self) -> Result<bool, TransferError> {
        self.raw.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.raw)
            .map_err(|e| self.refuse(self.line + 1, format!("cannot read: {e}")))?;
        if n == 0 {
            return Ok(false);
        }
        self.line += 1;
        if self.raw.last() != Some(&b'\n') {
            return Err(self.refuse(self.line, "the line has no newline: the file was cut short"));
        }
        let body = &self.raw[..self.raw.len() - 1];
        self.chain = format::unframe(body, self.chain, &mut self.content)
            .map_err(|m| self.refuse(self.line, m))?;
        Ok(true)
    }

    fn next_record(&mut self) -> Result<Option<Record>, TransferError> {
        if !self.next_content()? {
            return Ok(None);
        }
        let content = &self.content;
        let record = Record::parse(content).map_err(|e| {
            let kind = serde_json::from_slice::<serde_json::Value>(content)
                .ok()
                .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string));
            TransferError::Refused {
                file: self.file.clone(),
                line: self.line,
                message: match kind {
                    Some(k) => format!("not a valid {k:?} record: {e}"),
                    None => format!("not a record with a known \"kind\": {e}"),
                },
            }
        })?;
        if !matches!(record, Record::Header(_) | Record::Trailer(_)) {
            self.sha.update(&self.raw);
        }
        Ok(Some(record))
    }

    /// The header, checked first: a newer format is refused before its records are parsed.
    fn header(&mut self) -> Result<Header, TransferError> {
        if !self.next_content()? {
            return Err(self.refuse(1, "the file is empty; expected a strata-export header"));
        }
        let value: serde_json::Value = serde_json::from_slice(&self.content)
            .map_err(|e| self.refuse(1, format!("not JSON: {e}")))?;
        if value.get("kind").and_then(|k| k.as_str()) != Some("header")
            || value.get("format").and_then(|f| f.as_str()) != Some(FORMAT)
        {
            return Err(self.refuse(1, "expected a strata-export header"));
        }
        let version = value
            .get("format_version")
            .and_then(serde_json::Value::as_u64);
        match version {
            Some(v) if v > u64::from(FORMAT_VERSION) => {
                return Err(self.refuse(
                    1,
                    format!(
                        "format version {v} is newer than this Strata reads ({FORMAT_VERSION}); \
                         restore with the Strata that exported it, or a later one"
                    ),
                ));
            }
            Some(_) => {}
            None => return Err(self.refuse(1, "the header has no format_version")),
        }
        match serde_json::from_value(value) {
            Ok(Record::Header(h)) => Ok(h),
            Ok(_) => Err(self.refuse(1, "expected a header")),
            Err(e) => Err(self.refuse(1, format!("not a valid header: {e}"))),
        }
    }
}

/// What checking a file found: its header and trailer, and the records written with the
/// last chunk (few: code units, skill versions, and the versions and log of corrections).
pub struct Checked {
    pub header: Header,
    pub trailer: Trailer,
    pub code_units: Vec<(String, CodeUnit)>,
    pub skills: Vec<(u64, Skill)>,
    /// Every version of a corrected record and every correction, exactly as exported.
    pub versions: Plan,
    /// The line of the first version or correction, if the file has any.
    pub first_version_line: Option<u64>,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Section {
    CodeUnits,
    Episodes,
    Entities,
    Skills,
    Corrections,
}

fn section_of(record: &Record) -> Option<Section> {
    match record {
        Record::CodeUnit(_) => Some(Section::CodeUnits),
        Record::Episode(_)
        | Record::EpisodeVersion(_)
        | Record::Fact(_)
        | Record::FactVersion(_)
        | Record::Supersession(_)
        | Record::Review(_)
        | Record::Vector(_) => Some(Section::Episodes),
        Record::Entity(_) => Some(Section::Entities),
        Record::Skill(_) => Some(Section::Skills),
        Record::Correction(_) => Some(Section::Corrections),
        Record::Header(_) | Record::Trailer(_) => None,
    }
}

fn too_long(what: &str, value: &str) -> Option<String> {
    if value.is_empty() {
        Some(format!("{what} is empty"))
    } else if value.len() > MAX_KEY_BYTES {
        Some(format!(
            "{what} is {} bytes; expected at most {MAX_KEY_BYTES}",
            value.len()
        ))
    } else {
        None
    }
}

/// Reads the whole file and checks it: every line's chain, the grammar and order of the
/// records, each record's keys, the times against the header's `known_at`, the counts and
/// the SHA-256 in the trailer. Nothing is written.
pub fn check_file(path: &Path) -> Result<Checked, TransferError> {
    check_and_forward(path, None)
}

/// Records [`check_and_forward`] hands on as it checks them, with their line.
type Forward<'a> = dyn FnMut(u64, Record) -> Result<(), TransferError> + Send + 'a;

/// [`check_file`], handing each episode, fact and supersession to `forward` once it has
/// been checked (the rest is gathered in [`Checked`]).
fn check_and_forward(
    path: &Path,
    mut forward: Option<&mut Forward<'_>>,
) -> Result<Checked, TransferError> {
    let name = path.display().to_string();
    let mut lines = Lines::open(path, &name)?;
    let header = lines.header()?;
    let mut counts = Counts::default();
    let mut section = Section::CodeUnits;
    let mut last_unit: Option<String> = None;
    let mut episode: Option<(Timestamp, String)> = None;
    let mut last_fact: Option<(crate::model::Relation, crate::model::EntityKey)> = None;
    let mut last_lineage: Option<(String, crate::model::EntityKey)> = None;
    let mut last_entity: Option<crate::model::EntityKey> = None;
    let mut last_skill: Option<(String, u32)> = None;
    let mut code_units = Vec::new();
    let mut skills = Vec::new();
    // Within an episode: 0 its text versions, 1 its facts and theirs, 2 its supersessions and
    // their reviews, 3 its vector.
    let mut part = 0u8;
    let mut last_version: Option<Timestamp> = None;
    let mut versions = Plan::default();
    let mut first_version_line: Option<u64> = None;
    let known = |t: Timestamp| header.known_at.is_none_or(|k| t <= k);
    let trailer = loop {
        let Some(record) = lines.next_record()? else {
            return Err(lines.refuse(
                lines.line,
                format!(
                    "the file ends after {} lines without its trailer: it was cut short",
                    lines.line
                ),
            ));
        };
        let at = lines.line;
        let bad = |m: String| TransferError::Refused {
            file: name.clone(),
            line: at,
            message: m,
        };
        if let Record::Trailer(t) = record {
            break t;
        }
        let Some(here) = section_of(&record) else {
            return Err(bad("a second header".into()));
        };
        if here < section {
            return Err(bad(format!(
                "a {} record after the {:?} section: records are out of order",
                record.kind(),
                section
            )));
        }
        section = here;
        counts.add(&record);
        if matches!(
            record,
            Record::EpisodeVersion(_)
                | Record::FactVersion(_)
                | Record::Review(_)
                | Record::Correction(_)
        ) {
            first_version_line.get_or_insert(at);
        }
        // A version begins after the one before it (and the record itself), and is known at
        // the header's known_at.
        let next_version = |last: &mut Option<Timestamp>, from: Timestamp, first: Timestamp| {
            if from < first {
                return Err(bad(format!(
                    "a version known from {from}, before its record was known ({first})"
                )));
            }
            if last.is_some_and(|l| from <= l) {
                return Err(bad(format!(
                    "a version known from {from} is not after the one before it"
                )));
            }
            if !known(from) {
                return Err(bad(format!("{from} is after the header's known_at")));
            }
            *last = Some(from);
            Ok(())
        };
        match &record {
            Record::CodeUnit(u) => {
                if last_unit.as_ref().is_some_and(|l| *l >= u.embedding_ref) {
                    return Err(bad("code units are not in embedding_ref order".into()));
                }
                last_unit = Some(u.embedding_ref.clone());
                code_units.push((format!("{name}:{at}"), u.clone()));
            }
            Record::Episode(e) => {
                if let Some(m) = too_long("incident_fingerprint", &e.incident_fingerprint) {
                    return Err(bad(m));
                }
                if let Some(m) = crate::model::fingerprint_problem(&e.incident_fingerprint) {
                    return Err(bad(format!("incident_fingerprint {m}")));
                }
                let key = (e.ingested_at, e.incident_fingerprint.clone());
                if episode
                    .as_ref()
                    .is_some_and(|p| p.cmp(&key) != Ordering::Less)
                {
                    return Err(bad(
                        "episodes are not in (ingested_at, incident_fingerprint) order".into(),
                    ));
                }
                if !known(key.0) {
                    return Err(bad(format!(
                        "ingested_at {} is after the header's known_at",
                        key.0
                    )));
                }
                episode = Some(key);
                last_fact = None;
                last_lineage = None;
                part = 0;
                last_version = None;
            }
            Record::EpisodeVersion(v) => {
                let Some((at_ep, fp)) = &episode else {
                    return Err(bad("an episode_version before any episode".into()));
                };
                if v.incident_fingerprint != *fp || part != 0 {
                    return Err(bad(format!(
                        "an episode_version of {:?} is not right after episode {fp:?} (or its \
                         other versions)",
                        v.incident_fingerprint
                    )));
                }
                next_version(&mut last_version, v.known_from, *at_ep)?;
                versions.episode_versions.push((fp.clone(), v.version()));
            }
            Record::FactVersion(v) => {
                let (Some((at_ep, fp)), Some((relation, entity))) = (&episode, &last_fact) else {
                    return Err(bad("a fact_version before any fact".into()));
                };
                if part != 1 || v.episode != *fp || v.relation != *relation || v.entity != *entity {
                    return Err(bad(format!(
                        "a fact_version of {:?}'s {} fact about {} is not right after that fact \
                         (or its other versions)",
                        v.episode, v.relation, v.entity
                    )));
                }
                next_version(&mut last_version, v.known_from, *at_ep)?;
                versions.fact_versions.push((
                    crate::correct::FactRef {
                        episode: v.episode.clone(),
                        relation: v.relation,
                        entity: v.entity.clone(),
                    },
                    v.version(),
                ));
            }
            Record::Review(r) => {
                let (Some((at_ep, fp)), Some((prior, entity))) = (&episode, &last_lineage) else {
                    return Err(bad("a review before any supersession".into()));
                };
                if part != 2 || r.episode != *fp || r.prior != *prior || r.entity != *entity {
                    return Err(bad(format!(
                        "a review of {:?} superseding {:?} about {} is not right after that \
                         supersession (or its other reviews)",
                        r.episode, r.prior, r.entity
                    )));
                }
                next_version(&mut last_version, r.recorded_at, *at_ep)?;
                versions.reviews.push((
                    crate::correct::SupersessionRef {
                        episode: r.episode.clone(),
                        prior: r.prior.clone(),
                        entity_type: r.entity.entity_type.clone(),
                        entity_ref: r.entity.entity_ref.clone(),
                    },
                    r.review(),
                ));
            }
            Record::Vector(v) => {
                let Some((_, fp)) = &episode else {
                    return Err(bad("a vector before any episode".into()));
                };
                if v.incident_fingerprint != *fp || part == 3 {
                    return Err(bad(format!(
                        "a vector of {:?} is not the last record of episode {fp:?}",
                        v.incident_fingerprint
                    )));
                }
                let Some(info) = &header.vectors else {
                    return Err(bad(
                        "a vector, but the header names no vectors (model, dimension)".into(),
                    ));
                };
                v.decode(info.dimension).map_err(bad)?;
                part = 3;
            }
            Record::Correction(c) => {
                if c.sequence != counts.corrections {
                    return Err(bad(format!(
                        "correction {} where correction {} was expected: corrections are \
                         numbered from 1 in the order recorded",
                        c.sequence, counts.corrections
                    )));
                }
                if versions
                    .records
                    .last()
                    .is_some_and(|l| l.recorded_at > c.recorded_at)
                {
                    return Err(bad(format!(
                        "correction {} was recorded at {}, before the one before it",
                        c.sequence, c.recorded_at
                    )));
                }
                if !known(c.recorded_at) {
                    return Err(bad("recorded_at is after the header's known_at".into()));
                }
                versions.records.push(c.clone());
            }
            Record::Fact(f) => {
                let Some((at_ep, fp)) = &episode else {
                    return Err(bad("a fact before any episode".into()));
                };
                if f.episode != *fp {
                    return Err(bad(format!(
                        "a fact of {:?} under episode {fp:?}",
                        f.episode
                    )));
                }
                if f.ingested_at != *at_ep {
                    return Err(bad(format!(
                        "the fact's ingested_at {} is not its episode's {at_ep}",
                        f.ingested_at
                    )));
                }
                f.entity.validate().map_err(|e| bad(e.to_string()))?;
                let key = (f.relation, f.entity.clone());
                if last_fact.as_ref().is_some_and(|l| *l >= key) {
                    return Err(bad("facts are not in (relation, entity) order".into()));
                }
                if f.expired_at.is_some_and(|t| !known(t)) {
                    return Err(bad("expired_at is after the header's known_at".into()));
                }
                if part > 1 {
                    return Err(bad(
                        "a fact after its episode's supersessions or vector".into()
                    ));
                }
                part = 1;
                last_version = None;
                last_fact = Some(key);
            }
            Record::Supersession(s) => {
                let Some((at_ep, fp)) = &episode else {
                    return Err(bad("a supersession before any episode".into()));
                };
                if s.episode != *fp || s.ingested_at != *at_ep {
                    return Err(bad(format!(
                        "a supersession written by {:?} at {} under episode {fp:?} of {at_ep}",
                        s.episode, s.ingested_at
                    )));
                }
                s.entity.validate().map_err(|e| bad(e.to_string()))?;
                let key = (s.prior.clone(), s.entity.clone());
                if last_lineage.as_ref().is_some_and(|l| *l >= key) {
                    return Err(bad("supersessions are not in (prior, entity) order".into()));
                }
                if part > 2 {
                    return Err(bad("a supersession after its episode's vector".into()));
                }
                part = 2;
                last_version = None;
                last_lineage = Some(key);
            }
            Record::Entity(e) => {
                e.key.validate().map_err(|x| bad(x.to_string()))?;
                if last_entity.as_ref().is_some_and(|l| *l >= e.key) {
                    return Err(bad("entities are not in key order".into()));
                }
                if !known(e.ingested_at) {
                    return Err(bad("ingested_at is after the header's known_at".into()));
                }
                last_entity = Some(e.key.clone());
            }
            Record::Skill(s) => {
                if let Some(m) = too_long("skill name", &s.name) {
                    return Err(bad(m));
                }
                let key = (s.name.clone(), s.version);
                if last_skill.as_ref().is_some_and(|l| *l >= key) {
                    return Err(bad("skills are not in (name, version) order".into()));
                }
                if !known(s.recorded_at) {
                    return Err(bad("recorded_at is after the header's known_at".into()));
                }
                last_skill = Some(key);
                skills.push((at, s.clone()));
            }
            Record::Header(_) | Record::Trailer(_) => {}
        }
        if let Some(forward) = forward.as_mut()
            && matches!(
                record,
                Record::Episode(_) | Record::Fact(_) | Record::Supersession(_)
            )
        {
            forward(at, record)?;
        }
    };
    let at = lines.line;
    let refuse = |m: String| TransferError::Refused {
        file: name.clone(),
        line: at,
        message: m,
    };
    if lines.next_content()? {
        return Err(lines.refuse(lines.line, "a line after the trailer"));
    }
    if trailer.counts != counts {
        return Err(refuse(format!(
            "the trailer counts {:?}, the file holds {:?}: records were removed or added",
            trailer.counts, counts
        )));
    }
    if header.counts != counts {
        return Err(TransferError::Refused {
            file: name.clone(),
            line: 1,
            message: format!(
                "the header counts {:?}, the file holds {:?}",
                header.counts, counts
            ),
        });
    }
    let sha = format::sha256_hex(lines.sha.clone());
    if sha != trailer.sha256 {
        return Err(refuse(format!(
            "the records' SHA-256 is {sha}, the trailer says {}: the file was changed",
            trailer.sha256
        )));
    }
    Ok(Checked {
        header,
        trailer,
        code_units,
        skills,
        versions,
        first_version_line,
    })
}

/// The batch items a restore writes, built from the file's episodes, facts and
/// supersessions in file order, handed on chunk by chunk.
struct Items<'a> {
    origin: &'a str,
    chunk: Vec<BatchItem>,
    current: Option<BatchItem>,
}

impl<'a> Items<'a> {
    fn new(origin: &'a str) -> Self {
        Items {
            origin,
            chunk: Vec::with_capacity(CHUNK),
            current: None,
        }
    }

    /// Adds the record on `line` (other kinds are not items and are passed over).
    fn add(
        &mut self,
        line: u64,
        record: Record,
        sink: &mut dyn FnMut(Vec<BatchItem>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        match record {
            Record::Episode(e) => {
                if let Some(done) = self.current.take() {
                    self.chunk.push(done);
                    if self.chunk.len() == CHUNK {
                        sink(std::mem::replace(
                            &mut self.chunk,
                            Vec::with_capacity(CHUNK),
                        ))?;
                    }
                }
                self.current = Some(BatchItem {
                    origin: format!("{}:{line}", self.origin),
                    ingested_at: KnowledgeTime::At(e.ingested_at),
                    draft: EpisodeDraft {
                        incident_fingerprint: e.incident_fingerprint,
                        summary_nl: e.summary_nl,
                        resolution_nl: e.resolution_nl,
                        concluded_at: e.concluded_at,
                        t_valid: e.t_valid,
                        provenance: e.provenance,
                        facts: Vec::new(),
                        supersedes: Vec::new(),
                        skills: Vec::new(),
                    },
                });
            }
            Record::Fact(f) => {
                if let Some(item) = self.current.as_mut() {
                    item.draft.facts.push(FactDraft {
                        relation: f.relation,
                        entity: f.entity,
                        t_valid: f.t_valid,
                        // Closed by a supersession: the supersession closes it again.
                        t_invalid: if f.superseded_by.is_some() {
                            None
                        } else {
                            f.t_invalid
                        },
                    });
                }
            }
            Record::Supersession(s) => {
                if let Some(item) = self.current.as_mut() {
                    item.draft.supersedes.push(SupersedeDraft {
                        prior: s.prior,
                        entity: s.entity,
                        t_invalid: s.t_valid,
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(
        mut self,
        sink: &mut dyn FnMut(Vec<BatchItem>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.chunk.extend(self.current.take());
        if self.chunk.is_empty() {
            return Ok(());
        }
        sink(self.chunk)
    }
}

/// The file's episodes as the batch items that write them, chunk by chunk, each with the
/// knowledge time it was exported with. The file is checked again as it is read: one changed
/// since [`check_file`] stops the batch, which then writes nothing (on FalkorDB, nothing
/// more).
fn feed(
    path: &Path,
    origin: &str,
    expected: &Trailer,
    sink: &mut dyn FnMut(Vec<BatchItem>) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let changed = || StoreError::Changed {
        file: path.display().to_string(),
    };
    let mut lines = Lines::open(path, origin).map_err(|_| changed())?;
    lines.header().map_err(|_| changed())?;
    let mut items = Items::new(origin);
    loop {
        match lines.next_record().map_err(|_| changed())? {
            None => return Err(changed()),
            Some(Record::Trailer(t)) => {
                if *expected != t || format::sha256_hex(lines.sha.clone()) != t.sha256 {
                    return Err(changed());
                }
                break;
            }
            Some(record) => items.add(lines.line, record, sink)?,
        }
    }
    items.finish(sink)
}

/// The name a restore's batch is known by in the store (a FalkorDB restore's marker): the
/// file's absolute path, so that a rerun from another directory resumes it.
fn origin_of(path: &Path) -> String {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| PathBuf::from(path))
        .display()
        .to_string()
}

/// What the store already holds, or `None` when it is empty.
fn contents(store: &dyn MemoryStore) -> Result<Option<String>, TransferError> {
    let stats = store.stats()?;
    let skills = store.skills()?.len();
    let units = store.code_units()?.len();
    if stats.episodes + stats.entities == 0 && skills == 0 && units == 0 {
        return Ok(None);
    }
    Ok(Some(format!(
        "{} episodes, {} entities, {skills} skill versions, {units} code units",
        stats.episodes, stats.entities
    )))
}

/// Restores `path` into `store`. `progress` is told (episodes written, episodes in all).
pub fn restore(
    store: &dyn MemoryStore,
    path: &Path,
    options: RestoreOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<RestoreReport, TransferError> {
    let origin = origin_of(path);
    let held = contents(store)?;
    if held.is_none() && store.chunks_in_one_transaction() {
        return restore_checking_as_written(store, path, &origin, progress);
    }
    let checked = check_file(path)?;
    let mut outcome = "restored";
    if let Some(what) = held {
        if store.unfinished_batches()?.contains(&origin) {
            outcome = "resumed";
        } else if options.merge {
            outcome = "merged";
            let high = store_high_water(store)?;
            refuse_skills_before_high_water(store, path, &checked, high)?;
            refuse_corrections_into_corrected(store, path, &checked, high)?;
        } else if compare(store, path, &checked).is_ok() {
            return Ok(RestoreReport {
                file: path.display().to_string(),
                counts: checked.trailer.counts,
                sha256: checked.trailer.sha256.clone(),
                outcome: "already_restored",
                applied: ApplyReport::default(),
                vectors: checked.header.vectors.clone(),
            });
        } else {
            return Err(TransferError::NotEmpty {
                store: store.describe(),
                what,
            });
        }
    }
    let total = checked.header.counts.episodes;
    let mut fed = 0u64;
    let applied = store.apply_chunks(&mut || Ok(tail_of(&checked, &origin)), &mut |sink| {
        feed(path, &origin, &checked.trailer, &mut |chunk| {
            fed += chunk.len() as u64;
            sink(chunk)?;
            progress(fed, total);
            Ok(())
        })
    })?;
    if outcome != "merged" {
        compare(store, path, &checked)?;
    }
    Ok(RestoreReport {
        file: path.display().to_string(),
        counts: checked.trailer.counts,
        sha256: checked.trailer.sha256,
        outcome,
        applied,
        vectors: checked.header.vectors,
    })
}

/// What a restore writes with its last chunk: the records [`check_file`] gathered.
fn tail_of(checked: &Checked, origin: &str) -> WriteBatch {
    WriteBatch {
        items: Vec::new(),
        code_units: checked.code_units.clone(),
        skill_versions: checked
            .skills
            .iter()
            .map(|(line, s)| (format!("{origin}:{line}"), s.clone()))
            .collect(),
        restored_versions: checked.versions.clone(),
    }
}

/// A restore into an empty store that writes in one transaction: the file is read and
/// checked whole on another thread, which hands each checked episode on to be written here;
/// the transaction ends only once the whole file has passed, so a refused file still writes
/// nothing. Then the store is read back and compared with the file.
fn restore_checking_as_written(
    store: &dyn MemoryStore,
    path: &Path,
    origin: &str,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<RestoreReport, TransferError> {
    let name = path.display().to_string();
    // The header first: a file of a newer format is refused before anything else is read.
    let header = Lines::open(path, &name)?.header()?;
    let total = header.counts.episodes;
    let mut checked: Option<Checked> = None;
    let mut refused: Option<TransferError> = None;
    let writer_gone = &std::sync::atomic::AtomicBool::new(false);
    let applied = std::thread::scope(|scope| {
        let (batches, received) = std::sync::mpsc::sync_channel::<Vec<(u64, Record)>>(8);
        let mut checking = Some(scope.spawn(move || {
            let mut batch = Vec::with_capacity(HANDOFF);
            let stopped = || {
                writer_gone.store(true, std::sync::atomic::Ordering::Relaxed);
                TransferError::Export("the restore stopped writing".into())
            };
            let checked = check_and_forward(
                path,
                Some(&mut |line, record| {
                    batch.push((line, record));
                    if batch.len() == HANDOFF {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(HANDOFF));
                        batches.send(full).map_err(|_| stopped())?;
                    }
                    Ok(())
                }),
            )?;
            batches.send(batch).map_err(|_| stopped())?;
            Ok::<_, TransferError>(checked)
        }));
        let mut fed = 0u64;
        let result = store.apply_chunks(
            &mut || {
                let done = checking
                    .take()
                    .ok_or_else(|| StoreError::Internal("the tail was asked for twice".into()))?
                    .join()
                    .map_err(|_| StoreError::Internal("checking the file panicked".into()))?;
                match done {
                    Ok(c) => {
                        let tail = tail_of(&c, origin);
                        checked = Some(c);
                        Ok(tail)
                    }
                    Err(e) => {
                        let message = e.to_string();
                        refused = Some(e);
                        Err(StoreError::Internal(message))
                    }
                }
            },
            &mut |sink| {
                let mut items = Items::new(origin);
                let mut counted = |chunk: Vec<BatchItem>| {
                    fed += chunk.len() as u64;
                    sink(chunk)?;
                    progress(fed, total);
                    Ok(())
                };
                for batch in received.iter() {
                    for (line, record) in batch {
                        items.add(line, record, &mut counted)?;
                    }
                }
                items.finish(&mut counted)
            },
        );
        // The checking thread may be waiting to hand over more: it stops when nobody takes.
        drop(received);
        // Stopped before the check was asked for: its refusal, naming the line, is the cause
        // (unless it stopped only because the writing had).
        if result.is_err()
            && let Some(Ok(Err(e))) = checking.take().map(|h| h.join())
            && !writer_gone.load(std::sync::atomic::Ordering::Relaxed)
        {
            refused = Some(e);
        }
        result
    });
    if let Some(e) = refused {
        return Err(e);
    }
    let applied = applied?;
    let checked = checked.ok_or_else(|| {
        TransferError::Export("the restore ended without checking the file".into())
    })?;
    compare(store, path, &checked)?;
    Ok(RestoreReport {
        file: name,
        counts: checked.trailer.counts,
        sha256: checked.trailer.sha256,
        outcome: "restored",
        applied,
        vectors: checked.header.vectors,
    })
}

/// Checked records handed from the reading thread to the writing one at a time.
const HANDOFF: usize = 1_024;

/// A merge brings corrections only into a store that has none of its own (two logs of
/// corrections do not interleave), and none recorded before the latest knowledge time the
/// store holds: what memory knew then would change.
fn refuse_corrections_into_corrected(
    store: &dyn MemoryStore,
    path: &Path,
    checked: &Checked,
    high: Option<Timestamp>,
) -> Result<(), TransferError> {
    let Some(line) = checked.first_version_line else {
        return Ok(());
    };
    let refuse = |message: String| TransferError::Refused {
        file: path.display().to_string(),
        line,
        message,
    };
    let recorded = store.correction_count()?;
    if recorded > 0 {
        return Err(refuse(format!(
            "the file carries corrections and {} has {recorded} of its own; a merge cannot \
             interleave two logs of corrections (restore into an empty store)",
            store.describe()
        )));
    }
    let v = &checked.versions;
    let earliest = v
        .records
        .iter()
        .map(|c| c.recorded_at)
        .chain(v.episode_versions.iter().map(|(_, e)| e.known_from))
        .chain(v.fact_versions.iter().map(|(_, f)| f.known_from))
        .chain(v.reviews.iter().map(|(_, r)| r.recorded_at))
        .min();
    if let (Some(earliest), Some(high)) = (earliest, high)
        && earliest < high
    {
        return Err(refuse(format!(
            "the file's corrections begin at {earliest}, before {high}, the latest the store \
             has recorded; what memory knew then cannot be rewritten"
        )));
    }
    Ok(())
}

/// The latest knowledge time a store holds (of its episodes and skill versions).
fn store_high_water(store: &dyn MemoryStore) -> Result<Option<Timestamp>, TransferError> {
    let mut high: Option<Timestamp> = store.skills()?.iter().map(|s| s.recorded_at).max();
    let mut after = 0;
    loop {
        let page = store.episodes_since(after, 10_000)?;
        if page.episodes.is_empty() && page.last <= after {
            break;
        }
        for (_, e) in &page.episodes {
            high = high.max(Some(e.ingested_at));
        }
        after = page.last;
    }
    Ok(high)
}

/// A merge may not add a skill version recorded before the latest knowledge time the store
/// holds: what memory knew then would change.
fn refuse_skills_before_high_water(
    store: &dyn MemoryStore,
    path: &Path,
    checked: &Checked,
    high: Option<Timestamp>,
) -> Result<(), TransferError> {
    let stored = store.skills()?;
    let Some(high) = high else { return Ok(()) };
    for (line, skill) in &checked.skills {
        let present = stored.iter().any(|s| s == skill);
        if !present && skill.recorded_at < high {
            return Err(TransferError::Refused {
                file: path.display().to_string(),
                line: *line,
                message: format!(
                    "version {} of skill {:?} was recorded at {}, before {high}, the latest \
                     the store has recorded; what memory knew then cannot be rewritten",
                    skill.version, skill.name, skill.recorded_at
                ),
            });
        }
    }
    Ok(())
}

/// Reads the store back in the format's order and compares it with the file, record by
/// record: the first difference is named by the file's line. The store is read on this
/// thread while another encodes its records and compares them.
pub fn compare(
    store: &dyn MemoryStore,
    path: &Path,
    checked: &Checked,
) -> Result<(), TransferError> {
    let name = path.display().to_string();
    let mut lines = Lines::open(path, &name)?;
    lines.header()?;
    // The next line a store holds (vectors live in the vector index: see
    // [`restore_vectors`]), in `lines.content`; false at the trailer.
    let next_stored = |lines: &mut Lines| -> Result<bool, TransferError> {
        loop {
            if !lines.next_content()? {
                return Ok(false);
            }
            let content = &lines.content;
            if content.starts_with(br#"{"kind":"trailer""#) {
                return Ok(false);
            }
            if !content.starts_with(br#"{"kind":"vector""#) {
                return Ok(true);
            }
        }
    };
    let differs = |lines: &Lines, expected: String, found: String| TransferError::Differs {
        file: name.clone(),
        line: lines.line,
        expected,
        found,
    };
    records_in_parallel(
        store,
        checked.header.known_at,
        None,
        |records| {
            let mut got = Vec::with_capacity(4096);
            let mut found = 0u64;
            for record in records {
                found += 1;
                got.clear();
                record
                    .content_into(&mut got)
                    .map_err(|e| TransferError::Export(e.to_string()))?;
                if !next_stored(&mut lines)? {
                    return Err(differs(
                        &lines,
                        "no more records".into(),
                        String::from_utf8_lossy(&got).into_owned(),
                    ));
                }
                if lines.content != got {
                    return Err(differs(
                        &lines,
                        String::from_utf8_lossy(&lines.content).into_owned(),
                        String::from_utf8_lossy(&got).into_owned(),
                    ));
                }
            }
            if next_stored(&mut lines)? {
                return Err(differs(
                    &lines,
                    String::from_utf8_lossy(&lines.content).into_owned(),
                    format!("nothing more ({found} records)"),
                ));
            }
            Ok(())
        },
        &mut |_, _| {},
    )
}

/// What became of the vectors a file carries.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct VectorsRestored {
    /// Vectors written into the vector index as the file carries them.
    pub carried: u64,
    /// Why the file's vectors were not used (another model), if they were not.
    pub not_used: Option<String>,
}

/// Writes the vectors of the file `restored` came from into `vectors` (whose embedder is
/// `model` of `dimension`), each with its episode's times, without embedding anything. A
/// file of another model or dimension writes none and says why: the catch-up then embeds.
/// When every episode of `store` then has its vector, the index is marked caught up with
/// the store's log.
pub fn restore_vectors(
    store: &dyn MemoryStore,
    restored: &RestoreReport,
    vectors: &dyn crate::index::VectorStore,
    (model, dimension): (&str, usize),
) -> Result<VectorsRestored, TransferError> {
    use crate::index::vectors::VectorRow;
    let Some(info) = &restored.vectors else {
        return Ok(VectorsRestored::default());
    };
    let path = Path::new(&restored.file);
    if info.model != model || info.dimension != dimension {
        return Ok(VectorsRestored {
            carried: 0,
            not_used: Some(format!(
                "the file's vectors were built by {} ({} dimensions) and this store embeds with \
                 {model} ({dimension}): they are not used, and the episodes are embedded again",
                info.model, info.dimension
            )),
        });
    }
    let name = path.display().to_string();
    let index_err = |e: crate::index::IndexError| TransferError::Vectors(e.to_string());
    let mut lines = Lines::open(path, &name)?;
    lines.header()?;
    let watermark = vectors.watermark().map_err(index_err)?;
    let mut rows: Vec<VectorRow> = Vec::new();
    let mut episode: Option<crate::model::MemoryEpisode> = None;
    let mut carried = 0u64;
    let at_most = vectors.append_at_most().max(1);
    while let Some(record) = lines.next_record()? {
        match record {
            Record::Episode(e) => episode = Some(e),
            Record::Vector(v) => {
                let Some(e) = episode
                    .as_ref()
                    .filter(|e| e.incident_fingerprint == v.incident_fingerprint)
                else {
                    return Err(lines.refuse(lines.line, "a vector not after its episode"));
                };
                let vector = v
                    .decode(info.dimension)
                    .map_err(|m| lines.refuse(lines.line, m))?;
                rows.push(VectorRow {
                    fingerprint: v.incident_fingerprint,
                    ingested_at: e.ingested_at,
                    t_valid: e.t_valid,
                    concluded_at: e.concluded_at,
                    vector,
                });
                if rows.len() >= at_most {
                    vectors.append(&rows, watermark).map_err(index_err)?;
                    carried += rows.len() as u64;
                    rows.clear();
                }
            }
            Record::Trailer(_) => break,
            _ => {}
        }
    }
    if format::sha256_hex(lines.sha.clone()) != restored.sha256 {
        return Err(lines.refuse(lines.line, "the file changed while it was restored"));
    }
    carried += rows.len() as u64;
    vectors.append(&rows, watermark).map_err(index_err)?;
    // Caught up only if every episode of the store now has its vector; otherwise the next
    // catch-up reads the log and embeds just the ones missing.
    let total = store.episode_count()?;
    if vectors.count().map_err(index_err)? as u64 == total {
        vectors.append(&[], total).map_err(index_err)?;
    }
    Ok(VectorsRestored {
        carried,
        not_used: None,
    })
}
