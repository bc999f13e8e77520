//! Writer-lock waits, counted where every process on the memory can read them: a writer that
//! had to wait for another's turn adds one wait and its length.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use super::counters::Counters;
use crate::lmdb::observe_waits;

/// From now on, each writer lock this process waits for is counted in the counters in
/// `dir` (opened at the first wait). Once per process; later calls change nothing.
pub fn count_writer_waits(dir: PathBuf) {
    let counters: OnceLock<Option<Counters>> = OnceLock::new();
    observe_waits(Box::new(move |lock: &Path, waited: Duration| {
        let opened = counters.get_or_init(|| match Counters::open(&dir) {
            Ok(c) => Some(c),
            Err(e) => {
                tracing::warn!(error = %e, "writer-lock waits not counted");
                None
            }
        });
        // `store/writer.lock`, `index/bm25.lock`: the lock file and the directory it guards.
        let parts: Vec<String> = lock
            .iter()
            .rev()
            .take(2)
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let name = parts.into_iter().rev().collect::<Vec<_>>().join("/");
        if let Some(c) = opened
            && let Err(e) = c.record_wait(&name, waited)
        {
            tracing::warn!(error = %e, "writer-lock wait not counted");
        }
    }));
}
