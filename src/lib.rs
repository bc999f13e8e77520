//! Strata: the bi-temporal memory of an incident-response agent, and the tools to explore it.

pub mod caught;
pub mod client_runtime;
pub mod config;
pub mod correct;
pub mod demo;
pub mod embed;
pub mod eval;
pub mod explorer;
pub mod headless;
pub mod import;
pub mod index;
pub mod ingest;
pub mod learning;
pub mod lmdb;
pub mod mcp;
pub mod model;
pub mod query;
pub mod recall;
pub mod redact;
pub mod store;
pub mod synthetic;
pub mod telemetry;
pub mod transfer;
