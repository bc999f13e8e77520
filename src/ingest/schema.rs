//! The ingest record as a type, for its JSON Schema (the MCP server's `record_incident`).
//! Records are validated by [`super::parse_record`], which names every bad field; these types
//! only describe the format, and a test keeps their fields equal to the parser's.

use schemars::JsonSchema;
use serde::Deserialize;

/// One concluded incident, as `strata ingest` takes it (one line of an NDJSON file).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IncidentRecord {
    /// The episode's key; re-sending the same record changes nothing.
    pub incident_fingerprint: String,
    /// What happened, in plain language (secrets and PII are redacted before it is stored).
    pub summary_nl: String,
    /// How it was resolved (may be empty).
    pub resolution_nl: String,
    /// When the incident concluded (RFC 3339).
    pub concluded_at: Time,
    /// When the incident started being true in the world (RFC 3339) [default: concluded_at].
    #[serde(default)]
    pub t_valid: Option<Time>,
    /// Entities the incident implicated (MENTIONS edges).
    #[serde(default)]
    pub mentions: Vec<EdgeRecord>,
    /// Entities whose change resolved it (RESOLVED_BY edges).
    #[serde(default)]
    pub resolved_by: Vec<EdgeRecord>,
    /// Earlier episodes' facts this incident closes (SUPERSEDES lineage).
    #[serde(default)]
    pub supersedes: Vec<SupersedesRecord>,
    /// Where the record came from [default: source "ingest", status "concluded", confidence 1].
    #[serde(default)]
    pub provenance: Option<ProvenanceRecord>,
    /// Runbooks that were applied, recorded as the skill's next version.
    #[serde(default)]
    pub skills: Vec<SkillRecord>,
    /// Code units owned by services (only in `record_incident`; a file carries them as a
    /// separate `{"code_units": [...]}` record).
    #[serde(default)]
    pub code_units: Vec<CodeUnitRecord>,
}

/// An RFC 3339 time, e.g. `2026-03-01T12:00:00Z`.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(transparent)]
pub struct Time(#[schemars(with = "String", extend("format" = "date-time"))] pub String);

/// An edge from the episode to an entity (`entity_type|entity_ref`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EdgeRecord {
    pub entity_type: String,
    pub entity_ref: String,
    /// [default: the episode's t_valid]
    #[serde(default)]
    pub t_valid: Option<Time>,
    /// When it stopped being true, if it has.
    #[serde(default)]
    pub t_invalid: Option<Time>,
}

/// Closes an earlier episode's fact about one entity.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SupersedesRecord {
    /// The earlier episode.
    pub incident_fingerprint: String,
    pub entity_type: String,
    pub entity_ref: String,
    /// When the earlier fact stopped being true [default: this episode's t_valid].
    #[serde(default)]
    pub t_invalid: Option<Time>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProvenanceRecord {
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    /// Between 0 and 1.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence_score: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillRecord {
    pub name: String,
    /// Entities that trigger the runbook, as `TYPE:REF`.
    #[serde(default)]
    pub trigger_entities: Vec<String>,
    #[serde(default)]
    pub steps: Vec<String>,
    /// Whether applying it resolved the incident.
    #[serde(default)]
    pub succeeded: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeUnitRecord {
    pub repo: String,
    pub path: String,
    /// The service that owns it (the ref of a `service:` entity).
    pub service: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn properties<T: JsonSchema>() -> Vec<String> {
        let schema = schemars::schema_for!(T);
        let mut names: Vec<String> = schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        names.sort();
        names
    }

    fn sorted(fields: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = fields.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    }

    #[test]
    fn the_schema_names_the_fields_the_parser_takes() {
        let mut record = sorted(crate::ingest::RECORD_FIELDS);
        record.push("code_units".into());
        record.sort();
        assert_eq!(properties::<IncidentRecord>(), record);
        assert_eq!(
            properties::<EdgeRecord>(),
            sorted(super::super::record::EDGE_FIELDS)
        );
        assert_eq!(
            properties::<SupersedesRecord>(),
            sorted(super::super::record::SUPERSEDES_FIELDS)
        );
        assert_eq!(
            properties::<ProvenanceRecord>(),
            sorted(super::super::record::PROVENANCE_FIELDS)
        );
        assert_eq!(
            properties::<SkillRecord>(),
            sorted(super::super::record::SKILL_FIELDS)
        );
        assert_eq!(
            properties::<CodeUnitRecord>(),
            sorted(super::super::record::CODE_UNIT_FIELDS)
        );
    }

    #[test]
    fn required_fields_are_the_parsers_required_ones() {
        let schema = schemars::schema_for!(IncidentRecord);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(|r| r.as_array())
            .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        assert_eq!(
            required,
            [
                "incident_fingerprint",
                "summary_nl",
                "resolution_nl",
                "concluded_at"
            ]
        );
    }
}
