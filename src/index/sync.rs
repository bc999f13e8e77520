use std::collections::HashSet;

use crate::learning::Lesson;
use serde::Serialize;

use super::IndexError;
use super::VectorStore;
use super::bm25::{Bm25Index, TextDoc};
use super::vectors::VectorRow;
use super::versions::{follow_corrections, version_docs};
use crate::embed::Embedder;
use crate::model::{MemoryEpisode, Timestamp};
use crate::store::MemoryStore;

const PAGE: usize = 256;

/// The text both legs index for an episode.
pub fn episode_text(e: &MemoryEpisode, lesson: Option<&Lesson>) -> String {
    match lesson {
        Some(l) => format!("{}\n{}\n{}", e.summary_nl, e.resolution_nl, l.text),
        None => format!("{}\n{}", e.summary_nl, e.resolution_nl),
    }
}

/// What [`episode_text`] feeds the indexes; an index built from another version is
/// rebuilt. 2: summary, resolution and the Reflexion lesson.
pub const TEXT_VERSION: u32 = 2;

fn texts(
    store: &dyn MemoryStore,
    page: &[(u64, MemoryEpisode)],
) -> Result<Vec<String>, IndexError> {
    let fps: Vec<String> = page
        .iter()
        .map(|(_, e)| e.incident_fingerprint.clone())
        .collect();
    let lessons: std::collections::HashMap<String, Lesson> = store
        .lessons(&fps)?
        .into_iter()
        .map(|l| (l.episode.clone(), l))
        .collect();
    Ok(page
        .iter()
        .map(|(_, e)| episode_text(e, lessons.get(&e.incident_fingerprint)))
        .collect())
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct SyncReport {
    pub text_indexed: usize,
    pub vectors_embedded: usize,
    /// Episodes of the store's log that could not be read, each with why: the indexes went
    /// on without them.
    pub unreadable: Vec<String>,
}

/// What one index's catch-up did.
#[derive(Debug, Default)]
pub struct Synced {
    /// Documents or vectors written.
    pub written: usize,
    /// Episodes of the store's log that could not be read, each with why.
    pub unreadable: Vec<String>,
}

/// What to do with one page of the ingest log's readable episodes, given the sequence the
/// page ends at.
type PageDone<'a> = dyn FnMut(&[(u64, MemoryEpisode)], u64) -> Result<(), IndexError> + 'a;

/// Pages of the store's ingest log after `from`, until it is exhausted; the rows that could
/// not be read go to `unreadable`. An episode the store cannot read is reported and passed
/// over: one bad record never stops an index from catching up with the rest.
fn follow(
    store: &dyn MemoryStore,
    from: u64,
    page_done: &mut PageDone<'_>,
    unreadable: &mut Vec<String>,
) -> Result<(), IndexError> {
    let mut cursor = from;
    loop {
        let page = store.episodes_since(cursor, PAGE)?;
        if page.last <= cursor {
            return Ok(());
        }
        for (seq, why) in &page.unreadable {
            tracing::warn!(sequence = seq, error = %why, "an episode of the store's log cannot be read: the indexes go on without it (`strata check` lists it)");
            let said = format!("log row #{seq}: {why}");
            if !unreadable.contains(&said) {
                unreadable.push(said);
            }
        }
        page_done(&page.episodes, page.last)?;
        cursor = page.last;
    }
}

/// The identity derived indexes are keyed by: the store's own, or `unidentified` for a store
/// nobody has written through Strata yet (its indexes rebuild once it gets one).
pub fn store_identity(store: &dyn MemoryStore) -> Result<String, IndexError> {
    Ok(store
        .identity()?
        .unwrap_or_else(|| "unidentified".to_string()))
}

/// An index whose watermark is past the end of the store's log was built from something
/// else (the store was restored from a backup, or made anew under it).
fn ahead_of(store_episodes: u64, watermark: u64) -> bool {
    watermark > store_episodes
}

/// Brings the text index up to the store's ingest log, rebuilding it when it is ahead of
/// the store.
pub fn sync_text(
    store: &dyn MemoryStore,
    text: &Bm25Index,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Synced, IndexError> {
    let total = store.episode_count()?;
    let corrections = store.correction_count()?;
    if text.watermark()? == total && text.len() == total && text.corrections_read()? == corrections
    {
        // Caught up: no turn to take (a reader that cannot write needs none).
        return Ok(Synced::default());
    }
    let _turn = text.catch_up_guard()?;
    if ahead_of(total, text.watermark()?) || text.corrections_read()? > corrections {
        tracing::warn!("the text index is ahead of the store's logs: rebuilding it");
        text.clear(&store_identity(store)?)?;
    }
    let mut pending = PendingText::default();
    let mut unreadable = Vec::new();
    let mut indexed = pending.read(
        store,
        text,
        (text.watermark()?, total),
        progress,
        false,
        &mut unreadable,
    )?;
    if text.len() + (unreadable.len() as u64) < total {
        // An episode was recorded behind the watermark (another program wrote it without a
        // batch sequence), or one that could not be read before can be now: read everything
        // again, indexing only what the index lacks.
        unreadable.clear();
        indexed += pending.read(store, text, (0, total), progress, true, &mut unreadable)?;
    }
    follow_corrections(
        store,
        (text.corrections_read()?, corrections),
        COMMIT_EVERY,
        &mut |records, last| {
            let docs = version_docs(store, records)?;
            indexed += docs.len();
            text.append_versions(&docs, last)
        },
    )?;
    if indexed > 0 {
        text.compact()?;
    }
    Ok(Synced {
        written: indexed,
        unreadable,
    })
}

/// Episodes read from the log and not yet committed to the text index: a catch-up writes
/// them in one commit (one segment), not one per page.
#[derive(Default)]
struct PendingText {
    /// (fingerprint, text, ingested_at, t_valid) of each episode read.
    episodes: Vec<(String, String, Timestamp, Timestamp)>,
    watermark: u64,
}

/// Documents per text-index commit while catching up: a small write is one commit, a first
/// build of a large store keeps its progress every so often.
const COMMIT_EVERY: usize = 20_000;

impl PendingText {
    /// Reads the log after `from` into the text index (only what it lacks, when `missing`);
    /// returns how many documents it wrote and how many episodes could not be read.
    fn read(
        &mut self,
        store: &dyn MemoryStore,
        text: &Bm25Index,
        (from, total): (u64, u64),
        progress: &mut dyn FnMut(u64, u64),
        missing: bool,
        unreadable: &mut Vec<String>,
    ) -> Result<usize, IndexError> {
        let mut indexed = 0;
        follow(
            store,
            from,
            &mut |page, last| {
                let lacking: Vec<(u64, MemoryEpisode)>;
                let page = if missing {
                    let fps: Vec<&str> = page
                        .iter()
                        .map(|(_, e)| e.incident_fingerprint.as_str())
                        .collect();
                    let absent: HashSet<String> = text.missing(&fps)?.into_iter().collect();
                    lacking = page
                        .iter()
                        .filter(|(_, e)| absent.contains(&e.incident_fingerprint))
                        .cloned()
                        .collect();
                    &lacking[..]
                } else {
                    page
                };
                let texts = texts(store, page)?;
                self.episodes
                    .extend(page.iter().zip(texts).map(|((_, e), text)| {
                        (
                            e.incident_fingerprint.clone(),
                            text,
                            e.ingested_at,
                            e.t_valid,
                        )
                    }));
                self.watermark = last;
                if self.episodes.len() >= COMMIT_EVERY {
                    indexed += self.commit(text)?;
                }
                progress(last.min(total), total);
                Ok(())
            },
            unreadable,
        )?;
        Ok(indexed + self.commit(text)?)
    }

    fn commit(&mut self, text: &Bm25Index) -> Result<usize, IndexError> {
        if self.episodes.is_empty() {
            return Ok(0);
        }
        let docs: Vec<TextDoc<'_>> = self
            .episodes
            .iter()
            .map(|(fingerprint, text, ingested_at, t_valid)| TextDoc {
                fingerprint,
                text,
                ingested_at: *ingested_at,
                t_valid: *t_valid,
            })
            .collect();
        text.append(&docs, self.watermark)?;
        let n = docs.len();
        self.episodes.clear();
        Ok(n)
    }
}

/// Brings the vector index up to the store's ingest log, embedding in batches only the
/// episodes it does not hold yet.
pub fn sync_vectors(
    store: &dyn MemoryStore,
    vectors: &dyn VectorStore,
    embedder: &dyn Embedder,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Synced, IndexError> {
    let total = store.episode_count()?;
    let corrections = store.correction_count()?;
    if vectors.watermark()? == total
        && vectors.count()? as u64 == total
        && vectors.corrections_read()? == corrections
    {
        return Ok(Synced::default());
    }
    let _turn = vectors.catch_up_guard()?;
    if ahead_of(total, vectors.watermark()?) || vectors.corrections_read()? > corrections {
        tracing::warn!("the vector index is ahead of the store's logs: rebuilding it");
        vectors.clear(&store_identity(store)?)?;
    }
    let mut embedded = 0;
    let pending = std::cell::RefCell::new(PendingVectors::new(vectors.append_at_most()));
    let mut append = |page: &[(u64, MemoryEpisode)], last: u64| -> Result<(), IndexError> {
        let fingerprints: Vec<&str> = page
            .iter()
            .map(|(_, e)| e.incident_fingerprint.as_str())
            .collect();
        let missing: HashSet<String> = vectors.missing(&fingerprints)?.into_iter().collect();
        let page: Vec<(u64, MemoryEpisode)> = page
            .iter()
            .filter(|(_, e)| missing.contains(&e.incident_fingerprint))
            .cloned()
            .collect();
        let texts = texts(store, &page)?;
        let batch: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors_of_page = if batch.is_empty() {
            Vec::new()
        } else {
            embedder.embed_batch(&batch)?
        };
        let rows: Vec<VectorRow> = page
            .iter()
            .zip(vectors_of_page)
            .map(|((_, e), vector)| VectorRow {
                fingerprint: e.incident_fingerprint.clone(),
                ingested_at: e.ingested_at,
                t_valid: e.t_valid,
                concluded_at: e.concluded_at,
                vector,
            })
            .collect();
        embedded += rows.len();
        pending.borrow_mut().add(vectors, rows, last)?;
        progress(last.min(total), total);
        Ok(())
    };
    let mut unreadable = Vec::new();
    follow(store, vectors.watermark()?, &mut append, &mut unreadable)?;
    pending.borrow_mut().flush(vectors)?;
    if (vectors.count()? as u64) + (unreadable.len() as u64) < total {
        // As for text: something was recorded behind the watermark (or lost from the index).
        // Only what is missing is embedded again.
        unreadable.clear();
        follow(store, 0, &mut append, &mut unreadable)?;
        pending.borrow_mut().flush(vectors)?;
    }
    follow_corrections(
        store,
        (vectors.corrections_read()?, corrections),
        vectors.append_at_most(),
        &mut |records, last| {
            let docs = version_docs(store, records)?;
            let texts: Vec<&str> = docs.iter().map(|d| d.text.as_str()).collect();
            let embedded_texts = if texts.is_empty() {
                Vec::new()
            } else {
                embedder.embed_batch(&texts)?
            };
            let rows: Vec<VectorRow> = docs
                .into_iter()
                .zip(embedded_texts)
                .map(|(d, vector)| VectorRow {
                    fingerprint: d.key,
                    ingested_at: d.known_from,
                    t_valid: d.t_valid,
                    concluded_at: d.concluded_at,
                    vector,
                })
                .collect();
            embedded += rows.len();
            vectors.append_versions(&rows, last)
        },
    )?;
    Ok(Synced {
        written: embedded,
        unreadable,
    })
}

/// Vectors embedded and not yet appended: written when the batch is full or a couple of
/// seconds old, so a fast embedder makes few large commits and a slow one keeps its
/// progress every few seconds. A batch exceeds its size by at most one page, and is
/// appended whole with the watermark of its last page.
struct PendingVectors {
    rows: Vec<VectorRow>,
    watermark: Option<u64>,
    at_most: usize,
    since: std::time::Instant,
}

/// A batch is appended once it is this old, however small.
const APPEND_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

impl PendingVectors {
    fn new(at_most: usize) -> Self {
        PendingVectors {
            rows: Vec::new(),
            watermark: None,
            at_most: at_most.max(1),
            since: std::time::Instant::now(),
        }
    }

    fn add(
        &mut self,
        vectors: &dyn VectorStore,
        rows: Vec<VectorRow>,
        watermark: u64,
    ) -> Result<(), IndexError> {
        self.rows.extend(rows);
        self.watermark = Some(watermark);
        if self.rows.len() >= self.at_most || self.since.elapsed() >= APPEND_EVERY {
            self.flush(vectors)?;
        }
        Ok(())
    }

    fn flush(&mut self, vectors: &dyn VectorStore) -> Result<(), IndexError> {
        if let Some(watermark) = self.watermark.take() {
            vectors.append(&self.rows, watermark)?;
            self.rows.clear();
        }
        self.since = std::time::Instant::now();
        Ok(())
    }
}
