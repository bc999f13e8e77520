//! How a new collection is laid out over the peers of a Qdrant cluster: `[qdrant]` in the
//! config file. A single Qdrant is a cluster of one peer.

use serde::Deserialize;

/// Shards a new collection gets by default: one per peer, at most this many.
pub const MAX_DEFAULT_SHARDS: u32 = 8;

/// `[qdrant]`: `shard_number`, `replication_factor` and `write_consistency_factor` of the
/// collection Strata creates; each left out takes its default from the cluster's peer count.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct QdrantLayout {
    /// Default: the peer count, at most [`MAX_DEFAULT_SHARDS`].
    pub shard_number: Option<u32>,
    /// Copies of each shard, on distinct peers. Default: 2 where there are 2 peers or more.
    pub replication_factor: Option<u32>,
    /// Copies that must acknowledge a write. Default: 1, so a write lands while one peer
    /// holding a copy is down.
    pub write_consistency_factor: Option<u32>,
}

/// The layout a collection is created with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub shard_number: u32,
    pub replication_factor: u32,
    pub write_consistency_factor: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("[qdrant] {key} = 0: expected at least 1")]
    Zero { key: &'static str },
    #[error(
        "[qdrant] replication_factor = {replication} cannot be met: the Qdrant cluster has \
         {peers} peer(s), and each copy of a shard needs a peer of its own; lower \
         replication_factor to at most {peers} or add peers"
    )]
    TooFewPeers { replication: u32, peers: u32 },
    #[error(
        "[qdrant] write_consistency_factor = {consistency} exceeds replication_factor = \
         {replication}: a write cannot be acknowledged by more copies than there are"
    )]
    Consistency { consistency: u32, replication: u32 },
}

impl QdrantLayout {
    /// Refuses zeros, which no cluster can use; checked when the config is read.
    pub fn check(&self) -> Result<(), LayoutError> {
        for (key, value) in [
            ("shard_number", self.shard_number),
            ("replication_factor", self.replication_factor),
            ("write_consistency_factor", self.write_consistency_factor),
        ] {
            if value == Some(0) {
                return Err(LayoutError::Zero { key });
            }
        }
        Ok(())
    }

    /// The layout for a cluster of `peers` peers, or why it cannot have it.
    pub fn resolve(&self, peers: u32) -> Result<Resolved, LayoutError> {
        self.check()?;
        let peers = peers.max(1);
        let replication = self
            .replication_factor
            .unwrap_or(if peers >= 2 { 2 } else { 1 });
        if replication > peers {
            return Err(LayoutError::TooFewPeers { replication, peers });
        }
        let consistency = self.write_consistency_factor.unwrap_or(1);
        if consistency > replication {
            return Err(LayoutError::Consistency {
                consistency,
                replication,
            });
        }
        Ok(Resolved {
            shard_number: self
                .shard_number
                .unwrap_or_else(|| peers.min(MAX_DEFAULT_SHARDS)),
            replication_factor: replication,
            write_consistency_factor: consistency,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_the_peer_count() {
        let d = QdrantLayout::default();
        let r = |s, rf, w| Resolved {
            shard_number: s,
            replication_factor: rf,
            write_consistency_factor: w,
        };
        assert_eq!(d.resolve(1), Ok(r(1, 1, 1)));
        assert_eq!(d.resolve(2), Ok(r(2, 2, 1)));
        assert_eq!(d.resolve(3), Ok(r(3, 2, 1)));
        assert_eq!(d.resolve(20), Ok(r(MAX_DEFAULT_SHARDS, 2, 1)));
        let set = QdrantLayout {
            shard_number: Some(6),
            replication_factor: Some(3),
            write_consistency_factor: Some(2),
        };
        assert_eq!(set.resolve(3), Ok(r(6, 3, 2)));
    }

    #[test]
    fn impossible_layouts_name_both_numbers() {
        let e = QdrantLayout {
            replication_factor: Some(4),
            ..Default::default()
        }
        .resolve(3)
        .unwrap_err();
        assert_eq!(
            e,
            LayoutError::TooFewPeers {
                replication: 4,
                peers: 3
            }
        );
        let text = e.to_string();
        assert!(
            text.contains("replication_factor = 4") && text.contains("3 peer(s)"),
            "{text}"
        );
        let e = QdrantLayout {
            write_consistency_factor: Some(3),
            ..Default::default()
        }
        .resolve(3)
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("write_consistency_factor = 3") && e.contains("replication_factor = 2"),
            "{e}"
        );
        let e = QdrantLayout {
            shard_number: Some(0),
            ..Default::default()
        }
        .check()
        .unwrap_err()
        .to_string();
        assert_eq!(e, "[qdrant] shard_number = 0: expected at least 1");
    }
}
