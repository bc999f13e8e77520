use serde::Serialize;

use super::run::EvalReport;
use crate::recall::FusionPolicy;

/// The largest AC@1 drop against the baseline that still passes.
pub const AC1_TOLERANCE: f64 = 0.02;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GateFailure {
    pub dataset: String,
    pub legs: String,
    pub fusion: String,
    pub baseline_ac1: f64,
    pub ac1: f64,
}

/// Every row whose AC@1 fell more than [`AC1_TOLERANCE`] below the baseline's same row. The
/// `weighted` rows of a dataset are compared only where both runs used the same leg weights
/// (see [`reweighted`]).
pub fn gate(baseline: &EvalReport, current: &EvalReport) -> Vec<GateFailure> {
    let mut failures = Vec::new();
    for base in &baseline.datasets {
        let Some(now) = current.datasets.iter().find(|d| d.name == base.name) else {
            continue;
        };
        let same_weights = base.weights == now.weights;
        for row in &base.rows {
            if matches!(row.fusion, FusionPolicy::Weighted | FusionPolicy::Adaptive)
                && !same_weights
            {
                continue;
            }
            let Some(cur) = now
                .rows
                .iter()
                .find(|r| r.legs == row.legs && r.fusion == row.fusion)
            else {
                continue;
            };
            if cur.metrics.ac1 < row.metrics.ac1 - AC1_TOLERANCE - 1e-12 {
                failures.push(GateFailure {
                    dataset: base.name.clone(),
                    legs: row.legs.clone(),
                    fusion: row.fusion.as_str().to_string(),
                    baseline_ac1: row.metrics.ac1,
                    ac1: cur.metrics.ac1,
                });
            }
        }
    }
    failures
}

/// The datasets whose `weighted` and `adaptive` rows the gate leaves alone: the two runs weighed the legs
/// differently (a config's `[recall.weights]`, say), so those rows measure different policies.
pub fn reweighted(baseline: &EvalReport, current: &EvalReport) -> Vec<String> {
    baseline
        .datasets
        .iter()
        .filter(|base| {
            current
                .datasets
                .iter()
                .any(|now| now.name == base.name && now.weights != base.weights)
        })
        .map(|base| base.name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{DatasetReport, Latency, Metrics, MetricsRow};
    use crate::recall::LegWeights;

    fn report(ac1: f64, weights: LegWeights) -> EvalReport {
        let row = |fusion| MetricsRow {
            stale: None,
            legs: "semantic+bm25+graph".into(),
            fusion,
            metrics: Metrics {
                ac1,
                ..Metrics::default()
            },
        };
        EvalReport {
            datasets: vec![DatasetReport {
                name: "set".into(),
                queries: 1,
                rule: String::new(),
                embedder: String::new(),
                weights,
                rows: vec![row(FusionPolicy::Rrf), row(FusionPolicy::Weighted)],
                oracle: Vec::new(),
                latency_ms: Latency::default(),
                skipped: Vec::new(),
                traces: Vec::new(),
            }],
        }
    }

    #[test]
    fn weighted_rows_are_gated_only_under_the_same_weights() {
        let baseline = report(1.0, LegWeights::default());
        let same = report(0.0, LegWeights::default());
        let fusions: Vec<String> = gate(&baseline, &same)
            .into_iter()
            .map(|f| f.fusion)
            .collect();
        assert_eq!(fusions, ["rrf", "weighted"]);
        assert!(reweighted(&baseline, &same).is_empty());

        let other = LegWeights {
            bm25: 0.25,
            ..LegWeights::default()
        };
        let reweighed = report(0.0, other);
        let fusions: Vec<String> = gate(&baseline, &reweighed)
            .into_iter()
            .map(|f| f.fusion)
            .collect();
        assert_eq!(fusions, ["rrf"], "the weighted row measured another policy");
        assert_eq!(reweighted(&baseline, &reweighed), ["set"]);
    }
}
