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

/// The entity a key made by [`entity`] names.
pub fn entity_of(key: &[u8]) -> Option<EntityKey> {
    let text = std::str::from_utf8(key).ok()?;
    let (entity_type, entity_ref) = text.split_once(SEP as char)?;
    // Not validated again: what was stored is read as it is, whatever today's rules say.
    Some(EntityKey {
        entity_type: entity_type.to_string(),
        entity_ref: entity_ref.to_string(),
    })
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

/// The fingerprint, relation and entity of a fact key.
pub fn fact_of(key: &[u8]) -> Option<(&str, Relation, EntityKey)> {
    let (fp, relation) = fact_parts(key)?;
    let rest = key.get(fp.len() + relation.as_str().len() + 2..)?;
    Some((fp, relation, entity_of(rest)?))
}

/// The superseding episode, the prior and the entity of a supersession key.
pub fn supersession_of(key: &[u8]) -> Option<(&str, &str, EntityKey)> {
    let mut parts = key.splitn(3, |b| *b == SEP);
    let episode = std::str::from_utf8(parts.next()?).ok()?;
    let prior = std::str::from_utf8(parts.next()?).ok()?;
    Some((episode, prior, entity_of(parts.next()?)?))
}

/// Bounds of every key whose first part is exactly `first`.
pub fn prefix_range(first: &str) -> (Vec<u8>, Vec<u8>) {
    let mut lo = first.as_bytes().to_vec();
    lo.push(SEP);
    let mut hi = first.as_bytes().to_vec();
    hi.push(SEP + 1);
    (lo, hi)
}

/// (concluded_at, fingerprint), ordered by time then fingerprint: the sign bit flipped makes
/// big-endian bytes sort as signed integers do.
pub fn timeline(concluded_ms: i64, fingerprint: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(8 + fingerprint.len());
    key.extend_from_slice(&((concluded_ms as u64) ^ (1 << 63)).to_be_bytes());
    key.extend_from_slice(fingerprint.as_bytes());
    key
}

pub fn timeline_parts(key: &[u8]) -> Option<(i64, &str)> {
    let (time, fp) = key.split_first_chunk::<8>()?;
    let ms = (u64::from_be_bytes(*time) ^ (1 << 63)) as i64;
    Some((ms, std::str::from_utf8(fp).ok()?))
}

pub fn sequence(n: u64) -> [u8; 8] {
    n.to_be_bytes()
}

pub fn sequence_of(key: &[u8]) -> Option<u64> {
    <[u8; 8]>::try_from(key).ok().map(u64::from_be_bytes)
}

/// Fixed-width little-endian i64s.
pub fn times<const N: usize>(values: [i64; N]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

pub fn times_of<const N: usize>(bytes: &[u8]) -> Option<[i64; N]> {
    if bytes.len() != 8 * N {
        return None;
    }
    let mut out = [0i64; N];
    for (slot, chunk) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        *slot = i64::from_le_bytes(chunk.try_into().ok()?);
    }
    Some(out)
}

pub fn display(key: &[u8]) -> String {
    String::from_utf8_lossy(key).replace('\0', "|")
}

/// Characters of a key an error message shows at most.
const DESCRIBED_CHARS: usize = 200;

/// A key of `table` as an error message names it: the timeline's time as a date and the
/// ingest log's sequence as a number, text keys with their parts joined by `|`, anything
/// that is not text in hex; cut to a couple of hundred characters.
pub fn describe(table: &str, key: &[u8]) -> String {
    let shown = match table {
        "timeline" => timeline_parts(key)
            .map(|(ms, fp)| format!("{}|{}", crate::model::Timestamp::from_millis(ms), fp)),
        "ingest_log" => sequence_of(key).map(|n| format!("#{n}")),
        _ => std::str::from_utf8(key).ok().map(|t| t.replace('\0', "|")),
    }
    .unwrap_or_else(|| {
        let hex: String = key.iter().take(64).map(|b| format!("{b:02x}")).collect();
        format!("0x{hex}{}", if key.len() > 64 { "…" } else { "" })
    });
    match shown.char_indices().nth(DESCRIBED_CHARS) {
        Some((cut, _)) => format!("{}…", &shown[..cut]),
        None => shown,
    }
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
        assert_eq!(
            fact_of(&own),
            Some(("INC-1", Relation::Mentions, e.clone()))
        );
        let odd = EntityKey::new("service", "a|b:c d").unwrap();
        assert_eq!(
            supersession_of(&supersession("N", "P", &odd)),
            Some(("N", "P", odd))
        );
    }

    #[test]
    fn timeline_keys_sort_by_time_then_fingerprint() {
        let keys = [
            timeline(i64::MIN, "a"),
            timeline(-5, "z"),
            timeline(0, "a"),
            timeline(0, "b"),
            timeline(7, "a"),
            timeline(i64::MAX, "a"),
        ];
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(timeline_parts(&timeline(-5, "z")), Some((-5, "z")));
        assert_eq!(
            times_of::<3>(&times([1, -2, i64::MAX])),
            Some([1, -2, i64::MAX])
        );
    }
}
