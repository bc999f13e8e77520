//! Deterministic synthetic incident records at any scale, for benchmarks and crash tests.

use serde_json::{Value, json};

use crate::model::Timestamp;

const SERVICES: &[&str] = &[
    "authelia",
    "caddy",
    "postgres",
    "pgbouncer",
    "falkordb",
    "qdrant",
    "tei-embed",
    "minio",
    "nats",
    "redis",
    "grafana",
    "argocd",
    "lldap",
    "loki",
    "vault",
    "keycloak",
];
const SYMPTOMS: &[&str] = &[
    "login loop after session secret rotation",
    "connection pool exhausted under load",
    "TLS certificate expired on ingress",
    "disk full on write-ahead log volume",
    "vector dimension mismatch after model upgrade",
    "message stream hit its retention limit",
    "wrong environment values synced by deploy",
    "out of memory on a deep graph traversal",
];

/// Record `i` of a synthetic memory: a new fingerprint every call, roughly one incident an hour
/// from 2020-01-01, with every 10th record superseding the resolving change of record `i - 10`.
pub fn record(i: usize) -> Value {
    let start = Timestamp::from_millis(1_577_836_800_000 + i as i64 * 3_600_000);
    let concluded = start.plus_millis(1_800_000);
    let service = SERVICES[i % SERVICES.len()];
    let other = SERVICES[(i * 7 + 3) % SERVICES.len()];
    let symptom = SYMPTOMS[(i / 3) % SYMPTOMS.len()];
    let mut record = json!({
        "incident_fingerprint": format!("SYN-{i:07}"),
        "summary_nl": format!("{service}: {symptom} (synthetic incident {i}, also affected {other})"),
        "resolution_nl": format!("Applied change chg-{i:07} to {service} and verified recovery"),
        "concluded_at": concluded.to_rfc3339(),
        "t_valid": start.to_rfc3339(),
        "mentions": [
            {"entity_type": "service", "entity_ref": service},
            {"entity_type": "service", "entity_ref": other},
            {"entity_type": "host", "entity_ref": format!("node-{}", i % 32)}
        ],
        "resolved_by": [{"entity_type": "change", "entity_ref": format!("chg-{i:07}")}],
        "provenance": {"source": "synthetic", "status": "concluded", "confidence_score": 0.8}
    });
    if i >= 10 && i.is_multiple_of(10) {
        record["supersedes"] = json!([{
            "incident_fingerprint": format!("SYN-{:07}", i - 10),
            "entity_type": "change",
            "entity_ref": format!("chg-{:07}", i - 10)
        }]);
    }
    record
}

/// Queries of the synthetic sanity case: `count` incidents spread over the first `episodes`
/// records, each asked for by a shuffled two-thirds of the words of its own summary, as of a day
/// after the last record; the incident itself is the one expected answer. Deterministic.
pub fn queries(episodes: usize, count: usize) -> Vec<crate::demo::LabelledQuery> {
    let mut rng = fastrand::Rng::with_seed(0x005e_ed0f_5717);
    let at = Timestamp::from_millis(1_577_836_800_000 + episodes as i64 * 3_600_000 + 86_400_000);
    (0..count.min(episodes))
        .map(|q| {
            let i = rng.usize(0..episodes);
            let record = record(i);
            let summary = record["summary_nl"].as_str().unwrap_or_default();
            let mut words: Vec<&str> = summary.split_whitespace().collect();
            rng.shuffle(&mut words);
            words.truncate((words.len() * 2).div_ceil(3));
            crate::demo::LabelledQuery {
                id: format!("synthetic-query-{q:02}"),
                fault_class: "synthetic".to_string(),
                query: words.join(" "),
                entities: Vec::new(),
                at: at.to_datetime().unwrap_or_default(),
                expected: vec![format!("SYN-{i:07}")],
            }
        })
        .collect()
}
