//! Where memory lives. [`MemoryStore`] is the one interface every backend implements;
//! [`embedded::EmbeddedStore`] (redb) is the default and needs no server.

pub mod embedded;
mod error;
pub mod falkordb;
mod location;
pub(crate) mod rules;
mod write;

use serde::Serialize;

use crate::learning::{CodeUnit, Lesson, Skill, SkillDraft};
use crate::model::{
    EntityKey, FactEdge, MemoryEntity, MemoryEpisode, Relation, Supersession, Timestamp,
};

pub use error::{StoreError, free_bytes, is_disk_full};

/// What a batch written in chunks ends with, asked for after its last chunk (see
/// [`MemoryStore::apply_chunks`]).
pub type TailSource<'a> = dyn FnMut() -> Result<WriteBatch, StoreError> + 'a;

/// Hands the items of one batch, chunk by chunk, to the sink it is given.
pub type ChunkSource<'a> = dyn FnMut(&mut dyn FnMut(Vec<BatchItem>) -> Result<(), StoreError>) -> Result<(), StoreError>
    + 'a;
pub use location::StoreLocation;
pub use write::{
    ApplyReport, BatchItem, EpisodeDraft, FactDraft, KnowledgeTime, SupersedeDraft, WriteBatch,
};

/// A fact edge reduced to what graph traversal needs: whose, and its four times.
#[derive(Clone, PartialEq)]
pub struct EntityLink {
    pub episode: String,
    pub relation: Relation,
    pub t_valid: Timestamp,
    pub t_invalid: Option<Timestamp>,
    pub ingested_at: Timestamp,
    pub expired_at: Option<Timestamp>,
    pub episode_concluded_at: Timestamp,
    pub episode_ingested_at: Timestamp,
    pub episode_t_valid: Timestamp,
    /// The fact's corrected versions, in knowledge-time order.
    pub versions: Vec<crate::model::FactVersion>,
}

/// As derived, with `versions` shown only when there are some.
impl std::fmt::Debug for EntityLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("EntityLink");
        d.field("episode", &self.episode)
            .field("relation", &self.relation)
            .field("t_valid", &self.t_valid)
            .field("t_invalid", &self.t_invalid)
            .field("ingested_at", &self.ingested_at)
            .field("expired_at", &self.expired_at)
            .field("episode_concluded_at", &self.episode_concluded_at)
            .field("episode_ingested_at", &self.episode_ingested_at)
            .field("episode_t_valid", &self.episode_t_valid);
        if !self.versions.is_empty() {
            d.field("versions", &self.versions);
        }
        d.finish()
    }
}

impl EntityLink {
    /// The fact's (t_valid, t_invalid, expired_at) as known at `known_at`.
    pub fn times_at(
        &self,
        known_at: Timestamp,
    ) -> (Timestamp, Option<Timestamp>, Option<Timestamp>) {
        match self
            .versions
            .iter()
            .rev()
            .find(|v| v.known_from <= known_at)
        {
            Some(v) => (v.t_valid, v.t_invalid, v.expired_at),
            None => (self.t_valid, self.t_invalid, self.expired_at),
        }
    }
}

/// A page of the timeline, newest `concluded_at` first.
#[derive(Clone, Debug, Default)]
pub struct TimelineQuery {
    pub entity: Option<EntityKey>,
    /// Only episodes known at this knowledge time.
    pub known_at: Option<Timestamp>,
    pub offset: usize,
    pub limit: usize,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StoreStats {
    pub episodes: u64,
    pub entities: u64,
    pub mentions: u64,
    pub resolved_by: u64,
    pub supersedes: u64,
    pub invalidated_edges: u64,
}

/// A page of the store's ingest log ([`MemoryStore::episodes_since`]).
#[derive(Debug, Default)]
pub struct LogPage {
    pub episodes: Vec<(u64, MemoryEpisode)>,
    /// Rows of the log whose episode cannot be read, with why: work derived from the log goes
    /// on without them and says so.
    pub unreadable: Vec<(u64, StoreError)>,
    /// The last sequence the page covers, read or not; 0 for an empty page.
    pub last: u64,
}

/// A page of the ingest log's episode keys ([`MemoryStore::episode_keys_since`]).
#[derive(Debug, Default)]
pub struct KeyPage {
    /// (ingested_at, incident_fingerprint) of each episode the page covers.
    pub keys: Vec<(Timestamp, String)>,
    /// Rows of the log whose episode cannot be read, with why.
    pub unreadable: Vec<(u64, StoreError)>,
    /// The last sequence the page covers, read or not; 0 for an empty page.
    pub last: u64,
}

/// The result of a full consistency check.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct IntegrityReport {
    pub checked_episodes: u64,
    pub checked_facts: u64,
    pub checked_supersessions: u64,
    pub problems: Vec<String>,
}

impl IntegrityReport {
    pub fn is_consistent(&self) -> bool {
        self.problems.is_empty()
    }
}

/// A bi-temporal memory store. Writes only ever add or close; nothing is deleted.
pub trait MemoryStore: Send + Sync {
    /// A one-line description of the backend for status bars and logs.
    fn describe(&self) -> String;

    /// Whether this process can only read the store (its files are on a read-only
    /// filesystem); writes then fail with [`StoreError::ReadOnly`].
    fn read_only(&self) -> bool {
        false
    }

    /// Writes the batch atomically; a rejected batch writes nothing.
    fn apply(&self, batch: &WriteBatch) -> Result<ApplyReport, StoreError>;

    /// Writes one batch whose items arrive in chunks, as atomically as [`Self::apply`]: `items`
    /// hands each chunk to the sink it is given, and a refusal, or an error from `items` or
    /// `tail`, writes nothing. A store that can hold a transaction open writes each chunk as it
    /// comes, so a big file never has to be in memory whole; the others gather the chunks
    /// first. `tail` is asked for after the last chunk and written with it: its code units,
    /// skill versions and restored versions of corrected records (its items are ignored).
    fn apply_chunks(
        &self,
        tail: &mut TailSource<'_>,
        items: &mut ChunkSource<'_>,
    ) -> Result<ApplyReport, StoreError> {
        let mut gathered = Vec::new();
        items(&mut |chunk| {
            gathered.extend(chunk);
            Ok(())
        })?;
        let batch = WriteBatch {
            items: gathered,
            ..tail()?
        };
        self.apply(&batch)
    }

    /// Whether [`Self::apply_chunks`] writes in one transaction that an error from `tail`
    /// still undoes whole: its input may then be checked while it is written.
    fn chunks_in_one_transaction(&self) -> bool {
        false
    }

    fn episode(&self, fingerprint: &str) -> Result<Option<MemoryEpisode>, StoreError>;

    /// The episodes of these fingerprints that exist, in any order.
    fn episodes(&self, fingerprints: &[String]) -> Result<Vec<MemoryEpisode>, StoreError> {
        let mut out = Vec::with_capacity(fingerprints.len());
        for fp in fingerprints {
            out.extend(self.episode(fp)?);
        }
        Ok(out)
    }

    /// The lessons of these fingerprints that exist, in any order.
    fn lessons(&self, fingerprints: &[String]) -> Result<Vec<Lesson>, StoreError> {
        let mut out = Vec::with_capacity(fingerprints.len());
        for fp in fingerprints {
            out.extend(self.lesson(fp)?);
        }
        Ok(out)
    }

    fn timeline(&self, query: &TimelineQuery) -> Result<Vec<MemoryEpisode>, StoreError>;

    /// When each of these episodes concluded (those the store holds): what fusion orders
    /// candidates by, without their text, in one read where the store can.
    fn episode_dates(
        &self,
        fingerprints: &[String],
    ) -> Result<Vec<(String, Timestamp)>, StoreError> {
        Ok(self
            .episodes(fingerprints)?
            .into_iter()
            .map(|e| (e.incident_fingerprint, e.concluded_at))
            .collect())
    }

    /// Every fact edge of an episode, whatever its state.
    fn facts(&self, fingerprint: &str) -> Result<Vec<FactEdge>, StoreError>;

    /// Every fact edge of these episodes, whatever its state, in one read where the store can.
    fn facts_of_episodes(&self, fingerprints: &[String]) -> Result<Vec<FactEdge>, StoreError> {
        let mut out = Vec::new();
        for fp in fingerprints {
            out.extend(self.facts(fp)?);
        }
        Ok(out)
    }

    /// Every fact edge that points at an entity.
    fn entity_facts(&self, entity: &EntityKey) -> Result<Vec<FactEdge>, StoreError>;

    /// Lineage edges written by `fingerprint` (it superseded their priors).
    fn supersedes(&self, fingerprint: &str) -> Result<Vec<Supersession>, StoreError>;

    /// Lineage edges written by these episodes, in one read where the store can.
    fn supersessions_of_episodes(
        &self,
        fingerprints: &[String],
    ) -> Result<Vec<Supersession>, StoreError> {
        let mut out = Vec::new();
        for fp in fingerprints {
            out.extend(self.supersedes(fp)?);
        }
        Ok(out)
    }

    /// Every entity with the knowledge time it was first recorded, in key order.
    fn entity_records(&self) -> Result<Vec<MemoryEntity>, StoreError> {
        Err(StoreError::Unsupported {
            store: self.describe(),
            what: "listing entities with their knowledge times",
        })
    }

    /// Every code unit, in `embedding_ref` order.
    fn code_units(&self) -> Result<Vec<CodeUnit>, StoreError> {
        Ok(Vec::new())
    }

    /// The files of batches written in chunks that were begun and not finished (running the
    /// same file again completes them). A store that writes every batch at once has none.
    fn unfinished_batches(&self) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }

    /// Lineage edges that name `fingerprint` as the prior.
    fn superseded_by(&self, fingerprint: &str) -> Result<Vec<Supersession>, StoreError>;

    /// Lineage edges that name one of these episodes as the prior, in one read where the
    /// store can.
    fn superseded_by_episodes(
        &self,
        fingerprints: &[String],
    ) -> Result<Vec<Supersession>, StoreError> {
        let mut out = Vec::new();
        for fp in fingerprints {
            out.extend(self.superseded_by(fp)?);
        }
        Ok(out)
    }

    /// Entities with at least `min` fact edges pointing at them, most first: the hubs a graph
    /// walk should have read before a query needs them. `None`: the store cannot say
    /// cheaply (a server walks its graph itself).
    fn hubs(&self, min: u64) -> Result<Option<Vec<EntityKey>>, StoreError> {
        let _ = min;
        Ok(None)
    }

    /// For each fingerprint, in order: whether it superseded an earlier episode, and whether
    /// a later one superseded it, by lineage edges recorded by `known_at` (`None`: any).
    fn supersession_marks(
        &self,
        fingerprints: &[String],
        known_at: Option<Timestamp>,
    ) -> Result<Vec<(bool, bool)>, StoreError> {
        let known = |s: &Supersession| s.stands_at(known_at.unwrap_or(Timestamp::MAX));
        fingerprints
            .iter()
            .map(|fp| {
                Ok((
                    self.supersedes(fp)?.iter().any(known),
                    self.superseded_by(fp)?.iter().any(known),
                ))
            })
            .collect()
    }

    /// Up to `limit` rows of the ingest log after sequence `after` (sequences start at 1):
    /// the episodes in the order the store learned of them, and the rows whose episode cannot
    /// be read. How derived indexes and live views catch up.
    fn episodes_since(&self, after: u64, limit: usize) -> Result<LogPage, StoreError>;

    /// [`Self::episodes_since`] without the episodes' texts: what orders an export.
    fn episode_keys_since(&self, after: u64, limit: usize) -> Result<KeyPage, StoreError> {
        let page = self.episodes_since(after, limit)?;
        Ok(KeyPage {
            keys: page
                .episodes
                .into_iter()
                .map(|(_, e)| (e.ingested_at, e.incident_fingerprint))
                .collect(),
            unreadable: page.unreadable,
            last: page.last,
        })
    }

    /// Compact links from an entity to the episodes with a fact about it, for traversal.
    fn entity_links(&self, entity: &EntityKey) -> Result<Vec<EntityLink>, StoreError>;

    /// [`Self::entity_links`] of each entity, in order, in one read where the store can.
    fn entity_links_of(&self, entities: &[EntityKey]) -> Result<Vec<Vec<EntityLink>>, StoreError> {
        entities.iter().map(|e| self.entity_links(e)).collect()
    }

    /// Every entity key, for dictionary matching.
    fn entities(&self) -> Result<Vec<EntityKey>, StoreError>;

    /// The entities these episodes' facts and lineage edges name: every entity whose links
    /// writing them could have changed (new facts, and the priors' facts they closed).
    fn entities_touched_by(&self, fingerprints: &[String]) -> Result<Vec<EntityKey>, StoreError> {
        let mut touched = Vec::new();
        for fp in fingerprints {
            touched.extend(self.facts(fp)?.into_iter().map(|f| f.entity));
            touched.extend(self.supersedes(fp)?.into_iter().map(|s| s.entity));
        }
        touched.sort();
        touched.dedup();
        Ok(touched)
    }

    fn stats(&self) -> Result<StoreStats, StoreError>;

    /// How many episodes the store holds (what [`Self::stats`] counts, alone and cheaply):
    /// what a leg compares its index with on every recall.
    fn episode_count(&self) -> Result<u64, StoreError> {
        Ok(self.stats()?.episodes)
    }

    /// The store's stable identity, recorded in it when it was first written; `None` for a
    /// store nobody has written through Strata yet. Derived indexes record the identity they
    /// were built from and rebuild themselves when it differs.
    fn identity(&self) -> Result<Option<String>, StoreError>;

    /// A counter that changes whenever a write lands (episodes, supersessions, lessons,
    /// skills, code units): what a live view polls to learn that there is something new.
    fn generation(&self) -> Result<u64, StoreError>;

    /// Lets go of this process's mapping of the store pages a bulk read touched (they stay
    /// in the kernel's page cache); a store on a server keeps nothing mapped here.
    fn release_mapped_pages(&self) {}

    /// Why writes acknowledged here would not survive a restart (a server with persistence
    /// off), or `None` when they would, or when the store cannot tell.
    fn durability_warning(&self) -> Option<String> {
        None
    }

    fn check(&self) -> Result<IntegrityReport, StoreError>;

    /// Records a batch of corrections atomically at the current knowledge time (all or none;
    /// see [`crate::correct`]).
    fn correct(
        &self,
        batch: &crate::correct::CorrectionBatch,
    ) -> Result<crate::correct::CorrectReport, StoreError> {
        let _ = batch;
        Err(StoreError::Unsupported {
            store: self.describe(),
            what: "corrections",
        })
    }

    /// Every correction recorded, in the order recorded (knowledge-time order).
    fn corrections(&self) -> Result<Vec<crate::correct::CorrectionRecord>, StoreError> {
        Ok(Vec::new())
    }

    /// Up to `limit` corrections recorded after log sequence `after`, in order: how derived
    /// indexes catch up with corrected texts, as they do with episodes through
    /// [`Self::episodes_since`].
    fn corrections_since(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<crate::correct::CorrectionRecord>, StoreError> {
        let mut log = self.corrections()?;
        log.retain(|c| c.sequence > after);
        log.truncate(limit);
        Ok(log)
    }

    /// How many corrections are recorded (what [`Self::corrections`] lists, counted cheaply):
    /// what a cache of fact links compares to learn that versions changed under it.
    fn correction_count(&self) -> Result<u64, StoreError> {
        Ok(self.corrections()?.len() as u64)
    }

    /// Every lineage edge reachable from `fingerprint` through edges recorded by `known_at`:
    /// backwards, the priors it superseded and theirs; forwards, what superseded it and so on.
    /// `None`: callers walk [`Self::supersedes`] / [`Self::superseded_by`] edge by edge.
    fn lineage_edges(
        &self,
        fingerprint: &str,
        backwards: bool,
        known_at: Timestamp,
    ) -> Result<Option<Vec<Supersession>>, StoreError> {
        let _ = (fingerprint, backwards, known_at);
        Ok(None)
    }

    /// The code units a service owns (by the `entity_ref` of its `service:` entity).
    fn code_units_of_service(&self, service: &str) -> Result<Vec<CodeUnit>, StoreError> {
        let _ = service;
        Ok(Vec::new())
    }

    /// The code unit behind a vector point id, and so its owning service.
    fn code_unit(&self, embedding_ref: &str) -> Result<Option<CodeUnit>, StoreError> {
        let _ = embedding_ref;
        Ok(None)
    }

    /// The code units of the services an episode implicated with facts valid at `as_of`.
    fn episode_code_units(
        &self,
        fingerprint: &str,
        as_of: &crate::model::AsOf,
    ) -> Result<Vec<CodeUnit>, StoreError> {
        let mut units = Vec::new();
        for fact in self.facts(fingerprint)? {
            if fact.entity.entity_type == "service" && as_of.fact_valid(&fact) {
                units.extend(self.code_units_of_service(&fact.entity.entity_ref)?);
            }
        }
        units.sort();
        units.dedup();
        Ok(units)
    }

    /// Every version of every skill.
    fn skills(&self) -> Result<Vec<Skill>, StoreError> {
        Ok(Vec::new())
    }

    /// Writes each skill's next version (unless it would say the same as the latest), all
    /// or none; returns how many versions were written.
    fn add_skills(
        &self,
        drafts: &[SkillDraft],
        recorded_at: KnowledgeTime,
    ) -> Result<usize, StoreError> {
        let _ = (drafts, recorded_at);
        Err(StoreError::Unsupported {
            store: self.describe(),
            what: "skills",
        })
    }

    /// The episode's Reflexion lesson. Stores that keep none render it from the facts.
    fn lesson(&self, fingerprint: &str) -> Result<Option<Lesson>, StoreError> {
        let Some(episode) = self.episode(fingerprint)? else {
            return Ok(None);
        };
        let facts = self.facts(fingerprint)?;
        Ok(Some(crate::learning::render(
            fingerprint,
            &episode.resolution_nl,
            facts.iter().map(|f| (f.relation, &f.entity)),
        )))
    }
}
