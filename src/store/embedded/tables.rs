//! Table layout. Composite keys join their parts with NUL, which no stored string may contain,
//! so a prefix scan over `fp\0` finds exactly one episode's rows.

use redb::{Database, MultimapTableDefinition, TableDefinition};

use super::backend;
use crate::store::StoreError;

pub const SCHEMA_VERSION: &str = "1";

/// fingerprint -> JSON `MemoryEpisode`
pub const EPISODES: TableDefinition<&str, &[u8]> = TableDefinition::new("episodes");
/// fingerprint -> JSON `EpisodeDraft`: the canonical content, for idempotent re-ingest.
pub const DRAFTS: TableDefinition<&str, &[u8]> = TableDefinition::new("drafts");
/// type\0ref -> JSON `MemoryEntity`
pub const ENTITIES: TableDefinition<&[u8], &[u8]> = TableDefinition::new("entities");
/// fp\0RELATION\0type\0ref -> JSON `FactEdge`
pub const FACTS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("facts");
/// type\0ref -> fact keys
pub const ENTITY_FACTS: MultimapTableDefinition<&[u8], &[u8]> =
    MultimapTableDefinition::new("entity_facts");
/// new\0prior\0type\0ref -> JSON `Supersession`
pub const SUPERSEDES: TableDefinition<&[u8], &[u8]> = TableDefinition::new("supersedes");
/// prior -> supersession keys
pub const SUPERSEDED_BY: MultimapTableDefinition<&str, &[u8]> =
    MultimapTableDefinition::new("superseded_by");
/// (concluded_at ms, fingerprint)
pub const TIMELINE: TableDefinition<(i64, &str), ()> = TableDefinition::new("timeline");
/// fact key -> (t_valid, t_invalid, ingested_at, expired_at) in ms, i64::MAX for none: lets
/// graph traversal test validity without decoding fact records.
pub const FACT_TIMES: TableDefinition<&[u8], (i64, i64, i64, i64)> =
    TableDefinition::new("fact_times");
/// fingerprint -> (concluded_at, ingested_at, t_valid) in ms
pub const EPISODE_TIMES: TableDefinition<&str, (i64, i64, i64)> =
    TableDefinition::new("episode_times");
/// ingest sequence -> fingerprint: the order the store learned of episodes, for indexes to follow.
pub const INGEST_LOG: TableDefinition<u64, &str> = TableDefinition::new("ingest_log");
pub const COUNTERS: TableDefinition<&str, u64> = TableDefinition::new("counters");
/// fingerprint → the episode's rendered Reflexion lesson (JSON).
pub const LESSONS: TableDefinition<&str, &[u8]> = TableDefinition::new("lessons");
/// `name \0 version` (zero-padded) → one version of a skill (JSON); never rewritten.
pub const SKILLS: TableDefinition<&str, &[u8]> = TableDefinition::new("skills");
/// embedding_ref → code unit (JSON).
pub const CODE_UNITS: TableDefinition<&str, &[u8]> = TableDefinition::new("code_units");
/// service entity_ref → embedding_ref of each code unit it owns.
pub const SERVICE_CODE: MultimapTableDefinition<&str, &str> =
    MultimapTableDefinition::new("service_code");
pub const META: TableDefinition<&str, &str> = TableDefinition::new("meta");

/// META key: the latest knowledge time written, in ms.
pub const KNOWLEDGE_HIGH_WATER: &str = "knowledge_high_water";

pub const COUNT_MENTIONS: &str = "mentions";
pub const COUNT_RESOLVED_BY: &str = "resolved_by";
pub const COUNT_INVALIDATED: &str = "invalidated";

pub fn create_all(db: &Database) -> Result<(), StoreError> {
    let txn = db.begin_write().map_err(backend)?;
    {
        txn.open_table(EPISODES).map_err(backend)?;
        txn.open_table(DRAFTS).map_err(backend)?;
        txn.open_table(ENTITIES).map_err(backend)?;
        txn.open_table(FACTS).map_err(backend)?;
        txn.open_multimap_table(ENTITY_FACTS).map_err(backend)?;
        txn.open_table(SUPERSEDES).map_err(backend)?;
        txn.open_multimap_table(SUPERSEDED_BY).map_err(backend)?;
        txn.open_table(TIMELINE).map_err(backend)?;
        txn.open_table(INGEST_LOG).map_err(backend)?;
        txn.open_table(FACT_TIMES).map_err(backend)?;
        txn.open_table(EPISODE_TIMES).map_err(backend)?;
        txn.open_table(COUNTERS).map_err(backend)?;
        txn.open_table(LESSONS).map_err(backend)?;
        txn.open_table(SKILLS).map_err(backend)?;
        txn.open_table(CODE_UNITS).map_err(backend)?;
        txn.open_multimap_table(SERVICE_CODE).map_err(backend)?;
        let mut meta = txn.open_table(META).map_err(backend)?;
        meta.insert("schema_version", SCHEMA_VERSION)
            .map_err(backend)?;
    }
    txn.commit().map_err(backend)
}
