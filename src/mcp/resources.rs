//! Resources a host can attach: the store summary, and one episode by fingerprint.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use rmcp::model::Resource;
use serde_json::{Value, json};

use super::server::{Memory, resource};
use crate::model::{AsOf, Timestamp};
use crate::store::{MemoryStore, StoreError, TimelineQuery};

pub const SUMMARY_URI: &str = "strata://store";
pub const EPISODE_TEMPLATE: &str = "strata://episode/{fingerprint}";
const EPISODE_PREFIX: &str = "strata://episode/";
/// Episodes listed as resources, newest first; any other is read through the template.
const LISTED_EPISODES: usize = 50;
/// Unreserved characters stay as they are; everything else is percent-encoded.
const FINGERPRINT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

pub enum ResourceUri {
    Summary,
    Episode(String),
}

impl ResourceUri {
    pub fn parse(uri: &str) -> Option<Self> {
        if uri == SUMMARY_URI {
            return Some(ResourceUri::Summary);
        }
        let encoded = uri.strip_prefix(EPISODE_PREFIX)?;
        let fingerprint = percent_decode_str(encoded).decode_utf8().ok()?;
        (!fingerprint.is_empty()).then(|| ResourceUri::Episode(fingerprint.into_owned()))
    }
}

pub fn episode_uri(fingerprint: &str) -> String {
    format!(
        "{EPISODE_PREFIX}{}",
        utf8_percent_encode(fingerprint, FINGERPRINT)
    )
}

pub fn listed(store: &dyn MemoryStore) -> Result<Vec<Resource>, StoreError> {
    let mut out = vec![resource(
        SUMMARY_URI.into(),
        "store".into(),
        "The store: where it is, its identity and generation, and how many episodes, \
         entities and edges it holds"
            .into(),
    )];
    let newest = store.timeline(&TimelineQuery {
        entity: None,
        known_at: None,
        offset: 0,
        limit: LISTED_EPISODES,
    })?;
    for e in newest {
        // A fingerprint that redaction would change cannot go into a URI as it is; such an
        // episode is read through the template by whoever knows its fingerprint.
        if crate::redact::redact(&e.incident_fingerprint) != e.incident_fingerprint.as_str() {
            continue;
        }
        let name = e.incident_fingerprint.clone();
        let summary = crate::redact::redact(&e.known_at(Timestamp::MAX).summary_nl).into_owned();
        out.push(resource(
            episode_uri(&e.incident_fingerprint),
            name,
            summary,
        ));
    }
    Ok(out)
}

/// The resource's JSON, or `None` for an episode the store does not hold.
pub fn read(
    memory: &Memory,
    what: &ResourceUri,
    now: Timestamp,
) -> Result<Option<Value>, StoreError> {
    let store = memory.store.as_ref();
    match what {
        ResourceUri::Summary => {
            let mut value = serde_json::to_value(store.stats()?)
                .map_err(|e| StoreError::Internal(format!("cannot encode the stats: {e}")))?;
            if let Value::Object(map) = &mut value {
                map.insert("store".into(), json!(memory.describe));
                map.insert("store_id".into(), json!(store.identity()?));
                map.insert("generation".into(), json!(store.generation()?));
            }
            Ok(Some(value))
        }
        ResourceUri::Episode(fingerprint) => {
            let Some(episode) = store.episode(fingerprint)? else {
                return Ok(None);
            };
            let as_of = AsOf {
                valid_at: now,
                known_at: now,
            };
            let episode = episode.known_at(now);
            let facts = crate::query::facts_as_of(store, fingerprint, as_of)
                .map(|f| json!(f))
                .unwrap_or_else(|e| json!({ "error": e.to_string() }));
            Ok(Some(json!({ "episode": episode, "facts": facts })))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_episode_uri_round_trips_any_fingerprint() {
        for fp in [
            "INC-1",
            "a/b c",
            "it's \"quoted\" ?#&=",
            "ünï",
            "x\u{1b}[31m",
        ] {
            let uri = episode_uri(fp);
            assert!(!uri.contains(' ') && !uri.contains('#') && !uri.contains('\u{1b}'));
            match ResourceUri::parse(&uri) {
                Some(ResourceUri::Episode(back)) => assert_eq!(back, fp),
                _ => panic!("{uri} did not parse back"),
            }
        }
        assert!(matches!(
            ResourceUri::parse(SUMMARY_URI),
            Some(ResourceUri::Summary)
        ));
        assert!(ResourceUri::parse("strata://episode/").is_none());
        assert!(ResourceUri::parse("file:///etc/passwd").is_none());
    }
}
