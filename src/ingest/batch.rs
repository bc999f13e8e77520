use std::collections::HashMap;

use super::IngestError;
use crate::store::{BatchItem, EpisodeDraft, KnowledgeTime, WriteBatch};

/// Collects validated drafts, folding exact duplicates and refusing conflicting ones.
#[derive(Default)]
pub struct BatchBuilder {
    batch: WriteBatch,
    seen: HashMap<String, usize>,
    unit_at: HashMap<String, usize>,
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
        ingested_at: KnowledgeTime,
    ) -> Result<(), IngestError> {
        if let Some(&index) = self.seen.get(&draft.incident_fingerprint) {
            let first = &self.batch.items[index];
            if first.draft == draft {
                self.duplicates += 1;
                return Ok(());
            }
            return Err(conflicting_repeat(
                origin,
                &draft.incident_fingerprint,
                &first.origin,
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

    /// Adds code units; one repeated exactly is folded, one that names another owner for
    /// the same file is an error.
    pub fn push_code_unit(
        &mut self,
        origin: String,
        field: String,
        unit: crate::learning::CodeUnit,
    ) -> Result<(), IngestError> {
        match self
            .unit_at
            .get(&unit.embedding_ref)
            .map(|&i| &self.batch.code_units[i])
        {
            Some((_, u)) if *u == unit => {
                self.duplicates += 1;
                Ok(())
            }
            Some((first, u)) => Err(IngestError::new(
                origin,
                field,
                format!(
                    "{}|{} is owned by service {:?} in {first}; expected one owner per file",
                    unit.repo, unit.path, u.service
                ),
            )),
            None => {
                self.unit_at
                    .insert(unit.embedding_ref.clone(), self.batch.code_units.len());
                self.batch.code_units.push((origin, unit));
                Ok(())
            }
        }
    }

    pub fn finish(self) -> Prepared {
        Prepared {
            batch: self.batch,
            duplicates: self.duplicates,
        }
    }
}

/// A fingerprint repeated in one file with other content than at `first`.
pub(super) fn conflicting_repeat(origin: String, fingerprint: &str, first: &str) -> IngestError {
    IngestError::new(
        origin,
        "incident_fingerprint",
        format!(
            "duplicate fingerprint {fingerprint:?} with different content (first at {first}); expected each incident once"
        ),
    )
}
