use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::{EmbedError, Embedder, EmbedderKind};

pub const MINILM_MODEL: &str = "all-MiniLM-L6-v2";
pub const MINILM_DIMENSION: usize = 384;
/// sentence-transformers' `max_seq_length` for this model.
const MAX_TOKENS: usize = 256;
const BATCH: usize = 32;

/// all-MiniLM-L6-v2 on the CPU with candle: mean pooling over real tokens (the attention mask
/// excludes padding), then L2 normalisation — the sentence-transformers recipe.
pub struct MiniLmEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
}

fn required(dir: &Path, name: &str) -> Result<PathBuf, EmbedError> {
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

impl MiniLmEmbedder {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let config_path = required(dir, "config.json")?;
        let tokenizer_path = required(dir, "tokenizer.json")?;
        let weights_path = required(dir, "model.safetensors")?;
        let load = |e: &dyn std::fmt::Display| EmbedError::Load(e.to_string());

        let config: Config =
            serde_json::from_str(&std::fs::read_to_string(&config_path).map_err(|e| load(&e))?)
                .map_err(|e| load(&e))?;
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path).map_err(|e| load(&e))?;
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
            .map_err(|e| load(&e))?;
        let device = Device::Cpu;
        let weights = std::fs::read(&weights_path).map_err(|e| load(&e))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| load(&e))?;
        let model = BertModel::load(vb, &config).map_err(|e| load(&e))?;
        Ok(MiniLmEmbedder {
            model,
            tokenizer,
            device,
        })
    }

    fn embed_chunk(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let fail = |e: &dyn std::fmt::Display| EmbedError::Inference(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| fail(&e))?;
        let rows = encodings.len();
        let cols = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(rows * cols);
        let mut mask = Vec::with_capacity(rows * cols);
        for e in &encodings {
            ids.extend_from_slice(e.get_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        let ids = Tensor::from_vec(ids, (rows, cols), &self.device).map_err(|e| fail(&e))?;
        let mask = Tensor::from_vec(mask, (rows, cols), &self.device).map_err(|e| fail(&e))?;
        let types = ids.zeros_like().map_err(|e| fail(&e))?;
        let hidden = self
            .model
            .forward(&ids, &types, Some(&mask))
            .map_err(|e| fail(&e))?;
        let mask = mask
            .to_dtype(DType::F32)
            .and_then(|m| m.unsqueeze(2))
            .map_err(|e| fail(&e))?;
        let summed = hidden
            .broadcast_mul(&mask)
            .and_then(|h| h.sum(1))
            .map_err(|e| fail(&e))?;
        let counts = mask.sum(1).map_err(|e| fail(&e))?;
        let mean = summed.broadcast_div(&counts).map_err(|e| fail(&e))?;
        let norms = mean
            .sqr()
            .and_then(|s| s.sum_keepdim(1))
            .and_then(|s| s.sqrt())
            .map_err(|e| fail(&e))?;
        let unit = mean.broadcast_div(&norms).map_err(|e| fail(&e))?;
        unit.to_vec2::<f32>().map_err(|e| fail(&e))
    }
}

impl Embedder for MiniLmEmbedder {
    fn kind(&self) -> EmbedderKind {
        EmbedderKind::Minilm
    }

    fn model(&self) -> &str {
        MINILM_MODEL
    }

    fn dimension(&self) -> usize {
        MINILM_DIMENSION
    }

    /// Batches texts of similar length together to keep padding small.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, v) in chunk.iter().zip(self.embed_chunk(&batch)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }
}
