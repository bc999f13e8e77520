//! Writers that are safe together: optimistic concurrency on the graph's meta node. A write
//! reads the store's generation first, validates against what the graph holds then, and sends
//! one query that writes only if the generation is still the one it read, moving it on by one
//! (run exclusively, see [`FalkorStore::query_exclusively`], so the check and the write are one).
//! A writer that finds the graph moved on validates again, so a real conflict is refused with
//! the rules' own message; a writer that dies holds nothing, so it blocks no one.

use std::time::Duration;

use super::write::Plan;
use super::{FalkorStore, Param, cypher};
use crate::store::StoreError;

/// How many times a write is validated and tried before it gives up on a busy graph.
const ATTEMPTS: u32 = 12;

/// The store's `(:StrataMeta {key: 'store'})` node: absent until Strata first writes.
pub(super) struct StoreMeta {
    pub store_id: String,
    pub generation: u64,
}

impl FalkorStore {
    pub(super) fn store_meta(&self) -> Result<Option<StoreMeta>, StoreError> {
        let rows = self.query(cypher::STORE_META, &[])?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        Ok(Some(StoreMeta {
            store_id: row.string(0)?,
            generation: u64::try_from(row.int(1)?).unwrap_or(0),
        }))
    }

    /// Plans against the graph as it is and writes the plan if no other write landed since;
    /// otherwise plans again. `plan` reads everything its checks need and returns what to
    /// write with what to report.
    pub(super) fn write_guarded<T>(
        &self,
        plan: impl Fn() -> Result<(Plan, T), StoreError>,
    ) -> Result<T, StoreError> {
        for attempt in 1..=ATTEMPTS {
            let seen = self.store_meta()?.map_or(0, |m| m.generation);
            let (plan, outcome) = plan()?;
            if plan.is_empty() {
                // All there already, perhaps from this connection's earlier write that no
                // replica confirmed: acknowledged only once one has.
                self.wait_for_replica()?;
                return Ok(outcome);
            }
            let mut params = plan.params();
            params.push((
                "generation",
                Param::Int(i64::try_from(seen).unwrap_or(i64::MAX)),
            ));
            params.push((
                "store_id",
                Param::Str(crate::store::embedded::new_store_id()),
            ));
            if self
                .query_exclusively(cypher::WRITE_BATCH, &params)?
                .first()
                .is_some()
            {
                return Ok(outcome);
            }
            tracing::info!(
                graph = %self.url,
                generation = seen,
                attempt,
                "another writer landed first; validating the batch again"
            );
            if attempt < ATTEMPTS {
                std::thread::sleep(backoff(attempt));
            }
        }
        Err(StoreError::Contended {
            store: self.url.to_string(),
            attempts: ATTEMPTS,
        })
    }
}

/// A random pause that grows with the attempt (up to 5 ms, 10 ms, … 320 ms), so writers that
/// collided do not collide again in step.
fn backoff(attempt: u32) -> Duration {
    let ceiling = 5u64 << attempt.saturating_sub(1).min(6);
    Duration::from_millis(fastrand::u64(1..=ceiling))
}
