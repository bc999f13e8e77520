//! Stores written by earlier releases, brought to today's layout when they are opened:
//! schema 1 (one redb file) is copied into schema 2 ([`redb`]), and schema 2 (JSON records)
//! is rewritten as schema 3 ([`compact`]). Each step is one write transaction: every record
//! or none.

pub(super) mod compact;
pub(super) mod redb;
pub(super) mod seal;

use heed::types::Bytes;
use heed::{Database, DatabaseOpener, RwTxn, WithoutTls};

use super::tables::{RETIRED, Tables};

/// The two tables schema 2 had besides today's (schema 3 keeps them empty: [`RETIRED`]).
const DRAFTS: &str = RETIRED[0];
const FACT_TIMES: &str = RETIRED[1];

/// The tables of schema 2 (JSON records): today's, and the two it had besides.
pub(super) struct JsonTables<'e> {
    pub t: Tables,
    /// fingerprint -> JSON `EpisodeDraft`
    pub drafts: Database<'e, Bytes, Bytes>,
    /// fact key -> (t_valid, t_invalid, ingested_at, expired_at) ms
    pub fact_times: Database<'e, Bytes, Bytes>,
}

impl<'e> JsonTables<'e> {
    /// Opens (creating if missing) the schema-2 tables inside `txn`.
    pub fn create(
        t: Tables,
        dbo: &DatabaseOpener<'e, WithoutTls>,
        txn: &mut RwTxn<'e>,
    ) -> Result<Self, heed::Error> {
        Ok(JsonTables {
            t,
            drafts: dbo.create_database(txn, Some(DRAFTS))?,
            fact_times: dbo.create_database(txn, Some(FACT_TIMES))?,
        })
    }

    pub fn by_name(&self, name: &str) -> Option<Database<'e, Bytes, Bytes>> {
        match name {
            DRAFTS => Some(self.drafts),
            FACT_TIMES => Some(self.fact_times),
            other => self.t.by_name(other).map(|t| t.raw()),
        }
    }
}
