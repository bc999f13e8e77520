//! Voyager-style skills: runbook entries that accrete from resolutions. Each change is a
//! new version; a newer version supersedes the older from the moment it was recorded, and
//! no version is ever deleted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{EntityKey, Timestamp};

/// A skill as written by `strata skill add`, or by an episode whose resolution used it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkillDraft {
    pub name: String,
    /// Empty: keep the previous version's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trigger_entities: Vec<EntityKey>,
    /// Empty: keep the previous version's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub episodes: Vec<String>,
    /// Counters given outright (`skill add`); `None` when an episode applied the skill,
    /// which counts one use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub succeeded: Option<u32>,
    /// For an application by an episode: whether it worked (default yes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome_succeeded: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used: Option<Timestamp>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Skill {
    pub name: String,
    /// 1, 2, …: each change is a new version.
    pub version: u32,
    pub trigger_entities: Vec<EntityKey>,
    pub steps: Vec<String>,
    /// The episodes it came from or was applied in.
    pub episodes: Vec<String>,
    pub applied: u32,
    pub succeeded: u32,
    pub last_used: Option<Timestamp>,
    /// Knowledge time of this version; it supersedes the previous one from then on.
    pub recorded_at: Timestamp,
}

impl Skill {
    /// The next version: `draft` over `previous` (if any), used by `episode` when given.
    pub fn next(
        previous: Option<&Skill>,
        draft: &SkillDraft,
        episode: Option<(&str, Timestamp)>,
        recorded_at: Timestamp,
    ) -> Skill {
        let mut episodes: Vec<String> = previous.map(|p| p.episodes.clone()).unwrap_or_default();
        for e in draft
            .episodes
            .iter()
            .map(String::as_str)
            .chain(episode.map(|(fp, _)| fp))
        {
            if !episodes.iter().any(|x| x == e) {
                episodes.push(e.to_string());
            }
        }
        let (applied, succeeded) = match (episode, previous) {
            (Some(_), p) => (
                p.map_or(0, |p| p.applied) + 1,
                p.map_or(0, |p| p.succeeded) + u32::from(draft.outcome_succeeded.unwrap_or(true)),
            ),
            (None, p) => (
                draft.applied.or(p.map(|p| p.applied)).unwrap_or(0),
                draft.succeeded.or(p.map(|p| p.succeeded)).unwrap_or(0),
            ),
        };
        let last_used = [
            previous.and_then(|p| p.last_used),
            draft.last_used,
            episode.map(|(_, at)| at),
        ]
        .into_iter()
        .flatten()
        .max();
        let mut triggers = keep_or(
            &draft.trigger_entities,
            previous.map(|p| &p.trigger_entities),
        );
        triggers.sort();
        triggers.dedup();
        Skill {
            name: draft.name.clone(),
            version: previous.map_or(1, |p| p.version + 1),
            trigger_entities: triggers,
            steps: keep_or(&draft.steps, previous.map(|p| &p.steps)),
            episodes,
            applied,
            succeeded: succeeded.min(applied),
            last_used,
            recorded_at,
        }
    }

    /// [`Skill::next`], or `None` when that version would say the same as `previous`.
    pub fn next_if_changed(
        previous: Option<&Skill>,
        draft: &SkillDraft,
        episode: Option<(&str, Timestamp)>,
        recorded_at: Timestamp,
    ) -> Option<Skill> {
        let next = Skill::next(previous, draft, episode, recorded_at);
        (!previous.is_some_and(|p| p.same_content(&next))).then_some(next)
    }

    /// Whether `other` says the same (ignoring version and when it was recorded).
    pub fn same_content(&self, other: &Skill) -> bool {
        self.trigger_entities == other.trigger_entities
            && self.steps == other.steps
            && self.episodes == other.episodes
            && self.applied == other.applied
            && self.succeeded == other.succeeded
            && self.last_used == other.last_used
    }
}

/// `mine` unless empty, else the previous version's.
fn keep_or<T: Clone>(mine: &[T], theirs: Option<&Vec<T>>) -> Vec<T> {
    if mine.is_empty() {
        theirs.cloned().unwrap_or_default()
    } else {
        mine.to_vec()
    }
}

/// Every skill's newest version known at `known_at`, by name.
pub fn current(versions: &[Skill], known_at: Timestamp) -> Vec<Skill> {
    let mut latest: BTreeMap<&str, &Skill> = BTreeMap::new();
    for s in versions.iter().filter(|s| s.recorded_at <= known_at) {
        let slot = latest.entry(s.name.as_str()).or_insert(s);
        if s.version > slot.version {
            *slot = s;
        }
    }
    latest.into_values().cloned().collect()
}

/// What `strata skills` and the MCP `skills` tool list: the newest version of each skill known
/// at `known_at` (or every version then known, with `all`), only those `entity` triggers when
/// given.
pub fn listed(
    versions: Vec<Skill>,
    known_at: Timestamp,
    all: bool,
    entity: Option<&EntityKey>,
) -> Vec<Skill> {
    let mut shown = if all {
        versions
            .into_iter()
            .filter(|s| s.recorded_at <= known_at)
            .collect()
    } else {
        current(&versions, known_at)
    };
    if let Some(entity) = entity {
        shown.retain(|s| s.trigger_entities.contains(entity));
    }
    shown
}

/// Current skills whose triggers include one of `entities`, with the entities shared;
/// most shared first, then by name.
pub fn matching<'a>(
    skills: &'a [Skill],
    entities: &[EntityKey],
) -> Vec<(&'a Skill, Vec<EntityKey>)> {
    let mut found: Vec<(&Skill, Vec<EntityKey>)> = skills
        .iter()
        .filter_map(|s| {
            let shared: Vec<EntityKey> = s
                .trigger_entities
                .iter()
                .filter(|t| entities.contains(t))
                .cloned()
                .collect();
            (!shared.is_empty()).then_some((s, shared))
        })
        .collect();
    found.sort_by(|a, b| {
        b.1.len()
            .cmp(&a.1.len())
            .then_with(|| a.0.name.cmp(&b.0.name))
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        Timestamp::parse(s).unwrap()
    }

    fn draft(name: &str) -> SkillDraft {
        SkillDraft {
            name: name.into(),
            trigger_entities: vec![EntityKey::new("service", "authelia").unwrap()],
            steps: vec!["restart authelia".into()],
            episodes: Vec::new(),
            applied: None,
            succeeded: None,
            outcome_succeeded: None,
            last_used: None,
        }
    }

    #[test]
    fn applications_accrete_and_versions_supersede() {
        let v1 = Skill::next(
            None,
            &draft("reload-secret"),
            None,
            ts("2026-01-01T00:00:00Z"),
        );
        assert_eq!((v1.version, v1.applied, v1.succeeded), (1, 0, 0));
        let used = SkillDraft {
            trigger_entities: Vec::new(),
            steps: Vec::new(),
            outcome_succeeded: Some(false),
            ..draft("reload-secret")
        };
        let v2 = Skill::next(
            Some(&v1),
            &used,
            Some(("INC-1", ts("2026-02-01T00:00:00Z"))),
            ts("2026-02-02T00:00:00Z"),
        );
        assert_eq!((v2.version, v2.applied, v2.succeeded), (2, 1, 0));
        assert_eq!(v2.steps, v1.steps, "kept from the previous version");
        assert_eq!(v2.episodes, ["INC-1"]);
        assert_eq!(v2.last_used, Some(ts("2026-02-01T00:00:00Z")));
        let all = [v1.clone(), v2.clone()];
        assert_eq!(current(&all, ts("2026-01-15T00:00:00Z")), [v1]);
        assert_eq!(current(&all, ts("2026-03-01T00:00:00Z")), [v2]);
    }
}
