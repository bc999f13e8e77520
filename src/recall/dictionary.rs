//! Finds known entity refs in free text (no model): Aho-Corasick over every entity ref,
//! case-insensitive, whole words only.

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::model::EntityKey;

/// Refs shorter than this are too ambiguous to match in prose.
const MIN_REF_CHARS: usize = 3;

pub struct EntityDictionary {
    matcher: Option<AhoCorasick>,
    /// For each pattern, every entity with that ref (one ref can name several types).
    entities: Vec<Vec<EntityKey>>,
    size: usize,
}

impl EntityDictionary {
    pub fn new(mut keys: Vec<EntityKey>) -> Self {
        keys.sort();
        let size = keys.len();
        let mut patterns: Vec<String> = Vec::new();
        let mut entities: Vec<Vec<EntityKey>> = Vec::new();
        let mut slots: HashMap<String, usize> = HashMap::new();
        for key in keys {
            let pattern = key.entity_ref.to_lowercase();
            if pattern.chars().count() < MIN_REF_CHARS {
                continue;
            }
            match slots.get(&pattern) {
                Some(&i) => entities[i].push(key),
                None => {
                    slots.insert(pattern.clone(), patterns.len());
                    patterns.push(pattern);
                    entities.push(vec![key]);
                }
            }
        }
        let matcher = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .ok();
        EntityDictionary {
            matcher,
            entities,
            size,
        }
    }

    /// How many entities the dictionary was built from.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Every entity whose ref occurs in `text` as a whole word, in order of first occurrence.
    pub fn find(&self, text: &str) -> Vec<EntityKey> {
        let Some(matcher) = &self.matcher else {
            return Vec::new();
        };
        let lower = text.to_lowercase();
        let bytes = lower.as_bytes();
        let boundary = |i: Option<&u8>| i.is_none_or(|b| !b.is_ascii_alphanumeric());
        let mut found: Vec<EntityKey> = Vec::new();
        for m in matcher.find_iter(&lower) {
            let before = m.start().checked_sub(1).and_then(|i| bytes.get(i));
            if !boundary(before) || !boundary(bytes.get(m.end())) {
                continue;
            }
            for key in &self.entities[m.pattern().as_usize()] {
                if !found.contains(key) {
                    found.push(key.clone());
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_case_insensitive() {
        let d = EntityDictionary::new(vec![
            EntityKey::new("service", "postgres").unwrap(),
            EntityKey::new("service", "pgbouncer").unwrap(),
            EntityKey::new("host", "node-a").unwrap(),
            EntityKey::new("service", "db").unwrap(),
        ]);
        let found =
            d.find("PgBouncer pool exhausted in front of Postgres on node-a; postgresql fine; db");
        let refs: Vec<_> = found.iter().map(|k| k.entity_ref.as_str()).collect();
        assert_eq!(refs, ["pgbouncer", "postgres", "node-a"]);
        assert!(d.find("postgresql only").is_empty());
    }
}
