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
    /// Distinct seeds of a hop-1 candidate.
    hop1_shared: usize,
    shared: BTreeSet<EntityKey>,
    /// Known from the traversal's compact links; looked up for lineage-only candidates.
    concluded_at: Option<Timestamp>,
}

impl Candidate {
    fn new(hop: u8) -> Self {
        Candidate {
            hop,
            hop1_shared: 0,
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
            .filter(|l| link_valid(l, as_of))
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
        // Hop 1 borrows from the cached links: a hub seed has thousands of them, and copying
        // each (or keeping a set per candidate) cost more than the walk itself.
        let seed_links = seeds
            .iter()
            .map(|s| self.all_links(s))
            .collect::<Result<Vec<_>, _>>()?;
        // episode -> (1 + index of the last seed counted, distinct seeds, concluded_at)
        let mut hop1: HashMap<&str, (usize, usize, Timestamp)> = HashMap::new();
        for (i, links) in seed_links.iter().enumerate() {
            for link in links.iter().filter(|l| link_valid(l, &q.as_of)) {
                let c =
                    hop1.entry(link.episode.as_str())
                        .or_insert((0, 0, link.episode_concluded_at));
                if c.0 != i + 1 {
                    c.0 = i + 1;
                    c.1 += 1;
                }
            }
        }
        if hop1.len() >= q.limit {
            let mut ranked: Vec<(u8, usize, Timestamp, &str)> =
                hop1.iter().map(|(fp, c)| (1, c.1, c.2, *fp)).collect();
            return Ok(rank(&mut ranked, q.limit, note));
        }
        let mut found: HashMap<String, Candidate> = hop1
            .iter()
            .map(|(fp, c)| {
                let mut candidate = Candidate::new(1);
                candidate.hop1_shared = c.1;
                candidate.concluded_at = Some(c.2);
                (fp.to_string(), candidate)
            })
            .collect();
        // Hop 1 came back short: widen through shared entities and lineage.
        for fp in hop1.keys() {
            for (entity, other, concluded_at) in self.bridges(fp, &seeds, &q.as_of)? {
                let c = found.entry(other).or_insert_with(|| Candidate::new(2));
                if c.hop == 2 {
                    c.shared.insert(entity);
                    c.concluded_at = c.concluded_at.or(concluded_at);
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
            let shared = if c.hop == 1 {
                c.hop1_shared
            } else {
                c.shared.len()
            };
            ranked.push((c.hop, shared, concluded_at, fp));
        }
        Ok(rank(&mut ranked, q.limit, note))
    }
}

/// Hop, then shared entities (more first), then recency, then fingerprint: the best `limit`.
fn rank<S: AsRef<str>>(
    ranked: &mut Vec<(u8, usize, Timestamp, S)>,
    limit: usize,
    note: Option<String>,
) -> LegHits {
    let order = |a: &(u8, usize, Timestamp, S), b: &(u8, usize, Timestamp, S)| {
        a.0.cmp(&b.0)
            .then(b.1.cmp(&a.1))
            .then(b.2.cmp(&a.2))
            .then_with(|| a.3.as_ref().cmp(b.3.as_ref()))
    };
    if limit == 0 {
        ranked.clear();
    } else if ranked.len() > limit {
        ranked.select_nth_unstable_by(limit - 1, order);
        ranked.truncate(limit);
    }
    ranked.sort_by(order);
    LegHits {
        fingerprints: ranked.iter().map(|r| r.3.as_ref().to_string()).collect(),
        embed_ms: None,
        note,
    }
}

/// A link to an episode known at K, begun by V, whose fact is valid at (V, K).
fn link_valid(l: &EntityLink, as_of: &AsOf) -> bool {
    as_of.knows(l.episode_ingested_at)
        && l.episode_t_valid <= as_of.valid_at
        && as_of.state(l.t_valid, l.t_invalid, l.ingested_at, l.expired_at) == FactState::Valid
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
