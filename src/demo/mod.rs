//! Deterministic demo memory for trying out and evaluating the store.
//!
//! [`generate`] produces about 300 concluded incident episodes of a self-hosted
//! stack (authelia, lldap, caddy, postgres, pgbouncer, falkordb, qdrant,
//! tei-embed, minio, nats, redis, grafana, argocd on hosts node-a..node-c),
//! spread from December 2024 to November 2026. Each episode is an instance of
//! one of 16 recurring causes in three fault classes (`auth`, `data`,
//! `deploy`); several causes form supersession chains where each new fix
//! replaces the previous one. Records are in the store's JSON ingest format
//! and carry a knowledge time (`ingested_at`) that can lag the conclusion by
//! up to three days.
//!
//! The accompanying [`LabelledQuery`] set describes nine new incidents and
//! lists, for each, the past episodes of the same cause that recall should
//! return as of the query's time.
//!
//! The output depends only on [`DEMO_SEED`]: the same data on every call and
//! every machine.

mod generator;
mod labels;
mod world;

pub use generator::{DEMO_SEED, DemoMemory, DemoRecord, generate};
pub use labels::LabelledQuery;
mod seed;

pub use seed::seed;

/// Where the labelled evaluation set ships, relative to the crate root.
pub const LABELS_PATH: &str = "assets/demo/labels.json";
