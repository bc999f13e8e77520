//! Labelled recall queries: fresh incidents whose correct matches are the past
//! episodes of the same cause.

use std::cmp::Reverse;

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use super::generator::{Episode, utc};
use super::world::CAUSES;

/// A new incident (not among the demo records) and the past episodes recall should find.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelledQuery {
    pub id: String,
    /// `auth`, `data` or `deploy`.
    pub fault_class: String,
    pub query: String,
    /// `TYPE:REF` strings such as `service:authelia`.
    pub entities: Vec<String>,
    /// Recall runs as of this time.
    pub at: DateTime<Utc>,
    /// Fingerprints of the same-cause episodes concluded before `at`, newest first.
    pub expected: Vec<String>,
}

const MIN_EXPECTED: usize = 3;

struct LabelSpec {
    id: &'static str,
    cause: &'static str,
    /// Earliest query time as (year, month, day, hour); moved later if the cause
    /// has fewer than `MIN_EXPECTED` past episodes by then.
    not_before: (i32, u32, u32, u32),
    /// How long after the latest concluded record the new incident is reported.
    minutes_after_record: i64,
    query: &'static str,
}

const SPECS: [LabelSpec; 9] = [
    LabelSpec {
        id: "Q-AUTH-1",
        cause: "auth-session-secret-rotated",
        not_before: (2026, 1, 14, 9),
        minutes_after_record: 150,
        query: "Everyone is stuck in a login redirect loop since the secret rotation job ran this morning; authelia rejects the session cookie and forward_auth keeps answering 401 Unauthorized.",
    },
    LabelSpec {
        id: "Q-DATA-1",
        cause: "data-pgbouncer-pool-exhausted",
        not_before: (2026, 2, 19, 14),
        minutes_after_record: 200,
        query: "App pods throwing FATAL: too many connections and requests hanging until context deadline exceeded; SHOW POOLS on pgbouncer shows a long cl_waiting queue in front of postgres.",
    },
    LabelSpec {
        id: "Q-DEPLOY-1",
        cause: "deploy-caddy-tls-renewal-failed",
        not_before: (2026, 3, 26, 3),
        minutes_after_record: 135,
        query: "Browsers and webhook senders report x509: certificate has expired on every public hostname; caddy logs show the ACME DNS challenge failing on renewal.",
    },
    LabelSpec {
        id: "Q-AUTH-2",
        cause: "auth-ldap-bind-password-expired",
        not_before: (2026, 5, 6, 11),
        minutes_after_record: 250,
        query: "SSO is down for all users: authelia cannot bind to lldap and logs LDAP Result Code 49 Invalid Credentials for its service account.",
    },
    LabelSpec {
        id: "Q-DATA-2",
        cause: "data-postgres-wal-disk-full",
        not_before: (2026, 6, 11, 16),
        minutes_after_record: 170,
        query: "Postgres refuses writes with No space left on device under pg_wal; the WAL volume filled up overnight and the primary is effectively read-only.",
    },
    LabelSpec {
        id: "Q-DEPLOY-2",
        cause: "deploy-tei-pooling-default-changed",
        not_before: (2026, 7, 15, 8),
        minutes_after_record: 285,
        query: "Since the text-embeddings-inference image was bumped, recall returns unrelated incidents and cosine scores dropped sharply; suspect tei-embed changed its pooling so new vectors no longer match what is in qdrant.",
    },
    LabelSpec {
        id: "Q-AUTH-3",
        cause: "auth-redis-session-eviction",
        not_before: (2026, 8, 20, 13),
        minutes_after_record: 125,
        query: "Users get kicked out of SSO every few minutes and have to log in again; redis used_memory sits at maxmemory and evicted_keys keeps climbing.",
    },
    LabelSpec {
        id: "Q-DATA-3",
        cause: "data-qdrant-dimension-mismatch",
        not_before: (2026, 9, 24, 10),
        minutes_after_record: 220,
        query: "Embedding upserts into qdrant fail with a vector dimension error right after we switched the model served by tei-embed; the indexer logs 400 Bad Request for every batch.",
    },
    LabelSpec {
        id: "Q-DEPLOY-3",
        cause: "deploy-argocd-wrong-env-values",
        not_before: (2026, 11, 5, 15),
        minutes_after_record: 190,
        query: "After the last argocd sync the production workers are running with staging env values and pointing at the wrong postgres database.",
    },
];

pub(crate) fn build(episodes: &[Episode]) -> Vec<LabelledQuery> {
    SPECS
        .iter()
        .filter_map(|spec| label(episodes, spec))
        .collect()
}

fn label(episodes: &[Episode], spec: &LabelSpec) -> Option<LabelledQuery> {
    let cause = CAUSES.iter().find(|cause| cause.id == spec.cause)?;
    let same_cause: Vec<&Episode> = episodes
        .iter()
        .filter(|episode| episode.cause.id == cause.id)
        .collect();

    let (year, month, day, hour) = spec.not_before;
    let mut anchor = utc(year, month, day, hour);
    if let Some(enough) = same_cause.get(MIN_EXPECTED - 1) {
        anchor = anchor.max(enough.concluded_at);
    }
    let latest = episodes
        .iter()
        .rev()
        .find(|episode| episode.concluded_at <= anchor)
        .map_or(anchor, |episode| episode.concluded_at);
    let at = latest + TimeDelta::minutes(spec.minutes_after_record);

    let mut expected: Vec<&Episode> = same_cause
        .into_iter()
        .filter(|episode| episode.concluded_at < at)
        .collect();
    expected.sort_by_key(|episode| Reverse(episode.concluded_at));

    Some(LabelledQuery {
        id: spec.id.to_owned(),
        fault_class: cause.class.as_str().to_owned(),
        query: spec.query.to_owned(),
        entities: cause
            .services
            .iter()
            .map(|service| format!("service:{}", service.name()))
            .collect(),
        at,
        expected: expected
            .into_iter()
            .map(|episode| episode.fingerprint.clone())
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::super::generator::{DEMO_SEED, episodes, generate};
    use super::*;

    #[test]
    fn three_labels_per_class_each_for_a_distinct_cause() {
        let memory = generate();
        assert_eq!(memory.labels.len(), 9);
        for class in ["auth", "data", "deploy"] {
            let count = memory
                .labels
                .iter()
                .filter(|l| l.fault_class == class)
                .count();
            assert_eq!(count, 3, "{class}");
        }
        let causes: HashSet<&str> = SPECS.iter().map(|spec| spec.cause).collect();
        assert_eq!(causes.len(), SPECS.len());
        let ids: HashSet<&str> = memory.labels.iter().map(|l| l.id.as_str()).collect();
        assert_eq!(ids.len(), memory.labels.len());
    }

    #[test]
    fn expected_matches_are_all_earlier_same_cause_episodes() {
        let memory = generate();
        let episodes = episodes(DEMO_SEED);
        let concluded: HashMap<&str, DateTime<Utc>> = episodes
            .iter()
            .map(|e| (e.fingerprint.as_str(), e.concluded_at))
            .collect();
        let summaries: HashSet<&str> = memory
            .records
            .iter()
            .map(|r| r.record["summary_nl"].as_str().unwrap())
            .collect();
        for (label, spec) in memory.labels.iter().zip(SPECS.iter()) {
            assert!(label.expected.len() >= MIN_EXPECTED, "{}", label.id);
            assert!(label.at >= utc(2026, 1, 1, 0) && label.at < utc(2027, 1, 1, 0));
            assert!(!summaries.contains(label.query.as_str()));
            assert!(!label.entities.is_empty());
            assert!(label.entities.iter().all(|e| e.starts_with("service:")));

            let times: Vec<DateTime<Utc>> = label
                .expected
                .iter()
                .map(|fp| concluded[fp.as_str()])
                .collect();
            assert!(times.iter().all(|&t| t < label.at));
            assert!(times.windows(2).all(|pair| pair[0] > pair[1]));

            let mut truth: Vec<&str> = episodes
                .iter()
                .filter(|e| e.cause.id == spec.cause && e.concluded_at < label.at)
                .map(|e| e.fingerprint.as_str())
                .collect();
            truth.reverse();
            assert_eq!(label.expected, truth);
        }
    }

    #[test]
    fn labels_round_trip_through_serde() {
        let labels = generate().labels;
        let json = serde_json::to_string(&labels).unwrap();
        let back: Vec<LabelledQuery> = serde_json::from_str(&json).unwrap();
        assert_eq!(labels, back);
    }
}
