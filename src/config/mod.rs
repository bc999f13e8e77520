//! The optional config file (`~/.config/strata/config.toml`, or `--config FILE`). Flags and
//! environment variables override it; it overrides the built-in defaults.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::embed::{EmbedderKind, MiniLmRuntime};
use crate::recall::{LegWeights, RecallMode, StalePolicy};

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub embedder: EmbedderSection,
    #[serde(default)]
    pub recall: RecallSection,
    /// `[keymap.CONTEXT]` tables of `"KEY" = "action"`, merged over the defaults.
    #[serde(default)]
    pub keymap: crate::explorer::KeymapOverrides,
    #[serde(default)]
    pub theme: crate::explorer::ThemeSection,
    #[serde(default)]
    pub redact: RedactSection,
    #[serde(default)]
    pub store: StoreSection,
    /// `[qdrant]`: the layout of a collection Strata creates on a Qdrant cluster.
    #[serde(default)]
    pub qdrant: crate::index::qdrant::QdrantLayout,
    /// `[ingest]`: bounds on one record.
    #[serde(default)]
    pub ingest: crate::ingest::RecordLimits,
    /// `[telemetry]`: where spans are exported, if anywhere.
    #[serde(default)]
    pub telemetry: TelemetrySection,
}

/// `[telemetry]`: optional OpenTelemetry export.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TelemetrySection {
    /// An OTLP/HTTP collector's address (`http://127.0.0.1:4318`): Strata's spans (counts and
    /// times only) are sent there. Off when unset; `STRATA_OTLP_ENDPOINT` overrides it.
    pub otlp_endpoint: Option<String>,
}

/// `[store]`: where memory lives when not in the embedded store.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StoreSection {
    /// `falkordb://HOST:PORT/GRAPH`
    pub url: Option<String>,
    /// `qdrant://HOST:PORT` or `falkordb` (the graph's own vector index)
    pub vectors: Option<String>,
}

/// `[redact]`: patterns redacted on top of the built-in ones.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedactSection {
    /// `{ name = "ticket", pattern = "TICKET-[0-9]+" }` becomes `<ticket>`.
    #[serde(default)]
    pub extra: Vec<ExtraPattern>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExtraPattern {
    pub name: String,
    pub pattern: String,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EmbedderSection {
    pub kind: Option<EmbedderKind>,
    pub minilm_dir: Option<PathBuf>,
    pub minilm_runtime: Option<MiniLmRuntime>,
    pub openai_url: Option<String>,
    pub openai_model: Option<String>,
    pub openai_dimension: Option<usize>,
    pub openai_api_key: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RecallSection {
    pub timeout_ms: Option<u64>,
    pub leg_limit: Option<usize>,
    /// `[recall.weights]`: each leg's weight under the `weighted` fusion policy, and its base weight
    /// under `adaptive`.
    pub weights: Option<LegWeights>,
    /// What recall does with a result a later episode superseded: keep, mark (the default) or
    /// follow.
    pub stale: Option<StalePolicy>,
    /// The recall brief's length bound, in characters.
    pub brief_chars: Option<usize>,
    /// `active` (the default) hands results back; `shadow` runs and records every recall but
    /// hands back none (the MCP `recall` tool and `strata recall`; the explorer always shows
    /// them).
    pub mode: Option<RecallMode>,
    /// Recalls the warm signal looks back over (1 to 10,000; default 200).
    pub warm_window: Option<usize>,
    /// The warm share at which the memory looks ready to go active (0 to 1; default 0.5).
    pub warm_ready: Option<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("config {path}: {message}")]
    Parse { path: PathBuf, message: String },
}

pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "strata").map(|p| p.config_dir().join("config.toml"))
}

impl Config {
    /// Loads `path`; a missing file at the default location is an empty config.
    pub fn load(path: &Path, explicit: bool) -> Result<Config, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if !explicit && e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Config::default());
            }
            Err(e) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                });
            }
        };
        // The parser quotes the offending line, which may hold a store URL's password.
        let config: Config = toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e
                .to_string()
                .lines()
                .map(crate::store::falkordb::mask_credentials)
                .collect::<Vec<_>>()
                .join("\n"),
        })?;
        let recall_err = |message: String| ConfigError::Parse {
            path: path.to_path_buf(),
            message,
        };
        if let Some(n) = config.recall.warm_window
            && !(1..=crate::telemetry::KEPT_RECALLS as usize).contains(&n)
        {
            return Err(recall_err(format!(
                "[recall] warm_window = {n}: expected 1 to {}",
                crate::telemetry::KEPT_RECALLS
            )));
        }
        if let Some(r) = config.recall.warm_ready
            && !(0.0..=1.0).contains(&r)
        {
            return Err(recall_err(format!(
                "[recall] warm_ready = {r}: expected a share from 0 to 1, e.g. 0.5"
            )));
        }
        if let Some(w) = &config.recall.weights {
            w.check().map_err(|why| ConfigError::Parse {
                path: path.to_path_buf(),
                message: format!("[recall.weights]: {why}"),
            })?;
        }
        config
            .qdrant
            .check()
            .map_err(|e| recall_err(e.to_string()))?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sections_and_rejects_unknown_keys() {
        let c: Config = toml::from_str(
            "[embedder]\nkind = \"openai\"\nopenai_url = \"http://127.0.0.1:11434\"\nopenai_model = \"bge-m3\"\nopenai_dimension = 1024\n",
        )
        .unwrap();
        assert_eq!(c.embedder.kind, Some(EmbedderKind::Openai));
        assert_eq!(c.embedder.openai_dimension, Some(1024));
        assert!(toml::from_str::<Config>("[embedder]\nkidn = \"hash\"\n").is_err());
    }

    #[test]
    fn the_qdrant_section_sets_the_collection_layout() {
        let c: Config =
            toml::from_str("[qdrant]\nshard_number = 6\nreplication_factor = 3\n").unwrap();
        assert_eq!(c.qdrant.shard_number, Some(6));
        assert_eq!(c.qdrant.replication_factor, Some(3));
        assert_eq!(c.qdrant.write_consistency_factor, None);
        assert!(toml::from_str::<Config>("[qdrant]\nshards = 6\n").is_err());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[qdrant]\nreplication_factor = 0\n").unwrap();
        let e = Config::load(&path, true).unwrap_err().to_string();
        assert!(
            e.contains("replication_factor = 0: expected at least 1"),
            "{e}"
        );
    }
}
