use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::Tensor;

use super::{TokenBatch, required};
use crate::embed::{EmbedError, l2_normalise};

/// The int8 model, and the ONNX Runtime library loaded at run time (no build-time download).
const MODEL_FILE: &str = "onnx/model-int8.onnx";
const LIBRARY_FILE: &str = "onnx/libonnxruntime.so";
/// Each session holds its own copy of the weights (23 MB) and takes a moment to build.
const MAX_SESSIONS: usize = 8;

/// What one thread embedded: each vector with its text's position.
type Share = Vec<(usize, Vec<f32>)>;

/// MiniLM on ONNX Runtime with int8 matrix products; pooling stays here, in Rust.
///
/// One single-threaded session per core (at most [`MAX_SESSIONS`]), each text run alone: on two cores that embeds long
/// texts 1.5× faster than one two-thread session over padded batches (`strata bench embed`),
/// and a query waits for at most one text of a batch being embedded beside it.
pub(super) struct OnnxBert {
    sessions: Vec<Mutex<Session>>,
}

/// ONNX Runtime is loaded once per process, from the first library asked for.
pub(super) fn environment(library: &Path) -> Result<Environment, EmbedError> {
    static ENVIRONMENT: OnceLock<Result<Environment, EmbedError>> = OnceLock::new();
    let load = |e: &dyn std::fmt::Display| EmbedError::Load(format!("{}: {e}", library.display()));
    ENVIRONMENT
        .get_or_init(|| {
            ort::init_from(library)
                .map_err(|e| load(&e))?
                .with_name("strata")
                .build()
                .map_err(|e| load(&e))
        })
        .clone()
}

pub(super) fn library(dir: &Path) -> Result<PathBuf, EmbedError> {
    match std::env::var_os("STRATA_ONNXRUNTIME_LIB") {
        Some(path) => Ok(PathBuf::from(path)),
        None => required(dir, LIBRARY_FILE),
    }
}

impl OnnxBert {
    pub(super) fn load(dir: &Path) -> Result<Self, EmbedError> {
        let model = required(dir, MODEL_FILE)?;
        let environment = environment(&library(dir)?)?;
        let load =
            |e: &dyn std::fmt::Display| EmbedError::Load(format!("{}: {e}", model.display()));
        let cores = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(MAX_SESSIONS);
        let sessions = (0..cores)
            .map(|_| {
                Session::builder(&environment)
                    .map_err(|e| load(&e))?
                    .with_optimization_level(GraphOptimizationLevel::Level3)
                    .map_err(|e| load(&e))?
                    .with_intra_threads(1)
                    .map_err(|e| load(&e))?
                    .with_inter_threads(1)
                    .map_err(|e| load(&e))?
                    .commit_from_file(&model)
                    .map_err(|e| load(&e))
                    .map(Mutex::new)
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(OnnxBert { sessions })
    }

    /// Each text alone (no padding), spread over the sessions; vectors in the order given.
    pub(super) fn embed_each(
        &self,
        texts: &[&str],
        encode: &(dyn Fn(&str) -> Result<TokenBatch, EmbedError> + Sync),
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.len() <= 1 {
            return texts
                .iter()
                .map(|t| self.embed_on(self.free_session(), &encode(t)?).map(first))
                .collect();
        }
        let next = AtomicUsize::new(0);
        let workers = self.sessions.len().min(texts.len());
        let shares: Vec<Result<Share, EmbedError>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let next = &next;
                    s.spawn(move || {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(text) = texts.get(i) else {
                                return Ok(done);
                            };
                            let vector = self.embed_on(w, &encode(text)?).map(first)?;
                            done.push((i, vector));
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(EmbedError::Inference("an embedding thread panicked".into()))
                    })
                })
                .collect()
        });
        let mut out = vec![Vec::new(); texts.len()];
        for share in shares {
            for (i, vector) in share? {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    /// A session no one holds, else the first.
    fn free_session(&self) -> usize {
        (0..self.sessions.len())
            .find(|&i| self.sessions[i].try_lock().is_ok())
            .unwrap_or(0)
    }

    fn embed_on(&self, session: usize, batch: &TokenBatch) -> Result<Vec<Vec<f32>>, EmbedError> {
        let fail = |e: &dyn std::fmt::Display| EmbedError::Inference(e.to_string());
        let (rows, cols) = (batch.rows, batch.cols);
        let widen = |v: &[u32]| v.iter().map(|&x| i64::from(x)).collect::<Vec<i64>>();
        let ids = Tensor::from_array(([rows, cols], widen(&batch.ids))).map_err(|e| fail(&e))?;
        let mask = Tensor::from_array(([rows, cols], widen(&batch.mask))).map_err(|e| fail(&e))?;
        let types =
            Tensor::from_array(([rows, cols], vec![0i64; rows * cols])).map_err(|e| fail(&e))?;
        let mut session = self.sessions[session]
            .lock()
            .map_err(|_| EmbedError::Inference("the ONNX session was poisoned".into()))?;
        let outputs = session
            .run(ort::inputs![
                "input_ids" => ids,
                "attention_mask" => mask,
                "token_type_ids" => types,
            ])
            .map_err(|e| fail(&e))?;
        let (shape, hidden) = outputs["last_hidden_state"]
            .try_extract_tensor::<f32>()
            .map_err(|e| fail(&e))?;
        let width = match **shape {
            [r, c, w] if r as usize == rows && c as usize == cols => w as usize,
            _ => {
                return Err(EmbedError::Inference(format!(
                    "last_hidden_state has shape {shape:?}, expected [{rows}, {cols}, _]"
                )));
            }
        };
        Ok((0..rows)
            .map(|r| {
                mean_pool(
                    &hidden[r * cols * width..(r + 1) * cols * width],
                    &batch.mask[r * cols..(r + 1) * cols],
                    width,
                )
            })
            .collect())
    }
}

fn first(mut vectors: Vec<Vec<f32>>) -> Vec<f32> {
    vectors.pop().unwrap_or_default()
}

/// The mean of the hidden states of the real tokens, L2-normalised.
fn mean_pool(hidden: &[f32], mask: &[u32], width: usize) -> Vec<f32> {
    let mut sum = vec![0f32; width];
    let mut count = 0f32;
    for (state, _) in hidden
        .chunks_exact(width)
        .zip(mask)
        .filter(|(_, m)| **m == 1)
    {
        sum.iter_mut().zip(state).for_each(|(s, x)| *s += x);
        count += 1.0;
    }
    if count > 0.0 {
        sum.iter_mut().for_each(|s| *s /= count);
    }
    l2_normalise(&mut sum);
    sum
}
