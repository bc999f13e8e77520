//! The structured public cloud postmortems (Azure, Google Cloud, AWS) of the
//! IntelligentDDS study: each file maps an id to a record with `title`, `time` (MM/DD/YYYY),
//! `summary`, `details`, `service_name`, `root cause` and `mitigation`.
//! Services, the provider and root-cause labels become mentioned entities; mitigation
//! labels become resolving entities.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono::{NaiveDate, TimeZone, Utc};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::ingest::{self, BatchBuilder, IngestFailure};
use crate::model::Timestamp;
use crate::store::KnowledgeTime;
use crate::store::{ApplyReport, MemoryStore, WriteBatch};

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub file: String,
    pub id: String,
    pub reason: String,
}

#[derive(Debug, Default)]
pub struct Converted {
    pub batch: WriteBatch,
    pub files: usize,
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, Serialize)]
pub struct ImportReport {
    pub files: usize,
    pub records_seen: usize,
    #[serde(flatten)]
    pub applied: ApplyReport,
    pub skipped: Vec<Skipped>,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {path}: {message}")]
    Io { path: PathBuf, message: String },
    #[error("{path} holds no postmortem JSON files")]
    Empty { path: PathBuf },
    #[error(transparent)]
    Write(#[from] IngestFailure),
}

/// When the store is said to have learned of each postmortem.
#[derive(Clone, Copy, Debug)]
pub enum LearnedAt {
    /// All at once, as the import is written (an import today).
    Import(KnowledgeTime),
    /// Each this many milliseconds after its incident concluded (replaying history).
    AfterConclusion(i64),
}

impl LearnedAt {
    fn of(self, concluded_at: Timestamp) -> KnowledgeTime {
        match self {
            LearnedAt::Import(k) => k,
            LearnedAt::AfterConclusion(ms) => KnowledgeTime::At(concluded_at.plus_millis(ms)),
        }
    }
}

/// Converts every `*.json` under `dir` (sorted, so the result is deterministic).
pub fn convert_dir(dir: &Path, known: LearnedAt) -> Result<Converted, ImportError> {
    let mut files = Vec::new();
    collect_json(dir, &mut files)?;
    files.sort();
    if files.is_empty() {
        return Err(ImportError::Empty {
            path: dir.to_path_buf(),
        });
    }
    let mut builder = BatchBuilder::new();
    let mut converted = Converted {
        files: files.len(),
        ..Converted::default()
    };
    for path in &files {
        let name = path.display().to_string();
        let skip = |id: &str, reason: String| Skipped {
            file: name.clone(),
            id: id.to_string(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| ImportError::Io {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let records: BTreeMap<String, Value> = match serde_json::from_str(&text) {
            Ok(r) => r,
            Err(e) => {
                converted
                    .skipped
                    .push(skip("*", format!("not an object of postmortems: {e}")));
                continue;
            }
        };
        for (id, record) in records {
            let value = match to_record(&id, &record, provider_of(path, &id)) {
                Ok(v) => v,
                Err(reason) => {
                    converted.skipped.push(skip(&id, reason.to_string()));
                    continue;
                }
            };
            match ingest::parse_record(&value) {
                Ok(draft) => {
                    let ingested_at = known.of(draft.concluded_at);
                    if let Err(e) = builder.push(format!("{name}#{id}"), draft, ingested_at) {
                        converted.skipped.push(skip(&id, e.message));
                    }
                }
                Err(fields) => {
                    let reason = fields
                        .iter()
                        .map(|f| format!("{}: {}", f.field, f.message))
                        .collect::<Vec<_>>()
                        .join("; ");
                    converted.skipped.push(skip(&id, reason));
                }
            }
        }
    }
    converted.batch = builder.finish().batch;
    Ok(converted)
}

/// Converts and writes the directory as one batch.
pub fn import_dir(
    store: &dyn MemoryStore,
    dir: &Path,
    now: impl Into<KnowledgeTime>,
) -> Result<ImportReport, ImportError> {
    let converted = convert_dir(dir, LearnedAt::Import(now.into()))?;
    let records_seen = converted.batch.items.len() + converted.skipped.len();
    let applied = ingest::write(store, &converted.batch)?;
    Ok(ImportReport {
        files: converted.files,
        records_seen,
        applied,
        skipped: converted.skipped,
    })
}

fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ImportError> {
    let entries = std::fs::read_dir(dir).map_err(|e| ImportError::Io {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    for entry in entries {
        let path = entry
            .map_err(|e| ImportError::Io {
                path: dir.to_path_buf(),
                message: e.to_string(),
            })?
            .path();
        if path.is_dir() {
            collect_json(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

fn provider_of(path: &Path, id: &str) -> String {
    let from_id = id.split(['-', '_']).next().unwrap_or("").to_lowercase();
    if !from_id.is_empty() && from_id.chars().all(|c| c.is_ascii_alphabetic()) {
        return from_id;
    }
    path.parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_else(|| "unknown".into())
}

/// The first of several spellings that is present.
fn field<'a>(record: &'a Map<String, Value>, names: &[&str]) -> Option<&'a Value> {
    names
        .iter()
        .find_map(|n| record.get(*n))
        .filter(|v| !v.is_null())
}

fn text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => clean(s),
        Some(Value::Object(o)) => text(o.get("details")),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| text(Some(v)))
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// Collapses whitespace and drops NUL and zero-width marks the vendor pages carry.
fn clean(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c == '\0' || c == '\u{200e}' || c == '\u{200b}')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn labels(value: Option<&Value>) -> Vec<String> {
    let Some(Value::Object(o)) = value else {
        return Vec::new();
    };
    match o.get("label") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) => Some(clean(s)),
                Value::Object(layers) => {
                    let mut keys: Vec<_> = layers.keys().collect();
                    keys.sort();
                    let path: Vec<String> = keys
                        .into_iter()
                        .filter_map(|k| layers.get(k).and_then(Value::as_str).map(clean))
                        .filter(|s| !s.is_empty())
                        .collect();
                    Some(path.join("/"))
                }
                _ => None,
            })
            .filter(|s| !s.is_empty())
            .collect(),
        Some(Value::String(s)) => vec![clean(s)],
        _ => Vec::new(),
    }
}

fn services(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(clean).collect(),
        Some(Value::String(s)) => s.split(',').map(clean).collect(),
        _ => Vec::new(),
    }
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect()
}

/// Why a postmortem cannot be an ingest record.
#[derive(Debug, thiserror::Error)]
enum Unusable {
    #[error("expected an object")]
    NotAnObject,
    #[error("no title or summary")]
    Untitled,
    #[error("time: missing; expected MM/DD/YYYY")]
    NoDate,
    #[error("time: expected MM/DD/YYYY, got {0:?}")]
    BadDate(String),
}

fn parse_date(value: Option<&Value>) -> Result<Timestamp, Unusable> {
    let raw = value.and_then(Value::as_str).ok_or(Unusable::NoDate)?;
    let date = NaiveDate::parse_from_str(raw.trim(), "%m/%d/%Y")
        .map_err(|_| Unusable::BadDate(raw.to_string()))?;
    Ok(Timestamp::from_datetime(
        Utc.from_utc_datetime(&date.and_time(chrono::NaiveTime::MIN)),
    ))
}

/// One postmortem as an ingest record, or why it cannot be one.
fn to_record(id: &str, record: &Value, provider: String) -> Result<Value, Unusable> {
    let Value::Object(r) = record else {
        return Err(Unusable::NotAnObject);
    };
    let title = text(field(r, &["title"]));
    let summary = text(field(r, &["summary"]));
    if title.is_empty() && summary.is_empty() {
        return Err(Unusable::Untitled);
    }
    let start = parse_date(field(r, &["time", "date"]))?;
    let minutes = field(r, &["duration"])
        .and_then(Value::as_f64)
        .filter(|m| m.is_finite() && *m > 0.0)
        .unwrap_or(0.0);
    let concluded = start.plus_millis((minutes * 60_000.0) as i64);
    let root_cause = field(r, &["root cause", "root_cause"]);
    let mitigation = field(r, &["mitigation"]);
    let summary_nl = match (title.is_empty(), summary.is_empty()) {
        (false, false) => format!("{title}. {summary}"),
        (false, true) => title,
        _ => summary,
    };
    let cause_text = text(root_cause);
    let fix_text = text(mitigation);
    let resolution_nl = [("Root cause: ", cause_text), ("Mitigation: ", fix_text)]
        .into_iter()
        .filter(|(_, t)| !t.is_empty())
        .map(|(label, t)| format!("{label}{t}"))
        .collect::<Vec<_>>()
        .join(" ");

    let mut mentions = vec![json!({"entity_type": "provider", "entity_ref": &provider})];
    for s in services(field(r, &["service_name", "service name", "services"])) {
        mentions.push(json!({"entity_type": "service", "entity_ref": s}));
    }
    for l in labels(root_cause) {
        mentions.push(json!({"entity_type": "root_cause", "entity_ref": l}));
    }
    let resolved_by: Vec<Value> = labels(mitigation)
        .into_iter()
        .map(|l| json!({"entity_type": "mitigation", "entity_ref": l}))
        .collect();
    Ok(json!({
        "incident_fingerprint": id,
        "summary_nl": summary_nl,
        "resolution_nl": resolution_nl,
        "concluded_at": concluded.to_rfc3339(),
        "t_valid": start.to_rfc3339(),
        "mentions": mentions,
        "resolved_by": resolved_by,
        "provenance": {"source": format!("public-postmortem:{provider}"), "status": "concluded", "confidence_score": 1.0}
    }))
}
