//! Corrected texts in the derived indexes. An episode's text as first written is indexed
//! under its fingerprint, as always; each `correct_episode` adds a document for the new
//! version under a version key (the fingerprint, [`SEPARATOR`], and the knowledge time the
//! version begins), known from that time on. Nothing is replaced: as of any K the text legs
//! keep, of each episode's documents, only the one whose version is known at K
//! ([`TextVersions::current`]), so as of now they match the corrected text and as of an
//! earlier K the text known then.
//!
//! The indexes learn of corrections from the store's correction log as they learn of
//! episodes from its ingest log: each records how far into the log it has read.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use super::IndexError;
use crate::correct::{Correction, CorrectionRecord};
use crate::model::{MemoryEpisode, Timestamp};
use crate::store::MemoryStore;

/// Between the fingerprint and the knowledge time in a version document's key: no
/// fingerprint holds its first character ([`crate::model::fingerprint_problem`]), so no
/// episode's own key reads as a version key.
pub const SEPARATOR: &str = "\u{1f}v";

/// The key of the document for `fingerprint`'s text version known from `known_from`.
pub fn version_key(fingerprint: &str, known_from: Timestamp) -> String {
    format!("{fingerprint}{SEPARATOR}{}", known_from.millis())
}

/// A document key read back: the episode, and the version's knowledge time (`None`: the
/// text as first written).
pub fn parse_key(key: &str) -> (&str, Option<Timestamp>) {
    match key.rsplit_once(SEPARATOR) {
        Some((fp, millis)) => match millis.parse::<i64>() {
            Ok(ms) => (fp, Some(Timestamp::from_millis(ms))),
            Err(_) => (key, None),
        },
        None => (key, None),
    }
}

/// A corrected text to index: its key, text and times.
#[derive(Clone, Debug, PartialEq)]
pub struct VersionDoc {
    pub key: String,
    pub text: String,
    /// When the version begins: the document's knowledge time.
    pub known_from: Timestamp,
    pub t_valid: Timestamp,
    pub concluded_at: Timestamp,
}

/// The episodes' text corrections in `records`: (fingerprint, knowledge time it begins).
fn text_corrections(records: &[CorrectionRecord]) -> Vec<(String, Timestamp)> {
    records
        .iter()
        .filter_map(|r| match &r.line.correction {
            Correction::CorrectEpisode(c) => Some((c.incident_fingerprint.clone(), r.recorded_at)),
            _ => None,
        })
        .collect()
}

/// The text both legs index for an episode as known at `known_at`: as first written (with
/// the lesson the store keeps), or as corrected (with the lesson its corrected resolution
/// teaches, as [`crate::query::lesson_as_of`] renders it).
fn version_text(
    episode: &MemoryEpisode,
    known_at: Timestamp,
    facts: &[crate::model::FactEdge],
) -> String {
    let known = episode.known_at(known_at);
    let lesson = crate::learning::render(
        &known.incident_fingerprint,
        &known.resolution_nl,
        facts
            .iter()
            .filter(|f| f.episode == known.incident_fingerprint)
            .map(|f| (f.relation, &f.entity)),
    );
    super::episode_text(&known, Some(&lesson))
}

/// The documents of the text corrections among `records`, in log order. A correction of an
/// episode the store cannot read (it was never corrected there) is an error: the log and
/// the versions are written together.
pub fn version_docs(
    store: &dyn MemoryStore,
    records: &[CorrectionRecord],
) -> Result<Vec<VersionDoc>, IndexError> {
    let corrections = text_corrections(records);
    if corrections.is_empty() {
        return Ok(Vec::new());
    }
    let mut fps: Vec<String> = corrections.iter().map(|(fp, _)| fp.clone()).collect();
    fps.sort();
    fps.dedup();
    let episodes: HashMap<String, MemoryEpisode> = store
        .episodes(&fps)?
        .into_iter()
        .map(|e| (e.incident_fingerprint.clone(), e))
        .collect();
    let facts = store.facts_of_episodes(&fps)?;
    corrections
        .into_iter()
        .map(|(fp, known_from)| {
            let episode = episodes.get(&fp).ok_or_else(|| IndexError::Text {
                path: "corrections".into(),
                message: format!("the correction log names episode {fp:?}, which cannot be read"),
            })?;
            Ok(VersionDoc {
                key: version_key(&fp, known_from),
                text: version_text(episode, known_from, &facts),
                known_from,
                t_valid: episode.t_valid,
                concluded_at: episode.concluded_at,
            })
        })
        .collect()
}

/// What to do with one page of the correction log, given the sequence the page ends at.
pub type CorrectionsDone<'a> = dyn FnMut(&[CorrectionRecord], u64) -> Result<(), IndexError> + 'a;

/// The store's correction log after `after` up to `until`, in pages of at most `page`
/// records, to `page_done` with the sequence each page ends at.
pub fn follow_corrections(
    store: &dyn MemoryStore,
    (after, until): (u64, u64),
    page: usize,
    page_done: &mut CorrectionsDone<'_>,
) -> Result<(), IndexError> {
    let mut cursor = after;
    while cursor < until {
        let records = store.corrections_since(cursor, page.max(1))?;
        let Some(last) = records.last().map(|r| r.sequence) else {
            return Ok(());
        };
        page_done(&records, last)?;
        cursor = last;
    }
    Ok(())
}

/// Which text version of each corrected episode begins when, from the store's correction
/// log: what the text legs keep a hit by. Read on demand, up to what the index searched has
/// read ([`Self::current`]), so a leg never keeps a version its index does not hold and
/// never drops one it does.
pub struct TextVersions {
    store: Arc<dyn MemoryStore>,
    known: RwLock<Known>,
    /// [`Self::replaced`] for the last `upto` it was asked for.
    replaced: RwLock<Option<(u64, Arc<Replaced>)>>,
}

/// Documents a later text of their episode replaces: each one's key, and the knowledge time
/// from which it is no longer current. What an index leaves out before ranking, so that a
/// text no longer current never takes a place among the best.
pub type Replaced = Vec<(String, Timestamp)>;

#[derive(Default)]
struct Known {
    /// The correction log read up to.
    read: u64,
    /// Each corrected episode's versions: (log sequence, knowledge time it begins), in order.
    episodes: HashMap<String, Vec<(u64, Timestamp)>>,
}

impl TextVersions {
    pub fn new(store: Arc<dyn MemoryStore>) -> Self {
        TextVersions {
            store,
            known: RwLock::new(Known::default()),
            replaced: RwLock::new(None),
        }
    }

    fn poisoned(e: impl std::fmt::Display) -> IndexError {
        IndexError::Text {
            path: "corrections".into(),
            message: e.to_string(),
        }
    }

    /// Reads the correction log up to `upto` (what an index has read), if not yet read: at
    /// a catch-up, so that a recall does not.
    pub fn read_to(&self, upto: u64) -> Result<(), IndexError> {
        let from = self.known.read().map_err(Self::poisoned)?.read;
        if from >= upto {
            return Ok(());
        }
        let mut known = self.known.write().map_err(Self::poisoned)?;
        let from = known.read;
        follow_corrections(
            self.store.as_ref(),
            (from, upto),
            4096,
            &mut |records, last| {
                for r in records {
                    if let Correction::CorrectEpisode(c) = &r.line.correction {
                        known
                            .episodes
                            .entry(c.incident_fingerprint.clone())
                            .or_default()
                            .push((r.sequence, r.recorded_at));
                    }
                }
                known.read = last;
                Ok(())
            },
        )
    }

    /// The documents replaced by a later version, having read the correction log to `upto`:
    /// the text as first written from the first version on, each version from the next one.
    /// A document listed here with a time at or before K is one [`Self::current`] drops as of
    /// K. Episodes whose versions do not begin at strictly increasing times (a clock that went
    /// back, two in one batch) are left out: [`Self::current`] alone decides for them.
    pub fn replaced(&self, upto: u64) -> Result<Arc<Replaced>, IndexError> {
        if let Some((at, list)) = self.replaced.read().map_err(Self::poisoned)?.as_ref()
            && *at == upto
        {
            return Ok(list.clone());
        }
        self.read_to(upto)?;
        let known = self.known.read().map_err(Self::poisoned)?;
        let mut list = Vec::new();
        for (fp, versions) in &known.episodes {
            let froms: Vec<Timestamp> = versions
                .iter()
                .filter(|(seq, _)| *seq <= upto)
                .map(|(_, from)| *from)
                .collect();
            if froms.is_empty() || froms.windows(2).any(|w| w[0] >= w[1]) {
                continue;
            }
            list.push((fp.clone(), froms[0]));
            for w in froms.windows(2) {
                list.push((version_key(fp, w[0]), w[1]));
            }
        }
        list.sort();
        let list = Arc::new(list);
        *self.replaced.write().map_err(Self::poisoned)? = Some((upto, list.clone()));
        Ok(list)
    }

    /// Of the documents an index holds, having read the correction log to `upto`, keeps
    /// only those of the versions known at `known_at`, at most one an episode, in order; each
    /// kept hit is named by its episode. `hits` pairs each document key with what goes with it.
    pub fn current<T>(
        &self,
        hits: Vec<(String, T)>,
        known_at: Timestamp,
        upto: u64,
    ) -> Result<Vec<(String, T)>, IndexError> {
        if upto == 0 {
            // Nothing corrected in this index: every document is a text as first written.
            return Ok(hits);
        }
        self.read_to(upto)?;
        let known = self.known.read().map_err(Self::poisoned)?;
        let latest = |fp: &str| -> Option<Timestamp> {
            known.episodes.get(fp).and_then(|versions| {
                versions
                    .iter()
                    .rev()
                    .find(|(seq, from)| *seq <= upto && *from <= known_at)
                    .map(|(_, from)| *from)
            })
        };
        let mut out = Vec::with_capacity(hits.len());
        for (key, value) in hits {
            let (fp, from) = parse_key(&key);
            // A fingerprint that merely looks like a version key is an episode's own.
            let (fp, from) = match from {
                Some(f)
                    if known
                        .episodes
                        .get(fp)
                        .is_some_and(|v| v.iter().any(|(_, k)| *k == f)) =>
                {
                    (fp, Some(f))
                }
                _ => (key.as_str(), None),
            };
            if latest(fp) == from {
                out.push((fp.to_string(), value));
            }
        }
        Ok(out)
    }
}
