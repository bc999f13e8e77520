use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::Timestamp;

/// The natural key of a `MemoryEntity`: `entity_type|entity_ref`.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct EntityKey {
    pub entity_type: String,
    pub entity_ref: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EntityKeyError {
    #[error("expected TYPE:REF (e.g. service:authelia), got {0:?}")]
    MissingSeparator(String),
    #[error("entity type must not be empty")]
    EmptyType,
    #[error("entity ref must not be empty")]
    EmptyRef,
    #[error("entity type {0:?} may not contain ':', '|', NUL or whitespace")]
    BadType(String),
    #[error("entity ref may not contain NUL")]
    NulInRef,
    #[error(
        "entity type is {0} bytes; expected at most {MAX_KEY_BYTES} (it is part of the store's keys)"
    )]
    TypeTooLong(usize),
    #[error(
        "entity ref is {0} bytes; expected at most {MAX_KEY_BYTES} (it is part of the store's keys)"
    )]
    RefTooLong(usize),
}

/// The most bytes a fingerprint, entity type, entity ref, skill name, repository or path may
/// hold: several of them make up one key of the embedded store, whose keys are bounded.
pub const MAX_KEY_BYTES: usize = 400;

impl EntityKey {
    pub fn new(
        entity_type: impl Into<String>,
        entity_ref: impl Into<String>,
    ) -> Result<Self, EntityKeyError> {
        let key = EntityKey {
            entity_type: entity_type.into(),
            entity_ref: entity_ref.into(),
        };
        key.validate()?;
        Ok(key)
    }

    pub fn validate(&self) -> Result<(), EntityKeyError> {
        validate_type(&self.entity_type)?;
        validate_ref(&self.entity_ref)
    }
}

pub(crate) fn validate_type(t: &str) -> Result<(), EntityKeyError> {
    if t.is_empty() {
        return Err(EntityKeyError::EmptyType);
    }
    if t.len() > MAX_KEY_BYTES {
        return Err(EntityKeyError::TypeTooLong(t.len()));
    }
    if t.chars()
        .any(|c| c == ':' || c == '|' || c == '\0' || c.is_whitespace() || c.is_control())
    {
        return Err(EntityKeyError::BadType(t.to_string()));
    }
    Ok(())
}

pub(crate) fn validate_ref(r: &str) -> Result<(), EntityKeyError> {
    if r.is_empty() {
        return Err(EntityKeyError::EmptyRef);
    }
    if r.len() > MAX_KEY_BYTES {
        return Err(EntityKeyError::RefTooLong(r.len()));
    }
    if r.contains('\0') {
        return Err(EntityKeyError::NulInRef);
    }
    Ok(())
}

impl EntityKey {
    /// The `TYPE:REF` form that flags and queries take (`Display` gives the stored key).
    pub fn flag_form(&self) -> String {
        format!("{}:{}", self.entity_type, self.entity_ref)
    }
}

impl fmt::Display for EntityKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}|{}", self.entity_type, self.entity_ref)
    }
}

/// Parses the command-line form `TYPE:REF` (the ref may itself contain ':').
impl FromStr for EntityKey {
    type Err = EntityKeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (t, r) = s
            .split_once(':')
            .ok_or_else(|| EntityKeyError::MissingSeparator(s.to_string()))?;
        EntityKey::new(t, r)
    }
}

/// A deduplicated entity: the first time the store learned of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryEntity {
    #[serde(flatten)]
    pub key: EntityKey,
    pub ingested_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_type_and_ref() {
        let k: EntityKey = "url:https://x".parse().unwrap();
        assert_eq!(k.entity_type, "url");
        assert_eq!(k.entity_ref, "https://x");
        assert_eq!(k.to_string(), "url|https://x");
        assert_eq!(
            "service".parse::<EntityKey>(),
            Err(EntityKeyError::MissingSeparator("service".into()))
        );
        assert_eq!(":x".parse::<EntityKey>(), Err(EntityKeyError::EmptyType));
        assert_eq!("a:".parse::<EntityKey>(), Err(EntityKeyError::EmptyRef));
    }
}
