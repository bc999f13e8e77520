//! Replays labelled incidents through the real recall path, at each query's own time, and
//! scores the rankings for every leg combination under every fusion policy.

mod datasets;
mod gate;
mod metrics;
mod run;

pub use crate::demo::LabelledQuery;
pub use datasets::{POSTMORTEM_RULE, postmortem_labels};
pub use gate::{GateFailure, gate, reweighted};
pub use metrics::{Metrics, ndcg_at};
pub use run::{
    DatasetReport, EvalReport, Latency, LegTrace, MetricsRow, OracleRow, QueryTrace, evaluate,
};
