use std::fmt;

use crate::store::StoreError;

/// One problem with one record: `file:line: field: what was expected`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IngestError {
    pub origin: String,
    pub field: String,
    pub message: String,
}

impl IngestError {
    pub fn new(
        origin: impl Into<String>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        IngestError {
            origin: origin.into(),
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for IngestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field == "-" {
            write!(f, "{}: {}", self.origin, self.message)
        } else {
            write!(f, "{}: {}: {}", self.origin, self.field, self.message)
        }
    }
}

/// Why a file was not written. In every case nothing of it was written.
#[derive(Debug, thiserror::Error)]
pub enum IngestFailure {
    #[error("{}", render(.0))]
    Invalid(Vec<IngestError>),
    #[error("cannot read {path}: {message}")]
    Io { path: String, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn render(errors: &[IngestError]) -> String {
    let mut out = String::new();
    for (i, e) in errors.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&e.to_string());
    }
    out
}
