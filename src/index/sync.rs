use serde::Serialize;

use super::IndexError;
use super::bm25::{Bm25Index, TextDoc};
use super::vectors::{VectorIndex, VectorRow};
use crate::embed::Embedder;
use crate::model::MemoryEpisode;
use crate::store::MemoryStore;

const PAGE: usize = 256;

/// The text both legs index for an episode.
pub fn episode_text(e: &MemoryEpisode) -> String {
    format!("{}\n{}", e.summary_nl, e.resolution_nl)
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SyncReport {
    pub text_indexed: usize,
    pub vectors_embedded: usize,
}

/// Brings both indexes up to the store's ingest log; `progress(done, total)` after each page.
pub fn sync(
    store: &dyn MemoryStore,
    text: &Bm25Index,
    vectors: &VectorIndex,
    embedder: &dyn Embedder,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<SyncReport, IndexError> {
    let text_mark = text.watermark()?;
    let vector_mark = vectors.watermark()?;
    let total = store.stats()?.episodes;
    let mut cursor = text_mark.min(vector_mark);
    let mut report = SyncReport::default();
    loop {
        let page = store.episodes_since(cursor, PAGE)?;
        let Some(&(last, _)) = page.last() else {
            break;
        };
        let texts: Vec<String> = page.iter().map(|(_, e)| episode_text(e)).collect();
        let docs: Vec<TextDoc<'_>> = page
            .iter()
            .zip(&texts)
            .filter(|((seq, _), _)| *seq > text_mark)
            .map(|((_, e), t)| TextDoc {
                fingerprint: &e.incident_fingerprint,
                text: t,
                ingested_at: e.ingested_at,
                t_valid: e.t_valid,
            })
            .collect();
        if !docs.is_empty() {
            text.append(&docs, last)?;
            report.text_indexed += docs.len();
        }
        let pending: Vec<(&MemoryEpisode, &str)> = page
            .iter()
            .zip(&texts)
            .filter(|((seq, _), _)| *seq > vector_mark)
            .map(|((_, e), t)| (e, t.as_str()))
            .collect();
        if !pending.is_empty() {
            let batch: Vec<&str> = pending.iter().map(|(_, t)| *t).collect();
            let embedded = embedder.embed_batch(&batch)?;
            let rows: Vec<VectorRow> = pending
                .iter()
                .zip(embedded)
                .map(|((e, _), vector)| VectorRow {
                    fingerprint: e.incident_fingerprint.clone(),
                    ingested_at: e.ingested_at,
                    t_valid: e.t_valid,
                    vector,
                })
                .collect();
            vectors.append(&rows, last)?;
            report.vectors_embedded += rows.len();
        }
        cursor = last;
        progress(last.min(total), total);
    }
    Ok(report)
}
