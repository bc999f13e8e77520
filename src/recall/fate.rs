//! What became of a recalled episode's fix as of the recall's (V, K): its resolution, the
//! entities that resolved it and whether each still holds, which later episodes superseded its
//! facts, and the current successor at the end of that chain: the episode whose fix holds now.
//! Read in one batch per chain step, never one read per result.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use super::fusion::{OrderKey, PerLeg};
use super::response::RecallResult;
use crate::model::{AsOf, FactEdge, FactState, MemoryEpisode, Relation, Timestamp};
use crate::store::{MemoryStore, StoreError};

/// How recall treats a result a later episode superseded.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Serialize,
    serde::Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum StalePolicy {
    /// Rank as fusion ranked, and say nothing of supersession
    Keep,
    /// Rank as fusion ranked, and mark superseded results with what superseded them
    #[default]
    Mark,
    /// Mark, and place each superseded result's current successor directly after it
    Follow,
}

impl StalePolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            StalePolicy::Keep => "keep",
            StalePolicy::Mark => "mark",
            StalePolicy::Follow => "follow",
        }
    }
}

/// An entity that resolved the episode, and whether that still holds at (V, K).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Resolver {
    /// `TYPE:REF`.
    pub entity: String,
    pub state: FactState,
    /// When the fact stopped being true, where it has (as known at K).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_invalid: Option<Timestamp>,
}

/// One of the episode's facts a later episode closed, as known at K.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Superseded {
    /// The episode that superseded it.
    pub episode: String,
    /// `TYPE:REF`: the entity the closed fact was about.
    pub entity: String,
    /// The valid time the fact ended.
    pub t_invalid: Timestamp,
    /// The knowledge time the store learned it.
    pub known_at: Timestamp,
}

/// The episode at the end of a supersession chain: nothing has superseded its facts as of K.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Successor {
    pub fingerprint: String,
    pub concluded_at: Timestamp,
    /// The entities that resolved it, `TYPE:REF`, valid at (V, K).
    pub resolved_by: Vec<String>,
    /// Its summary and resolution, as stored.
    #[serde(skip)]
    pub summary: String,
    #[serde(skip)]
    pub resolution: String,
}

/// What became of one episode's fix as of (V, K).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fate {
    pub resolution: String,
    pub resolved_by: Vec<Resolver>,
    pub superseded_by: Vec<Superseded>,
    pub current_successor: Option<Successor>,
}

/// Chains longer than this are cut (a loop written by another program cannot hang recall).
const MAX_STEPS: usize = 32;

/// The entities each episode was resolved by, valid at (V, K), from its facts.
fn note_resolvers(resolvers: &mut HashMap<String, Vec<String>>, facts: &[FactEdge], as_of: &AsOf) {
    for f in facts {
        if f.relation == Relation::ResolvedBy && as_of.fact_valid(f) {
            resolvers
                .entry(f.episode.clone())
                .or_default()
                .push(f.entity.flag_form());
        }
    }
}

/// A fact a later episode closed, as known at (V, K).
fn is_closed(f: &FactEdge, as_of: &AsOf) -> bool {
    f.superseded_by.is_some() && as_of.fact_state(f) == FactState::Invalidated
}

/// The facts among `facts` that a later episode closed, as known at (V, K).
fn closed<'a>(facts: &'a [FactEdge], as_of: &AsOf) -> impl Iterator<Item = &'a FactEdge> {
    facts.iter().filter(move |f| is_closed(f, as_of))
}

/// The fate of each of `episodes` as of `as_of`, from their `facts` (every fact of theirs, as
/// read in one batch) and one read of facts and one of episodes per step along the
/// supersession chains.
pub fn fates(
    store: &dyn MemoryStore,
    episodes: &[&MemoryEpisode],
    facts: &[FactEdge],
    as_of: &AsOf,
) -> Result<HashMap<String, Fate>, StoreError> {
    let fps: Vec<String> = episodes
        .iter()
        .map(|e| e.incident_fingerprint.clone())
        .collect();
    // Each fact as corrected by K.
    let facts = &crate::model::facts_known_at(facts, as_of.known_at)[..];
    let mut by_episode: HashMap<&str, Vec<&FactEdge>> = HashMap::new();
    for f in facts {
        by_episode.entry(f.episode.as_str()).or_default().push(f);
    }
    // Successors of each episode of the chain, stepped one level at a time.
    let mut next: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in closed(facts, as_of) {
        if let Some(by) = &f.superseded_by {
            next.entry(f.episode.clone()).or_default().push(by.clone());
        }
    }
    // The episodes themselves can succeed one another: they start out read.
    let mut known: HashMap<String, MemoryEpisode> = episodes
        .iter()
        .filter(|e| as_of.knows(e.ingested_at))
        .map(|e| (e.incident_fingerprint.clone(), e.known_at(as_of.known_at)))
        .collect();
    let mut resolvers: HashMap<String, Vec<String>> = HashMap::new();
    note_resolvers(&mut resolvers, facts, as_of);
    let mut frontier: Vec<String> = next.values().flatten().cloned().collect();
    let mut seen: HashSet<String> = fps.iter().cloned().collect();
    for _ in 0..MAX_STEPS {
        frontier.retain(|fp| seen.insert(fp.clone()));
        frontier.sort();
        frontier.dedup();
        if frontier.is_empty() {
            break;
        }
        for e in store.episodes(&frontier)? {
            if as_of.knows(e.ingested_at) {
                known.insert(e.incident_fingerprint.clone(), e.known_at(as_of.known_at));
            }
        }
        let step =
            crate::model::facts_known_at(&store.facts_of_episodes(&frontier)?, as_of.known_at);
        note_resolvers(&mut resolvers, &step, as_of);
        frontier.clear();
        for f in closed(&step, as_of) {
            if let Some(by) = &f.superseded_by {
                next.entry(f.episode.clone()).or_default().push(by.clone());
                frontier.push(by.clone());
            }
        }
    }
    let successor_of = |start: &str| -> Option<Successor> {
        // Depth first along the chain; of several ends, the latest concluded wins.
        let mut stack: Vec<&str> = next.get(start)?.iter().map(String::as_str).collect();
        let mut visited: HashSet<&str> = HashSet::new();
        let mut best: Option<&MemoryEpisode> = None;
        while let Some(fp) = stack.pop() {
            if !visited.insert(fp) {
                continue;
            }
            let Some(episode) = known.get(fp) else {
                continue;
            };
            match next.get(fp) {
                Some(later) if later.iter().any(|l| known.contains_key(l)) => {
                    stack.extend(later.iter().map(String::as_str));
                }
                _ => {
                    let key = |e: &MemoryEpisode| (e.concluded_at, e.incident_fingerprint.clone());
                    if best.is_none_or(|b| key(episode) > key(b)) {
                        best = Some(episode);
                    }
                }
            }
        }
        best.map(|e| {
            let mut resolved_by = resolvers
                .get(&e.incident_fingerprint)
                .cloned()
                .unwrap_or_default();
            resolved_by.sort();
            resolved_by.dedup();
            Successor {
                fingerprint: e.incident_fingerprint.clone(),
                concluded_at: e.concluded_at,
                resolved_by,
                summary: e.summary_nl.clone(),
                resolution: e.resolution_nl.clone(),
            }
        })
    };
    Ok(episodes
        .iter()
        .map(|e| {
            let fp = e.incident_fingerprint.as_str();
            let own = by_episode.get(fp).map(Vec::as_slice).unwrap_or_default();
            let mut resolved_by: Vec<Resolver> = own
                .iter()
                .filter(|f| f.relation == Relation::ResolvedBy && as_of.knows(f.ingested_at))
                .map(|f| Resolver {
                    entity: f.entity.flag_form(),
                    state: as_of.fact_state(f),
                    t_invalid: as_of.known_end(f.t_invalid, f.expired_at),
                })
                .collect();
            resolved_by.sort_by(|a, b| a.entity.cmp(&b.entity));
            let mut superseded_by: Vec<Superseded> = own
                .iter()
                .copied()
                .filter(|f| is_closed(f, as_of))
                .filter_map(|f| {
                    Some(Superseded {
                        episode: f.superseded_by.clone()?,
                        entity: f.entity.flag_form(),
                        t_invalid: f.t_invalid?,
                        known_at: f.expired_at?,
                    })
                })
                .collect();
            superseded_by.sort_by(|a, b| {
                (a.known_at, &a.episode, &a.entity).cmp(&(b.known_at, &b.episode, &b.entity))
            });
            superseded_by.dedup();
            let current_successor = if superseded_by.is_empty() {
                None
            } else {
                successor_of(fp)
            };
            (
                fp.to_string(),
                Fate {
                    resolution: e.known_at(as_of.known_at).resolution_nl,
                    resolved_by,
                    superseded_by,
                    current_successor,
                },
            )
        })
        .collect())
}

/// The `follow` stale policy on a ranking: each superseded episode's current successor goes
/// directly after it, unless it already ranks above or right there; one the ranking lacks is
/// added. Each entry says which episode placed it there, if the policy did.
pub fn follow_order<'a>(
    order: &[String],
    successor_of: impl Fn(&str) -> Option<&'a str>,
) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> =
        order.iter().map(|fp| (fp.clone(), None)).collect();
    let mut i = 0;
    while i < out.len() {
        if let Some(successor) = successor_of(&out[i].0) {
            let prior = out[i].0.clone();
            match out.iter().position(|(fp, _)| fp == successor) {
                Some(j) if j <= i + 1 => {}
                Some(j) => {
                    let (fp, _) = out.remove(j);
                    out.insert(i + 1, (fp, Some(prior)));
                }
                None => out.insert(i + 1, (successor.to_string(), Some(prior))),
            }
        }
        i += 1;
    }
    out
}

/// [`follow_order`] on recall's results: a successor no leg ranked is added as a result of its
/// own. The top `k` are kept, renumbered.
pub fn follow(results: &mut Vec<RecallResult>, k: usize) {
    let successors: HashMap<String, Successor> = results
        .iter()
        .filter_map(|r| {
            r.current_successor
                .clone()
                .map(|s| (r.fingerprint.clone(), s))
        })
        .collect();
    let order: Vec<String> = results.iter().map(|r| r.fingerprint.clone()).collect();
    let placed = follow_order(&order, |fp| {
        successors.get(fp).map(|s| s.fingerprint.as_str())
    });
    let mut by_fp: HashMap<String, RecallResult> = std::mem::take(results)
        .into_iter()
        .map(|r| (r.fingerprint.clone(), r))
        .collect();
    for (fp, prior) in placed.into_iter().take(k) {
        let result = match (by_fp.remove(&fp), prior) {
            (Some(r), None) => r,
            (Some(mut moved), Some(prior)) => {
                moved.follows = Some(prior);
                moved.decided_by = Some(OrderKey::Successor);
                moved
            }
            (None, Some(prior)) => {
                let Some(s) = successors.values().find(|s| s.fingerprint == fp) else {
                    continue;
                };
                successor_result(s.clone(), prior)
            }
            (None, None) => continue,
        };
        results.push(result);
    }
    for (n, r) in results.iter_mut().enumerate() {
        r.position = n + 1;
    }
}

/// A successor no leg ranked, as a result placed after the episode it succeeds.
fn successor_result(s: Successor, prior: String) -> RecallResult {
    RecallResult {
        position: 0,
        legs_hit: 0,
        rrf_score: 0.0,
        concluded_at: s.concluded_at,
        resolved_by: s
            .resolved_by
            .iter()
            .map(|entity| Resolver {
                entity: entity.clone(),
                state: FactState::Valid,
                t_invalid: None,
            })
            .collect(),
        superseded_by: Some(Vec::new()),
        current_successor: None,
        follows: Some(prior),
        per_leg: PerLeg {
            semantic: None,
            bm25: None,
            graph: None,
        },
        decided_by: Some(OrderKey::Successor),
        fingerprint: s.fingerprint,
        summary: s.summary,
        resolution: s.resolution,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fps(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn follow_places_each_successor_right_after_what_it_succeeds() {
        let successors: HashMap<&str, &str> = [("A", "S"), ("C", "B"), ("D", "A")].into();
        let placed = follow_order(&fps(&["A", "B", "C", "D", "S"]), |fp| {
            successors.get(fp).copied()
        });
        let order: Vec<&str> = placed.iter().map(|(fp, _)| fp.as_str()).collect();
        // S moves up behind A; B already ranks above C; A already ranks above D.
        assert_eq!(order, ["A", "S", "B", "C", "D"]);
        assert_eq!(placed[1].1.as_deref(), Some("A"));
        assert!(placed.iter().filter(|(_, by)| by.is_some()).count() == 1);
        // A successor the ranking lacks is added; one right after stays put, unmarked.
        let placed = follow_order(&fps(&["A", "X", "S"]), |fp| match fp {
            "A" => Some("N"),
            "X" => Some("S"),
            _ => None,
        });
        let order: Vec<&str> = placed.iter().map(|(fp, _)| fp.as_str()).collect();
        assert_eq!(order, ["A", "N", "X", "S"]);
        assert_eq!(placed[1].1.as_deref(), Some("A"));
        assert_eq!(placed[3].1, None);
    }
}
