//! What recall records about itself, for the people who run it: per-leg counters and
//! latencies by recall mode, the warm signal that says whether the memory returns real hits,
//! the Prometheus metrics, and writer-lock waits. Counts and times only: never a query, a
//! summary or a fingerprint.
//!
//! The counters live in an LMDB environment of their own in the data directory
//! ([`crate::store::StoreLocation::telemetry_dir`]), so they survive restarts and every
//! process on one memory adds to the same counts; LMDB's write transactions take turns across
//! processes, so concurrent recalls lose no increment. A recall hands its observation to a
//! background [`Recorder`] and never waits for the write.

mod counters;
pub mod metrics;
mod observation;
pub mod otlp;
mod recorder;
mod waits;
mod warm;

use std::path::PathBuf;

pub use counters::{
    CounterReader, Counters, KEPT as KEPT_RECALLS, LaneCounts, Latency, LockWaits, ModeCounts,
    Snapshot,
};
pub use observation::{Lane, LegObservation, Observation, Outcome};
pub use recorder::Recorder;
pub use waits::count_writer_waits;
pub use warm::{DEFAULT_READY_AT, DEFAULT_WINDOW, Readiness, RecentRecall, WarmSignal};

#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("cannot open the recall counters in {path}: {message}")]
    Open { path: PathBuf, message: String },
    #[error("the recall counters in {path}: {message}")]
    Access { path: PathBuf, message: String },
    #[error(
        "the recall counters in {path} are on a read-only filesystem: recalls are answered but not counted"
    )]
    ReadOnly { path: PathBuf },
}
