//! Text to vectors. Recall's only model interface: an [`Embedder`] turns text into a vector
//! and can do nothing else, so no text generation can sit on the recall path.

mod cached;
mod hash;
mod minilm;
mod openai;

use std::path::PathBuf;

use serde::Serialize;

pub use cached::CachedEmbedder;
pub use hash::HashEmbedder;
pub use minilm::{
    MINILM_DIMENSION, MINILM_INT8_MODEL, MINILM_MODEL, MiniLmEmbedder, MiniLmRuntime, peak,
};
pub use openai::OpenAiEmbedder;

#[derive(Clone, Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("model files missing at {path}: {hint}")]
    ModelMissing { path: PathBuf, hint: String },
    #[error("cannot load the model: {0}")]
    Load(String),
    #[error("embedding failed: {0}")]
    Inference(String),
    #[error("embedding server: {0}")]
    Server(String),
    #[error("embedder returned {got} dimensions, configured for {expected}")]
    Dimension { expected: usize, got: usize },
}

/// Which implementation, for flags and for labelling results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum EmbedderKind {
    /// all-MiniLM-L6-v2, run locally (the default)
    Minilm,
    /// Any OpenAI-compatible /v1/embeddings endpoint
    Openai,
    /// Deterministic model-free feature hashing, for fast tests
    Hash,
}

impl EmbedderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EmbedderKind::Minilm => "minilm",
            EmbedderKind::Openai => "openai",
            EmbedderKind::Hash => "hash",
        }
    }
}

pub trait Embedder: Send + Sync {
    fn kind(&self) -> EmbedderKind;
    /// The model name every vector index records.
    fn model(&self) -> &str;
    fn dimension(&self) -> usize;
    /// One L2-normalised vector per text, in order.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.embed_batch(&[text])?
            .pop()
            .ok_or_else(|| EmbedError::Inference("no vector returned".into()))
    }

    /// How results computed with this embedder are labelled wherever they are shown.
    fn label(&self) -> String {
        match self.kind() {
            EmbedderKind::Hash => format!("{} (model-free hash embedder, for tests)", self.model()),
            _ => format!("{} ({}-d)", self.model(), self.dimension()),
        }
    }
}

/// Everything needed to build any embedder.
#[derive(Clone, Debug)]
pub struct EmbedderConfig {
    pub kind: EmbedderKind,
    pub minilm_dir: PathBuf,
    pub minilm_runtime: MiniLmRuntime,
    pub openai_url: String,
    pub openai_model: String,
    pub openai_dimension: usize,
    pub openai_api_key: Option<String>,
}

pub fn build(config: &EmbedderConfig) -> Result<Box<dyn Embedder>, EmbedError> {
    Ok(match config.kind {
        EmbedderKind::Minilm => Box::new(MiniLmEmbedder::load_with(
            &config.minilm_dir,
            config.minilm_runtime,
        )?),
        EmbedderKind::Openai => Box::new(OpenAiEmbedder::new(
            &config.openai_url,
            &config.openai_model,
            config.openai_dimension,
            config.openai_api_key.clone(),
        )),
        EmbedderKind::Hash => Box::new(HashEmbedder::default()),
    })
}

/// Where the MiniLM files are looked for: `STRATA_MINILM_DIR`, else `DATA/models/all-MiniLM-L6-v2`
/// when it exists, else the platform data dir's (where `scripts/install-model` puts them).
pub fn minilm_dir(data_dir: Option<&std::path::Path>) -> PathBuf {
    if let Some(dir) = std::env::var_os("STRATA_MINILM_DIR") {
        return PathBuf::from(dir);
    }
    let under = |d: &std::path::Path| d.join("models").join(MINILM_MODEL);
    if let Some(d) = data_dir.map(under).filter(|d| d.is_dir()) {
        return d;
    }
    let home = std::env::var_os("STRATA_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| {
            directories::ProjectDirs::from("", "", "strata").map(|p| p.data_dir().to_path_buf())
        });
    home.map(|h| under(&h))
        .unwrap_or_else(|| PathBuf::from("models").join(MINILM_MODEL))
}

pub(crate) fn l2_normalise(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}
