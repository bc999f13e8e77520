//! Table layout: one LMDB named database per table. Composite keys join their parts with
//! NUL, which no stored string may contain, so a prefix scan over `fp\0` finds exactly one
//! episode's rows. Fixed-width values are little-endian; ordered integer keys big-endian.

use heed::types::Bytes;
use heed::{CommitOrAbort, Database, DatabaseFlags, Env, RoTxn, RwTxn, WithoutTls};

use super::{backend, keys};
use crate::model::Timestamp;
use crate::store::StoreError;

/// 1 was the single-process redb layout; 2 the LMDB layout with JSON records; 3 is this
/// one, with the compact records of [`super::records`]. Both older ones migrate on open.
pub const SCHEMA_VERSION: u32 = 3;
/// The LMDB layout with JSON records, an episode's draft in `drafts` and fact times in
/// `fact_times`.
pub const SCHEMA_JSON: u32 = 2;

pub type Db = Database<'static, Bytes, Bytes>;

#[derive(Clone, Copy)]
pub struct Tables {
    /// fingerprint -> the episode and the draft it was written from (its canonical content,
    /// for idempotent re-ingest): [`super::records::encode_episode`]
    pub episodes: Db,
    /// type\0ref -> [`super::records::encode_entity`]
    pub entities: Db,
    /// fp\0RELATION\0type\0ref -> [`super::records::encode_fact`], whose fixed-width times
    /// come first so graph traversal tests validity without decoding the rest
    pub facts: Db,
    /// type\0ref -> fact keys (duplicates sorted)
    pub entity_facts: Db,
    /// new\0prior\0type\0ref -> [`super::records::encode_supersession`]
    pub supersedes: Db,
    /// prior -> supersession keys (duplicates sorted)
    pub superseded_by: Db,
    /// [`super::keys::timeline`]: (concluded_at, fingerprint) -> nothing
    pub timeline: Db,
    /// fingerprint -> (concluded_at, ingested_at, t_valid) ms
    pub episode_times: Db,
    /// ingest sequence (u64 BE) -> fingerprint: the order the store learned of episodes.
    pub ingest_log: Db,
    /// name -> u64
    pub counters: Db,
    /// fingerprint -> a Reflexion lesson (JSON) stored by an earlier release that differs from
    /// what this one renders from the episode; every other lesson is rendered on read.
    pub lessons: Db,
    /// `name \0 version` (zero-padded) -> one version of a skill (JSON); never rewritten.
    pub skills: Db,
    /// embedding_ref -> code unit (JSON).
    pub code_units: Db,
    /// service entity_ref -> embedding_ref of each code unit it owns (duplicates sorted)
    pub service_code: Db,
    /// name -> UTF-8 value
    pub meta: Db,
}

pub(super) const PLAIN: [&str; 12] = [
    "episodes",
    "entities",
    "facts",
    "supersedes",
    "timeline",
    "episode_times",
    "ingest_log",
    "counters",
    "lessons",
    "skills",
    "code_units",
    "meta",
];
pub(super) const DUPLICATES: [&str; 3] = ["entity_facts", "superseded_by", "service_code"];
/// Tables of schema 2 that hold nothing now. They are still created, and kept empty by the
/// migration, because a release before schema 3 creates any table it misses before it reads
/// the schema version: finding them all, it refuses the store as newer and writes nothing.
pub(super) const RETIRED: [&str; 2] = ["drafts", "fact_times"];

/// META: the layout version, the store's identity, the latest knowledge time written (ms),
/// and which Strata version created the store.
pub const SCHEMA: &str = "schema_version";
pub const STORE_ID: &str = "store_id";
pub const KNOWLEDGE_HIGH_WATER: &str = "knowledge_high_water";
pub const CREATED_BY: &str = "created_by";

/// COUNTERS: bumped by every committed write; and the fact counts by kind.
pub const GENERATION: &str = "generation";
pub const COUNT_MENTIONS: &str = "mentions";
pub const COUNT_RESOLVED_BY: &str = "resolved_by";
pub const COUNT_INVALIDATED: &str = "invalidated";

impl Tables {
    /// The table called `name` in [`PLAIN`] or [`DUPLICATES`].
    pub fn by_name(&self, name: &str) -> Option<Db> {
        Some(match name {
            "episodes" => self.episodes,
            "entities" => self.entities,
            "facts" => self.facts,
            "entity_facts" => self.entity_facts,
            "supersedes" => self.supersedes,
            "superseded_by" => self.superseded_by,
            "timeline" => self.timeline,
            "episode_times" => self.episode_times,
            "ingest_log" => self.ingest_log,
            "counters" => self.counters,
            "lessons" => self.lessons,
            "skills" => self.skills,
            "code_units" => self.code_units,
            "service_code" => self.service_code,
            "meta" => self.meta,
            _ => return None,
        })
    }

    /// (concluded_at, ingested_at, t_valid) of the episode `fingerprint`, where it has them.
    pub fn times_of_episode(
        &self,
        txn: &RoTxn,
        fingerprint: &[u8],
    ) -> Result<Option<[Timestamp; 3]>, heed::Error> {
        Ok(self
            .episode_times
            .get(txn, fingerprint)?
            .and_then(keys::times_of::<3>)
            .map(|times| times.map(Timestamp::from_millis)))
    }

    fn assemble(plain: [Option<Db>; 12], duplicates: [Option<Db>; 3]) -> Option<Tables> {
        let [
            episodes,
            entities,
            facts,
            supersedes,
            timeline,
            episode_times,
            ingest_log,
            counters,
            lessons,
            skills,
            code_units,
            meta,
        ] = plain;
        let [entity_facts, superseded_by, service_code] = duplicates;
        Some(Tables {
            episodes: episodes?,
            entities: entities?,
            facts: facts?,
            entity_facts: entity_facts?,
            supersedes: supersedes?,
            superseded_by: superseded_by?,
            timeline: timeline?,
            episode_times: episode_times?,
            ingest_log: ingest_log?,
            counters: counters?,
            lessons: lessons?,
            skills: skills?,
            code_units: code_units?,
            service_code: service_code?,
            meta: meta?,
        })
    }

    /// The tables of an existing store; `None` when they have not been created yet.
    pub fn open(env: &Env<WithoutTls>) -> Result<Option<Tables>, StoreError> {
        let txn = env.read_txn().map_err(backend)?;
        let opened = env
            .open_databases_and_commit(txn, |dbo, txn| -> Result<_, heed::Error> {
                let plain = PLAIN.map(|name| dbo.open_database::<Bytes, Bytes>(txn, Some(name)));
                let dups =
                    DUPLICATES.map(|name| dbo.open_database::<Bytes, Bytes>(txn, Some(name)));
                Ok(CommitOrAbort::<_, ()>::Commit((plain, dups)))
            })
            .map_err(backend)?;
        let Some((plain, dups)) = opened.commit() else {
            return Ok(None);
        };
        let plain = plain
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .map_err(backend)?;
        let dups = dups
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .map_err(backend)?;
        Ok(Self::assemble(
            plain.try_into().unwrap_or([None; 12]),
            dups.try_into().unwrap_or([None; 3]),
        ))
    }

    /// Creates every table (those that exist are opened as they are) and commits. The
    /// caller holds the writer lock.
    pub fn create(env: &Env<WithoutTls>) -> Result<Tables, StoreError> {
        let txn = env.write_txn().map_err(backend)?;
        let made = env
            .create_databases_and_commit(txn, |dbo, txn| -> Result<_, heed::Error> {
                let mut plain = Vec::with_capacity(PLAIN.len());
                for name in PLAIN {
                    plain.push(dbo.create_database::<Bytes, Bytes>(txn, Some(name))?);
                }
                for name in RETIRED {
                    dbo.create_database::<Bytes, Bytes>(txn, Some(name))?;
                }
                let mut dups = Vec::with_capacity(DUPLICATES.len());
                for name in DUPLICATES {
                    let mut options = dbo.database_options().types::<Bytes, Bytes>();
                    options.name(name).flags(DatabaseFlags::DUP_SORT);
                    dups.push(options.create(txn)?);
                }
                let plain: [Database<'_, Bytes, Bytes>; 12] = plain
                    .try_into()
                    .map_err(|_| heed::Error::Io(std::io::Error::other("table count")))?;
                let dups: [Database<'_, Bytes, Bytes>; 3] = dups
                    .try_into()
                    .map_err(|_| heed::Error::Io(std::io::Error::other("table count")))?;
                Ok(CommitOrAbort::<_, ()>::Commit((plain, dups)))
            })
            .map_err(backend)?;
        let (plain, dups) = made
            .commit()
            .ok_or_else(|| StoreError::Internal("creating the tables was aborted".into()))?;
        Self::assemble(plain.map(Some), dups.map(Some))
            .ok_or_else(|| StoreError::Internal("a table could not be created".into()))
    }
}

/// A random identity for a new store.
pub fn new_store_id() -> String {
    let mut bytes = [0u8; 16];
    fastrand::fill(&mut bytes);
    uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .to_string()
}

pub fn meta_get(t: &Tables, txn: &RoTxn, name: &str) -> Result<Option<String>, StoreError> {
    Ok(t.meta
        .get(txn, name.as_bytes())
        .map_err(backend)?
        .map(|v| String::from_utf8_lossy(v).into_owned()))
}

pub fn meta_put(t: &Tables, txn: &mut RwTxn, name: &str, value: &str) -> Result<(), StoreError> {
    t.meta
        .put(txn, name.as_bytes(), value.as_bytes())
        .map_err(backend)
}

pub fn counter(t: &Tables, txn: &RoTxn, name: &str) -> Result<u64, StoreError> {
    Ok(t.counters
        .get(txn, name.as_bytes())
        .map_err(backend)?
        .and_then(|v| <[u8; 8]>::try_from(v).ok())
        .map_or(0, u64::from_le_bytes))
}

pub fn add_to_counter(
    t: &Tables,
    txn: &mut RwTxn,
    name: &str,
    delta: u64,
) -> Result<(), StoreError> {
    let value = counter(t, txn, name)? + delta;
    t.counters
        .put(txn, name.as_bytes(), &value.to_le_bytes())
        .map_err(backend)
}
