//! The NDJSON of `strata correct`: one correction a line, every error located as ingest
//! locates its own (`file:line: field: what was expected`).

use crate::ingest::json_kind;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{Correction, CorrectionItem, CorrectionLine};
use crate::ingest::IngestError;
use crate::model::{EntityKey, MAX_KEY_BYTES};

/// The most bytes a reason, a reviewer's name or a corrected text may hold.
const MAX_TEXT_BYTES: usize = 64 * 1024;

/// Every correction of the file, or every error in it.
pub fn parse_file(path: &Path) -> Result<Vec<CorrectionItem>, Vec<IngestError>> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![IngestError::new(&name, "-", format!("cannot read it: {e}"))])?;
    parse_text(&name, &text)
}

/// Every correction of an NDJSON text named `name`, or every error in it; blank lines are
/// skipped, an empty text is refused.
pub fn parse_text(name: &str, text: &str) -> Result<Vec<CorrectionItem>, Vec<IngestError>> {
    let mut items = Vec::new();
    let mut errors = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let origin = format!("{name}:{}", i + 1);
        match serde_json::from_str::<Value>(line) {
            Ok(value) => match parse_line(&origin, value) {
                Ok(line) => items.push(CorrectionItem { origin, line }),
                Err(e) => errors.push(e),
            },
            Err(e) => errors.push(IngestError::new(
                origin,
                "-",
                format!("not JSON ({e}): expected one correction object per line"),
            )),
        }
    }
    if items.is_empty() && errors.is_empty() {
        errors.push(IngestError::new(
            name,
            "-",
            format!("no corrections: expected one JSON object per line, with one of {}, and reason and by", Correction::KINDS.join(", ")),
        ));
    }
    if errors.is_empty() {
        Ok(items)
    } else {
        Err(errors)
    }
}

fn required_text(
    origin: &str,
    object: &mut Map<String, Value>,
    field: &str,
) -> Result<String, IngestError> {
    match object.remove(field) {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            checked_text(origin, field, &s)?;
            Ok(crate::redact::redact(&s).into_owned())
        }
        Some(Value::String(_)) => Err(IngestError::new(
            origin,
            field,
            "is empty: expected who made the correction (by) and why (reason)",
        )),
        Some(other) => Err(IngestError::new(
            origin,
            field,
            format!("expected a string, got {}", json_kind(&other)),
        )),
        None => Err(IngestError::new(
            origin,
            field,
            "is missing: every correction says why (reason) and who made it (by)",
        )),
    }
}

fn checked_text(origin: &str, field: &str, s: &str) -> Result<(), IngestError> {
    if s.len() > MAX_TEXT_BYTES {
        return Err(IngestError::new(
            origin,
            field,
            format!("is {} bytes; expected at most {MAX_TEXT_BYTES}", s.len()),
        ));
    }
    if s.contains('\0') {
        return Err(IngestError::new(origin, field, "contains NUL"));
    }
    Ok(())
}

fn inner<T: DeserializeOwned>(origin: &str, kind: &str, value: Value) -> Result<T, IngestError> {
    serde_json::from_value(value).map_err(|e| IngestError::new(origin, kind, e.to_string()))
}

fn key_part(origin: &str, field: String, value: &str) -> Result<(), IngestError> {
    if value.is_empty() {
        return Err(IngestError::new(origin, field, "is empty"));
    }
    if value.len() > MAX_KEY_BYTES || value.contains('\0') {
        return Err(IngestError::new(
            origin,
            field,
            format!("expected at most {MAX_KEY_BYTES} bytes and no NUL"),
        ));
    }
    Ok(())
}

fn entity(origin: &str, kind: &str, t: &str, r: &str) -> Result<(), IngestError> {
    EntityKey::new(t, r)
        .map(|_| ())
        .map_err(|e| IngestError::new(origin, format!("{kind}.entity_type"), e.to_string()))
}

/// One line's object: exactly one correction, a reason and a reviewer.
pub fn parse_line(origin: &str, value: Value) -> Result<CorrectionLine, IngestError> {
    let Value::Object(mut object) = value else {
        return Err(IngestError::new(
            origin,
            "-",
            format!("expected a JSON object, got {}", json_kind(&value)),
        ));
    };
    let named: Vec<&str> = Correction::KINDS
        .into_iter()
        .filter(|k| object.contains_key(*k))
        .collect();
    let kind_name = match named.as_slice() {
        [one] => *one,
        [] => {
            return Err(IngestError::new(
                origin,
                "-",
                format!("expected one of {}", Correction::KINDS.join(", ")),
            ));
        }
        several => {
            return Err(IngestError::new(
                origin,
                several[1],
                format!(
                    "one correction a line: {} and {} are both given",
                    several[0], several[1]
                ),
            ));
        }
    };
    let body = object.remove(kind_name).unwrap_or(Value::Null);
    let reason = required_text(origin, &mut object, "reason")?;
    let by = required_text(origin, &mut object, "by")?;
    if let Some(extra) = object.keys().next() {
        return Err(IngestError::new(
            origin,
            extra.as_str(),
            format!("unknown field: expected {kind_name}, reason and by"),
        ));
    }
    let correction = match kind_name {
        "retract_supersession" | "confirm_supersession" => {
            let s: super::SupersessionRef = inner(origin, kind_name, body)?;
            key_part(origin, format!("{kind_name}.episode"), &s.episode)?;
            key_part(origin, format!("{kind_name}.prior"), &s.prior)?;
            entity(origin, kind_name, &s.entity_type, &s.entity_ref)?;
            if kind_name == "retract_supersession" {
                Correction::RetractSupersession(s)
            } else {
                Correction::ConfirmSupersession(s)
            }
        }
        "correct_episode" => {
            let mut e: super::EpisodeCorrection = inner(origin, kind_name, body)?;
            key_part(
                origin,
                format!("{kind_name}.incident_fingerprint"),
                &e.incident_fingerprint,
            )?;
            if e.summary_nl.is_none() && e.resolution_nl.is_none() {
                return Err(IngestError::new(
                    origin,
                    kind_name,
                    "expected summary_nl, resolution_nl or both",
                ));
            }
            for (field, text) in [
                ("summary_nl", &mut e.summary_nl),
                ("resolution_nl", &mut e.resolution_nl),
            ] {
                if let Some(t) = text {
                    checked_text(origin, &format!("{kind_name}.{field}"), t)?;
                    if field == "summary_nl" && t.trim().is_empty() {
                        return Err(IngestError::new(
                            origin,
                            format!("{kind_name}.{field}"),
                            "is empty: an episode's summary says what happened",
                        ));
                    }
                    *t = crate::redact::redact(t).into_owned();
                }
            }
            Correction::CorrectEpisode(e)
        }
        _ => {
            let f: super::FactCorrection = inner(origin, kind_name, body)?;
            key_part(origin, format!("{kind_name}.episode"), &f.episode)?;
            entity(origin, kind_name, &f.entity_type, &f.entity_ref)?;
            if f.t_valid.is_none() && f.t_invalid.is_none() {
                return Err(IngestError::new(
                    origin,
                    kind_name,
                    "expected t_valid, t_invalid or both",
                ));
            }
            Correction::CorrectFact(f)
        }
    };
    Ok(CorrectionLine {
        correction,
        reason,
        by,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<String> {
        parse_text("c.ndjson", text)
            .unwrap_err()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn every_error_names_its_line_and_field() {
        let text = concat!(
            r#"{"retract_supersession": {"episode": "B", "prior": "A", "entity_type": "service", "entity_ref": "x"}, "reason": "wrong", "by": "ana"}"#,
            "\n",
            r#"{"retract_supersession": {"episode": "B", "prior": "A", "entity_type": "service", "entity_ref": "x"}, "by": "ana"}"#,
            "\n\n",
            r#"{"correct_fact": {"episode": "B", "relation": "MENTIONS", "entity_type": "service", "entity_ref": "x"}, "reason": "r", "by": "b"}"#,
            "\n",
            r#"{"correct_episode": {"incident_fingerprint": "B", "summary": "x"}, "reason": "r", "by": "b"}"#,
            "\n",
            r#"{"reason": "r", "by": "b", "colour": 1, "correct_episode": {"incident_fingerprint": "B", "summary_nl": "x"}}"#,
            "\n"
        );
        let e = errors(text);
        assert_eq!(e.len(), 4, "{e:?}");
        assert!(
            e[0].starts_with("c.ndjson:2: reason: is missing"),
            "{}",
            e[0]
        );
        assert!(
            e[1].starts_with("c.ndjson:4: correct_fact: expected t_valid"),
            "{}",
            e[1]
        );
        assert!(
            e[2].starts_with("c.ndjson:5: correct_episode: unknown field `summary`"),
            "{}",
            e[2]
        );
        assert!(
            e[3].starts_with("c.ndjson:6: colour: unknown field"),
            "{}",
            e[3]
        );
    }

    #[test]
    fn t_invalid_null_reopens_and_absent_keeps() {
        let items = parse_text(
            "c",
            concat!(
                r#"{"correct_fact": {"episode": "B", "relation": "MENTIONS", "entity_type": "service", "entity_ref": "x", "t_invalid": null}, "reason": "r", "by": "b"}"#,
                "\n",
                r#"{"correct_fact": {"episode": "B", "relation": "MENTIONS", "entity_type": "service", "entity_ref": "x", "t_valid": "2026-01-01T00:00:00Z"}, "reason": "r", "by": "b"}"#
            ),
        )
        .unwrap();
        let Correction::CorrectFact(reopen) = &items[0].line.correction else {
            panic!("not a fact correction")
        };
        assert_eq!(reopen.t_invalid, Some(None));
        let Correction::CorrectFact(moved) = &items[1].line.correction else {
            panic!("not a fact correction")
        };
        assert_eq!(moved.t_invalid, None);
    }

    #[test]
    fn reasons_are_redacted_before_they_are_stored() {
        let items = parse_text(
            "c",
            r#"{"correct_episode": {"incident_fingerprint": "B", "summary_nl": "x"}, "reason": "key AKIAIOSFODNN7EXAMPLE leaked", "by": "b"}"#,
        )
        .unwrap();
        assert!(!items[0].line.reason.contains("AKIAIOSFODNN7EXAMPLE"));
    }
}
