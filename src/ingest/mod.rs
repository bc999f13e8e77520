//! Reading incident records (NDJSON or a JSON array), validating them into drafts and
//! writing each file as one atomic batch.

mod batch;
mod error;
mod record;
mod source;

use std::path::Path;

use crate::model::Timestamp;
use crate::store::{ApplyReport, MemoryStore, StoreError, WriteBatch};

pub use batch::{BatchBuilder, Prepared};
pub use error::{IngestError, IngestFailure};
pub use record::{RECORD_FIELDS, parse_record};
pub use source::{Location, RawRecord, split_records};

/// Reads and validates one file into a batch stamped with knowledge time `now`.
pub fn prepare_file(path: &Path, now: Timestamp) -> Result<Prepared, IngestFailure> {
    let text = std::fs::read_to_string(path).map_err(|e| IngestFailure::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    prepare_text(&path.display().to_string(), &text, now)
}

/// Validates `text` (named `name` in errors) into a batch.
pub fn prepare_text(name: &str, text: &str, now: Timestamp) -> Result<Prepared, IngestFailure> {
    let mut builder = BatchBuilder::new();
    let mut errors = Vec::new();
    for raw in split_records(text) {
        let origin = raw.location.describe(name);
        let value = match raw.value {
            Ok(v) => v,
            Err(message) => {
                errors.push(IngestError::new(origin, "-", message));
                continue;
            }
        };
        match parse_record(&value) {
            Ok(draft) => {
                if let Err(e) = builder.push(origin, draft, now) {
                    errors.push(e);
                }
            }
            Err(field_errors) => errors.extend(
                field_errors
                    .into_iter()
                    .map(|f| IngestError::new(origin.clone(), f.field, f.message)),
            ),
        }
    }
    if errors.is_empty() {
        Ok(builder.finish())
    } else {
        Err(IngestFailure::Invalid(errors))
    }
}

/// Writes a prepared batch; a rejection names the record, field and reason.
pub fn write(store: &dyn MemoryStore, batch: &WriteBatch) -> Result<ApplyReport, IngestFailure> {
    store.apply(batch).map_err(|e| match e {
        StoreError::Rejected {
            origin,
            field,
            message,
        } => IngestFailure::Invalid(vec![IngestError::new(origin, field, message)]),
        other => IngestFailure::Store(other),
    })
}
