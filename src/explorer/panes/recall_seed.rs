//! What a recall seeded from an episode (`recall.seed`) stands for: the episode, left out
//! of the results, and its facts, whose entities valid at the as-of point seed the graph
//! leg as the entities the query implicates, as an agent's would.

use crate::model::{AsOf, EntityKey, FactEdge};
use crate::query::views::EpisodeDetail;

#[derive(Clone, Debug, PartialEq)]
pub struct RecallSeed {
    pub fingerprint: String,
    pub facts: Vec<FactEdge>,
}

impl RecallSeed {
    /// The query text an episode stands for (its summary), and the seed.
    pub fn of(detail: &EpisodeDetail) -> (String, RecallSeed) {
        (
            detail.episode.summary_nl.clone(),
            RecallSeed {
                fingerprint: detail.episode.incident_fingerprint.clone(),
                facts: detail.facts.clone(),
            },
        )
    }

    /// The entities of its facts valid at `as_of`, each once, in key order: a rerun at
    /// another as-of point seeds the graph with what was true then.
    pub fn entities(&self, as_of: &AsOf) -> Vec<EntityKey> {
        let mut keys: Vec<EntityKey> = self
            .facts
            .iter()
            .filter(|f| as_of.fact_valid(f))
            .map(|f| f.entity.clone())
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Provenance, Relation, Timestamp};

    fn fact(entity: &str, t_valid: i64, t_invalid: Option<i64>) -> FactEdge {
        FactEdge {
            episode: "INC-1".into(),
            relation: Relation::Mentions,
            entity: entity.parse().unwrap(),
            t_valid: Timestamp::from_millis(t_valid),
            t_invalid: t_invalid.map(Timestamp::from_millis),
            ingested_at: Timestamp::from_millis(0),
            expired_at: t_invalid.map(|_| Timestamp::from_millis(0)),
            superseded_by: None,
            provenance: Provenance {
                source: "test".into(),
                status: "concluded".into(),
                confidence_score: 1.0,
            },
            versions: Vec::new(),
        }
    }

    #[test]
    fn seeds_are_the_entities_valid_at_the_as_of_point_once_each() {
        let seed = RecallSeed {
            fingerprint: "INC-1".into(),
            facts: vec![
                fact("service:db", 0, None),
                fact("host:a", 0, Some(100)),
                fact("service:api", 50, None),
                fact("service:db", 10, None),
            ],
        };
        let at = |v: i64| AsOf {
            valid_at: Timestamp::from_millis(v),
            known_at: Timestamp::from_millis(1_000),
        };
        let names = |v: i64| -> Vec<String> {
            seed.entities(&at(v))
                .iter()
                .map(EntityKey::flag_form)
                .collect()
        };
        assert_eq!(names(20), ["host:a", "service:db"]);
        assert_eq!(names(200), ["service:api", "service:db"]);
    }
}
