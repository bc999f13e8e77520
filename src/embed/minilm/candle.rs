use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};

use super::{TokenBatch, load_error, required};
use crate::embed::EmbedError;

/// MiniLM in fp32 on candle: matches the reference vectors to 1e-4 per component.
pub(super) struct CandleBert {
    model: BertModel,
    device: Device,
}

impl CandleBert {
    /// Loads `config.json` and `model.safetensors` from `dir`.
    pub(super) fn load(dir: &Path) -> Result<Self, EmbedError> {
        let config_path = required(dir, "config.json")?;
        let weights_path = required(dir, "model.safetensors")?;
        let config: Config = serde_json::from_str(
            &std::fs::read_to_string(&config_path).map_err(|e| load_error(&e))?,
        )
        .map_err(|e| load_error(&e))?;
        let device = Device::Cpu;
        let weights = std::fs::read(&weights_path).map_err(|e| load_error(&e))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| load_error(&e))?;
        let model = BertModel::load(vb, &config).map_err(|e| load_error(&e))?;
        Ok(CandleBert { model, device })
    }

    pub(super) fn embed(&self, batch: &TokenBatch) -> Result<Vec<Vec<f32>>, EmbedError> {
        let fail = |e: &dyn std::fmt::Display| EmbedError::Inference(e.to_string());
        let shape = (batch.rows, batch.cols);
        let ids = Tensor::from_vec(batch.ids.clone(), shape, &self.device).map_err(|e| fail(&e))?;
        let mask =
            Tensor::from_vec(batch.mask.clone(), shape, &self.device).map_err(|e| fail(&e))?;
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
