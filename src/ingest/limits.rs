use serde::Deserialize;

/// Bounds on one record, so that one careless or hostile record cannot stall an ingest: a
/// record past them is refused, naming the field, its size and the bound. Set in the config
/// file's `[ingest]` section.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecordLimits {
    /// Entries in `mentions`, `resolved_by`, `supersedes` and `skills`, each.
    pub max_entries: usize,
    /// Bytes of `summary_nl` and of `resolution_nl`, each.
    pub max_text_bytes: usize,
    /// Bytes of one record as it is read (a line of NDJSON, an element of a JSON array): a
    /// record past it is refused as soon as it passes, without reading the rest into memory.
    /// The default holds any record the other bounds let through, escaped.
    pub max_record_bytes: usize,
}

impl Default for RecordLimits {
    fn default() -> Self {
        RecordLimits {
            max_entries: 10_000,
            max_text_bytes: 1 << 20,
            max_record_bytes: 64 << 20,
        }
    }
}
