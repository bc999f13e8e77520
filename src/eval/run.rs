use serde::{Deserialize, Serialize};

use super::metrics::Metrics;
use crate::demo::LabelledQuery;
use crate::model::{AsOf, EntityKey, Timestamp};
use crate::recall::{
    FusionPolicy, Leg, LegRun, LegSet, LegStatus, LegWeights, RecallEngine, RecallRequest,
    StalePolicy, fate,
};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricsRow {
    pub legs: String,
    pub fusion: FusionPolicy,
    /// Set on rows ranked under a stale policy that reorders (`follow`); other rows rank as
    /// fused (`keep` and `mark` do not reorder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<StalePolicy>,
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
    /// Per-query ceilings beside the policies (absent from reports before them).
    #[serde(default)]
    pub oracle: Vec<OracleRow>,
    /// Fused recall with every leg, milliseconds.
    pub latency_ms: Latency,
    /// Queries whose entities could not be parsed, with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// Each query's per-leg trace, when asked for (`--legs-report`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<QueryTrace>,
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

/// One leg's part in one query: where it placed the first expected episode and how sure it was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LegTrace {
    pub leg: Leg,
    pub status: LegStatus,
    /// 1-based position of the first expected episode in the leg's own list; `None`: not in it.
    pub rank: Option<usize>,
    pub confidence: Option<f64>,
    /// The evidence the confidence rests on, `name value` pairs.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub evidence: String,
    /// The weight its reciprocal ranks counted with under the adaptive policy.
    pub adaptive_weight: f64,
    /// The leg's whole list, best first, with its scores.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranked: Vec<(String, f64)>,
}

/// Where each leg and each fusion policy put one query's expected episodes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryTrace {
    pub id: String,
    pub expected: Vec<String>,
    pub legs: Vec<LegTrace>,
    /// 1-based position of the first expected episode in the top 10 fused with every leg,
    /// under each policy; `None`: not in it.
    pub fused: Vec<(FusionPolicy, Option<usize>)>,
}

/// A ceiling no fixed policy can pass: per query, the best of several rankings, chosen by
/// looking at the labels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OracleRow {
    pub name: String,
    #[serde(flatten)]
    pub metrics: Metrics,
}

/// The oracles reported beside the policies.
const ORACLES: [(&str, &[FusionPolicy]); 2] = [
    ("best single leg per query", &[]),
    (
        "best of the four policies per query (all legs)",
        &FusionPolicy::ALL,
    ),
];

/// Replays every labelled query at its own time (V = K = the query's time) through the real
/// recall path with every leg; the legs' rankings are then fused for every leg combination
/// under every fusion policy (legs are independent, so a combination fuses the same lists a
/// recall with only those legs would). The top [`RANKED`] are scored, the query's own
/// incident left out of every leg. `trace`: keep each query's per-leg trace.
pub async fn evaluate(
    engine: &RecallEngine,
    name: &str,
    rule: &str,
    labels: &[LabelledQuery],
    trace: bool,
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
    let mut variants: Vec<(LegSet, FusionPolicy, Option<StalePolicy>)> = LegSet::combinations()
        .into_iter()
        .flat_map(|legs| FusionPolicy::ALL.map(|fusion| (legs, fusion, None)))
        .collect();
    variants
        .extend(FusionPolicy::ALL.map(|fusion| (LegSet::ALL, fusion, Some(StalePolicy::Follow))));
    let mut scores: Vec<Vec<Metrics>> = vec![Vec::with_capacity(queries.len()); variants.len()];
    let mut oracles: Vec<Vec<Metrics>> = vec![Vec::with_capacity(queries.len()); ORACLES.len()];
    let mut latencies = Vec::new();
    let mut traces = Vec::new();
    for (label, entities) in &queries {
        let at = Timestamp::from_datetime(label.at);
        let as_of = AsOf {
            valid_at: at,
            known_at: at,
        };
        let recalled = engine
            .recall_explained(&RecallRequest {
                // The query's own incident, when the memory already holds it, is never its own
                // past incident: every leg ranks the others.
                exclude: vec![label.id.clone()],
                text: label.query.clone(),
                entities: entities.clone(),
                as_of,
                k: RANKED,
                legs: LegSet::ALL,
                fusion: FusionPolicy::default(),
                stale: Default::default(),
            })
            .await;
        latencies.push(recalled.response.latency_ms);
        let successors = engine
            .current_successors(recalled.concluded_at.keys().cloned().collect(), as_of)
            .await;
        let ranked_by = |legs: LegSet, fusion: FusionPolicy, stale| -> Vec<String> {
            let fused: Vec<String> = recalled
                .run
                .fuse(
                    legs,
                    fusion,
                    &engine.weights,
                    &recalled.concluded_at,
                    RANKED,
                )
                .into_iter()
                .map(|f| f.fingerprint)
                .collect();
            match stale {
                Some(StalePolicy::Follow) => {
                    fate::follow_order(&fused, |fp| successors.get(fp).map(String::as_str))
                        .into_iter()
                        .map(|(fp, _)| fp)
                        .take(RANKED)
                        .collect()
                }
                _ => fused,
            }
        };
        let mut fused_with_all = Vec::new();
        for (i, (legs, fusion, stale)) in variants.iter().enumerate() {
            let ranked = ranked_by(*legs, *fusion, *stale);
            let metrics = Metrics::of(&ranked, &label.expected);
            if *legs == LegSet::ALL && stale.is_none() {
                fused_with_all.push((*fusion, metrics));
            }
            scores[i].push(metrics);
        }
        let single: Vec<Metrics> = Leg::ALL
            .iter()
            .map(|leg| {
                let i = variants
                    .iter()
                    .position(|v| *v == (LegSet::of(&[*leg]), FusionPolicy::Rrf, None))
                    .unwrap_or(0);
                scores[i].last().copied().unwrap_or_default()
            })
            .collect();
        let policies: Vec<Metrics> = fused_with_all.iter().map(|(_, m)| *m).collect();
        oracles[0].push(Metrics::best(&single));
        oracles[1].push(Metrics::best(&policies));
        if trace {
            traces.push(trace_of(label, &recalled.run, engine, &fused_with_all));
        }
    }
    latencies.sort_by(f64::total_cmp);
    DatasetReport {
        name: name.to_string(),
        queries: queries.len(),
        rule: rule.to_string(),
        embedder: engine.embedder_label().to_string(),
        weights: engine.weights,
        rows: variants
            .iter()
            .zip(&scores)
            .map(|((legs, fusion, stale), scores)| MetricsRow {
                legs: legs.name(),
                fusion: *fusion,
                stale: *stale,
                metrics: Metrics::mean(scores),
            })
            .collect(),
        oracle: ORACLES
            .iter()
            .zip(&oracles)
            .map(|((name, _), scores)| OracleRow {
                name: name.to_string(),
                metrics: Metrics::mean(scores),
            })
            .collect(),
        latency_ms: Latency {
            p50: percentile(&latencies, 0.50),
            p95: percentile(&latencies, 0.95),
        },
        skipped,
        traces,
    }
}

fn trace_of(
    label: &LabelledQuery,
    run: &LegRun,
    engine: &RecallEngine,
    fused: &[(FusionPolicy, Metrics)],
) -> QueryTrace {
    let first_expected = |list: &[String]| {
        list.iter()
            .position(|fp| label.expected.contains(fp))
            .map(|i| i + 1)
    };
    let adaptive = run.weights(LegSet::ALL, FusionPolicy::Adaptive, &engine.weights);
    let legs = Leg::ALL
        .iter()
        .map(|leg| {
            let report = run.reports.get(*leg);
            let hits = run.rankings.iter().find(|(l, _)| l == leg).map(|(_, h)| h);
            let confidence = report.confidence.as_ref();
            LegTrace {
                leg: *leg,
                status: report.status,
                rank: hits.and_then(|h| first_expected(&h.fingerprints)),
                confidence: confidence.map(|c| c.value),
                evidence: confidence.map(|c| c.describe()).unwrap_or_default(),
                adaptive_weight: adaptive[leg.index()],
                ranked: hits.map_or_else(Vec::new, |h| {
                    h.fingerprints
                        .iter()
                        .cloned()
                        .zip(h.scores.iter().copied().chain(std::iter::repeat(0.0)))
                        .collect()
                }),
            }
        })
        .collect();
    QueryTrace {
        id: label.id.clone(),
        expected: label.expected.clone(),
        legs,
        fused: fused
            .iter()
            .map(|(policy, m)| {
                (
                    *policy,
                    (m.mrr > 0.0).then(|| (1.0 / m.mrr).round() as usize),
                )
            })
            .collect(),
    }
}
