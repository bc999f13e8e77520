//! The tools' arguments. Names follow the CLI's flags and its `--json` output; each type's JSON
//! Schema is what `tools/list` shows.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::ingest::schema::Time;
use crate::model::{AsOf, EntityKey, Timestamp};
use crate::query::CodeQuery;
use crate::recall::{FusionPolicy, Leg, LegSet, StalePolicy};

/// A tool argument that does not hold what its schema says: the field and what was expected.
#[derive(Debug, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ArgumentError {
    pub field: String,
    pub message: String,
}

fn time(field: &str, value: &Option<Time>) -> Result<Option<Timestamp>, ArgumentError> {
    value
        .as_ref()
        .map(|t| {
            Timestamp::parse(&t.0).map_err(|_| ArgumentError {
                field: field.into(),
                message: format!(
                    "{:?} is not a time; expected RFC 3339 with a zone, e.g. 2026-03-01T12:00:00Z",
                    t.0
                ),
            })
        })
        .transpose()
}

fn entity(field: &str, value: &str) -> Result<EntityKey, ArgumentError> {
    value.parse().map_err(|e| ArgumentError {
        field: field.into(),
        message: format!("{e}; expected TYPE:REF, e.g. service:checkout"),
    })
}

/// Valid time V and knowledge time K, each defaulting to `now`.
fn as_of(
    valid_at: &Option<Time>,
    known_at: &Option<Time>,
    now: Timestamp,
) -> Result<AsOf, ArgumentError> {
    Ok(AsOf {
        valid_at: time("valid_at", valid_at)?.unwrap_or(now),
        known_at: time("known_at", known_at)?.unwrap_or(now),
    })
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallParams {
    /// The incident context: what is happening now.
    pub query: String,
    /// Implicated entities, as TYPE:REF. They alone seed the graph leg; with none, the known
    /// entity refs the query names seed it.
    #[serde(default)]
    pub entities: Vec<String>,
    /// How many results [default: 10].
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub k: Option<usize>,
    /// Valid time V: what was true then [default: now].
    #[serde(default)]
    pub valid_at: Option<Time>,
    /// Knowledge time K: answer as memory would have then [default: now].
    #[serde(default)]
    pub known_at: Option<Time>,
    /// Legs to run [default: all three].
    #[serde(default)]
    pub legs: Option<Vec<Leg>>,
    /// Fusion policy [default: adaptive: each leg weighted by its confidence for this query].
    #[serde(default)]
    pub fusion: Option<FusionPolicy>,
    /// Results a later episode superseded: keep, mark (say what superseded them and what holds
    /// now) or follow (mark, and place the fix that holds now right after) [default: mark, or
    /// the server's configuration].
    #[serde(default)]
    pub stale: Option<StalePolicy>,
}

/// A recall request, checked.
pub struct RecallArgs {
    pub query: String,
    pub entities: Vec<EntityKey>,
    pub k: usize,
    pub as_of: AsOf,
    pub legs: LegSet,
    pub fusion: FusionPolicy,
    /// `None`: the server's default.
    pub stale: Option<StalePolicy>,
}

impl RecallParams {
    pub fn check(&self, now: Timestamp) -> Result<RecallArgs, ArgumentError> {
        let entities = self
            .entities
            .iter()
            .enumerate()
            .map(|(i, e)| entity(&format!("entities[{i}]"), e))
            .collect::<Result<Vec<_>, _>>()?;
        let k = self.k.unwrap_or(10);
        if !(1..=1000).contains(&k) {
            return Err(ArgumentError {
                field: "k".into(),
                message: format!("{k}; expected 1 to 1000"),
            });
        }
        let legs = match &self.legs {
            None => LegSet::ALL,
            Some(legs) if legs.is_empty() => {
                return Err(ArgumentError {
                    field: "legs".into(),
                    message: "empty; expected at least one of semantic, bm25, graph".into(),
                });
            }
            Some(legs) => LegSet::of(legs),
        };
        Ok(RecallArgs {
            query: self.query.clone(),
            entities,
            k,
            as_of: as_of(&self.valid_at, &self.known_at, now)?,
            legs,
            fusion: self.fusion.unwrap_or_default(),
            stale: self.stale,
        })
    }
}

/// One episode as of a point in both times (`facts`, `lesson`, `lineage`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EpisodeParams {
    /// The episode's incident_fingerprint.
    pub fingerprint: String,
    /// Valid time V [default: now] (lineage reads knowledge time only).
    #[serde(default)]
    pub valid_at: Option<Time>,
    /// Knowledge time K [default: now].
    #[serde(default)]
    pub known_at: Option<Time>,
}

impl EpisodeParams {
    pub fn as_of(&self, now: Timestamp) -> Result<AsOf, ArgumentError> {
        as_of(&self.valid_at, &self.known_at, now)
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineParams {
    /// Only episodes with a fact about this entity (TYPE:REF).
    #[serde(default)]
    pub entity: Option<String>,
    /// At most this many episodes, newest first [default: 20].
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<usize>,
    /// Skip this many [default: 0].
    #[serde(default)]
    pub offset: Option<usize>,
    /// Only episodes known at this knowledge time [default: everything known now].
    #[serde(default)]
    pub known_at: Option<Time>,
}

impl TimelineParams {
    pub fn query(&self) -> Result<crate::store::TimelineQuery, ArgumentError> {
        let limit = self.limit.unwrap_or(20);
        if !(1..=1000).contains(&limit) {
            return Err(ArgumentError {
                field: "limit".into(),
                message: format!("{limit}; expected 1 to 1000"),
            });
        }
        Ok(crate::store::TimelineQuery {
            entity: self
                .entity
                .as_deref()
                .map(|e| entity("entity", e))
                .transpose()?,
            known_at: time("known_at", &self.known_at)?,
            offset: self.offset.unwrap_or(0),
            limit,
        })
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillsParams {
    /// Only skills triggered by this entity (TYPE:REF).
    #[serde(default)]
    pub entity: Option<String>,
    /// Every version, superseded ones included [default: false].
    #[serde(default)]
    pub all: bool,
    /// Knowledge time K [default: now].
    #[serde(default)]
    pub known_at: Option<Time>,
}

impl SkillsParams {
    pub fn entity(&self) -> Result<Option<EntityKey>, ArgumentError> {
        self.entity
            .as_deref()
            .map(|e| entity("entity", e))
            .transpose()
    }

    pub fn known_at(&self, now: Timestamp) -> Result<Timestamp, ArgumentError> {
        Ok(time("known_at", &self.known_at)?.unwrap_or(now))
    }
}

/// Exactly one of `service`, `embedding_ref` or `episode`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeParams {
    /// Code units owned by the service (the ref of a service: entity).
    #[serde(default)]
    pub service: Option<String>,
    /// The code unit whose embedding_ref (vector point id) this is.
    #[serde(default)]
    pub embedding_ref: Option<String>,
    /// Code units of the services the episode implicated, by facts valid at (V, K).
    #[serde(default)]
    pub episode: Option<String>,
    /// Valid time V for `episode` [default: now].
    #[serde(default)]
    pub valid_at: Option<Time>,
    /// Knowledge time K for `episode` [default: now].
    #[serde(default)]
    pub known_at: Option<Time>,
}

impl CodeParams {
    pub fn query(&self, now: Timestamp) -> Result<CodeQuery, ArgumentError> {
        match (&self.service, &self.embedding_ref, &self.episode) {
            (Some(s), None, None) => Ok(CodeQuery::Service(s.clone())),
            (None, Some(r), None) => Ok(CodeQuery::EmbeddingRef(r.clone())),
            (None, None, Some(fp)) => Ok(CodeQuery::Episode(
                fp.clone(),
                as_of(&self.valid_at, &self.known_at, now)?,
            )),
            _ => Err(ArgumentError {
                field: "service".into(),
                message: "expected exactly one of service, embedding_ref or episode".into(),
            }),
        }
    }
}
