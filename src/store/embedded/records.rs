//! The stored form of each per-episode record (schema 3): postcard, with what a key already
//! says left out of its value, times as milliseconds, and nothing stored twice.
//!
//! - `episodes`: [`EpisodeHead`] then [`EpisodeBody`]. The head is what a `MemoryEpisode`
//!   needs and decodes alone; head and body together are the episode's canonical draft, so
//!   re-ingest compares against them and its lesson renders from them.
//! - `facts`: the four times (fixed width, read without decoding the rest: see
//!   [`fact_times`]) then [`FactTail`].
//! - `supersedes`: [`SupersessionRecord`]; `entities`: [`EntityRecord`].
//! - `entity_facts`, under an entity's key, one value per fact about it: [`encode_link`], the
//!   fact's episode and relation and every time the graph walk tests, so an entity's links
//!   are one scan of its duplicates with no lookup per link.
//!
//! The field order of these types is the format: a change to it is a new schema version
//! with a migration (`migrate.rs`), and `stored_bytes_are_pinned` below fails first.

use serde::{Deserialize, Serialize};

use super::keys;
use crate::learning::SkillDraft;
use crate::model::{
    EntityKey, FactEdge, MemoryEntity, MemoryEpisode, Provenance, Relation, Supersession, Timestamp,
};
use crate::store::{EntityLink, EpisodeDraft, FactDraft, StoreError, SupersedeDraft};

/// Bytes of the fixed-width times that begin a fact's value.
pub const FACT_TIMES: usize = 32;

fn corrupt(table: &'static str, key: &[u8], message: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        table,
        key: keys::display(key),
        message: message.to_string(),
    }
}

fn encoded(out: &mut Vec<u8>, value: &impl Serialize) -> Result<(), StoreError> {
    let bytes = postcard::to_stdvec(value)
        .map_err(|e| StoreError::Internal(format!("cannot encode a record: {e}")))?;
    out.extend_from_slice(&bytes);
    Ok(())
}

fn ms(t: Timestamp) -> i64 {
    t.millis()
}

fn at(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms)
}

#[derive(Serialize, Deserialize)]
struct ProvenanceRecord {
    source: String,
    status: String,
    confidence_score: f64,
}

impl ProvenanceRecord {
    fn of(p: &Provenance) -> Self {
        ProvenanceRecord {
            source: p.source.clone(),
            status: p.status.clone(),
            confidence_score: p.confidence_score,
        }
    }

    fn provenance(self) -> Provenance {
        Provenance {
            source: self.source,
            status: self.status,
            confidence_score: self.confidence_score,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct EntityFields {
    entity_type: String,
    entity_ref: String,
}

impl EntityFields {
    fn of(e: &EntityKey) -> Self {
        EntityFields {
            entity_type: e.entity_type.clone(),
            entity_ref: e.entity_ref.clone(),
        }
    }

    fn key(self) -> EntityKey {
        EntityKey {
            entity_type: self.entity_type,
            entity_ref: self.entity_ref,
        }
    }
}

/// What an episode's `MemoryEpisode` holds besides its fingerprint (the key).
#[derive(Serialize, Deserialize)]
struct EpisodeHead {
    summary_nl: String,
    resolution_nl: String,
    concluded_at: i64,
    t_valid: i64,
    ingested_at: i64,
    provenance: ProvenanceRecord,
}

/// The rest of the episode's draft: the facts, supersessions and skills it was written with.
#[derive(Serialize, Deserialize)]
struct EpisodeBody {
    facts: Vec<FactDraftRecord>,
    supersedes: Vec<SupersedeRecord>,
    skills: Vec<SkillDraftRecord>,
}

#[derive(Serialize, Deserialize)]
struct FactDraftRecord {
    relation: RelationRecord,
    entity: EntityFields,
    t_valid: i64,
    t_invalid: Option<i64>,
}

/// Explicit, so a renamed or reordered `Relation` cannot change stored bytes.
#[derive(Serialize, Deserialize)]
enum RelationRecord {
    Mentions,
    ResolvedBy,
}

impl RelationRecord {
    fn of(r: Relation) -> Self {
        match r {
            Relation::Mentions => RelationRecord::Mentions,
            Relation::ResolvedBy => RelationRecord::ResolvedBy,
        }
    }

    fn relation(self) -> Relation {
        match self {
            RelationRecord::Mentions => Relation::Mentions,
            RelationRecord::ResolvedBy => Relation::ResolvedBy,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct SupersedeRecord {
    prior: String,
    entity: EntityFields,
    t_invalid: i64,
}

#[derive(Serialize, Deserialize)]
struct SkillDraftRecord {
    name: String,
    trigger_entities: Vec<EntityFields>,
    steps: Vec<String>,
    episodes: Vec<String>,
    applied: Option<u32>,
    succeeded: Option<u32>,
    outcome_succeeded: Option<bool>,
    last_used: Option<i64>,
}

impl SkillDraftRecord {
    fn of(s: &SkillDraft) -> Self {
        SkillDraftRecord {
            name: s.name.clone(),
            trigger_entities: s.trigger_entities.iter().map(EntityFields::of).collect(),
            steps: s.steps.clone(),
            episodes: s.episodes.clone(),
            applied: s.applied,
            succeeded: s.succeeded,
            outcome_succeeded: s.outcome_succeeded,
            last_used: s.last_used.map(ms),
        }
    }

    fn draft(self) -> SkillDraft {
        SkillDraft {
            name: self.name,
            trigger_entities: self
                .trigger_entities
                .into_iter()
                .map(EntityFields::key)
                .collect(),
            steps: self.steps,
            episodes: self.episodes,
            applied: self.applied,
            succeeded: self.succeeded,
            outcome_succeeded: self.outcome_succeeded,
            last_used: self.last_used.map(at),
        }
    }
}

/// An episode's stored value: its draft and when it was learned.
pub fn encode_episode(draft: &EpisodeDraft, ingested_at: Timestamp) -> Result<Vec<u8>, StoreError> {
    let head = EpisodeHead {
        summary_nl: draft.summary_nl.clone(),
        resolution_nl: draft.resolution_nl.clone(),
        concluded_at: ms(draft.concluded_at),
        t_valid: ms(draft.t_valid),
        ingested_at: ms(ingested_at),
        provenance: ProvenanceRecord::of(&draft.provenance),
    };
    let body = EpisodeBody {
        facts: draft
            .facts
            .iter()
            .map(|f| FactDraftRecord {
                relation: RelationRecord::of(f.relation),
                entity: EntityFields::of(&f.entity),
                t_valid: ms(f.t_valid),
                t_invalid: f.t_invalid.map(ms),
            })
            .collect(),
        supersedes: draft
            .supersedes
            .iter()
            .map(|s| SupersedeRecord {
                prior: s.prior.clone(),
                entity: EntityFields::of(&s.entity),
                t_invalid: ms(s.t_invalid),
            })
            .collect(),
        skills: draft.skills.iter().map(SkillDraftRecord::of).collect(),
    };
    let mut out = Vec::with_capacity(
        draft.summary_nl.len() + draft.resolution_nl.len() + 64 + 48 * draft.facts.len(),
    );
    encoded(&mut out, &head)?;
    encoded(&mut out, &body)?;
    Ok(out)
}

fn episode_head<'a>(key: &[u8], bytes: &'a [u8]) -> Result<(EpisodeHead, &'a [u8]), StoreError> {
    postcard::take_from_bytes(bytes).map_err(|e| corrupt("episodes", key, e))
}

fn fingerprint(table: &'static str, key: &[u8]) -> Result<String, StoreError> {
    std::str::from_utf8(key)
        .map(str::to_string)
        .map_err(|_| corrupt(table, key, "fingerprint is not UTF-8"))
}

/// The `MemoryEpisode` stored at `key`; only the head is decoded.
pub fn episode(key: &[u8], bytes: &[u8]) -> Result<MemoryEpisode, StoreError> {
    let (head, _) = episode_head(key, bytes)?;
    Ok(MemoryEpisode {
        incident_fingerprint: fingerprint("episodes", key)?,
        summary_nl: head.summary_nl,
        resolution_nl: head.resolution_nl,
        concluded_at: at(head.concluded_at),
        t_valid: at(head.t_valid),
        ingested_at: at(head.ingested_at),
        provenance: head.provenance.provenance(),
        versions: Vec::new(),
    })
}

/// When the episode at `key` concluded: what no correction changes, so no version is read.
pub fn episode_concluded_at(key: &[u8], bytes: &[u8]) -> Result<Timestamp, StoreError> {
    Ok(at(episode_head(key, bytes)?.0.concluded_at))
}

/// The draft the episode at `key` was written from, exactly.
pub fn draft(key: &[u8], bytes: &[u8]) -> Result<EpisodeDraft, StoreError> {
    let (head, rest) = episode_head(key, bytes)?;
    let (body, rest): (EpisodeBody, _) =
        postcard::take_from_bytes(rest).map_err(|e| corrupt("episodes", key, e))?;
    if !rest.is_empty() {
        return Err(corrupt("episodes", key, "bytes after the record"));
    }
    Ok(EpisodeDraft {
        incident_fingerprint: fingerprint("episodes", key)?,
        summary_nl: head.summary_nl,
        resolution_nl: head.resolution_nl,
        concluded_at: at(head.concluded_at),
        t_valid: at(head.t_valid),
        provenance: head.provenance.provenance(),
        facts: body
            .facts
            .into_iter()
            .map(|f| FactDraft {
                relation: f.relation.relation(),
                entity: f.entity.key(),
                t_valid: at(f.t_valid),
                t_invalid: f.t_invalid.map(at),
            })
            .collect(),
        supersedes: body
            .supersedes
            .into_iter()
            .map(|s| SupersedeDraft {
                prior: s.prior,
                entity: s.entity.key(),
                t_invalid: at(s.t_invalid),
            })
            .collect(),
        skills: body
            .skills
            .into_iter()
            .map(SkillDraftRecord::draft)
            .collect(),
    })
}

/// What a fact's value holds after its times.
#[derive(Serialize, Deserialize)]
struct FactTail {
    superseded_by: Option<String>,
    provenance: ProvenanceRecord,
}

/// `i64::MAX` stands for "none" in the fixed-width times.
fn open_ended(t: Option<Timestamp>) -> i64 {
    t.map_or(i64::MAX, ms)
}

fn bounded(ms: i64) -> Option<Timestamp> {
    (ms != i64::MAX).then(|| at(ms))
}

/// A fact's stored value (its key says whose, which relation and which entity).
pub fn encode_fact(f: &FactEdge) -> Result<Vec<u8>, StoreError> {
    let mut out = keys::times([
        ms(f.t_valid),
        open_ended(f.t_invalid),
        ms(f.ingested_at),
        open_ended(f.expired_at),
    ]);
    encoded(
        &mut out,
        &FactTail {
            superseded_by: f.superseded_by.clone(),
            provenance: ProvenanceRecord::of(&f.provenance),
        },
    )?;
    Ok(out)
}

/// (t_valid, t_invalid, ingested_at, expired_at) of a fact's value, `i64::MAX` for none,
/// without decoding the rest.
pub fn fact_times(bytes: &[u8]) -> Option<[i64; 4]> {
    keys::times_of::<4>(bytes.get(..FACT_TIMES)?)
}

pub fn fact(key: &[u8], bytes: &[u8]) -> Result<FactEdge, StoreError> {
    let (episode, relation, entity) =
        keys::fact_of(key).ok_or_else(|| corrupt("facts", key, "malformed key"))?;
    let [t_valid, t_invalid, ingested_at, expired_at] =
        fact_times(bytes).ok_or_else(|| corrupt("facts", key, "value shorter than its times"))?;
    let tail: FactTail =
        postcard::from_bytes(&bytes[FACT_TIMES..]).map_err(|e| corrupt("facts", key, e))?;
    Ok(FactEdge {
        episode: episode.to_string(),
        relation,
        entity,
        t_valid: at(t_valid),
        t_invalid: bounded(t_invalid),
        ingested_at: at(ingested_at),
        expired_at: bounded(expired_at),
        superseded_by: tail.superseded_by,
        provenance: tail.provenance.provenance(),
        versions: Vec::new(),
    })
}

/// The times of an entity link after its episode and relation.
#[derive(Serialize, Deserialize)]
struct LinkTimes {
    t_valid: i64,
    t_invalid: Option<i64>,
    ingested_at: i64,
    expired_at: Option<i64>,
    episode_concluded_at: i64,
    episode_ingested_at: i64,
    episode_t_valid: i64,
}

/// Separates a link's episode from its relation; no fingerprint holds NUL.
const LINK_SEP: u8 = 0;

fn relation_byte(r: Relation) -> u8 {
    match r {
        Relation::Mentions => b'M',
        Relation::ResolvedBy => b'R',
    }
}

/// One `entity_facts` value: `fingerprint \0 M|R` then the times, so an entity's values sort
/// by episode and the episode and relation alone find the fact. `episode` holds the
/// episode's (concluded_at, ingested_at, t_valid).
pub fn encode_link(f: &FactEdge, episode: [Timestamp; 3]) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::with_capacity(f.episode.len() + 40);
    out.extend_from_slice(f.episode.as_bytes());
    out.push(LINK_SEP);
    out.push(relation_byte(f.relation));
    encoded(
        &mut out,
        &LinkTimes {
            t_valid: ms(f.t_valid),
            t_invalid: f.t_invalid.map(ms),
            ingested_at: ms(f.ingested_at),
            expired_at: f.expired_at.map(ms),
            episode_concluded_at: ms(episode[0]),
            episode_ingested_at: ms(episode[1]),
            episode_t_valid: ms(episode[2]),
        },
    )?;
    Ok(out)
}

/// The episode and relation of an `entity_facts` value, and the rest of it.
fn link_head(value: &[u8]) -> Option<(&str, Relation, &[u8])> {
    let sep = value.iter().position(|b| *b == LINK_SEP)?;
    let episode = std::str::from_utf8(&value[..sep]).ok()?;
    let relation = match value.get(sep + 1)? {
        b'M' => Relation::Mentions,
        b'R' => Relation::ResolvedBy,
        _ => return None,
    };
    Some((episode, relation, &value[sep + 2..]))
}

/// An `entity_facts` value as `fingerprint|RELATION`, for messages.
pub fn link_display(value: &[u8]) -> String {
    match link_head(value) {
        Some((episode, relation, _)) => format!("{episode}|{relation}"),
        None => "a malformed link".into(),
    }
}

/// The fact key an `entity_facts` value of `entity` stands for.
pub fn link_fact_key(entity_key: &[u8], value: &[u8]) -> Result<Vec<u8>, StoreError> {
    let entity = keys::entity_of(entity_key)
        .ok_or_else(|| corrupt("entity_facts", entity_key, "malformed key"))?;
    let (episode, relation, _) =
        link_head(value).ok_or_else(|| corrupt("entity_facts", entity_key, "malformed link"))?;
    Ok(keys::fact(episode, relation, &entity))
}

pub fn link(value: &[u8]) -> Result<EntityLink, StoreError> {
    let malformed = |message: String| StoreError::Corrupt {
        table: "entity_facts",
        key: link_display(value),
        message,
    };
    let (episode, relation, rest) =
        link_head(value).ok_or_else(|| malformed("malformed link".into()))?;
    let t: LinkTimes = postcard::from_bytes(rest).map_err(|e| malformed(e.to_string()))?;
    Ok(EntityLink {
        episode: episode.to_string(),
        relation,
        t_valid: at(t.t_valid),
        t_invalid: t.t_invalid.map(at),
        ingested_at: at(t.ingested_at),
        expired_at: t.expired_at.map(at),
        episode_concluded_at: at(t.episode_concluded_at),
        episode_ingested_at: at(t.episode_ingested_at),
        episode_t_valid: at(t.episode_t_valid),
        versions: Vec::new(),
    })
}

/// What a `SUPERSEDES` edge holds besides the episode, prior and entity of its key.
#[derive(Serialize, Deserialize)]
struct SupersessionRecord {
    t_valid: i64,
    t_invalid: Option<i64>,
    ingested_at: i64,
    expired_at: Option<i64>,
    provenance: ProvenanceRecord,
}

pub fn encode_supersession(s: &Supersession) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::with_capacity(48);
    encoded(
        &mut out,
        &SupersessionRecord {
            t_valid: ms(s.t_valid),
            t_invalid: s.t_invalid.map(ms),
            ingested_at: ms(s.ingested_at),
            expired_at: s.expired_at.map(ms),
            provenance: ProvenanceRecord::of(&s.provenance),
        },
    )?;
    Ok(out)
}

pub fn supersession(key: &[u8], bytes: &[u8]) -> Result<Supersession, StoreError> {
    let (episode, prior, entity) =
        keys::supersession_of(key).ok_or_else(|| corrupt("supersedes", key, "malformed key"))?;
    let r: SupersessionRecord =
        postcard::from_bytes(bytes).map_err(|e| corrupt("supersedes", key, e))?;
    Ok(Supersession {
        episode: episode.to_string(),
        prior: prior.to_string(),
        entity,
        t_valid: at(r.t_valid),
        t_invalid: r.t_invalid.map(at),
        ingested_at: at(r.ingested_at),
        expired_at: r.expired_at.map(at),
        provenance: r.provenance.provenance(),
        reviews: Vec::new(),
    })
}

/// What a `MemoryEntity` holds besides its key.
#[derive(Serialize, Deserialize)]
struct EntityRecord {
    ingested_at: i64,
}

pub fn encode_entity(e: &MemoryEntity) -> Result<Vec<u8>, StoreError> {
    let mut out = Vec::with_capacity(8);
    encoded(
        &mut out,
        &EntityRecord {
            ingested_at: ms(e.ingested_at),
        },
    )?;
    Ok(out)
}

pub fn entity(key: &[u8], bytes: &[u8]) -> Result<MemoryEntity, StoreError> {
    let entity = keys::entity_of(key).ok_or_else(|| corrupt("entities", key, "malformed key"))?;
    let r: EntityRecord = postcard::from_bytes(bytes).map_err(|e| corrupt("entities", key, e))?;
    Ok(MemoryEntity {
        key: entity,
        ingested_at: at(r.ingested_at),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> EpisodeDraft {
        let e = EntityKey::new("service", "auth\"elia").unwrap();
        EpisodeDraft {
            incident_fingerprint: "INC-1".into(),
            summary_nl: "login loop".into(),
            resolution_nl: "rotated".into(),
            concluded_at: at(1_700_000_000_000),
            t_valid: at(1_699_999_000_000),
            provenance: Provenance {
                source: "agent".into(),
                status: "concluded".into(),
                confidence_score: 0.8,
            },
            facts: vec![FactDraft {
                relation: Relation::ResolvedBy,
                entity: e.clone(),
                t_valid: at(1_699_999_000_000),
                t_invalid: Some(at(1_700_000_500_000)),
            }],
            supersedes: vec![SupersedeDraft {
                prior: "INC-0".into(),
                entity: e.clone(),
                t_invalid: at(1_699_999_500_000),
            }],
            skills: vec![SkillDraft {
                name: "runbook".into(),
                trigger_entities: vec![e],
                steps: vec!["restart".into()],
                episodes: vec![],
                applied: Some(2),
                succeeded: None,
                outcome_succeeded: Some(false),
                last_used: Some(at(-5)),
            }],
        }
    }

    #[test]
    fn an_episode_reads_back_as_its_draft_and_its_episode() {
        let d = sample();
        let bytes = encode_episode(&d, at(1_700_000_100_000)).unwrap();
        assert_eq!(draft(b"INC-1", &bytes).unwrap(), d);
        let e = episode(b"INC-1", &bytes).unwrap();
        assert_eq!(e.incident_fingerprint, "INC-1");
        assert_eq!(e.ingested_at, at(1_700_000_100_000));
        assert_eq!(e.provenance, d.provenance);
        let cut = &bytes[..bytes.len() - 1];
        assert!(matches!(
            draft(b"INC-1", cut),
            Err(StoreError::Corrupt {
                table: "episodes",
                ..
            })
        ));
    }

    #[test]
    fn facts_supersessions_and_entities_read_back_with_their_keys() {
        let d = sample();
        let mut f = d.facts[0].stamp("INC-1", at(1_700_000_100_000), &d.provenance);
        f.superseded_by = Some("INC-2".into());
        let key = keys::fact("INC-1", f.relation, &f.entity);
        let bytes = encode_fact(&f).unwrap();
        assert_eq!(fact(&key, &bytes).unwrap(), f);
        assert_eq!(
            fact_times(&bytes),
            Some([
                1_699_999_000_000,
                1_700_000_500_000,
                1_700_000_100_000,
                1_700_000_100_000
            ])
        );
        let s = Supersession {
            episode: "INC-2".into(),
            prior: "INC-1".into(),
            entity: f.entity.clone(),
            t_valid: at(3),
            t_invalid: None,
            ingested_at: at(4),
            expired_at: Some(at(5)),
            provenance: d.provenance.clone(),
            reviews: Vec::new(),
        };
        let skey = keys::supersession("INC-2", "INC-1", &s.entity);
        assert_eq!(
            supersession(&skey, &encode_supersession(&s).unwrap()).unwrap(),
            s
        );
        let m = MemoryEntity {
            key: f.entity.clone(),
            ingested_at: at(9),
        };
        assert_eq!(
            entity(&keys::entity(&m.key), &encode_entity(&m).unwrap()).unwrap(),
            m
        );
    }

    #[test]
    fn a_link_reads_back_and_names_its_fact() {
        let d = sample();
        let mut f = d.facts[0].stamp("INC|1", at(1_700_000_100_000), &d.provenance);
        f.expired_at = None;
        f.t_invalid = None;
        let episode = [at(7), at(1_700_000_100_000), at(-3)];
        let value = encode_link(&f, episode).unwrap();
        let l = link(&value).unwrap();
        assert_eq!(
            (l.episode.as_str(), l.relation, l.t_valid, l.t_invalid),
            ("INC|1", f.relation, f.t_valid, None)
        );
        assert_eq!(
            [
                l.episode_concluded_at,
                l.episode_ingested_at,
                l.episode_t_valid
            ],
            episode
        );
        let ekey = keys::entity(&f.entity);
        assert_eq!(
            link_fact_key(&ekey, &value).unwrap(),
            keys::fact("INC|1", f.relation, &f.entity)
        );
        assert!(link(b"no separator").is_err());
    }

    /// The bytes are the format: if this changes, stores written before no longer read.
    #[test]
    fn stored_bytes_are_pinned() {
        let bytes = encode_episode(&sample(), at(1_700_000_100_000)).unwrap();
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "0a6c6f67696e206c6f6f7007726f746174656480a0abfef9628097b1fdf962c0bab7fef9\
             62056167656e7409636f6e636c756465649a9999999999e93f0101077365727669636509\
             6175746822656c69618097b1fdf96201c0a4e8fef9620105494e432d3007736572766963\
             65096175746822656c6961c09beefdf962010772756e626f6f6b01077365727669636509\
             6175746822656c69610107726573746172740001020001000109"
        );
    }
}
