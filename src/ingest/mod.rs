//! Reading incident records (NDJSON or a JSON array), validating them into drafts and
//! writing each file as one atomic batch.

mod batch;
mod error;
mod limits;
mod record;
pub(crate) use record::kind as json_kind;
pub mod schema;
mod source;
mod stream;

use std::path::Path;

use crate::store::{ApplyReport, KnowledgeTime, MemoryStore, StoreError, WriteBatch};

pub use batch::{BatchBuilder, Prepared};
pub use error::{IngestError, IngestFailure};
pub use limits::RecordLimits;
pub use record::{RECORD_FIELDS, parse_record, parse_record_within};
pub use source::{Location, RawRecord, RecordSyntaxError, split_records};
pub use stream::{Checked, check_file, write_file};

/// Reads and validates one file into a batch stamped with knowledge time `now` (a time, or
/// [`KnowledgeTime::AtCommit`]).
pub fn prepare_file(path: &Path, now: impl Into<KnowledgeTime>) -> Result<Prepared, IngestFailure> {
    prepare_file_within(path, now, &RecordLimits::default())
}

/// [`prepare_file`], refusing records past `limits`.
pub fn prepare_file_within(
    path: &Path,
    now: impl Into<KnowledgeTime>,
    limits: &RecordLimits,
) -> Result<Prepared, IngestFailure> {
    let now = now.into();
    let name = path.display().to_string();
    let mut builder = BatchBuilder::new();
    let mut errors = Vec::new();
    // Read once, front to back, so a pipe works; no record past the bound is held.
    stream::read_records(path, limits.max_record_bytes, &mut |raw| {
        let origin = raw.location.describe(&name);
        match raw.value {
            Ok(value) => add_record(&mut builder, origin, value, now, limits, &mut errors),
            Err(e) => errors.push(IngestError::new(origin, "-", e.to_string())),
        }
        Ok(())
    })?;
    finish(builder, errors)
}

/// Runs `each` on every record of `text` that is valid JSON, with its origin; unreadable
/// records and whatever `each` reports are collected as errors.
fn for_each_record(
    name: &str,
    text: &str,
    mut each: impl FnMut(String, serde_json::Value, &mut Vec<IngestError>),
) -> Vec<IngestError> {
    let mut errors = Vec::new();
    for raw in split_records(text) {
        let origin = raw.location.describe(name);
        match raw.value {
            Ok(value) => each(origin, value, &mut errors),
            Err(e) => errors.push(IngestError::new(origin, "-", e.to_string())),
        }
    }
    errors
}

fn located(
    origin: &str,
    field_errors: Vec<record::FieldError>,
) -> impl Iterator<Item = IngestError> {
    field_errors
        .into_iter()
        .map(move |f| IngestError::new(origin.to_string(), f.field, f.message))
}

/// Validates `text` (named `name` in errors) into a batch.
pub fn prepare_text(
    name: &str,
    text: &str,
    now: impl Into<KnowledgeTime>,
) -> Result<Prepared, IngestFailure> {
    prepare_text_within(name, text, now, &RecordLimits::default())
}

/// [`prepare_text`], refusing records past `limits`.
pub fn prepare_text_within(
    name: &str,
    text: &str,
    now: impl Into<KnowledgeTime>,
    limits: &RecordLimits,
) -> Result<Prepared, IngestFailure> {
    let now = now.into();
    let mut builder = BatchBuilder::new();
    let errors = for_each_record(name, text, |origin, value, errors| {
        add_record(&mut builder, origin, value, now, limits, errors);
    });
    finish(builder, errors)
}

/// One record of a file, validated into `builder` (an episode, or a record of code units);
/// what is wrong with it goes to `errors`.
fn add_record(
    builder: &mut BatchBuilder,
    origin: String,
    value: serde_json::Value,
    now: KnowledgeTime,
    limits: &RecordLimits,
    errors: &mut Vec<IngestError>,
) {
    if let Some(units) = record::code_units_record(&value, limits) {
        match units {
            Ok(units) => {
                for (field, unit) in units {
                    if let Err(e) = builder.push_code_unit(origin.clone(), field, unit) {
                        errors.push(e);
                    }
                }
            }
            Err(field_errors) => errors.extend(located(&origin, field_errors)),
        }
        return;
    }
    match parse_record_within(&value, limits) {
        Ok(draft) => {
            if let Err(e) = builder.push(origin, draft, now) {
                errors.push(e);
            }
        }
        Err(field_errors) => errors.extend(located(&origin, field_errors)),
    }
}

fn finish(builder: BatchBuilder, errors: Vec<IngestError>) -> Result<Prepared, IngestFailure> {
    if errors.is_empty() {
        Ok(builder.finish())
    } else {
        Err(IngestFailure::Invalid(errors))
    }
}

/// One incident record sent whole (the MCP server's `record_incident`), its code units
/// optionally beside it under `code_units`; validated and batched exactly like a file's
/// records, every error named by `origin` and field.
pub fn prepare_record(
    origin: &str,
    record: &serde_json::Map<String, serde_json::Value>,
    now: impl Into<KnowledgeTime>,
    limits: &RecordLimits,
) -> Result<Prepared, IngestFailure> {
    let now = now.into();
    let mut builder = BatchBuilder::new();
    let mut errors = Vec::new();
    let mut incident = record.clone();
    if let Some(units) = incident.remove("code_units") {
        let units = serde_json::json!({ "code_units": units });
        match record::code_units_record(&units, limits) {
            Some(Ok(units)) => {
                for (field, unit) in units {
                    if let Err(e) = builder.push_code_unit(origin.to_string(), field, unit) {
                        errors.push(e);
                    }
                }
            }
            Some(Err(field_errors)) => errors.extend(located(origin, field_errors)),
            None => {}
        }
    }
    match parse_record_within(&serde_json::Value::Object(incident), limits) {
        Ok(draft) => {
            if let Err(e) = builder.push(origin.to_string(), draft, now) {
                errors.push(e);
            }
        }
        Err(field_errors) => errors.extend(located(origin, field_errors)),
    }
    if errors.is_empty() {
        Ok(builder.finish())
    } else {
        Err(IngestFailure::Invalid(errors))
    }
}

/// Validates a skill file (NDJSON or a JSON array of skills, see docs/learning.md) into drafts;
/// any error rejects the whole file.
pub fn prepare_skills(
    name: &str,
    text: &str,
) -> Result<Vec<crate::learning::SkillDraft>, IngestFailure> {
    let mut drafts: Vec<crate::learning::SkillDraft> = Vec::new();
    let errors = for_each_record(name, text, |origin, value, errors| {
        let mut field_errors = Vec::new();
        let parsed = record::parse_skill(
            String::new(),
            &value,
            record::SKILL_FILE_FIELDS,
            &mut field_errors,
        );
        if !field_errors.is_empty() {
            errors.extend(located(&origin, field_errors));
        } else if let Some(d) = parsed {
            if drafts.iter().any(|o| o.name == d.name) {
                errors.push(IngestError::new(
                    origin,
                    "name",
                    format!(
                        "skill {:?} appears twice in the file; expected it once",
                        d.name
                    ),
                ));
            } else {
                drafts.push(d);
            }
        }
    });
    if errors.is_empty() {
        Ok(drafts)
    } else {
        Err(IngestFailure::Invalid(errors))
    }
}

/// Writes a prepared batch; a rejection names the record, field and reason.
pub fn write(store: &dyn MemoryStore, batch: &WriteBatch) -> Result<ApplyReport, IngestFailure> {
    store.apply(batch).map_err(rejection)
}

/// A store's refusal as an ingest error naming the record and field; other failures as such.
fn rejection(e: StoreError) -> IngestFailure {
    match e {
        StoreError::Rejected {
            origin,
            field,
            message,
        } => IngestFailure::Invalid(vec![IngestError::new(origin, field, message)]),
        other => IngestFailure::Store(other),
    }
}
