//! all-MiniLM-L6-v2 on the CPU, on one of two runtimes: ONNX Runtime with int8 matrix products
//! (the default where `scripts/install-model` put the runtime library), or candle in fp32 (the
//! fallback, and the reference-exact one). Both use the same tokenizer and the
//! sentence-transformers recipe: mean pooling over real tokens, then L2 normalisation.

mod candle;
mod onnx;
pub mod peak;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tokenizers::{Encoding, PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::{EmbedError, Embedder, EmbedderKind};

/// The model, and the name of the directory its files are installed in.
pub const MINILM_MODEL: &str = "all-MiniLM-L6-v2";
/// The same model with int8 weights and arithmetic; its vectors differ slightly, so a vector
/// index built with one is rebuilt for the other.
pub const MINILM_INT8_MODEL: &str = "all-MiniLM-L6-v2-int8";
pub const MINILM_DIMENSION: usize = 384;
/// sentence-transformers' `max_seq_length` for this model.
const MAX_TOKENS: usize = 256;
const CANDLE_BATCH: usize = 32;

/// Which runtime runs MiniLM.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum MiniLmRuntime {
    /// ONNX Runtime when its library and model are installed, else candle
    #[default]
    Auto,
    /// ONNX Runtime, int8 (fails when it is not installed)
    Onnx,
    /// candle, fp32
    Candle,
}

enum Encoder {
    Candle(Box<candle::CandleBert>),
    Onnx(onnx::OnnxBert),
}

pub struct MiniLmEmbedder {
    tokenizer: Tokenizer,
    encoder: Encoder,
}

pub(super) fn required(dir: &Path, name: &str) -> Result<PathBuf, EmbedError> {
    let path = dir.join(name);
    if path.is_file() {
        Ok(path)
    } else {
        Err(EmbedError::ModelMissing {
            path,
            hint:
                "install it with scripts/install-model (run by scripts/strata and scripts/test), \
                   or pick another embedder with --embedder hash|openai"
                    .into(),
        })
    }
}

fn load_error(e: &dyn std::fmt::Display) -> EmbedError {
    EmbedError::Load(e.to_string())
}

fn tokenizer(dir: &Path) -> Result<Tokenizer, EmbedError> {
    let mut tokenizer =
        Tokenizer::from_file(required(dir, "tokenizer.json")?).map_err(|e| load_error(&e))?;
    // The shipped tokenizer pads every input to 128 tokens; pad only to the longest input
    // of a batch, and let the attention mask keep padding out of the pooled mean.
    tokenizer.with_padding(Some(PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        ..PaddingParams::default()
    }));
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: MAX_TOKENS,
            ..TruncationParams::default()
        }))
        .map_err(|e| load_error(&e))?;
    Ok(tokenizer)
}

impl MiniLmEmbedder {
    /// The default runtime: ONNX Runtime where it is installed, else candle.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        Self::load_with(dir, MiniLmRuntime::Auto)
    }

    pub fn load_with(dir: &Path, runtime: MiniLmRuntime) -> Result<Self, EmbedError> {
        let tokenizer = tokenizer(dir)?;
        let encoder = match runtime {
            MiniLmRuntime::Candle => Encoder::Candle(Box::new(candle::CandleBert::load(dir)?)),
            MiniLmRuntime::Onnx => Encoder::Onnx(onnx::OnnxBert::load(dir)?),
            MiniLmRuntime::Auto => match onnx::OnnxBert::load(dir) {
                Ok(bert) => Encoder::Onnx(bert),
                Err(why) => {
                    tracing::warn!("MiniLM on candle: ONNX Runtime not usable ({why})");
                    Encoder::Candle(Box::new(candle::CandleBert::load(dir)?))
                }
            },
        };
        Ok(MiniLmEmbedder { tokenizer, encoder })
    }

    /// Tokens the model sees of `text`, after truncation.
    pub fn token_count(&self, text: &str) -> Result<usize, EmbedError> {
        Ok(self.encode(&[text])?.cols)
    }

    /// The runtime that was loaded.
    pub fn runtime(&self) -> MiniLmRuntime {
        match self.encoder {
            Encoder::Candle(_) => MiniLmRuntime::Candle,
            Encoder::Onnx(_) => MiniLmRuntime::Onnx,
        }
    }

    fn encode(&self, texts: &[&str]) -> Result<TokenBatch, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Inference(e.to_string()))?;
        Ok(TokenBatch::new(&encodings))
    }
}

/// Token ids and attention mask of a padded batch, row-major.
pub(super) struct TokenBatch {
    pub rows: usize,
    pub cols: usize,
    pub ids: Vec<u32>,
    pub mask: Vec<u32>,
}

impl TokenBatch {
    fn new(encodings: &[Encoding]) -> Self {
        let rows = encodings.len();
        let cols = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(rows * cols);
        let mut mask = Vec::with_capacity(rows * cols);
        for e in encodings {
            ids.extend_from_slice(e.get_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        TokenBatch {
            rows,
            cols,
            ids,
            mask,
        }
    }
}

impl Embedder for MiniLmEmbedder {
    fn kind(&self) -> EmbedderKind {
        EmbedderKind::Minilm
    }

    fn model(&self) -> &str {
        match self.encoder {
            Encoder::Candle(_) => MINILM_MODEL,
            Encoder::Onnx(_) => MINILM_INT8_MODEL,
        }
    }

    fn dimension(&self) -> usize {
        MINILM_DIMENSION
    }

    fn label(&self) -> String {
        let runtime = match self.encoder {
            Encoder::Candle(_) => "candle",
            Encoder::Onnx(_) => "ONNX Runtime",
        };
        format!("{} ({}-d, {runtime})", self.model(), MINILM_DIMENSION)
    }

    /// candle: texts of similar length batched together to keep padding small; ONNX Runtime:
    /// each text alone, one per core at a time.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let bert = match &self.encoder {
            Encoder::Onnx(bert) => return bert.embed_each(texts, &|t| self.encode(&[t])),
            Encoder::Candle(bert) => bert,
        };
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(CANDLE_BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, v) in chunk.iter().zip(bert.embed(&self.encode(&batch)?)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}
