use crate::model::{EntityKey, Relation};

const SEP: u8 = 0;

fn join(parts: &[&str]) -> Vec<u8> {
    let mut key = Vec::with_capacity(parts.iter().map(|p| p.len() + 1).sum());
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            key.push(SEP);
        }
        key.extend_from_slice(part.as_bytes());
    }
    key
}

pub fn entity(e: &EntityKey) -> Vec<u8> {
    join(&[&e.entity_type, &e.entity_ref])
}

pub fn fact(fingerprint: &str, relation: Relation, e: &EntityKey) -> Vec<u8> {
    join(&[
        fingerprint,
        relation.as_str(),
        &e.entity_type,
        &e.entity_ref,
    ])
}

pub fn supersession(episode: &str, prior: &str, e: &EntityKey) -> Vec<u8> {
    join(&[episode, prior, &e.entity_type, &e.entity_ref])
}

/// The fingerprint and relation of a fact key.
pub fn fact_parts(key: &[u8]) -> Option<(&str, Relation)> {
    let mut parts = key.split(|b| *b == SEP);
    let fp = std::str::from_utf8(parts.next()?).ok()?;
    let relation = match parts.next()? {
        b"MENTIONS" => Relation::Mentions,
        b"RESOLVED_BY" => Relation::ResolvedBy,
        _ => return None,
    };
    Some((fp, relation))
}

/// Bounds of every key whose first part is exactly `first`.
pub fn prefix_range(first: &str) -> (Vec<u8>, Vec<u8>) {
    let mut lo = first.as_bytes().to_vec();
    lo.push(SEP);
    let mut hi = first.as_bytes().to_vec();
    hi.push(SEP + 1);
    (lo, hi)
}

pub fn display(key: &[u8]) -> String {
    String::from_utf8_lossy(key).replace('\0', "|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_range_excludes_longer_fingerprints() {
        let e = EntityKey::new("service", "x").unwrap();
        let (lo, hi) = prefix_range("INC-1");
        let own = fact("INC-1", Relation::Mentions, &e);
        let other = fact("INC-10", Relation::Mentions, &e);
        assert!(lo <= own && own < hi);
        assert!(!(lo <= other && other < hi));
    }
}
