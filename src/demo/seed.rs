use super::generate;
use crate::ingest::{self, BatchBuilder, IngestError, IngestFailure};
use crate::model::Timestamp;
use crate::store::{ApplyReport, MemoryStore};

/// Writes the demo memory through the same validation as `strata ingest`, each record at its
/// own historical knowledge time. Seeding twice changes nothing.
pub fn seed(store: &dyn MemoryStore) -> Result<ApplyReport, IngestFailure> {
    let mut builder = BatchBuilder::new();
    let mut errors = Vec::new();
    for (i, r) in generate().records.into_iter().enumerate() {
        let origin = format!("demo[{i}]");
        match ingest::parse_record(&r.record) {
            Ok(draft) => {
                if let Err(e) = builder.push(origin, draft, Timestamp::from_datetime(r.ingested_at))
                {
                    errors.push(e);
                }
            }
            Err(fields) => errors.extend(
                fields
                    .into_iter()
                    .map(|f| IngestError::new(origin.clone(), f.field, f.message)),
            ),
        }
    }
    if !errors.is_empty() {
        return Err(IngestFailure::Invalid(errors));
    }
    ingest::write(store, &builder.finish().batch)
}
