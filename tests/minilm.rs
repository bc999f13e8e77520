//! The local MiniLM embedder against independently computed reference vectors.

mod common;

use serde_json::Value;
use strata::embed::{Embedder, MINILM_DIMENSION, MiniLmEmbedder, minilm_dir};

fn load() -> MiniLmEmbedder {
    let dir = minilm_dir(None);
    MiniLmEmbedder::load(&dir).unwrap_or_else(|e| {
        panic!("{e}\n(scripts/test installs the model; run scripts/install-model)")
    })
}

fn reference() -> Vec<(String, Vec<f32>)> {
    let path = common::shared_dir().join("reference/minilm-l6-v2.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["text"].as_str().unwrap().to_string(),
                r["embedding"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap() as f32)
                    .collect(),
            )
        })
        .collect()
}

fn assert_close(text: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), MINILM_DIMENSION);
    assert_eq!(want.len(), MINILM_DIMENSION);
    let worst = got
        .iter()
        .zip(want)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    assert!(
        worst <= 1e-4,
        "{text:?}: largest component difference {worst}"
    );
}

#[test]
fn matches_the_reference_vectors_one_by_one_and_batched() {
    let model = load();
    let refs = reference();
    assert!(refs.len() >= 6);
    for (text, want) in &refs {
        assert_close(text, &model.embed(text).unwrap(), want);
    }
    // Batched: texts of different lengths are padded together; the mask must keep padding out.
    let texts: Vec<&str> = refs.iter().map(|(t, _)| t.as_str()).collect();
    let batch = model.embed_batch(&texts).unwrap();
    for ((text, want), got) in refs.iter().zip(&batch) {
        assert_close(text, got, want);
    }
}
