use std::fmt;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A point in time, UTC, at millisecond precision (the precision FalkorDB stores).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(i64);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TimeError {
    #[error("expected an RFC 3339 timestamp with a zone (e.g. 2026-03-01T12:00:00Z), got {0:?}")]
    Unparsable(String),
    #[error("timestamp {0} ms is out of range")]
    OutOfRange(i64),
}

impl Timestamp {
    pub const MIN: Timestamp = Timestamp(i64::MIN);
    pub const MAX: Timestamp = Timestamp(i64::MAX);

    pub fn from_millis(ms: i64) -> Self {
        Timestamp(ms)
    }

    pub fn millis(self) -> i64 {
        self.0
    }

    pub fn now() -> Self {
        Timestamp(Utc::now().timestamp_millis())
    }

    /// Strict RFC 3339: a zone (`Z` or an offset) is required.
    pub fn parse(text: &str) -> Result<Self, TimeError> {
        DateTime::parse_from_rfc3339(text.trim())
            .map(|t| Timestamp(t.timestamp_millis()))
            .map_err(|_| TimeError::Unparsable(text.to_string()))
    }

    pub fn to_datetime(self) -> Result<DateTime<Utc>, TimeError> {
        DateTime::from_timestamp_millis(self.0).ok_or(TimeError::OutOfRange(self.0))
    }

    pub fn from_datetime(t: DateTime<Utc>) -> Self {
        Timestamp(t.timestamp_millis())
    }

    pub fn plus_millis(self, ms: i64) -> Self {
        Timestamp(self.0.saturating_add(ms))
    }

    pub fn to_rfc3339(self) -> String {
        match self.to_datetime() {
            Ok(t) => t.to_rfc3339_opts(SecondsFormat::AutoSi, true),
            Err(_) => format!("@{}ms", self.0),
        }
    }

    /// `HH:MM:SS`, for the status bar.
    pub fn clock(self) -> String {
        match self.to_datetime() {
            Ok(t) => t.format("%H:%M:%S").to_string(),
            Err(_) => format!("@{}ms", self.0),
        }
    }

    /// `YYYY-MM-DD`, for prose.
    pub fn date(self) -> String {
        match self.to_datetime() {
            Ok(t) => t.format("%Y-%m-%d").to_string(),
            Err(_) => format!("@{}ms", self.0),
        }
    }

    /// `YYYY-MM-DD HH:MM`, for tables.
    pub fn short(self) -> String {
        match self.to_datetime() {
            Ok(t) => t.format("%Y-%m-%d %H:%M").to_string(),
            Err(_) => format!("@{}ms", self.0),
        }
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

/// In JSON a time is an RFC 3339 string in UTC with milliseconds, as `Serialize` writes it.
impl schemars::JsonSchema for Timestamp {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "format": "date-time",
            "description": "RFC 3339 in UTC, e.g. 2026-03-01T12:00:00Z"
        })
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zone_is_required() {
        assert!(Timestamp::parse("2026-03-01T12:00:00").is_err());
        assert!(Timestamp::parse("03/01/2026").is_err());
        let t = Timestamp::parse("2026-03-01T14:00:00+02:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-03-01T12:00:00Z");
    }

    #[test]
    fn millis_round_trip() {
        let t = Timestamp::parse("2026-03-01T12:00:00.250Z").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-03-01T12:00:00.250Z");
        assert_eq!(Timestamp::parse(&t.to_rfc3339()).unwrap(), t);
    }
}
