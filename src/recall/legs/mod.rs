//! The standard legs over the embedded indexes and any [`crate::store::MemoryStore`].

mod bm25;
mod graph;
mod semantic;
mod unavailable;

pub use bm25::Bm25Leg;
pub use graph::GraphLeg;
pub use semantic::SemanticLeg;
pub use unavailable::UnavailableLeg;

use crate::index::{IndexError, TextVersions};
use crate::recall::leg::LegQuery;

/// The best `q.limit` hits of an index that holds episodes' texts as first written and as
/// corrected ([`crate::index::versions`]), having read the correction log to `upto`: of each
/// episode only the text known at the query's K, best score first, ties by fingerprint.
/// `search` asks the index for its best N documents: first as many as wanted (the text index
/// and the local vector scan pass over replaced texts while ranking, so that is the only ask
/// there), then twice as many while the documents of other versions leave fewer than wanted.
fn current_versions(
    versions: &TextVersions,
    q: &LegQuery,
    upto: u64,
    search: impl Fn(usize) -> Result<Vec<(String, f32)>, IndexError>,
) -> Result<Vec<(String, f32)>, IndexError> {
    if upto == 0 {
        // Nothing corrected: every document is an episode's text as first written.
        return search(q.limit);
    }
    let mut want = q.limit;
    loop {
        let hits = search(want)?;
        let exhausted = hits.len() < want;
        let mut kept = versions.current(hits, q.as_of.known_at, upto)?;
        if kept.len() >= q.limit || exhausted || want >= (1 << 20) {
            kept.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            kept.truncate(q.limit);
            return Ok(kept);
        }
        want = want.saturating_mul(2);
    }
}
