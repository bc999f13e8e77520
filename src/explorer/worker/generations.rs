//! The one staleness tracker: the newest request id of each kind. A reply to an older
//! request of its kind is stale and dropped; work for a replaced request may stop early.

use std::sync::atomic::{AtomicU64, Ordering};

use strum::EnumCount;

use super::protocol::RequestKind;

#[derive(Debug, Default)]
pub struct Generations([AtomicU64; RequestKind::COUNT]);

impl Generations {
    /// Records `id` as the newest request of its kind.
    pub fn issue(&self, kind: RequestKind, id: u64) {
        self.0[kind as usize].fetch_max(id, Ordering::AcqRel);
    }

    /// Whether no newer request of the kind was issued after `id`.
    pub fn is_current(&self, kind: RequestKind, id: u64) -> bool {
        self.0[kind as usize].load(Ordering::Acquire) <= id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_request_makes_older_ones_of_its_kind_stale() {
        let g = Generations::default();
        g.issue(RequestKind::Episode, 3);
        g.issue(RequestKind::Timeline, 4);
        g.issue(RequestKind::Episode, 5);
        assert!(!g.is_current(RequestKind::Episode, 3));
        assert!(g.is_current(RequestKind::Episode, 5));
        assert!(g.is_current(RequestKind::Timeline, 4));
    }
}
