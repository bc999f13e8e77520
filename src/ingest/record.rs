//! One JSON record to one [`EpisodeDraft`], collecting every field error on the way.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::limits::RecordLimits;
use crate::model::{EntityKey, EntityKeyError, MAX_KEY_BYTES, Provenance, Relation, Timestamp};
use crate::store::{EpisodeDraft, FactDraft, SupersedeDraft};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// Every field an ingest record may carry.
pub const RECORD_FIELDS: &[&str] = &[
    "incident_fingerprint",
    "summary_nl",
    "resolution_nl",
    "concluded_at",
    "t_valid",
    "mentions",
    "resolved_by",
    "supersedes",
    "provenance",
    "skills",
];
pub(crate) const SKILL_FIELDS: &[&str] = &["name", "trigger_entities", "steps", "succeeded"];
/// Fields of a skill file entry (`strata skill add`).
pub const SKILL_FILE_FIELDS: &[&str] = &[
    "name",
    "trigger_entities",
    "steps",
    "episodes",
    "applied",
    "succeeded",
    "last_used",
];
pub(crate) const EDGE_FIELDS: &[&str] = &["entity_type", "entity_ref", "t_valid", "t_invalid"];
pub(crate) const SUPERSEDES_FIELDS: &[&str] = &[
    "incident_fingerprint",
    "entity_type",
    "entity_ref",
    "t_invalid",
];
pub(crate) const PROVENANCE_FIELDS: &[&str] = &["source", "status", "confidence_score"];

pub const DEFAULT_SOURCE: &str = "ingest";
pub const DEFAULT_STATUS: &str = "concluded";
pub const DEFAULT_CONFIDENCE: f64 = 1.0;

struct Fields<'v, 'e> {
    prefix: String,
    map: &'v Map<String, Value>,
    errors: &'e mut Vec<FieldError>,
}

/// What a JSON value is, for "expected …, got …" messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'v, 'e> Fields<'v, 'e> {
    fn new(
        prefix: String,
        value: &'v Value,
        allowed: &[&str],
        errors: &'e mut Vec<FieldError>,
    ) -> Option<Self> {
        let Value::Object(map) = value else {
            let field = if prefix.is_empty() {
                "-".to_string()
            } else {
                prefix.clone()
            };
            errors.push(FieldError {
                field,
                message: format!("expected an object, got {}", kind(value)),
            });
            return None;
        };
        let mut fields = Fields {
            prefix,
            map,
            errors,
        };
        for key in map.keys() {
            if !allowed.contains(&key.as_str()) {
                fields.fail(
                    key,
                    format!("unknown field; expected one of {}", allowed.join(", ")),
                );
            }
        }
        Some(fields)
    }

    fn path(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.prefix)
        }
    }

    fn fail(&mut self, name: &str, message: impl Into<String>) {
        let field = self.path(name);
        self.errors.push(FieldError {
            field,
            message: message.into(),
        });
    }

    fn present(&self, name: &str) -> Option<&'v Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    fn string(&mut self, name: &str, required: bool, non_empty: bool) -> Option<String> {
        match self.present(name) {
            None => {
                if required {
                    self.fail(name, "missing; expected a string");
                }
                None
            }
            Some(Value::String(s)) => {
                if s.contains('\0') {
                    self.fail(name, "contains a NUL character; expected text without NUL");
                    None
                } else if non_empty && s.trim().is_empty() {
                    self.fail(name, "must not be empty; expected a non-empty string");
                    None
                } else {
                    Some(s.clone())
                }
            }
            Some(other) => {
                self.fail(name, format!("expected a string, got {}", kind(other)));
                None
            }
        }
    }

    fn time(&mut self, name: &str, required: bool) -> Option<Timestamp> {
        match self.present(name) {
            None => {
                if required {
                    self.fail(name, "missing; expected an RFC 3339 timestamp with a zone");
                }
                None
            }
            Some(Value::String(s)) => match Timestamp::parse(s) {
                Ok(t) => Some(t),
                Err(e) => {
                    self.fail(name, e.to_string());
                    None
                }
            },
            Some(other) => {
                self.fail(
                    name,
                    format!("expected an RFC 3339 timestamp string, got {}", kind(other)),
                );
                None
            }
        }
    }

    fn array(&mut self, name: &str) -> &'v [Value] {
        match self.present(name) {
            None => &[],
            Some(Value::Array(items)) => items,
            Some(other) => {
                self.fail(name, format!("expected an array, got {}", kind(other)));
                &[]
            }
        }
    }

    /// A required, non-empty string that becomes part of a store key, so is bounded.
    fn key(&mut self, name: &str) -> Option<String> {
        let value = self.string(name, true, true)?;
        if value.len() > MAX_KEY_BYTES {
            self.fail(
                name,
                format!(
                    "{} bytes; expected at most {MAX_KEY_BYTES} (it is part of the store's keys)",
                    value.len()
                ),
            );
            return None;
        }
        Some(value)
    }

    /// A key that names an episode ([`crate::model::fingerprint_problem`]).
    fn fingerprint(&mut self, name: &str) -> Option<String> {
        let value = self.key(name)?;
        if let Some(problem) = crate::model::fingerprint_problem(&value) {
            self.fail(name, problem);
            return None;
        }
        Some(value)
    }

    fn entity(&mut self) -> Option<EntityKey> {
        let t = self.string("entity_type", true, false);
        let r = self.string("entity_ref", true, false);
        let (t, r) = (t?, r?);
        match EntityKey::new(t, r) {
            Ok(k) => Some(k),
            Err(e) => {
                let field = match e {
                    EntityKeyError::EmptyRef
                    | EntityKeyError::NulInRef
                    | EntityKeyError::RefTooLong(_) => "entity_ref",
                    _ => "entity_type",
                };
                let message = match e {
                    EntityKeyError::EmptyType | EntityKeyError::EmptyRef => {
                        "must not be empty; expected a non-empty string".to_string()
                    }
                    other => other.to_string(),
                };
                self.fail(field, message);
                None
            }
        }
    }
}

/// Validates one record. Edge `t_valid` defaults to the episode's; a supersedes entry's
/// `t_invalid` defaults to the new episode's `t_valid`.
pub fn parse_record(value: &Value) -> Result<EpisodeDraft, Vec<FieldError>> {
    parse_record_within(value, &RecordLimits::default())
}

/// [`parse_record`], refusing a record past `limits`.
pub fn parse_record_within(
    value: &Value,
    limits: &RecordLimits,
) -> Result<EpisodeDraft, Vec<FieldError>> {
    let mut errors = Vec::new();
    let draft = parse_into(value, limits, &mut errors);
    match draft {
        Some(d) if errors.is_empty() => Ok(d),
        _ => Err(errors),
    }
}

fn parse_into(
    value: &Value,
    limits: &RecordLimits,
    errors: &mut Vec<FieldError>,
) -> Option<EpisodeDraft> {
    let mut f = Fields::new(String::new(), value, RECORD_FIELDS, errors)?;
    let fingerprint = f.fingerprint("incident_fingerprint");
    let summary = f.string("summary_nl", true, true);
    let resolution = f.string("resolution_nl", true, false);
    let concluded_at = f.time("concluded_at", true);
    let t_valid = f.time("t_valid", false).or(concluded_at);
    if let (Some(start), Some(end)) = (t_valid, concluded_at)
        && start > end
    {
        f.fail(
            "t_valid",
            format!("{start} is after concluded_at {end}; expected the incident to start before it concluded"),
        );
    }
    let mentions = f.array("mentions");
    let resolved_by = f.array("resolved_by");
    let supersedes = f.array("supersedes");
    let provenance = f.present("provenance");
    let skills = f.array("skills");
    drop(f);
    let mut too_big = false;
    for (name, text) in [("summary_nl", &summary), ("resolution_nl", &resolution)] {
        if let Some(t) = text
            && t.len() > limits.max_text_bytes
        {
            too_big = true;
            errors.push(FieldError {
                field: name.to_string(),
                message: format!(
                    "{} bytes; expected at most {} (max_text_bytes in the config's [ingest])",
                    t.len(),
                    limits.max_text_bytes
                ),
            });
        }
    }
    for (name, items) in [
        ("mentions", mentions),
        ("resolved_by", resolved_by),
        ("supersedes", supersedes),
        ("skills", skills),
    ] {
        if items.len() > limits.max_entries {
            too_big = true;
            errors.push(FieldError {
                field: name.to_string(),
                message: format!(
                    "{} entries; expected at most {} (max_entries in the config's [ingest])",
                    items.len(),
                    limits.max_entries
                ),
            });
        }
    }
    if too_big {
        return None;
    }

    // Repeats are found through maps, so a record with a million edges costs a million steps.
    let mut facts = Vec::new();
    let mut fact_at: HashMap<(Relation, EntityKey), usize> = HashMap::new();
    for (relation, name, items) in [
        (Relation::Mentions, "mentions", mentions),
        (Relation::ResolvedBy, "resolved_by", resolved_by),
    ] {
        for (i, item) in items.iter().enumerate() {
            if let Some(fact) = parse_edge(relation, format!("{name}[{i}]"), item, t_valid, errors)
            {
                merge_fact(
                    &mut facts,
                    &mut fact_at,
                    fact,
                    format!("{name}[{i}]"),
                    errors,
                );
            }
        }
    }
    let mut supers: Vec<SupersedeDraft> = Vec::new();
    let mut super_at: HashMap<(String, EntityKey), usize> = HashMap::new();
    for (i, item) in supersedes.iter().enumerate() {
        let prefix = format!("supersedes[{i}]");
        let Some(s) = parse_supersedes(
            prefix.clone(),
            item,
            t_valid,
            fingerprint.as_deref(),
            errors,
        ) else {
            continue;
        };
        match super_at.get(&(s.prior.clone(), s.entity.clone())) {
            Some(&at) if supers[at] == s => {}
            Some(_) => errors.push(FieldError {
                field: prefix,
                message: format!(
                    "closes {:?}'s fact about {} twice with different times; expected it once",
                    s.prior, s.entity
                ),
            }),
            None => {
                super_at.insert((s.prior.clone(), s.entity.clone()), supers.len());
                supers.push(s);
            }
        }
    }
    let provenance = parse_provenance(provenance, errors);
    let mut skill_drafts: Vec<crate::learning::SkillDraft> = Vec::new();
    let mut skill_names: HashSet<String> = HashSet::new();
    for (i, item) in skills.iter().enumerate() {
        let prefix = format!("skills[{i}]");
        if let Some(s) = parse_skill(prefix.clone(), item, SKILL_FIELDS, errors) {
            if !skill_names.insert(s.name.clone()) {
                errors.push(FieldError {
                    field: format!("{prefix}.name"),
                    message: format!("skill {:?} listed twice; expected it once", s.name),
                });
            } else {
                skill_drafts.push(s);
            }
        }
    }

    Some(EpisodeDraft {
        incident_fingerprint: fingerprint?,
        // Free text is stripped of secrets and PII before it is stored; keys are kept as given.
        summary_nl: crate::redact::redact(&summary?).into_owned(),
        resolution_nl: crate::redact::redact(&resolution.unwrap_or_default()).into_owned(),
        concluded_at: concluded_at?,
        t_valid: t_valid?,
        provenance: provenance?,
        facts,
        supersedes: supers,
        skills: skill_drafts,
    })
}

fn parse_edge(
    relation: Relation,
    prefix: String,
    value: &Value,
    episode_valid: Option<Timestamp>,
    errors: &mut Vec<FieldError>,
) -> Option<FactDraft> {
    let mut f = Fields::new(prefix, value, EDGE_FIELDS, errors)?;
    let entity = f.entity();
    let t_valid = f.time("t_valid", false).or(episode_valid);
    let t_invalid = f.time("t_invalid", false);
    if let (Some(start), Some(end)) = (t_valid, t_invalid)
        && end <= start
    {
        f.fail(
            "t_invalid",
            format!("{end} is not after t_valid {start}; expected t_invalid > t_valid"),
        );
        return None;
    }
    Some(FactDraft {
        relation,
        entity: entity?,
        t_valid: t_valid?,
        t_invalid,
    })
}

fn merge_fact(
    facts: &mut Vec<FactDraft>,
    at: &mut HashMap<(Relation, EntityKey), usize>,
    fact: FactDraft,
    field: String,
    errors: &mut Vec<FieldError>,
) {
    match at.get(&(fact.relation, fact.entity.clone())) {
        None => {
            at.insert((fact.relation, fact.entity.clone()), facts.len());
            facts.push(fact);
        }
        Some(&i) if facts[i] == fact => {}
        Some(_) => errors.push(FieldError {
            field,
            message: format!(
                "{} is listed twice with different times; expected one {} edge per entity",
                fact.entity, fact.relation
            ),
        }),
    }
}

fn parse_supersedes(
    prefix: String,
    value: &Value,
    episode_valid: Option<Timestamp>,
    own: Option<&str>,
    errors: &mut Vec<FieldError>,
) -> Option<SupersedeDraft> {
    let mut f = Fields::new(prefix, value, SUPERSEDES_FIELDS, errors)?;
    let prior = f.fingerprint("incident_fingerprint");
    if let (Some(p), Some(o)) = (&prior, own)
        && p == o
    {
        f.fail(
            "incident_fingerprint",
            "an episode cannot supersede itself; expected a prior episode",
        );
        return None;
    }
    let entity = f.entity();
    let t_invalid = f.time("t_invalid", false).or(episode_valid);
    Some(SupersedeDraft {
        prior: prior?,
        entity: entity?,
        t_invalid: t_invalid?,
    })
}

fn parse_provenance(value: Option<&Value>, errors: &mut Vec<FieldError>) -> Option<Provenance> {
    let Some(value) = value else {
        return Some(Provenance {
            source: DEFAULT_SOURCE.into(),
            status: DEFAULT_STATUS.into(),
            confidence_score: DEFAULT_CONFIDENCE,
        });
    };
    let mut f = Fields::new("provenance".into(), value, PROVENANCE_FIELDS, errors)?;
    let source = f
        .string("source", false, true)
        .unwrap_or_else(|| DEFAULT_SOURCE.into());
    let status = f
        .string("status", false, true)
        .unwrap_or_else(|| DEFAULT_STATUS.into());
    let confidence = match f.present("confidence_score") {
        None => Some(DEFAULT_CONFIDENCE),
        Some(Value::Number(n)) => match n.as_f64() {
            // + 0.0 makes -0.0 plain zero, so equal records serialize equally.
            Some(c) if (0.0..=1.0).contains(&c) => Some(c + 0.0),
            _ => {
                f.fail(
                    "confidence_score",
                    format!("expected a number in [0, 1], got {n}"),
                );
                None
            }
        },
        Some(other) => {
            f.fail(
                "confidence_score",
                format!("expected a number in [0, 1], got {}", kind(other)),
            );
            None
        }
    };
    Some(Provenance {
        source,
        status,
        confidence_score: confidence?,
    })
}

/// One skill: in an episode record (`skills[i]`, where `succeeded` is whether applying it
/// worked) or in a skill file (where the counters are given outright).
pub fn parse_skill(
    prefix: String,
    value: &Value,
    allowed: &[&str],
    errors: &mut Vec<FieldError>,
) -> Option<crate::learning::SkillDraft> {
    let in_file = allowed == SKILL_FILE_FIELDS;
    let mut f = Fields::new(prefix, value, allowed, errors)?;
    let name = f.key("name");
    let strings = |f: &mut Fields<'_, '_>, field: &str| -> Vec<String> {
        let items = f.array(field);
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) if !s.trim().is_empty() && !s.contains('\0') => {
                    out.push(s.clone())
                }
                other => f.fail(
                    &format!("{field}[{i}]"),
                    format!(
                        "expected a non-empty string without NUL, got {}",
                        kind(other)
                    ),
                ),
            }
        }
        out
    };
    let triggers = strings(&mut f, "trigger_entities");
    let steps: Vec<String> = strings(&mut f, "steps")
        .into_iter()
        .map(|s| crate::redact::redact(&s).into_owned())
        .collect();
    let episodes = if in_file {
        strings(&mut f, "episodes")
    } else {
        Vec::new()
    };
    let mut trigger_entities = Vec::new();
    for (i, t) in triggers.iter().enumerate() {
        match t.parse::<EntityKey>() {
            Ok(k) => trigger_entities.push(k),
            Err(e) => f.fail(
                &format!("trigger_entities[{i}]"),
                format!("{e}; expected TYPE:REF"),
            ),
        }
    }
    if in_file && trigger_entities.is_empty() && triggers.is_empty() {
        f.fail(
            "trigger_entities",
            "missing; expected at least one TYPE:REF",
        );
    }
    if in_file && steps.is_empty() {
        f.fail("steps", "missing; expected at least one step");
    }
    let count = |f: &mut Fields<'_, '_>, field: &str| -> Option<u32> {
        match f.present(field) {
            None => None,
            Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(n) => Some(n),
                None => {
                    f.fail(field, format!("expected a whole number, got {}", kind(v)));
                    None
                }
            },
        }
    };
    let (applied, succeeded, outcome) = if in_file {
        (count(&mut f, "applied"), count(&mut f, "succeeded"), None)
    } else {
        let outcome = match f.present("succeeded") {
            None => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                f.fail(
                    "succeeded",
                    format!("expected true or false, got {}", kind(other)),
                );
                None
            }
        };
        (None, None, outcome)
    };
    if let (Some(a), Some(s)) = (applied, succeeded)
        && s > a
    {
        f.fail(
            "succeeded",
            format!("{s} is more than applied {a}; expected at most {a}"),
        );
    }
    let last_used = if in_file {
        f.time("last_used", false)
    } else {
        None
    };
    Some(crate::learning::SkillDraft {
        name: name?,
        trigger_entities,
        steps,
        episodes,
        applied,
        succeeded,
        outcome_succeeded: outcome,
        last_used,
    })
}

pub(crate) const CODE_UNIT_FIELDS: &[&str] = &["repo", "path", "service"];

/// A `{"code_units": [{"repo", "path", "service"}]}` record, or `None` for an episode record.
#[allow(clippy::type_complexity)]
pub fn code_units_record(
    value: &Value,
    limits: &RecordLimits,
) -> Option<Result<Vec<(String, crate::learning::CodeUnit)>, Vec<FieldError>>> {
    let map = value.as_object()?;
    if !map.contains_key("code_units") || map.contains_key("incident_fingerprint") {
        return None;
    }
    let mut errors = Vec::new();
    let mut units = Vec::new();
    let Some(mut f) = Fields::new(String::new(), value, &["code_units"], &mut errors) else {
        return Some(Err(errors));
    };
    let items = f.array("code_units");
    drop(f);
    if items.len() > limits.max_entries {
        return Some(Err(vec![FieldError {
            field: "code_units".into(),
            message: format!(
                "{} entries; expected at most {} (max_entries in the config's [ingest])",
                items.len(),
                limits.max_entries
            ),
        }]));
    }
    for (i, item) in items.iter().enumerate() {
        let prefix = format!("code_units[{i}]");
        let Some(mut f) = Fields::new(prefix.clone(), item, CODE_UNIT_FIELDS, &mut errors) else {
            continue;
        };
        let repo = f.key("repo");
        let path = f.key("path");
        let service = f.key("service");
        drop(f);
        if let (Some(repo), Some(path), Some(service)) = (repo, path, service) {
            if repo.contains('|') {
                errors.push(FieldError {
                    field: format!("{prefix}.repo"),
                    message: "contains '|'; expected a repository name without it (the join key is repo|path)".into(),
                });
                continue;
            }
            units.push((
                prefix,
                crate::learning::CodeUnit::new(&repo, &path, &service),
            ));
        }
    }
    Some(if errors.is_empty() {
        Ok(units)
    } else {
        Err(errors)
    })
}
