use super::QueryError;
use crate::learning::CodeUnit;
use crate::model::AsOf;
use crate::store::MemoryStore;

/// What the code↔graph join is asked (`strata code`, the MCP `code` tool).
pub enum CodeQuery {
    /// Code units owned by the service.
    Service(String),
    /// The code unit behind a vector point id.
    EmbeddingRef(String),
    /// Code units of the services the episode implicated, by facts valid at the as-of point.
    Episode(String, AsOf),
}

pub fn code_units(store: &dyn MemoryStore, query: &CodeQuery) -> Result<Vec<CodeUnit>, QueryError> {
    match query {
        CodeQuery::Service(service) => Ok(store.code_units_of_service(service)?),
        CodeQuery::EmbeddingRef(r) => store
            .code_unit(r)?
            .map(|u| vec![u])
            .ok_or_else(|| QueryError::UnknownCodeUnit(r.clone())),
        CodeQuery::Episode(fp, as_of) => {
            if store.episode(fp)?.is_none() {
                return Err(QueryError::UnknownEpisode(fp.clone()));
            }
            Ok(store.episode_code_units(fp, as_of)?)
        }
    }
}
