//! A Reflexion lesson: one sentence per concluded episode, rendered from its facts alone
//! (no model), citing the episode and the entities it rests on.

use serde::{Deserialize, Serialize};

use crate::model::{AsOf, EntityKey, FactEdge, FactState, Relation, Timestamp};

/// Entity types that name a cause rather than a place.
const CAUSE_TYPES: [&str; 3] = ["cause", "root_cause", "fault_class"];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Lesson {
    pub episode: String,
    pub text: String,
    /// The facts it rests on, as `RELATION type|ref`: if one of them is superseded, so is
    /// the lesson.
    pub cites: Vec<String>,
}

/// Renders the lesson of `episode` from its facts. Same input, same bytes.
pub fn render<'a>(
    episode: &str,
    resolution_nl: &str,
    facts: impl IntoIterator<Item = (Relation, &'a EntityKey)>,
) -> Lesson {
    let mut mentions: Vec<&EntityKey> = Vec::new();
    let mut fixes: Vec<&EntityKey> = Vec::new();
    for (relation, entity) in facts {
        match relation {
            Relation::Mentions => mentions.push(entity),
            Relation::ResolvedBy => fixes.push(entity),
        }
    }
    mentions.sort();
    mentions.dedup();
    fixes.sort();
    fixes.dedup();
    let causes: Vec<&EntityKey> = mentions
        .iter()
        .copied()
        .filter(|e| CAUSE_TYPES.contains(&e.entity_type.as_str()))
        .collect();
    let (causes, context): (Vec<&EntityKey>, Vec<&EntityKey>) = if causes.is_empty() {
        (mentions.clone(), Vec::new())
    } else {
        let context = mentions
            .iter()
            .copied()
            .filter(|e| !CAUSE_TYPES.contains(&e.entity_type.as_str()))
            .collect();
        (causes, context)
    };
    let name = |e: &&EntityKey| format!("{}:{}", e.entity_type, e.entity_ref);
    let list = |keys: &[&EntityKey]| {
        if keys.is_empty() {
            "unrecorded".to_string()
        } else {
            keys.iter().map(name).collect::<Vec<_>>().join(", ")
        }
    };
    let mut text = format!("Lesson: cause {}", list(&causes));
    if !context.is_empty() {
        text.push_str(&format!(" (in {})", list(&context)));
    }
    text.push_str(&format!("; resolution {}", list(&fixes)));
    let how = first_sentence(resolution_nl);
    if !how.is_empty() {
        text.push_str(&format!(": {how}"));
    }
    text.push_str(&format!(" [{episode}]"));
    let cites = causes
        .iter()
        .map(|e| format!("{} {e}", Relation::Mentions))
        .chain(
            fixes
                .iter()
                .map(|e| format!("{} {e}", Relation::ResolvedBy)),
        )
        .collect();
    Lesson {
        episode: episode.to_string(),
        text,
        cites,
    }
}

fn first_sentence(text: &str) -> &str {
    let text = text.trim();
    match text.find(". ") {
        Some(i) => &text[..=i],
        None => text,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LessonState {
    Current,
    Superseded,
    NotYetKnown,
}

impl LessonState {
    pub fn as_str(self) -> &'static str {
        match self {
            LessonState::Current => "current",
            LessonState::Superseded => "superseded",
            LessonState::NotYetKnown => "not yet known",
        }
    }
}

/// A lesson as it stood at an as-of point.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LessonView {
    #[serde(flatten)]
    pub lesson: Lesson,
    pub state: LessonState,
    /// The episode whose supersession closed a fact the lesson rests on.
    pub superseded_by: Option<String>,
    /// When that fact stopped being true (valid time) and when that was recorded.
    pub superseded_at: Option<Timestamp>,
    pub superseded_known_at: Option<Timestamp>,
}

impl LessonView {
    /// The lesson at (V, K): superseded once a later episode's supersession has closed a fact
    /// it cites, at V as known at K.
    pub fn at(
        lesson: Lesson,
        episode_ingested_at: Timestamp,
        facts: &[FactEdge],
        as_of: &AsOf,
    ) -> Self {
        if !as_of.knows(episode_ingested_at) {
            return LessonView {
                lesson,
                state: LessonState::NotYetKnown,
                superseded_by: None,
                superseded_at: None,
                superseded_known_at: None,
            };
        }
        let facts = crate::model::facts_known_at(facts, as_of.known_at);
        let closing = facts
            .iter()
            .filter(|f| {
                lesson
                    .cites
                    .contains(&format!("{} {}", f.relation, f.entity))
                    && f.superseded_by.is_some()
                    && as_of.fact_state(f) == FactState::Invalidated
            })
            .min_by_key(|f| (f.t_invalid, f.expired_at));
        match closing {
            Some(f) => LessonView {
                superseded_by: f.superseded_by.clone(),
                superseded_at: f.t_invalid,
                superseded_known_at: f.expired_at,
                state: LessonState::Superseded,
                lesson,
            },
            None => LessonView {
                lesson,
                state: LessonState::Current,
                superseded_by: None,
                superseded_at: None,
                superseded_known_at: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(t: &str, r: &str) -> EntityKey {
        EntityKey::new(t, r).unwrap()
    }

    #[test]
    fn renders_cause_context_and_resolution_and_cites_them() {
        let facts = [
            (Relation::Mentions, key("service", "authelia")),
            (Relation::Mentions, key("cause", "session-secret-rotated")),
            (Relation::ResolvedBy, key("change", "cfg-0776")),
        ];
        let lesson = render(
            "INC-0297",
            "Restarted authelia to reload the secret. Then moved the secret to a file.",
            facts.iter().map(|(r, k)| (*r, k)),
        );
        assert_eq!(
            lesson.text,
            "Lesson: cause cause:session-secret-rotated (in service:authelia); resolution change:cfg-0776: Restarted authelia to reload the secret. [INC-0297]"
        );
        assert_eq!(
            lesson.cites,
            [
                "MENTIONS cause|session-secret-rotated",
                "RESOLVED_BY change|cfg-0776"
            ]
        );
        let reversed = render(
            "INC-0297",
            "Restarted authelia to reload the secret. Then moved the secret to a file.",
            facts.iter().rev().map(|(r, k)| (*r, k)),
        );
        assert_eq!(lesson, reversed, "fact order does not matter");
    }

    #[test]
    fn without_a_cause_type_every_mention_is_the_cause() {
        let facts = [(Relation::Mentions, key("service", "api"))];
        let lesson = render("E", "", facts.iter().map(|(r, k)| (*r, k)));
        assert_eq!(
            lesson.text,
            "Lesson: cause service:api; resolution unrecorded [E]"
        );
    }
}
