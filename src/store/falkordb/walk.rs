//! The graph leg's breadth-first walk, run in Cypher on the server.

use std::collections::{BTreeSet, HashMap};

use super::cypher;
use super::{FalkorStore, Param};
use crate::model::{AsOf, EntityKey, Timestamp};
use crate::store::{StoreError, WalkHit};

impl FalkorStore {
    pub(super) fn walk_in_cypher(
        &self,
        seeds: &[EntityKey],
        skip: &[EntityKey],
        as_of: &AsOf,
        hub_facts: usize,
        limit: usize,
    ) -> Result<Vec<WalkHit>, StoreError> {
        let at = [
            ("V", Param::Int(as_of.valid_at.millis())),
            ("K", Param::Int(as_of.known_at.millis())),
        ];
        let seed_list = Param::List(
            seeds
                .iter()
                .map(|s| {
                    Param::Map(vec![
                        ("t", Param::from(s.entity_type.as_str())),
                        ("r", Param::from(s.entity_ref.as_str())),
                    ])
                })
                .collect(),
        );
        let mut params = at.to_vec();
        params.push(("seeds", seed_list));
        // Hop 1 ranked and cut on the server: the leg keeps `limit` anyway, and hop 2 runs only
        // when hop 1 came back short.
        params.push(("limit", super::read::count(limit)));
        let mut hits: Vec<WalkHit> = Vec::new();
        for row in self.query(cypher::WALK_HOP1, &params)?.iter() {
            hits.push(WalkHit {
                fingerprint: row.string(0)?,
                hop: 1,
                shared: usize::try_from(row.int(2)?).unwrap_or(0),
                concluded_at: row.time(1)?,
            });
        }
        if hits.is_empty() || hits.len() >= limit {
            return Ok(hits);
        }
        let hop1 = Param::List(
            hits.iter()
                .map(|h| Param::from(h.fingerprint.as_str()))
                .collect(),
        );
        let seed_keys = Param::List(
            seeds
                .iter()
                .chain(skip)
                .map(|s| Param::Str(s.to_string()))
                .collect(),
        );
        let mut second: HashMap<String, (Timestamp, BTreeSet<EntityKey>)> = HashMap::new();
        let mut p = at.to_vec();
        p.extend([
            ("hop1", hop1.clone()),
            ("seed_keys", seed_keys),
            (
                "hub",
                Param::Int(i64::try_from(hub_facts).unwrap_or(i64::MAX)),
            ),
        ]);
        let mut reached = |row: super::rows::Row<'_>| -> Result<(), StoreError> {
            let entry = second
                .entry(row.string(0)?)
                .or_insert_with(|| (Timestamp::MIN, BTreeSet::new()));
            entry.0 = row.time(1)?;
            entry.1.insert(EntityKey {
                entity_type: row.string(2)?,
                entity_ref: row.string(3)?,
            });
            Ok(())
        };
        for row in self.query(cypher::WALK_HOP2_ENTITIES, &p)?.iter() {
            reached(row)?;
        }
        let mut p = at.to_vec();
        p.push(("hop1", hop1));
        for row in self.query(cypher::WALK_HOP2_LINEAGE, &p)?.iter() {
            reached(row)?;
        }
        hits.extend(
            second
                .into_iter()
                .map(|(fingerprint, (concluded_at, shared))| WalkHit {
                    fingerprint,
                    hop: 2,
                    shared: shared.len(),
                    concluded_at,
                }),
        );
        Ok(hits)
    }
}
