//! What the explorer shows, read from the store in batches: timeline pages, an episode with
//! everything its panes need, an entity with its episodes, and the store's summary. The
//! values come back as stored; redaction for display is [`crate::redact::Shown`].

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use crate::learning::{Lesson, Skill};
use crate::model::{EntityKey, FactEdge, MemoryEpisode, Supersession, Timestamp};
use crate::store::{MemoryStore, StoreError, StoreStats, TimelineQuery};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TimelineFilter {
    pub text: Option<String>,
    pub entity: Option<EntityKey>,
}

impl TimelineFilter {
    pub fn is_empty(&self) -> bool {
        self.text.is_none() && self.entity.is_none()
    }
}

/// Counts, and the span of time the timeline covers (for the as-of sliders).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoreSummary {
    pub stats: StoreStats,
    pub earliest: Option<Timestamp>,
    pub latest: Option<Timestamp>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimelineRow {
    pub fingerprint: String,
    pub concluded_at: Timestamp,
    pub ingested_at: Timestamp,
    /// The first line of its summary (cut to a row's width only after redaction, so a
    /// secret is never cut short of what its pattern needs).
    pub summary: String,
    /// It superseded an earlier episode's fact.
    pub supersedes: bool,
    /// A later episode superseded one of its facts.
    pub superseded: bool,
}

/// Rows `offset..offset + rows.len()` of the (filtered) timeline.
#[derive(Clone, Debug)]
pub struct TimelineRows {
    pub offset: usize,
    pub rows: Vec<TimelineRow>,
    /// Rows in the whole (filtered) timeline.
    pub total: usize,
}

#[derive(Clone, Debug)]
pub struct EpisodeDetail {
    pub episode: MemoryEpisode,
    pub lesson: Option<Lesson>,
    /// Every version of every skill triggered by one of the episode's entities.
    pub skills: Vec<Skill>,
    pub facts: Vec<FactEdge>,
    pub supersedes: Vec<Supersession>,
    pub superseded_by: Vec<Supersession>,
}

#[derive(Clone, Debug)]
pub struct EntityDetail {
    pub key: EntityKey,
    pub facts: Vec<FactEdge>,
    /// The episodes those facts belong to.
    pub episodes: HashMap<String, MemoryEpisode>,
}

pub fn summary(store: &dyn MemoryStore) -> Result<StoreSummary, StoreError> {
    let stats = store.stats()?;
    let page = |offset: usize| {
        store.timeline(&TimelineQuery {
            entity: None,
            known_at: None,
            offset,
            limit: 1,
        })
    };
    let latest = page(0)?.first().map(|e| e.concluded_at);
    let earliest = page((stats.episodes as usize).saturating_sub(1))?
        .first()
        .map(|e| e.t_valid.min(e.concluded_at));
    Ok(StoreSummary {
        stats,
        earliest,
        latest,
    })
}

/// Timeline rows for these episodes, in their order: the supersession marks of the whole
/// page, as known at `known_at` (`None`: now), come from one batch read.
fn rows(
    store: &dyn MemoryStore,
    episodes: Vec<MemoryEpisode>,
    known_at: Option<Timestamp>,
) -> Result<Vec<TimelineRow>, StoreError> {
    let fps: Vec<String> = episodes
        .iter()
        .map(|e| e.incident_fingerprint.clone())
        .collect();
    let marks = store.supersession_marks(&fps, known_at)?;
    Ok(episodes
        .into_iter()
        .zip(marks)
        .map(|(e, (supersedes, superseded))| {
            (
                e.known_at(known_at.unwrap_or(Timestamp::MAX)),
                (supersedes, superseded),
            )
        })
        .map(|(e, (supersedes, superseded))| TimelineRow {
            summary: e.summary_nl.lines().next().unwrap_or_default().to_string(),
            fingerprint: e.incident_fingerprint,
            concluded_at: e.concluded_at,
            ingested_at: e.ingested_at,
            supersedes,
            superseded,
        })
        .collect())
}

/// The matching episodes of the last filtered timeline, so paging through it reads no
/// episode twice.
#[derive(Default)]
pub struct TimelineCache(Mutex<Option<FilteredTimeline>>);

struct FilteredTimeline {
    filter: TimelineFilter,
    known_at: Option<Timestamp>,
    /// The store's generation when the list was built.
    generation: Option<u64>,
    fingerprints: Vec<String>,
}

const SCAN_CHUNK: usize = 5_000;

/// A page of the timeline. Unfiltered, read straight from the store's timeline index;
/// filtered, the matching list is built once per store generation (and abandoned as soon
/// as `current` says a newer request replaced this one), then paged with batch reads.
pub fn timeline(
    store: &dyn MemoryStore,
    filter: &TimelineFilter,
    known_at: Option<Timestamp>,
    (offset, limit): (usize, usize),
    cache: &TimelineCache,
    generation: Option<u64>,
    current: &dyn Fn() -> bool,
) -> Result<TimelineRows, StoreError> {
    if filter.is_empty() && known_at.is_none() {
        let total = store.stats()?.episodes as usize;
        let episodes = store.timeline(&TimelineQuery {
            entity: None,
            known_at: None,
            offset,
            limit,
        })?;
        return Ok(TimelineRows {
            offset,
            rows: rows(store, episodes, None)?,
            total,
        });
    }
    let mut cached = cache.0.lock().unwrap_or_else(|poisoned| {
        let mut guard = poisoned.into_inner();
        *guard = None;
        guard
    });
    let hit = cached.as_ref().is_some_and(|c| {
        c.filter == *filter && c.known_at == known_at && c.generation == generation
    });
    if !hit {
        let needle = filter.text.as_ref().map(|t| t.to_lowercase());
        let mut matching = Vec::new();
        let mut scanned = 0;
        loop {
            if !current() {
                return Ok(TimelineRows {
                    offset,
                    rows: Vec::new(),
                    total: 0,
                });
            }
            let chunk = store.timeline(&TimelineQuery {
                entity: filter.entity.clone(),
                known_at,
                offset: scanned,
                limit: SCAN_CHUNK,
            })?;
            let done = chunk.len() < SCAN_CHUNK;
            scanned += chunk.len();
            matching.extend(
                chunk
                    .into_iter()
                    .filter(|e| {
                        needle.as_ref().is_none_or(|n| {
                            e.incident_fingerprint.to_lowercase().contains(n)
                                || e.summary_nl.to_lowercase().contains(n)
                                || e.resolution_nl.to_lowercase().contains(n)
                        })
                    })
                    .map(|e| e.incident_fingerprint),
            );
            if done {
                break;
            }
        }
        *cached = Some(FilteredTimeline {
            filter: filter.clone(),
            known_at,
            generation,
            fingerprints: matching,
        });
    }
    let Some(list) = cached.as_ref() else {
        return Ok(TimelineRows {
            offset,
            rows: Vec::new(),
            total: 0,
        });
    };
    let page: Vec<String> = list
        .fingerprints
        .iter()
        .skip(offset)
        .take(limit)
        .cloned()
        .collect();
    let mut found: HashMap<String, MemoryEpisode> = store
        .episodes(&page)?
        .into_iter()
        .map(|e| (e.incident_fingerprint.clone(), e))
        .collect();
    let episodes = page.iter().filter_map(|fp| found.remove(fp)).collect();
    Ok(TimelineRows {
        offset,
        total: list.fingerprints.len(),
        rows: rows(store, episodes, known_at)?,
    })
}

/// An episode with its lesson, facts, lineage edges and every version of the skills its
/// entities trigger (the pane picks the version current at K).
pub fn episode(store: &dyn MemoryStore, fp: &str) -> Result<Option<EpisodeDetail>, StoreError> {
    let Some(episode) = store.episode(fp)? else {
        return Ok(None);
    };
    let facts = store.facts(fp)?;
    let versions = store.skills()?;
    let touched: BTreeSet<&str> = versions
        .iter()
        .filter(|s| facts.iter().any(|f| s.trigger_entities.contains(&f.entity)))
        .map(|s| s.name.as_str())
        .collect();
    let skills = versions
        .iter()
        .filter(|s| touched.contains(s.name.as_str()))
        .cloned()
        .collect();
    Ok(Some(EpisodeDetail {
        lesson: store.lesson(fp)?,
        skills,
        facts,
        supersedes: store.supersedes(fp)?,
        superseded_by: store.superseded_by(fp)?,
        episode,
    }))
}

/// Every fact about an entity, and the episodes they belong to (one batch read).
pub fn entity(store: &dyn MemoryStore, key: EntityKey) -> Result<EntityDetail, StoreError> {
    let facts = store.entity_facts(&key)?;
    let fps: Vec<String> = facts
        .iter()
        .map(|f| f.episode.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let episodes = store
        .episodes(&fps)?
        .into_iter()
        .map(|e| (e.incident_fingerprint.clone(), e))
        .collect();
    Ok(EntityDetail {
        key,
        facts,
        episodes,
    })
}
