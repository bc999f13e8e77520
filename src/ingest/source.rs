use serde_json::Value;

/// Where a record sits in its file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// 1-based line of an NDJSON file.
    Line(usize),
    /// 0-based index into a JSON array.
    Index(usize),
    /// A syntax error in a JSON array file.
    LineColumn(usize, usize),
}

impl Location {
    pub fn describe(&self, file: &str) -> String {
        match self {
            Location::Line(n) => format!("{file}:{n}"),
            Location::Index(i) => format!("{file}[{i}]"),
            Location::LineColumn(l, c) => format!("{file}:{l}:{c}"),
        }
    }
}

/// A record that is not JSON of the expected shape.
#[derive(Debug, thiserror::Error)]
pub enum RecordSyntaxError {
    #[error("invalid JSON: expected an array of records ({0})")]
    Array(serde_json::Error),
    #[error("invalid JSON: expected one record object per line ({0})")]
    Line(serde_json::Error),
    #[error("not UTF-8 ({0}); expected UTF-8 text")]
    NotUtf8(std::str::Utf8Error),
    /// Refused as soon as it passed the bound, the rest of it skipped unread into memory.
    #[error(
        "the record is longer than {limit} bytes, the bound on one record ([ingest] \
         max_record_bytes in the config file); expected one record per line"
    )]
    TooLong { limit: usize },
}

pub struct RawRecord {
    pub location: Location,
    pub value: Result<Value, RecordSyntaxError>,
}

/// A file whose first non-blank character is `[` is one JSON array; anything else is NDJSON.
pub fn split_records(text: &str) -> Vec<RawRecord> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim_start().starts_with('[') {
        return match serde_json::from_str::<Vec<Value>>(text) {
            Ok(values) => values
                .into_iter()
                .enumerate()
                .map(|(i, v)| RawRecord {
                    location: Location::Index(i),
                    value: Ok(v),
                })
                .collect(),
            Err(e) => vec![RawRecord {
                location: Location::LineColumn(e.line(), e.column()),
                value: Err(RecordSyntaxError::Array(e)),
            }],
        };
    }
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| RawRecord {
            location: Location::Line(i + 1),
            value: serde_json::from_str::<Value>(line).map_err(RecordSyntaxError::Line),
        })
        .collect()
}
