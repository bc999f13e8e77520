//! Files of any size: a file is read record by record twice, once to validate it whole and
//! once to write it, so memory follows the largest record and the chunk being written, never
//! the file. Each file is still one atomic batch: the write pass runs in one transaction and a
//! refusal anywhere in it writes nothing.

use std::collections::HashMap;
use std::fs::File;
use std::hash::{DefaultHasher, Hasher};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde::de::{SeqAccess, Visitor};
use serde_json::Value;

use super::batch::{BatchBuilder, conflicting_repeat};
use super::limits::RecordLimits;
use super::record::{self, parse_record_within};
use super::source::{Location, RawRecord, RecordSyntaxError};
use super::{IngestError, IngestFailure, located, rejection};
use crate::learning::CodeUnit;
use crate::store::{ApplyReport, BatchItem, KnowledgeTime, MemoryStore, StoreError, WriteBatch};

/// Records handed to the store at a time.
const CHUNK: usize = 1_000;

/// What the validating pass learned: enough to write the file without holding it.
pub struct Checked {
    /// Episode records, repeats included.
    pub records: usize,
    /// Records that repeated an earlier record of the file exactly.
    pub duplicates: usize,
    code_units: Vec<(String, CodeUnit)>,
    /// The first place each fingerprint appears; later exact repeats are skipped.
    first: HashMap<String, Location>,
    /// The bytes validated, so a file that changes before it is written is caught.
    digest: Digest,
}

impl Checked {
    /// Distinct episodes the file holds.
    pub fn episodes(&self) -> usize {
        self.first.len()
    }
}

/// Validates `path` record by record, as [`super::prepare_file`] does, keeping only a digest
/// of each episode (to tell exact repeats from conflicting ones) and the code units.
pub fn check_file(path: &Path, limits: &RecordLimits) -> Result<Checked, IngestFailure> {
    let name = path.display().to_string();
    let mut errors: Vec<IngestError> = Vec::new();
    let mut seen: HashMap<String, (Digest, Location)> = HashMap::new();
    // Code units are few and small: they are collected whole, as a prepared batch does.
    let mut units = BatchBuilder::new();
    let mut checked = Checked {
        records: 0,
        duplicates: 0,
        code_units: Vec::new(),
        first: HashMap::new(),
        digest: Digest::default(),
    };
    let digest = read_records(path, limits.max_record_bytes, &mut |raw| {
        let origin = raw.location.describe(&name);
        let value = match raw.value {
            Ok(v) => v,
            Err(e) => {
                errors.push(IngestError::new(origin, "-", e.to_string()));
                return Ok(());
            }
        };
        if let Some(record_units) = record::code_units_record(&value, limits) {
            match record_units {
                Ok(record_units) => {
                    for (field, unit) in record_units {
                        if let Err(e) = units.push_code_unit(origin.clone(), field, unit) {
                            errors.push(e);
                        }
                    }
                }
                Err(field_errors) => errors.extend(located(&origin, field_errors)),
            }
            return Ok(());
        }
        checked.records += 1;
        match parse_record_within(&value, limits) {
            Ok(draft) => {
                let digest = digest_of(&draft);
                match seen.get(&draft.incident_fingerprint) {
                    Some((d, _)) if *d == digest => checked.duplicates += 1,
                    Some((_, at)) => errors.push(conflicting_repeat(
                        origin,
                        &draft.incident_fingerprint,
                        &at.describe(&name),
                    )),
                    None => {
                        seen.insert(draft.incident_fingerprint, (digest, raw.location));
                    }
                }
            }
            Err(field_errors) => errors.extend(located(&origin, field_errors)),
        }
        Ok(())
    })?;
    let units = units.finish();
    checked.code_units = units.batch.code_units;
    checked.duplicates += units.duplicates;
    checked.digest = digest;
    if !errors.is_empty() {
        return Err(IngestFailure::Invalid(errors));
    }
    checked.first = seen.into_iter().map(|(fp, (_, at))| (fp, at)).collect();
    Ok(checked)
}

/// Writes a file [`check_file`] passed, reading it again chunk by chunk into one atomic batch
/// stamped `now`. A file that changed since it was checked writes nothing.
pub fn write_file(
    store: &dyn MemoryStore,
    path: &Path,
    checked: &Checked,
    now: impl Into<KnowledgeTime>,
    limits: &RecordLimits,
) -> Result<ApplyReport, IngestFailure> {
    let now = now.into();
    let name = path.display().to_string();
    let mut source = |sink: &mut dyn FnMut(Vec<BatchItem>) -> Result<(), StoreError>| {
        let mut chunk: Vec<BatchItem> = Vec::with_capacity(CHUNK);
        let mut failed: Option<StoreError> = None;
        // Once something failed the rest of the file is not read: returning an error stops
        // the reading, and `failed` says why.
        let stop = || IngestFailure::Io {
            path: name.clone(),
            message: "stopped".into(),
        };
        let read = read_records(path, limits.max_record_bytes, &mut |raw| {
            let Ok(value) = raw.value else {
                failed = Some(changed(&name));
                return Err(stop());
            };
            if record::code_units_record(&value, limits).is_some() {
                return Ok(());
            }
            let Ok(draft) = parse_record_within(&value, limits) else {
                failed = Some(changed(&name));
                return Err(stop());
            };
            if checked.first.get(&draft.incident_fingerprint) != Some(&raw.location) {
                return Ok(());
            }
            chunk.push(BatchItem {
                origin: raw.location.describe(&name),
                draft,
                ingested_at: now,
            });
            if chunk.len() == CHUNK
                && let Err(e) = sink(std::mem::take(&mut chunk))
            {
                failed = Some(e);
                return Err(stop());
            }
            Ok(())
        });
        if let Some(e) = failed {
            return Err(e);
        }
        let digest = read.map_err(|e| match e {
            IngestFailure::Store(e) => e,
            IngestFailure::Io { path, message } => StoreError::Read {
                file: path,
                source: std::io::Error::other(message),
            },
            IngestFailure::Invalid(_) => changed(&name),
        })?;
        if digest != checked.digest {
            return Err(changed(&name));
        }
        if !chunk.is_empty() {
            sink(chunk)?;
        }
        Ok(())
    };
    let tail = WriteBatch {
        code_units: checked.code_units.clone(),
        ..WriteBatch::default()
    };
    store
        .apply_chunks(&mut || Ok(tail.clone()), &mut source)
        .map_err(rejection)
}

fn changed(name: &str) -> StoreError {
    StoreError::Changed {
        file: name.to_string(),
    }
}

/// 128 bits from two SipHash states (the second fed a prefix byte first): exact repeats and
/// file changes are told by it. Not a cryptographic hash: a file is trusted not to be crafted
/// to collide with itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Digest(u64, u64);

/// Two hashers fed the same bytes, the second after a key byte of its own.
struct Hashers(DefaultHasher, DefaultHasher);

impl Hashers {
    fn new() -> Self {
        let mut second = DefaultHasher::new();
        second.write_u8(0xa5);
        Hashers(DefaultHasher::new(), second)
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
        self.1.write(bytes);
    }

    fn finish(&self) -> Digest {
        Digest(self.0.finish(), self.1.finish())
    }
}

fn digest_of(draft: &crate::store::EpisodeDraft) -> Digest {
    let mut h = Hashers::new();
    match serde_json::to_vec(draft) {
        Ok(bytes) => h.write(&bytes),
        // A draft always serializes; were it not to, its full debug form still tells it apart.
        Err(_) => h.write(format!("{draft:?}").as_bytes()),
    }
    h.finish()
}

/// Reads the bytes it passes on into a digest, and counts them against the bound on one
/// record: the count starts again at each record, and a read past the bound fails.
struct Digesting<R> {
    inner: R,
    hashers: Hashers,
    /// Bytes read since the current record began, shared with whoever marks where records
    /// begin; `None`: not counted (NDJSON lines are bounded as they are read).
    record: Option<std::rc::Rc<std::cell::Cell<usize>>>,
    limit: usize,
}

impl<R: Read> Read for Digesting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(record) = &self.record
            && record.get() > self.limit
        {
            return Err(std::io::Error::other(TooLongRecord));
        }
        let n = self.inner.read(buf)?;
        self.hashers.write(&buf[..n]);
        if let Some(record) = &self.record {
            record.set(record.get().saturating_add(n));
        }
        Ok(n)
    }
}

/// The error a bounded read fails with, told apart from other I/O errors by its type.
#[derive(Debug)]
struct TooLongRecord;

impl std::fmt::Display for TooLongRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a record longer than the bound on one record")
    }
}

impl std::error::Error for TooLongRecord {}

/// Hands each record of the file to `each`, in order, and returns a digest of its bytes: a
/// file whose first non-blank character is `[` is one JSON array, read element by element;
/// anything else is NDJSON, read line by line. The file is read once, front to back (a pipe
/// works as well as a file), and no record longer than `limit` bytes is held in memory: it is
/// refused as soon as it passes the bound.
pub(super) fn read_records(
    path: &Path,
    limit: usize,
    each: &mut dyn FnMut(RawRecord) -> Result<(), IngestFailure>,
) -> Result<Digest, IngestFailure> {
    let io = |e: std::io::Error| IngestFailure::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let file = File::open(path).map_err(io)?;
    let record = std::rc::Rc::new(std::cell::Cell::new(0usize));
    let mut reader = BufReader::with_capacity(
        1 << 16,
        Digesting {
            inner: file,
            hashers: Hashers::new(),
            record: None,
            limit,
        },
    );
    let (blank_lines, array) = skip_to_first_record(&mut reader).map_err(io)?;
    if array {
        reader.get_mut().record = Some(record.clone());
        let mut failure = None;
        let mut index = 0usize;
        let outcome = {
            let mut de = serde_json::Deserializer::from_reader(&mut reader);
            serde::Deserializer::deserialize_seq(
                &mut de,
                Elements {
                    each: &mut *each,
                    failure: &mut failure,
                    record: &record,
                    index: &mut index,
                },
            )
            .and_then(|_| de.end())
        };
        if let Some(f) = failure {
            return Err(f);
        }
        if let Err(e) = outcome {
            let too_long = e.is_io() && record.get() > limit;
            each(RawRecord {
                location: if too_long {
                    Location::Index(index)
                } else {
                    Location::LineColumn(e.line() + blank_lines, e.column())
                },
                value: Err(if too_long {
                    RecordSyntaxError::TooLong { limit }
                } else {
                    RecordSyntaxError::Array(e)
                }),
            })?;
        }
        reader.get_mut().record = None;
    } else {
        let mut line = Vec::new();
        let mut number = blank_lines;
        loop {
            let (read, whole) = read_line_within(&mut reader, &mut line, limit).map_err(io)?;
            if read == 0 {
                break;
            }
            number += 1;
            if !whole {
                each(RawRecord {
                    location: Location::Line(number),
                    value: Err(RecordSyntaxError::TooLong { limit }),
                })?;
                continue;
            }
            let value = match std::str::from_utf8(&line) {
                Ok(text) => {
                    let text = text.strip_suffix('\n').unwrap_or(text);
                    let text = text.strip_suffix('\r').unwrap_or(text);
                    if text.trim().is_empty() {
                        continue;
                    }
                    serde_json::from_str::<Value>(text).map_err(RecordSyntaxError::Line)
                }
                Err(e) => Err(RecordSyntaxError::NotUtf8(e)),
            };
            each(RawRecord {
                location: Location::Line(number),
                value,
            })?;
        }
    }
    // The rest of the file (after an array, or a syntax error) counts toward the digest too.
    std::io::copy(&mut reader, &mut std::io::sink()).map_err(io)?;
    Ok(reader.into_inner().hashers.finish())
}

/// One line into `line`, newline included: `(bytes read, true)`, or, for a line longer than
/// `limit`, `(bytes read, false)` with the line read to its end but not kept. `(0, _)` at the
/// end of the input.
fn read_line_within(
    reader: &mut impl BufRead,
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<(usize, bool)> {
    line.clear();
    let mut read = 0usize;
    let mut whole = true;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((read, whole));
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if whole && line.len() + take > limit.saturating_add(2) {
            // Past the bound (the newline and a carriage return aside): let go of what was
            // kept and read on to the end of the line.
            whole = false;
            line.clear();
            line.shrink_to(1 << 16);
        }
        if whole {
            line.extend_from_slice(&buf[..take]);
        }
        reader.consume(take);
        read += take;
        if done {
            return Ok((read, whole));
        }
    }
}

/// Skips a leading byte-order mark and the blank lines before the first record, without
/// reading past it: how many line breaks were skipped, and whether the first non-blank
/// character is `[` (a JSON array).
fn skip_to_first_record(reader: &mut impl BufRead) -> std::io::Result<(usize, bool)> {
    if reader.fill_buf()?.starts_with("\u{feff}".as_bytes()) {
        reader.consume(3);
    }
    let mut lines = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((lines, false));
        }
        let Some(first) = buf.iter().position(|b| !b.is_ascii_whitespace()) else {
            lines += buf.iter().filter(|&&b| b == b'\n').count();
            let n = buf.len();
            reader.consume(n);
            continue;
        };
        let blank = buf[..first]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        lines += buf[..blank].iter().filter(|&&b| b == b'\n').count();
        let array = buf[first] == b'[';
        reader.consume(blank);
        return Ok((lines, array));
    }
}

/// Hands each element of a JSON array to `each` as it is parsed, starting the count of each
/// element's bytes afresh (see [`Digesting`]).
struct Elements<'a> {
    each: &'a mut dyn FnMut(RawRecord) -> Result<(), IngestFailure>,
    failure: &'a mut Option<IngestFailure>,
    record: &'a std::cell::Cell<usize>,
    /// The element being read.
    index: &'a mut usize,
}

impl<'de> Visitor<'de> for Elements<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array of records")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.record.set(0);
        while let Some(value) = seq.next_element::<Value>()? {
            if let Err(e) = (self.each)(RawRecord {
                location: Location::Index(*self.index),
                value: Ok(value),
            }) {
                *self.failure = Some(e);
                return Err(serde::de::Error::custom("stopped"));
            }
            *self.index += 1;
            self.record.set(0);
        }
        Ok(())
    }
}
