use serde::Serialize;

use super::run::EvalReport;

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

/// Every row whose AC@1 fell more than [`AC1_TOLERANCE`] below the baseline's same row.
pub fn gate(baseline: &EvalReport, current: &EvalReport) -> Vec<GateFailure> {
    let mut failures = Vec::new();
    for base in &baseline.datasets {
        let Some(now) = current.datasets.iter().find(|d| d.name == base.name) else {
            continue;
        };
        for row in &base.rows {
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
