//! Table layout: one LMDB named database per table. Composite keys join their parts with
//! NUL, which no stored string may contain, so a prefix scan over `fp\0` finds exactly one
//! episode's rows. Fixed-width values are little-endian; ordered integer keys big-endian.
//! Every value ends in a checksum of its key and bytes ([`super::table`]).

use heed::types::Bytes;
use heed::{CommitOrAbort, Database, DatabaseFlags, RoTxn, RwTxn};

use super::table::{Db, Table};
use super::{backend, keys};
use crate::lmdb::SharedEnv;
use crate::model::Timestamp;
use crate::store::StoreError;

/// 1 was the single-process redb layout; 2 the LMDB layout with JSON records; 3 the compact
/// records of [`super::records`]; 4 is this one, the same records sealed with a checksum
/// each. Every older one migrates on open.
pub const SCHEMA_VERSION: u32 = 4;
/// The compact records without checksums.
pub const SCHEMA_COMPACT: u32 = 3;
/// The LMDB layout with JSON records, an episode's draft in `drafts` and fact times in
/// `fact_times`.
pub const SCHEMA_JSON: u32 = 2;

#[derive(Clone, Copy)]
pub struct Tables {
    /// fingerprint -> the episode and the draft it was written from (its canonical content,
    /// for idempotent re-ingest): [`super::records::encode_episode`]
    pub episodes: Table,
    /// type\0ref -> [`super::records::encode_entity`]
    pub entities: Table,
    /// fp\0RELATION\0type\0ref -> [`super::records::encode_fact`], whose fixed-width times
    /// come first so graph traversal tests validity without decoding the rest
    pub facts: Table,
    /// type\0ref -> fact keys (duplicates sorted)
    pub entity_facts: Table,
    /// new\0prior\0type\0ref -> [`super::records::encode_supersession`]
    pub supersedes: Table,
    /// prior -> supersession keys (duplicates sorted)
    pub superseded_by: Table,
    /// [`super::keys::timeline`]: (concluded_at, fingerprint) -> nothing
    pub timeline: Table,
    /// fingerprint -> (concluded_at, ingested_at, t_valid) ms
    pub episode_times: Table,
    /// ingest sequence (u64 BE) -> fingerprint: the order the store learned of episodes.
    pub ingest_log: Table,
    /// name -> u64
    pub counters: Table,
    /// fingerprint -> a Reflexion lesson (JSON) stored by an earlier release that differs from
    /// what this one renders from the episode; every other lesson is rendered on read.
    pub lessons: Table,
    /// `name \0 version` (zero-padded) -> one version of a skill (JSON); never rewritten.
    pub skills: Table,
    /// embedding_ref -> code unit (JSON).
    pub code_units: Table,
    /// service entity_ref -> embedding_ref of each code unit it owns (duplicates sorted)
    pub service_code: Table,
    /// name -> UTF-8 value
    pub meta: Table,
    /// [`super::keys::version`]: a corrected record's versions after its first, each from
    /// the knowledge time it begins (JSON: an episode's text, a fact's interval, a review).
    pub versions: Table,
    /// correction sequence (u64 BE) -> the correction as recorded (JSON): the review log.
    pub corrections: Table,
}

pub(super) const PLAIN: [&str; 14] = [
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
    "versions",
    "corrections",
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
    pub fn by_name(&self, name: &str) -> Option<Table> {
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
            "versions" => self.versions,
            "corrections" => self.corrections,
            _ => return None,
        })
    }

    /// (concluded_at, ingested_at, t_valid) of the episode `fingerprint`, where it has them.
    pub fn times_of_episode(
        &self,
        txn: &RoTxn,
        fingerprint: &[u8],
    ) -> Result<Option<[Timestamp; 3]>, StoreError> {
        let Some(bytes) = self.episode_times.get(txn, fingerprint)? else {
            return Ok(None);
        };
        let times = keys::times_of::<3>(bytes).ok_or_else(|| {
            self.episode_times
                .corrupt(fingerprint, format!("{} bytes, expected 24", bytes.len()))
        })?;
        Ok(Some(times.map(Timestamp::from_millis)))
    }

    /// Every table as stores before schema 4 hold it, without checksums: for migrations.
    pub fn unsealed(self) -> Tables {
        Tables {
            episodes: self.episodes.unsealed(),
            entities: self.entities.unsealed(),
            facts: self.facts.unsealed(),
            entity_facts: self.entity_facts.unsealed(),
            supersedes: self.supersedes.unsealed(),
            superseded_by: self.superseded_by.unsealed(),
            timeline: self.timeline.unsealed(),
            episode_times: self.episode_times.unsealed(),
            ingest_log: self.ingest_log.unsealed(),
            counters: self.counters.unsealed(),
            lessons: self.lessons.unsealed(),
            skills: self.skills.unsealed(),
            code_units: self.code_units.unsealed(),
            service_code: self.service_code.unsealed(),
            meta: self.meta.unsealed(),
            versions: self.versions.unsealed(),
            corrections: self.corrections.unsealed(),
        }
    }

    /// Every table read and written with checksums (schema 4 on).
    pub fn with_seal(self) -> Tables {
        let mut t = self;
        for table in [
            &mut t.episodes,
            &mut t.entities,
            &mut t.facts,
            &mut t.entity_facts,
            &mut t.supersedes,
            &mut t.superseded_by,
            &mut t.timeline,
            &mut t.episode_times,
            &mut t.ingest_log,
            &mut t.counters,
            &mut t.lessons,
            &mut t.skills,
            &mut t.code_units,
            &mut t.service_code,
            &mut t.meta,
            &mut t.versions,
            &mut t.corrections,
        ] {
            *table = table.sealed();
        }
        t
    }

    /// Every table, for walks over all of them.
    pub fn all(&self) -> [Table; 17] {
        [
            self.episodes,
            self.entities,
            self.facts,
            self.entity_facts,
            self.supersedes,
            self.superseded_by,
            self.timeline,
            self.episode_times,
            self.ingest_log,
            self.counters,
            self.lessons,
            self.skills,
            self.code_units,
            self.service_code,
            self.meta,
            self.versions,
            self.corrections,
        ]
    }

    fn assemble(
        plain: [Option<Db>; 14],
        duplicates: [Option<Db>; 3],
        shared: &SharedEnv,
    ) -> Option<Tables> {
        let plain = PLAIN.into_iter().zip(plain);
        let mut made = std::collections::HashMap::new();
        for (name, db) in plain {
            made.insert(name, Table::new(name, db?, false, shared.mapped));
        }
        for (name, db) in DUPLICATES.into_iter().zip(duplicates) {
            made.insert(name, Table::new(name, db?, true, shared.mapped));
        }
        let mut take = |name: &str| made.remove(name);
        Some(Tables {
            episodes: take("episodes")?,
            entities: take("entities")?,
            facts: take("facts")?,
            entity_facts: take("entity_facts")?,
            supersedes: take("supersedes")?,
            superseded_by: take("superseded_by")?,
            timeline: take("timeline")?,
            episode_times: take("episode_times")?,
            ingest_log: take("ingest_log")?,
            counters: take("counters")?,
            lessons: take("lessons")?,
            skills: take("skills")?,
            code_units: take("code_units")?,
            service_code: take("service_code")?,
            meta: take("meta")?,
            versions: take("versions")?,
            corrections: take("corrections")?,
        })
    }

    /// The tables of an existing store; `None` when they have not been created yet.
    pub fn open(shared: &SharedEnv) -> Result<Option<Tables>, StoreError> {
        let env = &shared.env;
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
            plain.try_into().unwrap_or([None; 14]),
            dups.try_into().unwrap_or([None; 3]),
            shared,
        ))
    }

    /// Creates every table (those that exist are opened as they are) and commits. The
    /// caller holds the writer lock.
    pub fn create(shared: &SharedEnv) -> Result<Tables, StoreError> {
        let env = &shared.env;
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
                let plain: [Database<'_, Bytes, Bytes>; 14] = plain
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
        Self::assemble(plain.map(Some), dups.map(Some), shared)
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
    let Some(v) = t.meta.get(txn, name.as_bytes())? else {
        return Ok(None);
    };
    String::from_utf8(v.to_vec())
        .map(Some)
        .map_err(|_| t.meta.corrupt(name.as_bytes(), "not UTF-8"))
}

/// The store's layout version. Stores before schema 4 keep it, like every value, without a
/// checksum: a value that reads as one of theirs unsealed is theirs.
pub fn schema_of(t: &Tables, txn: &RoTxn) -> Result<Option<u32>, StoreError> {
    let key = SCHEMA.as_bytes();
    let Some(raw) = t.meta.raw().get(txn, key).map_err(backend)? else {
        return Ok(None);
    };
    for older in [SCHEMA_JSON, SCHEMA_COMPACT] {
        if raw == older.to_string().as_bytes() {
            return Ok(Some(older));
        }
    }
    let value = meta_get(&t.with_seal(), txn, SCHEMA)?.unwrap_or_default();
    value.parse().map(Some).map_err(|_| {
        t.meta
            .corrupt(key, format!("{value:?} is not a schema version"))
    })
}

pub fn meta_put(t: &Tables, txn: &mut RwTxn, name: &str, value: &str) -> Result<(), StoreError> {
    t.meta.put(txn, name.as_bytes(), value.as_bytes())
}

/// A stored counter; one never written is 0, one of another width than 8 bytes is corrupt.
pub fn counter(t: &Tables, txn: &RoTxn, name: &str) -> Result<u64, StoreError> {
    let Some(v) = t.counters.get(txn, name.as_bytes())? else {
        return Ok(0);
    };
    <[u8; 8]>::try_from(v).map(u64::from_le_bytes).map_err(|_| {
        t.counters
            .corrupt(name.as_bytes(), format!("{} bytes, expected 8", v.len()))
    })
}

pub fn add_to_counter(
    t: &Tables,
    txn: &mut RwTxn,
    name: &str,
    delta: u64,
) -> Result<(), StoreError> {
    let value = counter(t, txn, name)?.checked_add(delta).ok_or_else(|| {
        t.counters
            .corrupt(name.as_bytes(), format!("adding {delta} would overflow it"))
    })?;
    t.counters.put(txn, name.as_bytes(), &value.to_le_bytes())
}
