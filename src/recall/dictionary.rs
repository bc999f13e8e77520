//! Finds known entity refs in free text (no model): Aho-Corasick over every entity ref,
//! case-insensitive, leftmost-longest, whole words only. A ref that changes case inside a word
//! (`AppleWebKit`, `FireFox`) is an identifier and is found only as written.
//!
//! A live store gains entities while recall runs, so the dictionary grows in tiers: each
//! batch of new entities is a small automaton of its own, and tiers of similar size merge
//! (as a binary counter carries), so adding n entities costs O(n log n) in all and a query
//! looks at O(log n) automata. What `find` returns depends only on the set of entities,
//! never on how the tiers fell.

use std::sync::Arc;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::model::EntityKey;

/// Refs shorter than this are too ambiguous to match in prose.
const MIN_REF_CHARS: usize = 3;

#[derive(Clone, Default)]
pub struct EntityDictionary {
    /// Largest first.
    tiers: Vec<Arc<Tier>>,
}

struct Tier {
    matcher: Option<AhoCorasick>,
    /// Every entity of the tier, sorted and distinct.
    keys: Vec<EntityKey>,
    /// Pattern `p`'s entities (every entity with that ref: one ref can name several types)
    /// are `keys[members[starts[p]..starts[p + 1]]]`.
    starts: Vec<u32>,
    members: Vec<u32>,
}

impl Tier {
    fn new(mut keys: Vec<EntityKey>) -> Self {
        keys.sort();
        keys.dedup();
        // (lowercased ref, entity) for every ref long enough, grouped by ref.
        let mut refs: Vec<(String, u32)> = keys
            .iter()
            .enumerate()
            .map(|(i, key)| (key.entity_ref.to_lowercase(), i as u32))
            .filter(|(pattern, _)| pattern.chars().count() >= MIN_REF_CHARS)
            .collect();
        refs.sort_unstable();
        let mut patterns: Vec<&str> = Vec::new();
        let mut starts: Vec<u32> = Vec::new();
        let mut members: Vec<u32> = Vec::with_capacity(refs.len());
        for (pattern, key) in &refs {
            if patterns.last() != Some(&pattern.as_str()) {
                patterns.push(pattern);
                starts.push(members.len() as u32);
            }
            members.push(*key);
        }
        starts.push(members.len() as u32);
        let matcher = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&patterns)
            .ok();
        Tier {
            matcher,
            keys,
            starts,
            members,
        }
    }

    fn contains(&self, key: &EntityKey) -> bool {
        self.keys.binary_search(key).is_ok()
    }

    /// The entities whose ref is pattern `p`.
    fn entities_of(&self, p: usize) -> impl Iterator<Item = &EntityKey> {
        let (from, to) = (self.starts[p] as usize, self.starts[p + 1] as usize);
        self.members[from..to]
            .iter()
            .map(|&k| &self.keys[k as usize])
    }
}

impl EntityDictionary {
    pub fn new(keys: Vec<EntityKey>) -> Self {
        EntityDictionary::default().with(keys)
    }

    /// This dictionary and `keys` besides; keys it already holds are ignored.
    pub fn with(&self, keys: Vec<EntityKey>) -> Self {
        // Duplicates within `keys` are dropped when the tier is built.
        let fresh: Vec<EntityKey> = keys.into_iter().filter(|k| !self.contains(k)).collect();
        if fresh.is_empty() {
            return self.clone();
        }
        let mut tiers = self.tiers.clone();
        let mut carry = fresh;
        while let Some(last) = tiers.last() {
            if last.keys.len() > 2 * carry.len() {
                break;
            }
            carry.extend(last.keys.iter().cloned());
            tiers.pop();
        }
        tiers.push(Arc::new(Tier::new(carry)));
        EntityDictionary { tiers }
    }

    /// How many distinct entities the dictionary holds.
    pub fn size(&self) -> usize {
        self.tiers.iter().map(|t| t.keys.len()).sum()
    }

    pub fn contains(&self, key: &EntityKey) -> bool {
        self.tiers.iter().any(|t| t.contains(key))
    }

    /// Every entity whose ref occurs in `text` as a whole word, in order of first occurrence.
    /// Occurrences are taken leftmost-longest across every tier (as one automaton over all
    /// refs would take them), and then kept only where they are whole words and spelled as the
    /// ref allows (`may_name`); an occurrence that is not still hides the shorter ones inside it.
    pub fn find(&self, text: &str) -> Vec<EntityKey> {
        let lower = text.to_lowercase();
        // Where each byte of `lower` came from in `text`: lowercasing can change a character's
        // length (`İ`), so a span of one is not always the same span of the other.
        let mut origin: Vec<usize> = Vec::with_capacity(lower.len() + 1);
        for (at, c) in text.char_indices() {
            let n: usize = c.to_lowercase().map(char::len_utf8).sum();
            origin.extend(std::iter::repeat_n(at, n));
        }
        origin.push(text.len());
        let mapped = origin.len() == lower.len() + 1;
        let as_written = |start: usize, end: usize| -> Option<&str> {
            mapped
                .then(|| text.get(origin[start]..origin[end]))
                .flatten()
        };
        let bytes = lower.as_bytes();
        let boundary = |i: Option<&u8>| i.is_none_or(|b| !b.is_ascii_alphanumeric());
        // (start, end, tier, pattern) of every occurrence in any tier.
        let mut spans: Vec<(usize, usize, usize, usize)> = Vec::new();
        for (t, tier) in self.tiers.iter().enumerate() {
            if let Some(matcher) = &tier.matcher {
                spans.extend(
                    matcher
                        .find_overlapping_iter(&lower)
                        .map(|m| (m.start(), m.end(), t, m.pattern().as_usize())),
                );
            }
        }
        spans.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut found: Vec<EntityKey> = Vec::new();
        let mut resume = 0;
        let mut i = 0;
        while i < spans.len() {
            let (start, end, _, _) = spans[i];
            let same = spans[i..]
                .iter()
                .take_while(|s| s.0 == start && s.1 == end)
                .count();
            if start >= resume {
                resume = end;
                let before = start.checked_sub(1).and_then(|b| bytes.get(b));
                if boundary(before) && boundary(bytes.get(end)) {
                    let written = as_written(start, end);
                    let mut keys: Vec<&EntityKey> = spans[i..i + same]
                        .iter()
                        .flat_map(|s| self.tiers[s.2].entities_of(s.3))
                        .filter(|key| written.is_none_or(|w| may_name(&key.entity_ref, w)))
                        .collect();
                    keys.sort();
                    for key in keys {
                        if !found.contains(key) {
                            found.push(key.clone());
                        }
                    }
                }
            }
            i += same;
        }
        found
    }
}

/// Whether `written` in a text names the entity ref it matched case-insensitively. A ref that
/// changes case inside a word (`FireFox`, `TypeError`, `iPhone`) is an identifier, spelled one
/// way on purpose: it is named as written, or typed all in lowercase, but `Firefox` in a
/// user-agent string is another word. `Redis` and `redis` are prose, capitalised as it likes.
fn may_name(entity_ref: &str, written: &str) -> bool {
    let identifier = entity_ref
        .chars()
        .zip(entity_ref.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    !identifier || written == entity_ref || !written.chars().any(char::is_uppercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(t: &str, r: &str) -> EntityKey {
        EntityKey::new(t, r).unwrap()
    }

    #[test]
    fn whole_words_case_insensitive() {
        let d = EntityDictionary::new(vec![
            key("service", "postgres"),
            key("service", "pgbouncer"),
            key("host", "node-a"),
            key("service", "db"),
        ]);
        let found =
            d.find("PgBouncer pool exhausted in front of Postgres on node-a; postgresql fine; db");
        let refs: Vec<_> = found.iter().map(|k| k.entity_ref.as_str()).collect();
        assert_eq!(refs, ["pgbouncer", "postgres", "node-a"]);
        assert!(d.find("postgresql only").is_empty());
    }

    #[test]
    fn an_identifier_is_named_as_written_or_in_lowercase() {
        let d = EntityDictionary::new(vec![
            key("code", "FireFox"),
            key("code", "AppleWebKit"),
            key("service", "Redis"),
        ]);
        let refs = |text: &str| -> Vec<String> {
            d.find(text).into_iter().map(|k| k.entity_ref).collect()
        };
        assert!(
            refs("Mozilla/5.0 Gecko/20100101 Firefox/60.0").is_empty(),
            "Firefox is not the identifier FireFox"
        );
        assert_eq!(refs("FireFox hangs"), ["FireFox"]);
        assert_eq!(
            refs("firefox hangs; applewebkit too"),
            ["FireFox", "AppleWebKit"]
        );
        assert!(refs("APPLEWEBKIT").is_empty());
        assert_eq!(refs("REDIS down, redis up, Redis"), ["Redis"]);
        assert_eq!(
            refs("café: Firefox, AppleWebKit"),
            ["AppleWebKit"],
            "a text with non-ASCII letters is held to the same spelling"
        );
        assert_eq!(
            refs("İstanbul office: Firefox, AppleWebKit, firefox"),
            ["AppleWebKit", "FireFox"],
            "so is one whose lowercasing changes a letter's length"
        );
    }

    #[test]
    fn the_longest_occurrence_wins_and_counts_only_as_a_whole_word() {
        let d = EntityDictionary::new(vec![
            key("service", "api"),
            key("service", "api-gateway"),
            key("service", "redis-cache"),
            key("service", "redis-cache-x"),
        ]);
        let refs = |text: &str| -> Vec<String> {
            d.find(text).into_iter().map(|k| k.entity_ref).collect()
        };
        assert_eq!(refs("the api-gateway timed out"), ["api-gateway"]);
        assert_eq!(refs("api down"), ["api"]);
        assert!(
            refs("redis-cache-x2 evicting").is_empty(),
            "redis-cache-x is not whole"
        );
        assert_eq!(refs("redis-cache-x down"), ["redis-cache-x"]);
    }

    #[test]
    fn growing_in_tiers_finds_exactly_what_one_build_finds() {
        let refs = [
            "api",
            "api-gateway",
            "gateway",
            "node-a",
            "node-ab",
            "db-primary",
            "primary",
            "checkout",
            "checkout-api",
            "eu-west-1",
            "west",
            "queue",
        ];
        let types = ["service", "host"];
        let all: Vec<EntityKey> = refs
            .iter()
            .enumerate()
            .map(|(i, r)| key(types[i % 2], r))
            .chain([key("host", "api"), key("service", "queue")])
            .collect();
        let texts = [
            "checkout-api behind the api-gateway on node-ab; eu-west-1 queue backed up",
            "primary db-primary API gateway west queue",
            "node-a node-ab node-abc api",
            "",
        ];
        let mut grown = EntityDictionary::default();
        let mut most_tiers = 0;
        for n in 1..=all.len() {
            grown = grown.with(vec![all[n - 1].clone(), all[n / 2].clone()]);
            most_tiers = most_tiers.max(grown.tiers.len());
            let whole = EntityDictionary::new(all[..n].to_vec());
            assert_eq!(grown.size(), whole.size());
            for text in texts {
                assert_eq!(grown.find(text), whole.find(text), "{n} keys, {text:?}");
            }
        }
        assert!(most_tiers > 2, "the test should exercise several tiers");
    }
}
