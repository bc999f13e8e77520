use std::collections::{BTreeSet, HashMap, VecDeque};

use serde::Serialize;

use super::QueryError;
use crate::model::{Review, Supersession, Timestamp};
use crate::store::MemoryStore;

/// One SUPERSEDES edge: `episode` closed `prior`'s fact about the entity.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LineageLink {
    pub episode: String,
    pub prior: String,
    pub entity_type: String,
    pub entity_ref: String,
    /// Valid time at which the prior's fact stopped being true.
    pub closed_at: Timestamp,
    /// Knowledge time at which the closing was recorded.
    pub recorded_at: Timestamp,
    /// Hops from the episode the lineage was asked for.
    pub depth: usize,
    /// The latest reviewer's verdict known at K (confirmed, or retracted: then the prior's
    /// facts it closed are valid again); absent while unreviewed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Lineage {
    pub episode: String,
    /// What this episode superseded, and what those superseded, oldest last.
    pub backwards: Vec<LineageLink>,
    /// What superseded this episode, and what superseded those.
    pub forwards: Vec<LineageLink>,
}

impl LineageLink {
    fn of(s: &Supersession, depth: usize, known_at: Timestamp) -> Self {
        LineageLink {
            episode: s.episode.clone(),
            prior: s.prior.clone(),
            entity_type: s.entity.entity_type.clone(),
            entity_ref: s.entity.entity_ref.clone(),
            closed_at: s.t_valid,
            recorded_at: s.ingested_at,
            depth,
            review: s.review_at(known_at).cloned(),
        }
    }
}

#[derive(Clone, Copy)]
enum Direction {
    Backwards,
    Forwards,
}

/// The SUPERSEDES chain in both directions, as known at `known_at`.
pub fn lineage(
    store: &dyn MemoryStore,
    fingerprint: &str,
    known_at: Timestamp,
) -> Result<Lineage, QueryError> {
    Ok(lineage_within(store, fingerprint, known_at, usize::MAX)?.lineage)
}

/// A lineage cut to the links nearest the episode.
#[derive(Clone, Debug, PartialEq)]
pub struct NearestLineage {
    pub lineage: Lineage,
    /// Whether links beyond the limit were left out, in either direction.
    pub cut: bool,
}

/// At most `limit` links in each direction, nearest first: a chain of thousands of recurring
/// fixes costs what a screenful of it does.
pub fn lineage_within(
    store: &dyn MemoryStore,
    fingerprint: &str,
    known_at: Timestamp,
    limit: usize,
) -> Result<NearestLineage, QueryError> {
    let episode = store
        .episode(fingerprint)?
        .ok_or_else(|| QueryError::UnknownEpisode(fingerprint.to_string()))?;
    if episode.ingested_at > known_at {
        return Err(QueryError::NotYetKnown {
            fingerprint: fingerprint.to_string(),
            known_at,
            recorded_at: episode.ingested_at,
        });
    }
    let (backwards, whole_back) = walk(store, fingerprint, known_at, Direction::Backwards, limit)?;
    let (forwards, whole_forth) = walk(store, fingerprint, known_at, Direction::Forwards, limit)?;
    Ok(NearestLineage {
        lineage: Lineage {
            episode: fingerprint.to_string(),
            backwards,
            forwards,
        },
        cut: !(whole_back && whole_forth),
    })
}

/// The links reachable in one direction, breadth first, and whether that was all of them.
fn walk(
    store: &dyn MemoryStore,
    start: &str,
    known_at: Timestamp,
    direction: Direction,
    limit: usize,
) -> Result<(Vec<LineageLink>, bool), QueryError> {
    let backwards = matches!(direction, Direction::Backwards);
    // A store that can fetch the reachable edges in one query does; otherwise edge by edge.
    let mut fetched: Option<HashMap<String, Vec<Supersession>>> = store
        .lineage_edges(start, backwards, known_at)?
        .map(|edges| {
            let mut from: HashMap<String, Vec<Supersession>> = HashMap::new();
            for s in edges {
                let at = if backwards { &s.episode } else { &s.prior };
                from.entry(at.clone()).or_default().push(s);
            }
            from
        });
    let mut seen = BTreeSet::from([start.to_string()]);
    let mut queue = VecDeque::from([(start.to_string(), 1usize)]);
    let mut links = Vec::new();
    while let Some((fp, depth)) = queue.pop_front() {
        if links.len() >= limit {
            return Ok((links, false));
        }
        let mut edges = match (&mut fetched, direction) {
            (Some(from), _) => from.remove(&fp).unwrap_or_default(),
            (None, Direction::Backwards) => store.supersedes(&fp)?,
            (None, Direction::Forwards) => store.superseded_by(&fp)?,
        };
        edges.retain(|s| s.ingested_at <= known_at);
        edges.sort_by(|a, b| {
            (a.t_valid, &a.episode, &a.prior).cmp(&(b.t_valid, &b.episode, &b.prior))
        });
        for s in &edges {
            if links.len() >= limit {
                return Ok((links, false));
            }
            links.push(LineageLink::of(s, depth, known_at));
            let next = match direction {
                Direction::Backwards => &s.prior,
                Direction::Forwards => &s.episode,
            };
            if seen.insert(next.clone()) {
                queue.push_back((next.clone(), depth + 1));
            }
        }
    }
    Ok((links, true))
}
