use serde::{Deserialize, Serialize};

use super::metrics::Metrics;
use crate::demo::LabelledQuery;
use crate::model::{AsOf, EntityKey, Timestamp};
use crate::recall::{FusionPolicy, LegSet, LegWeights, RecallEngine, RecallRequest};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricsRow {
    pub legs: String,
    pub fusion: FusionPolicy,
    #[serde(flatten)]
    pub metrics: Metrics,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub p50: f64,
    pub p95: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatasetReport {
    pub name: String,
    pub queries: usize,
    pub rule: String,
    pub embedder: String,
    /// The legs' weights in the `weighted` rows.
    pub weights: LegWeights,
    pub rows: Vec<MetricsRow>,
    /// Fused recall with every leg, milliseconds.
    pub latency_ms: Latency,
    /// Queries whose entities could not be parsed, with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    pub datasets: Vec<DatasetReport>,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// How deep each ranking is scored (the @10 of MRR@10, R@10 and nDCG@10).
const RANKED: usize = 10;

/// Replays every labelled query at its own time (V = K = the query's time) for every leg
/// combination under every fusion policy; the top [`RANKED`] are scored, the query's own
/// incident left out.
pub async fn evaluate(
    engine: &RecallEngine,
    name: &str,
    rule: &str,
    labels: &[LabelledQuery],
) -> DatasetReport {
    let mut skipped = Vec::new();
    let queries: Vec<(&LabelledQuery, Vec<EntityKey>)> = labels
        .iter()
        .filter_map(|l| {
            match l
                .entities
                .iter()
                .map(|e| e.parse::<EntityKey>())
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(entities) => Some((l, entities)),
                Err(e) => {
                    skipped.push(format!("{}: entities: {e}", l.id));
                    None
                }
            }
        })
        .collect();
    let mut rows = Vec::new();
    let mut latencies = Vec::new();
    for legs in LegSet::combinations() {
        for fusion in FusionPolicy::ALL {
            let mut scores = Vec::with_capacity(queries.len());
            for (label, entities) in &queries {
                let at = Timestamp::from_datetime(label.at);
                let response = engine
                    .recall(&RecallRequest {
                        exclude: Vec::new(),
                        text: label.query.clone(),
                        entities: entities.clone(),
                        as_of: AsOf {
                            valid_at: at,
                            known_at: at,
                        },
                        // One more than is scored: the query's own incident, when the memory
                        // already holds it, is left out (it is never its own past incident).
                        k: RANKED + 1,
                        legs,
                        fusion,
                    })
                    .await;
                if legs == LegSet::ALL && fusion == FusionPolicy::default() {
                    latencies.push(response.latency_ms);
                }
                let ranked: Vec<String> = response
                    .results
                    .into_iter()
                    .map(|r| r.fingerprint)
                    .filter(|fp| *fp != label.id)
                    .take(RANKED)
                    .collect();
                scores.push(Metrics::of(&ranked, &label.expected));
            }
            rows.push(MetricsRow {
                legs: legs.name(),
                fusion,
                metrics: Metrics::mean(&scores),
            });
        }
    }
    latencies.sort_by(f64::total_cmp);
    DatasetReport {
        name: name.to_string(),
        queries: queries.len(),
        rule: rule.to_string(),
        embedder: engine.embedder_label().to_string(),
        weights: engine.weights,
        rows,
        latency_ms: Latency {
            p50: percentile(&latencies, 0.50),
            p95: percentile(&latencies, 0.95),
        },
        skipped,
    }
}
