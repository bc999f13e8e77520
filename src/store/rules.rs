//! The rules every backend enforces on a batch, and their rejection messages, in one place:
//! the embedded store and FalkorDB must refuse the same batches with the same words.

use crate::learning::{CodeUnit, Skill, SkillDraft};
use crate::model::{FactEdge, Relation, Timestamp};
use crate::store::{BatchItem, EpisodeDraft, StoreError, SupersedeDraft};

/// Knowledge time only moves forward: what memory knew at an earlier K is never rewritten.
/// `at` is the knowledge time `item` is written with.
pub fn knowledge_time(
    item: &BatchItem,
    at: Timestamp,
    high_water: Option<Timestamp>,
) -> Result<(), StoreError> {
    match high_water {
        Some(high) if at < high => Err(StoreError::rejected(
            &item.origin,
            "ingested_at",
            format!(
                "knowledge time {at} is before {high}, the latest the store has recorded; what \
                 memory knew then cannot be rewritten ({})",
                match item.ingested_at {
                    crate::store::KnowledgeTime::At(_) => "ingest with a later --now",
                    crate::store::KnowledgeTime::AtCommit =>
                        "this machine's clock is behind the one that wrote it",
                }
            ),
        )),
        _ => Ok(()),
    }
}

/// An episode stored before with other content.
pub fn rewritten(item: &BatchItem, stored: &EpisodeDraft, new: &EpisodeDraft) -> StoreError {
    StoreError::rejected(
        &item.origin,
        stored.first_difference(new),
        format!(
            "episode {:?} is already stored with different content; \
             history is never overwritten (ingest a new episode that supersedes it)",
            new.incident_fingerprint
        ),
    )
}

/// A skill's first version must say when it applies and what to do.
pub fn first_skill_version(origin: &str, draft: &SkillDraft) -> Result<(), StoreError> {
    if draft.trigger_entities.is_empty() || draft.steps.is_empty() {
        return Err(StoreError::rejected(
            origin,
            "skills",
            format!(
                "skill {:?} is not stored yet; its first version needs trigger_entities and steps",
                draft.name
            ),
        ));
    }
    Ok(())
}

/// A file has one owner, recorded once.
pub fn code_unit_owner(origin: &str, unit: &CodeUnit, stored: &CodeUnit) -> StoreError {
    StoreError::rejected(
        origin,
        "code_units",
        format!(
            "{}|{} is already recorded as owned by service {:?}; code units are never overwritten",
            unit.repo, unit.path, stored.service
        ),
    )
}

fn field(index: usize, name: &str) -> String {
    format!("supersedes[{index}].{name}")
}

/// The prior of supersession `index` is neither stored nor in the batch.
pub fn unknown_prior(item: &BatchItem, index: usize, s: &SupersedeDraft) -> StoreError {
    StoreError::rejected(
        &item.origin,
        field(index, "incident_fingerprint"),
        format!(
            "unknown episode {:?}: expected a fingerprint already in the store or in this batch",
            s.prior
        ),
    )
}

/// The prior has no fact about the entity the supersession names.
pub fn no_fact_to_close(item: &BatchItem, index: usize, s: &SupersedeDraft) -> StoreError {
    StoreError::rejected(
        &item.origin,
        field(index, "entity_ref"),
        format!(
            "episode {:?} has no MENTIONS or RESOLVED_BY fact about {}: expected an entity the prior episode names",
            s.prior, s.entity
        ),
    )
}

/// What supersession `index` of `item` does to the prior's `relation` fact `edge`: closes it
/// (true), finds it already closed at the same time (false), or is refused.
/// `knowledge_time` runs first when the fact would be closed.
pub fn closes(
    item: &BatchItem,
    at: Timestamp,
    index: usize,
    s: &SupersedeDraft,
    relation: Relation,
    edge: &FactEdge,
    knowledge_time: impl FnOnce() -> Result<(), StoreError>,
) -> Result<bool, StoreError> {
    match edge.t_invalid {
        None => {
            knowledge_time()?;
            if at < edge.ingested_at {
                return Err(StoreError::rejected(
                    &item.origin,
                    field(index, "incident_fingerprint"),
                    format!(
                        "closes {:?}'s {relation} fact about {}, recorded at {}, with the \
                         earlier knowledge time {}; expected the closing to be recorded after",
                        s.prior, s.entity, edge.ingested_at, at
                    ),
                ));
            }
            if s.t_invalid <= edge.t_valid {
                return Err(StoreError::rejected(
                    &item.origin,
                    field(index, "t_invalid"),
                    format!(
                        "{} closes {:?}'s {relation} fact about {} before it began: \
                         expected a time after its t_valid {}",
                        s.t_invalid, s.prior, s.entity, edge.t_valid
                    ),
                ));
            }
            Ok(true)
        }
        Some(existing) if existing == s.t_invalid => Ok(false),
        Some(existing) => Err(StoreError::rejected(
            &item.origin,
            field(index, "t_invalid"),
            format!(
                "{:?}'s {relation} fact about {} was already invalidated at {existing}; \
                 refusing to re-invalidate it at {}",
                s.prior, s.entity, s.t_invalid
            ),
        )),
    }
}

/// Skill versions added on their own follow knowledge time forward too.
pub fn skills_recorded_at(
    recorded_at: Timestamp,
    high_water: Option<Timestamp>,
) -> Result<(), StoreError> {
    match high_water {
        Some(high) if recorded_at < high => Err(StoreError::rejected(
            "skills",
            "recorded_at",
            format!(
                "{recorded_at} is before {high}, when this store last recorded anything; knowledge time only moves forward"
            ),
        )),
        _ => Ok(()),
    }
}

/// A skill version restored as given: the same as the one stored under its number, and written
/// after the version before it. `stored` is what the store holds under (name, version) and
/// `previous_exists` whether it holds (name, version - 1).
pub fn restored_skill_version(
    origin: &str,
    skill: &Skill,
    stored: Option<&Skill>,
    previous_exists: bool,
) -> Result<bool, StoreError> {
    match stored {
        Some(s) if s == skill => Ok(false),
        Some(_) => Err(StoreError::rejected(
            origin,
            "skill",
            format!(
                "version {} of skill {:?} is already stored with different content; \
                 history is never overwritten",
                skill.version, skill.name
            ),
        )),
        None if skill.version > 1 && !previous_exists => Err(StoreError::rejected(
            origin,
            "skill",
            format!(
                "version {} of skill {:?} comes without version {} before it",
                skill.version,
                skill.name,
                skill.version - 1
            ),
        )),
        None if skill.version == 0 => Err(StoreError::rejected(
            origin,
            "skill",
            format!("skill {:?} has version 0; versions start at 1", skill.name),
        )),
        None => Ok(true),
    }
}
