use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use crate::model::{AsOf, EntityKey, FactState, Timestamp};
use crate::recall::dictionary::EntityDictionary;
use crate::recall::leg::{Leg, LegError, LegHits, LegQuery, RecallLeg};
use crate::store::{EntityLink, MemoryStore, StoreStats};

/// Entities with more fact edges than this are not expanded at hop 2: a hub (a shared host,
/// a provider) would pull in the whole graph and say nothing about relatedness.
const HUB_FACTS: usize = 500;

/// Breadth-first from the implicated entities over facts valid at the as-of point:
/// hop 1 = episodes with a fact about a seed entity; hop 2 = episodes sharing an entity with,
/// or linked by SUPERSEDES to, a hop-1 episode. Ranked by hop, then shared entities, then
/// recency, then fingerprint.
pub struct GraphLeg {
    store: Arc<dyn MemoryStore>,
    dictionary: RwLock<Option<Arc<EntityDictionary>>>,
    links: RwLock<LinkCache>,
}

/// Entity → episode links already read, valid until the store changes. Hubs are read
/// once instead of on every query.
#[derive(Default)]
struct LinkCache {
    generation: Option<StoreStats>,
    by_entity: HashMap<EntityKey, Arc<Vec<EntityLink>>>,
}

/// Entities whose links the cache keeps at most; past it, it starts over.
const CACHED_ENTITIES: usize = 4096;

struct Candidate {
    hop: u8,
    shared: BTreeSet<EntityKey>,
    /// Known from the traversal's compact links; looked up for lineage-only candidates.
    concluded_at: Option<Timestamp>,
}

impl Candidate {
    fn new(hop: u8) -> Self {
        Candidate {
            hop,
            shared: BTreeSet::new(),
            concluded_at: None,
        }
    }
}

impl GraphLeg {
    pub fn new(store: Arc<dyn MemoryStore>) -> Self {
        GraphLeg {
            store,
            dictionary: RwLock::new(None),
            links: RwLock::new(LinkCache::default()),
        }
    }

    /// Forgets cached links when the store has changed since they were read.
    fn refresh_cache(&self, stats: StoreStats) {
        let stale = self
            .links
            .read()
            .map_or(true, |c| c.generation != Some(stats));
        if stale
            && let Ok(mut c) = self.links.write()
            && c.generation != Some(stats)
        {
            c.generation = Some(stats);
            c.by_entity.clear();
        }
    }

    fn all_links(&self, entity: &EntityKey) -> Result<Arc<Vec<EntityLink>>, LegError> {
        if let Ok(c) = self.links.read()
            && let Some(l) = c.by_entity.get(entity)
        {
            return Ok(l.clone());
        }
        let links = Arc::new(
            self.store
                .entity_links(entity)
                .map_err(LegError::from_display)?,
        );
        if let Ok(mut c) = self.links.write() {
            if c.by_entity.len() >= CACHED_ENTITIES {
                c.by_entity.clear();
            }
            c.by_entity.insert(entity.clone(), links.clone());
        }
        Ok(links)
    }

    /// The dictionary, rebuilt when the store has gained entities since it was built.
    fn dictionary(&self, stats: &StoreStats) -> Result<Arc<EntityDictionary>, LegError> {
        let count = stats.entities as usize;
        if let Ok(guard) = self.dictionary.read()
            && let Some(d) = guard.as_ref()
            && d.size() == count
        {
            return Ok(d.clone());
        }
        let built = Arc::new(EntityDictionary::new(
            self.store.entities().map_err(LegError::from_display)?,
        ));
        if let Ok(mut guard) = self.dictionary.write() {
            *guard = Some(built.clone());
        }
        Ok(built)
    }

    /// Links to episodes with a fact valid at the as-of point about `entity`; none when the
    /// entity has more than `cap` links.
    fn links_about(
        &self,
        entity: &EntityKey,
        as_of: &AsOf,
        cap: Option<usize>,
    ) -> Result<Vec<EntityLink>, LegError> {
        let links: Vec<EntityLink> = self
            .all_links(entity)?
            .iter()
            .filter(|l| {
                as_of.knows(l.episode_ingested_at)
                    && l.episode_t_valid <= as_of.valid_at
                    && as_of.state(l.t_valid, l.t_invalid, l.ingested_at, l.expired_at)
                        == FactState::Valid
            })
            .cloned()
            .collect();
        if cap.is_some_and(|c| links.len() > c) {
            return Ok(Vec::new());
        }
        Ok(links)
    }
}

impl RecallLeg for GraphLeg {
    fn leg(&self) -> Leg {
        Leg::Graph
    }

    fn search(&self, q: &LegQuery) -> Result<LegHits, LegError> {
        let stats = self.store.stats().map_err(LegError::from_display)?;
        self.refresh_cache(stats);
        let mut seeds = q.entities.clone();
        for found in self.dictionary(&stats)?.find(&q.text) {
            if !seeds.contains(&found) {
                seeds.push(found);
            }
        }
        let note = Some(format!(
            "seeds: {}",
            if seeds.is_empty() {
                "none".to_string()
            } else {
                seeds
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ));
        if let Some(hits) = self
            .store
            .walk(&seeds, &q.as_of, HUB_FACTS, q.limit)
            .map_err(LegError::from_display)?
        {
            let mut ranked: Vec<(u8, usize, Timestamp, String)> = hits
                .into_iter()
                .map(|h| (h.hop, h.shared, h.concluded_at, h.fingerprint))
                .collect();
            return Ok(rank(&mut ranked, q.limit, note));
        }
        let mut found: HashMap<String, Candidate> = HashMap::new();
        for seed in &seeds {
            for link in self.links_about(seed, &q.as_of, None)? {
                let c = found
                    .entry(link.episode)
                    .or_insert_with(|| Candidate::new(1));
                c.shared.insert(seed.clone());
                c.concluded_at = Some(link.episode_concluded_at);
            }
        }
        if found.len() < q.limit {
            let hop1: Vec<String> = found.keys().cloned().collect();
            for fp in hop1 {
                for (entity, other, concluded_at) in self.bridges(&fp, &seeds, &q.as_of)? {
                    let c = found.entry(other).or_insert_with(|| Candidate::new(2));
                    if c.hop == 2 {
                        c.shared.insert(entity);
                        c.concluded_at = c.concluded_at.or(concluded_at);
                    }
                }
            }
        }
        let mut ranked: Vec<(u8, usize, Timestamp, String)> = Vec::with_capacity(found.len());
        for (fp, c) in found {
            let concluded_at = match c.concluded_at {
                Some(t) => t,
                None => match self.store.episode(&fp).map_err(LegError::from_display)? {
                    Some(e) if q.as_of.knows(e.ingested_at) && e.t_valid <= q.as_of.valid_at => {
                        e.concluded_at
                    }
                    _ => continue,
                },
            };
            ranked.push((c.hop, c.shared.len(), concluded_at, fp));
        }
        Ok(rank(&mut ranked, q.limit, note))
    }
}

/// Hop, then shared entities (more first), then recency, then fingerprint.
fn rank(
    ranked: &mut Vec<(u8, usize, Timestamp, String)>,
    limit: usize,
    note: Option<String>,
) -> LegHits {
    ranked.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(b.1.cmp(&a.1))
            .then(b.2.cmp(&a.2))
            .then_with(|| a.3.cmp(&b.3))
    });
    ranked.truncate(limit);
    LegHits {
        fingerprints: ranked.drain(..).map(|r| r.3).collect(),
        embed_ms: None,
        note,
    }
}

impl GraphLeg {
    /// Hop-2 neighbours of a hop-1 episode: through its other valid facts (skipping hubs) and
    /// through SUPERSEDES edges known and in force at the as-of point.
    #[allow(clippy::type_complexity)]
    fn bridges(
        &self,
        fp: &str,
        seeds: &[EntityKey],
        as_of: &AsOf,
    ) -> Result<Vec<(EntityKey, String, Option<Timestamp>)>, LegError> {
        let mut bridges = Vec::new();
        for fact in self.store.facts(fp).map_err(LegError::from_display)? {
            if !as_of.fact_valid(&fact) || seeds.contains(&fact.entity) {
                continue;
            }
            for link in self.links_about(&fact.entity, as_of, Some(HUB_FACTS))? {
                bridges.push((
                    fact.entity.clone(),
                    link.episode,
                    Some(link.episode_concluded_at),
                ));
            }
        }
        let backwards = self.store.supersedes(fp).map_err(LegError::from_display)?;
        let forwards = self
            .store
            .superseded_by(fp)
            .map_err(LegError::from_display)?;
        for (s, other) in backwards
            .iter()
            .map(|s| (s, &s.prior))
            .chain(forwards.iter().map(|s| (s, &s.episode)))
        {
            if as_of.state(s.t_valid, s.t_invalid, s.ingested_at, s.expired_at) == FactState::Valid
            {
                bridges.push((s.entity.clone(), other.clone(), None));
            }
        }
        Ok(bridges)
    }
}
