use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};

use crate::model::{AsOf, EntityKey, FactEdge, FactState, MemoryEpisode, Timestamp};
use crate::recall::confidence::{SeedEvidence, Signals};
use crate::recall::dictionary::EntityDictionary;
use crate::recall::leg::{Leg, LegError, LegHits, LegQuery, RecallLeg};
use crate::store::{EntityLink, MemoryStore};

/// Entities with more fact edges than this are not expanded at hop 2: a hub (a shared host,
/// a provider) would pull in the whole graph and say nothing about relatedness.
const HUB_FACTS: usize = 500;

/// A seed entity that more than this share of the episodes mention is not followed: it links
/// the query to most of memory and says nothing about which incident is like it...
const MAX_SEED_SHARE: f64 = 0.5;
/// ...once that is more than this many episodes: in a small memory every entity is common.
const MIN_SEED_HUB: u64 = 20;

/// Breadth-first from the implicated entities over facts valid at the as-of point:
/// hop 1 = episodes with a fact about a seed entity; hop 2 = episodes sharing an entity with,
/// or linked by SUPERSEDES to, a hop-1 episode. Ranked by hop, then shared entities, then
/// recency, then fingerprint. The seeds are the query's entities; a query that names none is
/// seeded from the known entities its text names. Seeds that most of a large memory mentions
/// are not followed, and the note says so; with none left the leg returns nothing.
pub struct GraphLeg {
    store: Arc<dyn MemoryStore>,
    view: RwLock<View>,
    /// One catch-up at a time: recalls that arrive together wait for it instead of each
    /// reading the same log.
    syncing: Mutex<()>,
    links: RwLock<LinkCache>,
    /// The hubs were read into the cache (once per leg).
    warmed: std::sync::atomic::AtomicBool,
}

/// What the leg knows of the store, as of `generation`: the entity dictionary and the
/// ingest-log sequence it was brought up to. A new generation is caught up from the log
/// (only the new episodes' entities are read), not rebuilt.
#[derive(Default)]
struct View {
    generation: Option<u64>,
    sequence: u64,
    /// Episodes in the store as of the last catch-up: the denominator of a seed's share. The
    /// share is a statistic of the memory as it stands, not as of the query's K.
    episodes: u64,
    dictionary: Arc<EntityDictionary>,
}

/// Entity → episode links already read. A write patches the entities it touched, so hubs
/// are read once instead of after every write.
#[derive(Default)]
struct LinkCache {
    by_entity: HashMap<EntityKey, Arc<Links>>,
    /// Moves on every invalidation: links read before it moved may predate the write and
    /// are not kept.
    epoch: u64,
    /// The store's corrections when the links were read: a correction changes the versions
    /// links carry, so a new one drops them all.
    corrections: u64,
}

/// One entity's links, and the episodes they come from.
#[derive(Clone, Default)]
struct Links {
    list: Vec<EntityLink>,
    episodes: HashSet<String>,
}

impl Links {
    fn new(list: Vec<EntityLink>) -> Self {
        let episodes = list.iter().map(|l| l.episode.clone()).collect();
        Links { list, episodes }
    }

    fn apply(&mut self, patch: &Patch) {
        if !patch.replaced.is_empty() {
            self.list
                .retain(|l| !patch.replaced.contains_key(&l.episode));
            for (prior, links) in &patch.replaced {
                self.episodes.insert(prior.clone());
                self.list.extend(links.iter().cloned());
            }
        }
        // Links read after the write landed hold its episodes already.
        let added: Vec<&EntityLink> = patch
            .added
            .iter()
            .filter(|l| !self.episodes.contains(&l.episode))
            .collect();
        for link in added {
            self.episodes.insert(link.episode.clone());
            self.list.push(link.clone());
        }
    }
}

/// What a catch-up changes in one entity's links.
#[derive(Default)]
struct Patch {
    /// Links from the new episodes.
    added: Vec<EntityLink>,
    /// Priors whose facts about the entity the new episodes closed, with their links now.
    replaced: HashMap<String, Vec<EntityLink>>,
}

/// Entities that this share of the episodes, or more, point at are read into the cache when
/// the leg first catches up, so that no query pays for reading a hub...
const WARM_SHARE: f64 = 0.01;
/// ...once they have this many links, and at most this many of them.
const WARM_MIN_LINKS: u64 = 1_000;
const WARM_AT_MOST: usize = 32;

/// Entities whose links the cache keeps at most; past it, it starts over.
const CACHED_ENTITIES: usize = 4096;
/// Episodes read from the log per page while catching up.
const LOG_PAGE: usize = 2048;
/// Past this many new episodes, reading every entity again is cheaper than the log.
const CATCH_UP_EPISODES: usize = 20_000;

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
            view: RwLock::new(View::default()),
            syncing: Mutex::new(()),
            links: RwLock::new(LinkCache::default()),
            warmed: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Reads the links of the entities most of the memory points at into the cache: the
    /// first query to follow a hub seed then walks memory, not the store.
    fn warm_hubs(&self) -> Result<(), LegError> {
        use std::sync::atomic::Ordering;
        if self.warmed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let episodes = self.view.read().map_or(0, |v| v.episodes);
        let min = ((episodes as f64 * WARM_SHARE) as u64).max(WARM_MIN_LINKS);
        let started = std::time::Instant::now();
        let hubs = self.store.hubs(min).map_err(LegError::from_display)?;
        let found = started.elapsed();
        let hubs = hubs.unwrap_or_default();
        self.store.release_mapped_pages();
        for hub in hubs.iter().take(WARM_AT_MOST) {
            self.all_links(hub)?;
            // A hub's links are read once, into the cache: its pages need not stay mapped.
            self.store.release_mapped_pages();
        }
        tracing::info!(
            hubs = hubs.len().min(WARM_AT_MOST),
            find_ms = found.as_millis() as u64,
            ms = started.elapsed().as_millis() as u64,
            "graph leg: hub links read"
        );
        Ok(())
    }

    /// The dictionary as last caught up, built on first use. A search never waits for a
    /// catch-up: it finds seeds with this dictionary and walks the links cached as of the
    /// last catch-up (an entity read for the first time comes from the store as it is), as
    /// the other legs search what their indexes hold; a recall beside a busy writer would
    /// otherwise pay for every write it did not ask about.
    fn snapshot(&self) -> Result<Arc<EntityDictionary>, LegError> {
        if let Some(d) = self
            .view
            .read()
            .ok()
            .and_then(|v| v.generation.is_some().then(|| v.dictionary.clone()))
        {
            return Ok(d);
        }
        self.dictionary()
    }

    /// The dictionary as of the store's current generation, caught up first if need be.
    fn dictionary(&self) -> Result<Arc<EntityDictionary>, LegError> {
        let generation = self.store.generation().map_err(LegError::from_display)?;
        let current =
            |view: &View| (view.generation == Some(generation)).then(|| view.dictionary.clone());
        if let Some(d) = self.view.read().ok().and_then(|v| current(&v)) {
            return Ok(d);
        }
        let _one_at_a_time = self.syncing.lock();
        let corrections = self
            .store
            .correction_count()
            .map_err(LegError::from_display)?;
        let since = self.links.read().map_or(0, |c| c.corrections);
        if since != corrections {
            let patched = self.patch_corrected(since, corrections);
            if let Ok(mut c) = self.links.write() {
                c.epoch += 1;
                if !patched {
                    c.by_entity.clear();
                }
                c.corrections = corrections;
            }
        }
        let (sequence, dictionary, known) = match self.view.read() {
            Ok(v) => match current(&v) {
                Some(d) => return Ok(d),
                None => (v.sequence, v.dictionary.clone(), v.generation.is_some()),
            },
            Err(_) => (0, Arc::default(), false),
        };
        // Counted before the log and the entities are read, for both ways of catching up.
        let stats = self.store.stats().map_err(LegError::from_display)?;
        let caught_up = if known {
            self.catch_up(sequence, &dictionary, stats.entities as usize)?
        } else {
            None
        };
        let (sequence, dictionary) = match caught_up {
            Some(done) => done,
            None => self.rebuild(stats.episodes)?,
        };
        let episodes = stats.episodes;
        if let Ok(mut v) = self.view.write() {
            *v = View {
                generation: Some(generation),
                sequence,
                episodes,
                dictionary: dictionary.clone(),
            };
        }
        Ok(dictionary)
    }

    /// Reads the episodes logged after `sequence`, adds the entities they name and patches
    /// those entities' cached links. `None` when a rebuild is due instead: too much is new,
    /// or the store counts more entities than the log named (a log that does not follow
    /// commits). `floor`: the entities the store counted before the log is read; entities are
    /// never removed, so the caught-up dictionary holds at least this many unless the log
    /// skipped some.
    fn catch_up(
        &self,
        mut sequence: u64,
        dictionary: &EntityDictionary,
        floor: usize,
    ) -> Result<Option<(u64, Arc<EntityDictionary>)>, LegError> {
        let mut fresh: Vec<MemoryEpisode> = Vec::new();
        loop {
            let page = self
                .store
                .episodes_since(sequence, LOG_PAGE)
                .map_err(LegError::from_display)?;
            let full = (page.episodes.len() + page.unreadable.len()) == LOG_PAGE;
            // An episode that cannot be read is left out of the walk, and said so in the log.
            for (seq, why) in &page.unreadable {
                tracing::warn!(sequence = seq, error = %why, "graph leg: an episode of the log cannot be read; going on without it");
            }
            sequence = sequence.max(page.last);
            fresh.extend(page.episodes.into_iter().map(|(_, e)| e));
            if fresh.len() > CATCH_UP_EPISODES {
                return Ok(None);
            }
            if !full {
                break;
            }
        }
        let caching = self.links.read().is_ok_and(|c| !c.by_entity.is_empty());
        let touched = if caching {
            self.patch_links(&fresh)?
        } else {
            let mut touched = Vec::new();
            for chunk in fresh.chunks(LOG_PAGE) {
                let fps: Vec<String> = chunk
                    .iter()
                    .map(|e| e.incident_fingerprint.clone())
                    .collect();
                touched.extend(
                    self.store
                        .entities_touched_by(&fps)
                        .map_err(LegError::from_display)?,
                );
            }
            touched
        };
        let grown = dictionary.with(touched);
        if grown.size() < floor {
            return Ok(None);
        }
        Ok(Some((sequence, Arc::new(grown))))
    }

    /// Brings the cached links of every entity these new episodes touched up to date (their
    /// own links appended, the links of priors whose facts they closed read again) and
    /// returns those entities. A hub's thousands of links are patched in place, not copied
    /// or read again.
    fn patch_links(&self, fresh: &[MemoryEpisode]) -> Result<Vec<EntityKey>, LegError> {
        let store = |e: crate::store::StoreError| LegError::from_display(e);
        let new: HashMap<&str, &MemoryEpisode> = fresh
            .iter()
            .map(|e| (e.incident_fingerprint.as_str(), e))
            .collect();
        let fps: Vec<String> = fresh
            .iter()
            .map(|e| e.incident_fingerprint.clone())
            .collect();
        let mut patches: HashMap<EntityKey, Patch> = HashMap::new();
        for fact in self.store.facts_of_episodes(&fps).map_err(store)? {
            if let Some(episode) = new.get(fact.episode.as_str()) {
                let patch = patches.entry(fact.entity.clone()).or_default();
                patch.added.push(link_of(episode, &fact));
            }
        }
        // Priors whose facts the new episodes closed (a prior written in the same catch-up was
        // read after the closing already): read again, together.
        let wrote = self.store.supersessions_of_episodes(&fps).map_err(store)?;
        let closed: Vec<(EntityKey, String)> = wrote
            .into_iter()
            .filter(|s| new.contains_key(s.episode.as_str()) && !new.contains_key(s.prior.as_str()))
            .map(|s| (s.entity, s.prior))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if !closed.is_empty() {
            for (entity, patch) in self.relinked(&closed).map_err(store)? {
                patches
                    .entry(entity)
                    .or_default()
                    .replaced
                    .extend(patch.replaced);
            }
        }
        if let Ok(mut c) = self.links.write() {
            c.epoch += 1;
            for (entity, patch) in &patches {
                if let Some(cached) = c.by_entity.get_mut(entity) {
                    Arc::make_mut(cached).apply(patch);
                }
            }
        }
        Ok(patches.into_keys().collect())
    }

    /// Brings the cached links up to the corrections logged after `since`, up to `until`: the
    /// links of the facts they gave new versions are read again, and only those (a corrected
    /// text, the most common correction, changes no link). `false` when it cannot (the log
    /// could not be read, or is shorter than before, or too much changed): the caller drops
    /// every cached link instead.
    fn patch_corrected(&self, since: u64, until: u64) -> bool {
        use crate::correct::Correction;
        if until < since {
            return false;
        }
        let mut touched: BTreeSet<(EntityKey, String)> = BTreeSet::new();
        let read = crate::index::versions::follow_corrections(
            self.store.as_ref(),
            (since, until),
            LOG_PAGE,
            &mut |records, _| {
                for r in records {
                    match &r.line.correction {
                        Correction::CorrectFact(f) => {
                            let entity = EntityKey {
                                entity_type: f.entity_type.clone(),
                                entity_ref: f.entity_ref.clone(),
                            };
                            touched.insert((entity, f.episode.clone()));
                        }
                        Correction::RetractSupersession(s) | Correction::ConfirmSupersession(s) => {
                            touched.insert((s.entity(), s.prior.clone()));
                        }
                        Correction::CorrectEpisode(_) => {}
                    }
                }
                Ok(())
            },
        );
        if let Err(e) = read {
            tracing::warn!(error = %e, "graph leg: cannot read the corrections; every cached link is read again");
            return false;
        }
        // Only the entities whose links are cached: the others are read as they are when asked.
        let touched: Vec<(EntityKey, String)> = match self.links.read() {
            Ok(c) => touched
                .into_iter()
                .filter(|(entity, _)| c.by_entity.contains_key(entity))
                .collect(),
            Err(_) => return false,
        };
        if touched.is_empty() {
            return true;
        }
        if touched.len() > CATCH_UP_EPISODES {
            // Too many facts to patch one by one: their entities' links are read again now,
            // whole, rather than by the next queries.
            let entities: Vec<EntityKey> = touched
                .into_iter()
                .map(|(entity, _)| entity)
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            return match self.store.entity_links_of(&entities) {
                Ok(read) => {
                    if let Ok(mut c) = self.links.write() {
                        c.epoch += 1;
                        for (entity, links) in entities.into_iter().zip(read) {
                            c.by_entity.insert(entity, Arc::new(Links::new(links)));
                        }
                    }
                    true
                }
                Err(e) => {
                    tracing::warn!(error = %e, "graph leg: cannot read the corrected entities' links; every cached link is read again");
                    false
                }
            };
        }
        match self.relinked(&touched) {
            Ok(patches) => {
                if let Ok(mut c) = self.links.write() {
                    c.epoch += 1;
                    for (entity, patch) in &patches {
                        if let Some(cached) = c.by_entity.get_mut(entity) {
                            Arc::make_mut(cached).apply(patch);
                        }
                    }
                }
                true
            }
            Err(e) => {
                tracing::warn!(error = %e, "graph leg: cannot read the corrected facts; every cached link is read again");
                false
            }
        }
    }

    /// Each (entity, episode)'s links as the store holds them now, as patches replacing the
    /// episode's links to the entity.
    fn relinked(
        &self,
        touched: &[(EntityKey, String)],
    ) -> Result<HashMap<EntityKey, Patch>, crate::store::StoreError> {
        let fps: Vec<String> = touched
            .iter()
            .map(|(_, fp)| fp.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let episodes: HashMap<String, MemoryEpisode> = self
            .store
            .episodes(&fps)?
            .into_iter()
            .map(|e| (e.incident_fingerprint.clone(), e))
            .collect();
        let facts = self.store.facts_of_episodes(&fps)?;
        let mut by: HashMap<(&str, &EntityKey), Vec<&FactEdge>> = HashMap::new();
        for fact in &facts {
            by.entry((fact.episode.as_str(), &fact.entity))
                .or_default()
                .push(fact);
        }
        let mut patches: HashMap<EntityKey, Patch> = HashMap::new();
        for (entity, fp) in touched {
            let Some(episode) = episodes.get(fp) else {
                continue;
            };
            let links = by
                .get(&(fp.as_str(), entity))
                .into_iter()
                .flatten()
                .map(|f| link_of(episode, f))
                .collect();
            patches
                .entry(entity.clone())
                .or_default()
                .replaced
                .insert(fp.clone(), links);
        }
        Ok(patches)
    }

    /// Every entity read again, every cached link dropped. `sequence`: the log position, read
    /// before the entities: those read after it can only be ahead of it, and the next
    /// catch-up then finds them known already.
    fn rebuild(&self, sequence: u64) -> Result<(u64, Arc<EntityDictionary>), LegError> {
        if let Ok(mut c) = self.links.write() {
            c.epoch += 1;
            c.by_entity.clear();
        }
        let started = std::time::Instant::now();
        let entities = self.store.entities().map_err(LegError::from_display)?;
        let read = started.elapsed();
        self.store.release_mapped_pages();
        let dictionary = Arc::new(EntityDictionary::new(entities));
        tracing::info!(
            entities = dictionary.size(),
            read_ms = read.as_millis() as u64,
            ms = started.elapsed().as_millis() as u64,
            "graph leg: entity dictionary built"
        );
        Ok((sequence, dictionary))
    }

    fn all_links(&self, entity: &EntityKey) -> Result<Arc<Links>, LegError> {
        let mut links = self.links_of(std::slice::from_ref(entity))?;
        links
            .pop()
            .ok_or_else(|| LegError::from_display("no links read"))
    }

    /// The links of each entity, in order: from the cache, and those it lacks from the store
    /// in one read.
    fn links_of(&self, entities: &[EntityKey]) -> Result<Vec<Arc<Links>>, LegError> {
        let mut out: Vec<Option<Arc<Links>>> = vec![None; entities.len()];
        let mut epoch = None;
        if let Ok(c) = self.links.read() {
            for (slot, entity) in out.iter_mut().zip(entities) {
                *slot = c.by_entity.get(entity).cloned();
            }
            epoch = Some(c.epoch);
        }
        let missing: Vec<EntityKey> = entities
            .iter()
            .zip(&out)
            .filter(|(_, l)| l.is_none())
            .map(|(e, _)| e.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if !missing.is_empty() {
            let read = self
                .store
                .entity_links_of(&missing)
                .map_err(LegError::from_display)?;
            let read: HashMap<EntityKey, Arc<Links>> = missing
                .into_iter()
                .zip(read)
                .map(|(e, l)| (e, Arc::new(Links::new(l))))
                .collect();
            if let Ok(mut c) = self.links.write()
                && Some(c.epoch) == epoch
            {
                if c.by_entity.len() + read.len() > CACHED_ENTITIES {
                    c.by_entity.clear();
                }
                for (e, l) in &read {
                    c.by_entity.insert(e.clone(), l.clone());
                }
            }
            for (slot, entity) in out.iter_mut().zip(entities) {
                if slot.is_none() {
                    *slot = read.get(entity).cloned();
                }
            }
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }
}

impl RecallLeg for GraphLeg {
    fn leg(&self) -> Leg {
        Leg::Graph
    }

    fn catch_up(&self) -> Result<(), LegError> {
        self.dictionary().map(|_| ())
    }

    fn warm(&self) -> Result<(), LegError> {
        self.warm_hubs()
    }

    fn search(&self, q: &LegQuery) -> Result<LegHits, LegError> {
        // Read even when the query implicates entities: the first read catches the leg up,
        // which counts the episodes a seed's share is taken of.
        let dictionary = self.snapshot()?;
        let from_text = q.entities.is_empty();
        let seeds = if from_text {
            dictionary.find(&q.text)
        } else {
            q.entities.clone()
        };
        let episodes = self.view.read().map_or(0, |v| v.episodes).max(1);
        // Every seed's links, cached or read together: how many episodes mention it, and
        // hop 1 if it is followed.
        let seed_links = self.links_of(&seeds)?;
        let mut followed = Vec::with_capacity(seeds.len());
        let mut evidence = SeedEvidence {
            implicated: !from_text,
            ..SeedEvidence::default()
        };
        let mut common = Vec::new();
        let mut described = Vec::with_capacity(seeds.len());
        let mut followed_links = Vec::with_capacity(seeds.len());
        for (seed, links) in seeds.into_iter().zip(seed_links) {
            let mentioned_by = links.episodes.len() as u64;
            let share = mentioned_by as f64 / episodes as f64;
            if share > MAX_SEED_SHARE && mentioned_by > MIN_SEED_HUB {
                described.push(format!(
                    "{seed} (in {:.0}% of episodes: not followed)",
                    share.min(1.0) * 100.0
                ));
                common.push(seed);
                continue;
            }
            described.push(seed.to_string());
            evidence.seeds += 1;
            followed.push(seed);
            followed_links.push(links);
        }
        let note = Some(format!(
            "{}: {}",
            if from_text {
                "seeds named in the text"
            } else {
                "seeds"
            },
            if described.is_empty() {
                "none".to_string()
            } else {
                described.join(", ")
            }
        ));
        if followed.is_empty() {
            return Ok(LegHits {
                note,
                signals: Signals::Seeds(evidence),
                ..LegHits::default()
            });
        }
        let seeds = followed;
        let seed_links = followed_links;
        q.check_deadline()?;
        // episode -> (1 + index of the last seed counted, distinct seeds, concluded_at)
        let mut hop1: HashMap<&str, (usize, usize, Timestamp)> = HashMap::new();
        for (i, links) in seed_links.iter().enumerate() {
            for link in links.list.iter().filter(|l| link_valid(l, &q.as_of)) {
                let c =
                    hop1.entry(link.episode.as_str())
                        .or_insert((0, 0, link.episode_concluded_at));
                if c.0 != i + 1 {
                    c.0 = i + 1;
                    c.1 += 1;
                }
            }
        }
        // Counted as the store's walk counts them: among the `limit` returned.
        evidence.hop1 = hop1.len().min(q.limit);
        if hop1.len() >= q.limit {
            let mut ranked: Vec<(u8, usize, Timestamp, &str)> =
                hop1.iter().map(|(fp, c)| (1, c.1, c.2, *fp)).collect();
            return Ok(rank(&mut ranked, q.limit, note, &evidence));
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
        // Hop 1 came back short: widen through shared entities and lineage, never through a
        // seed, followed or not.
        let not_bridges: Vec<EntityKey> = seeds.iter().chain(&common).cloned().collect();
        q.check_deadline()?;
        let hop1_fps: Vec<String> = hop1.keys().map(|fp| fp.to_string()).collect();
        for (entity, other, concluded_at) in self.bridges(&hop1_fps, &not_bridges, &q.as_of)? {
            let c = found.entry(other).or_insert_with(|| Candidate::new(2));
            if c.hop == 2 {
                c.shared.insert(entity);
                c.concluded_at = c.concluded_at.or(concluded_at);
            }
        }
        // Candidates reached only through lineage: their episodes, read together.
        let unknown: Vec<String> = found
            .iter()
            .filter(|(_, c)| c.concluded_at.is_none())
            .map(|(fp, _)| fp.clone())
            .collect();
        let mut concluded: HashMap<String, Timestamp> = HashMap::new();
        if !unknown.is_empty() {
            q.check_deadline()?;
            for e in self
                .store
                .episodes(&unknown)
                .map_err(LegError::from_display)?
            {
                if q.as_of.knows(e.ingested_at) && e.t_valid <= q.as_of.valid_at {
                    concluded.insert(e.incident_fingerprint, e.concluded_at);
                }
            }
        }
        let mut ranked: Vec<(u8, usize, Timestamp, String)> = Vec::with_capacity(found.len());
        for (fp, c) in found {
            let Some(concluded_at) = c.concluded_at.or_else(|| concluded.get(&fp).copied()) else {
                continue;
            };
            let shared = if c.hop == 1 {
                c.hop1_shared
            } else {
                c.shared.len()
            };
            ranked.push((c.hop, shared, concluded_at, fp));
        }
        Ok(rank(&mut ranked, q.limit, note, &evidence))
    }
}

/// Hop, then shared entities (more first), then recency, then fingerprint: the best `limit`,
/// each scored by the entities it shares.
fn rank<S: AsRef<str>>(
    ranked: &mut Vec<(u8, usize, Timestamp, S)>,
    limit: usize,
    note: Option<String>,
    seeds: &SeedEvidence,
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
        scores: ranked.iter().map(|r| r.1 as f64).collect(),
        signals: Signals::Seeds(seeds.clone()),
        note,
        ..LegHits::default()
    }
}

fn link_of(episode: &MemoryEpisode, fact: &FactEdge) -> EntityLink {
    EntityLink {
        episode: episode.incident_fingerprint.clone(),
        relation: fact.relation,
        t_valid: fact.t_valid,
        t_invalid: fact.t_invalid,
        ingested_at: fact.ingested_at,
        expired_at: fact.expired_at,
        episode_concluded_at: episode.concluded_at,
        episode_ingested_at: episode.ingested_at,
        episode_t_valid: episode.t_valid,
        versions: fact.versions.clone(),
    }
}

/// A link to an episode known at K, begun by V, whose fact is valid at (V, K).
fn link_valid(l: &EntityLink, as_of: &AsOf) -> bool {
    as_of.knows(l.episode_ingested_at) && l.episode_t_valid <= as_of.valid_at && {
        let (t_valid, t_invalid, expired_at) = l.times_at(as_of.known_at);
        as_of.state(t_valid, t_invalid, l.ingested_at, expired_at) == FactState::Valid
    }
}

impl GraphLeg {
    /// Hop-2 neighbours of the hop-1 episodes: through their other valid facts (skipping hubs)
    /// and through SUPERSEDES edges known and in force at the as-of point. Three reads in all:
    /// the episodes' facts, the links of the entities they name (those not cached), lineage.
    #[allow(clippy::type_complexity)]
    fn bridges(
        &self,
        fps: &[String],
        seeds: &[EntityKey],
        as_of: &AsOf,
    ) -> Result<Vec<(EntityKey, String, Option<Timestamp>)>, LegError> {
        let mut bridges = Vec::new();
        let facts: Vec<FactEdge> = self
            .store
            .facts_of_episodes(fps)
            .map_err(LegError::from_display)?
            .into_iter()
            .filter(|f| as_of.fact_valid(f) && !seeds.contains(&f.entity))
            .collect();
        let entities: Vec<EntityKey> = facts
            .iter()
            .map(|f| f.entity.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let links: HashMap<&EntityKey, Arc<Links>> =
            entities.iter().zip(self.links_of(&entities)?).collect();
        let mut valid: HashMap<&EntityKey, Vec<&EntityLink>> = HashMap::new();
        for fact in &facts {
            let about = valid.entry(&fact.entity).or_insert_with(|| {
                let all: Vec<&EntityLink> = links
                    .get(&fact.entity)
                    .map(|l| l.list.iter().filter(|l| link_valid(l, as_of)).collect())
                    .unwrap_or_default();
                if all.len() > HUB_FACTS {
                    Vec::new()
                } else {
                    all
                }
            });
            for link in about.iter() {
                bridges.push((
                    fact.entity.clone(),
                    link.episode.clone(),
                    Some(link.episode_concluded_at),
                ));
            }
        }
        let backwards = self
            .store
            .supersessions_of_episodes(fps)
            .map_err(LegError::from_display)?;
        let forwards = self
            .store
            .superseded_by_episodes(fps)
            .map_err(LegError::from_display)?;
        for (s, other) in backwards
            .iter()
            .map(|s| (s, &s.prior))
            .chain(forwards.iter().map(|s| (s, &s.episode)))
        {
            if as_of.state(s.t_valid, s.t_invalid, s.ingested_at, s.expired_at) == FactState::Valid
                && s.stands_at(as_of.known_at)
            {
                bridges.push((s.entity.clone(), other.clone(), None));
            }
        }
        Ok(bridges)
    }
}
