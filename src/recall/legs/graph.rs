use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, RwLock};

use crate::model::{AsOf, EntityKey, Timestamp};
use crate::recall::dictionary::EntityDictionary;
use crate::recall::leg::{Leg, LegError, LegHits, LegQuery, RecallLeg};
use crate::store::MemoryStore;

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
}

struct Candidate {
    hop: u8,
    shared: BTreeSet<EntityKey>,
}

impl GraphLeg {
    pub fn new(store: Arc<dyn MemoryStore>) -> Self {
        GraphLeg {
            store,
            dictionary: RwLock::new(None),
        }
    }

    /// The dictionary, rebuilt when the store has gained entities since it was built.
    fn dictionary(&self) -> Result<Arc<EntityDictionary>, LegError> {
        let count = self.store.stats().map_err(LegError::from_display)?.entities as usize;
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

    /// Episodes with a fact valid at the as-of point about `entity`.
    fn episodes_about(
        &self,
        entity: &EntityKey,
        as_of: &AsOf,
        cap: Option<usize>,
    ) -> Result<Vec<String>, LegError> {
        let facts = self
            .store
            .entity_facts(entity)
            .map_err(LegError::from_display)?;
        if cap.is_some_and(|c| facts.len() > c) {
            return Ok(Vec::new());
        }
        Ok(facts
            .into_iter()
            .filter(|f| as_of.fact_valid(f))
            .map(|f| f.episode)
            .collect())
    }
}

impl RecallLeg for GraphLeg {
    fn leg(&self) -> Leg {
        Leg::Graph
    }

    fn search(&self, q: &LegQuery) -> Result<LegHits, LegError> {
        let mut seeds = q.entities.clone();
        for found in self.dictionary()?.find(&q.text) {
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
        let mut found: HashMap<String, Candidate> = HashMap::new();
        for seed in &seeds {
            for fp in self.episodes_about(seed, &q.as_of, None)? {
                found
                    .entry(fp)
                    .or_insert_with(|| Candidate {
                        hop: 1,
                        shared: BTreeSet::new(),
                    })
                    .shared
                    .insert(seed.clone());
            }
        }
        if found.len() < q.limit {
            let hop1: Vec<String> = found.keys().cloned().collect();
            for fp in hop1 {
                let mut bridges: Vec<(EntityKey, String)> = Vec::new();
                for fact in self.store.facts(&fp).map_err(LegError::from_display)? {
                    if !q.as_of.fact_valid(&fact) || seeds.contains(&fact.entity) {
                        continue;
                    }
                    for other in self.episodes_about(&fact.entity, &q.as_of, Some(HUB_FACTS))? {
                        bridges.push((fact.entity.clone(), other));
                    }
                }
                let lineage = self
                    .store
                    .supersedes(&fp)
                    .map_err(LegError::from_display)?
                    .into_iter()
                    .map(|s| (s.entity, s.prior, s.ingested_at, s.t_valid))
                    .chain(
                        self.store
                            .superseded_by(&fp)
                            .map_err(LegError::from_display)?
                            .into_iter()
                            .map(|s| (s.entity, s.episode, s.ingested_at, s.t_valid)),
                    );
                for (entity, other, recorded, closed_at) in lineage {
                    if q.as_of.knows(recorded) && closed_at <= q.as_of.valid_at {
                        bridges.push((entity, other));
                    }
                }
                for (entity, other) in bridges {
                    let c = found.entry(other).or_insert_with(|| Candidate {
                        hop: 2,
                        shared: BTreeSet::new(),
                    });
                    if c.hop == 2 {
                        c.shared.insert(entity);
                    }
                }
            }
        }
        let mut ranked: Vec<(u8, usize, Timestamp, String)> = Vec::with_capacity(found.len());
        for (fp, c) in found {
            let Some(episode) = self.store.episode(&fp).map_err(LegError::from_display)? else {
                continue;
            };
            if !q.as_of.knows(episode.ingested_at) {
                continue;
            }
            ranked.push((c.hop, c.shared.len(), episode.concluded_at, fp));
        }
        ranked.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(b.1.cmp(&a.1))
                .then(b.2.cmp(&a.2))
                .then_with(|| a.3.cmp(&b.3))
        });
        ranked.truncate(q.limit);
        Ok(LegHits {
            fingerprints: ranked.into_iter().map(|r| r.3).collect(),
            embed_ms: None,
            note,
        })
    }
}
