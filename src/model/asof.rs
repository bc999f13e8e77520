use serde::Serialize;

use super::{FactEdge, Timestamp};

/// A point on both axes: "what was true at `valid_at`, as we knew it at `known_at`".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AsOf {
    pub valid_at: Timestamp,
    pub known_at: Timestamp,
}

/// A fact's state at an as-of point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FactState {
    Valid,
    Invalidated,
    NotYetValid,
    NotYetKnown,
}

impl FactState {
    pub fn as_str(self) -> &'static str {
        match self {
            FactState::Valid => "valid",
            FactState::Invalidated => "invalidated",
            FactState::NotYetValid => "not_yet_valid",
            FactState::NotYetKnown => "not_yet_known",
        }
    }
}

impl AsOf {
    pub fn now(now: Timestamp) -> Self {
        AsOf {
            valid_at: now,
            known_at: now,
        }
    }

    /// Known at K iff `ingested_at <= K`.
    pub fn knows(&self, ingested_at: Timestamp) -> bool {
        ingested_at <= self.known_at
    }

    /// The end of a valid interval as known at K: an invalidation counts only once recorded.
    pub fn known_end(
        &self,
        t_invalid: Option<Timestamp>,
        expired_at: Option<Timestamp>,
    ) -> Option<Timestamp> {
        match (t_invalid, expired_at) {
            (Some(end), Some(recorded)) if recorded <= self.known_at => Some(end),
            _ => None,
        }
    }

    /// Half-open interval: valid at V iff `t_valid <= V < t_invalid`.
    pub fn state(
        &self,
        t_valid: Timestamp,
        t_invalid: Option<Timestamp>,
        ingested_at: Timestamp,
        expired_at: Option<Timestamp>,
    ) -> FactState {
        if !self.knows(ingested_at) {
            return FactState::NotYetKnown;
        }
        if self.valid_at < t_valid {
            return FactState::NotYetValid;
        }
        match self.known_end(t_invalid, expired_at) {
            Some(end) if end <= self.valid_at => FactState::Invalidated,
            _ => FactState::Valid,
        }
    }

    /// The state of the fact's version known at K.
    pub fn fact_state(&self, fact: &FactEdge) -> FactState {
        let fact = fact.known_at(self.known_at);
        self.state(
            fact.t_valid,
            fact.t_invalid,
            fact.ingested_at,
            fact.expired_at,
        )
    }

    pub fn fact_valid(&self, fact: &FactEdge) -> bool {
        self.fact_state(fact) == FactState::Valid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        Timestamp::parse(s).unwrap()
    }

    #[test]
    fn half_open_interval_on_valid_axis() {
        let (tv, ti) = (ts("2026-01-01T00:00:00Z"), ts("2026-02-01T00:00:00Z"));
        let ing = ts("2025-12-01T00:00:00Z");
        let at = |v: &str| AsOf {
            valid_at: ts(v),
            known_at: ts("2027-01-01T00:00:00Z"),
        };
        assert_eq!(
            at("2025-12-31T23:59:59.999Z").state(tv, Some(ti), ing, Some(ing)),
            FactState::NotYetValid
        );
        assert_eq!(
            at("2026-01-01T00:00:00Z").state(tv, Some(ti), ing, Some(ing)),
            FactState::Valid
        );
        assert_eq!(
            at("2026-01-31T23:59:59.999Z").state(tv, Some(ti), ing, Some(ing)),
            FactState::Valid
        );
        assert_eq!(
            at("2026-02-01T00:00:00Z").state(tv, Some(ti), ing, Some(ing)),
            FactState::Invalidated
        );
    }

    #[test]
    fn knowledge_axis_boundaries() {
        let (tv, ti) = (ts("2026-01-01T00:00:00Z"), ts("2026-02-01T00:00:00Z"));
        let ing = ts("2026-01-05T00:00:00Z");
        let exp = ts("2026-03-01T00:00:00Z");
        let at = |k: &str| AsOf {
            valid_at: ts("2026-02-15T00:00:00Z"),
            known_at: ts(k),
        };
        assert_eq!(
            at("2026-01-04T23:59:59.999Z").state(tv, Some(ti), ing, Some(exp)),
            FactState::NotYetKnown
        );
        assert_eq!(
            at("2026-01-05T00:00:00Z").state(tv, Some(ti), ing, Some(exp)),
            FactState::Valid
        );
        assert_eq!(
            at("2026-02-28T23:59:59.999Z").state(tv, Some(ti), ing, Some(exp)),
            FactState::Valid,
            "invalidation not yet recorded"
        );
        assert_eq!(
            at("2026-03-01T00:00:00Z").state(tv, Some(ti), ing, Some(exp)),
            FactState::Invalidated
        );
    }
}
