use std::collections::HashMap;

use super::IngestError;
use crate::model::Timestamp;
use crate::store::{BatchItem, EpisodeDraft, WriteBatch};

/// Collects validated drafts, folding exact duplicates and refusing conflicting ones.
#[derive(Default)]
pub struct BatchBuilder {
    batch: WriteBatch,
    seen: HashMap<String, usize>,
    duplicates: usize,
}

/// A validated batch ready to write.
pub struct Prepared {
    pub batch: WriteBatch,
    /// Records that repeated an earlier record of the same batch exactly.
    pub duplicates: usize,
}

impl BatchBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(
        &mut self,
        origin: String,
        draft: EpisodeDraft,
        ingested_at: Timestamp,
    ) -> Result<(), IngestError> {
        if let Some(&index) = self.seen.get(&draft.incident_fingerprint) {
            let first = &self.batch.items[index];
            if first.draft == draft {
                self.duplicates += 1;
                return Ok(());
            }
            return Err(IngestError::new(
                origin,
                "incident_fingerprint",
                format!(
                    "duplicate fingerprint {:?} with different content (first at {}); expected each incident once",
                    draft.incident_fingerprint, first.origin
                ),
            ));
        }
        self.seen
            .insert(draft.incident_fingerprint.clone(), self.batch.items.len());
        self.batch.items.push(BatchItem {
            origin,
            draft,
            ingested_at,
        });
        Ok(())
    }

    pub fn finish(self) -> Prepared {
        Prepared {
            batch: self.batch,
            duplicates: self.duplicates,
        }
    }
}
