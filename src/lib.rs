//! Strata: the bi-temporal memory of an incident-response agent, and the tools to explore it.

pub mod demo;
pub mod import;
pub mod ingest;
pub mod model;
pub mod query;
pub mod store;
pub mod synthetic;
