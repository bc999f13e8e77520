//! The local MiniLM embedder against independently computed reference vectors.

mod common;

use serde_json::Value;
use strata::embed::{
    EmbedError, Embedder, MINILM_DIMENSION, MINILM_INT8_MODEL, MINILM_MODEL, MiniLmEmbedder,
    MiniLmRuntime, minilm_dir,
};

fn load_on(runtime: MiniLmRuntime) -> MiniLmEmbedder {
    let dir = minilm_dir(None);
    MiniLmEmbedder::load_with(&dir, runtime).unwrap_or_else(|e| {
        panic!("{e}\n(scripts/test installs the model; run scripts/install-model)")
    })
}

fn load() -> MiniLmEmbedder {
    load_on(MiniLmRuntime::Candle)
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
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

/// The default runtime where it is installed: ONNX Runtime with int8 matrix products. Its
/// vectors are not bit-exact to fp32, so they are held to cosine ≥ 0.97 of the reference
/// (measured: 0.986 at worst), and a batch gives exactly what the texts give one by one.
#[test]
fn onnx_runtime_int8_stays_faithful_to_the_reference() {
    if std::env::var_os("STRATA_SKIP_ONNX").is_some_and(|v| v == "1") {
        eprintln!("skipped: STRATA_SKIP_ONNX=1, ONNX Runtime was not installed");
        return;
    }
    let model = load_on(MiniLmRuntime::Onnx);
    assert_eq!(model.runtime(), MiniLmRuntime::Onnx);
    assert_eq!(model.model(), MINILM_INT8_MODEL);
    assert!(model.label().contains("ONNX Runtime"), "{}", model.label());
    let auto = load_on(MiniLmRuntime::Auto);
    assert_eq!(
        auto.runtime(),
        MiniLmRuntime::Onnx,
        "auto picks the installed runtime"
    );
    let refs = reference();
    let mut worst = 1f32;
    for (text, want) in &refs {
        let got = model.embed(text).unwrap();
        assert_eq!(got.len(), MINILM_DIMENSION);
        let c = cosine(&got, want);
        assert!(c >= 0.97, "{text:?}: cosine {c} to the reference");
        worst = worst.min(c);
    }
    eprintln!("worst cosine of the int8 ONNX vectors to the reference: {worst}");
    let texts: Vec<&str> = refs.iter().map(|(t, _)| t.as_str()).collect();
    let batch = model.embed_batch(&texts).unwrap();
    for (text, got) in texts.iter().zip(&batch) {
        assert_eq!(
            got,
            &model.embed(text).unwrap(),
            "{text:?}: batch and single differ"
        );
    }
    // Far from the reference texts, the int8 vectors still rank like the fp32 ones.
    let fp32 = load();
    let near = [
        "the payments database ran out of connections",
        "checkout timed out",
    ];
    let far = "a cat sleeps on a warm windowsill";
    let q8 = model.embed(near[0]).unwrap();
    let q32 = fp32.embed(near[0]).unwrap();
    assert!(cosine(&q8, &model.embed(near[1]).unwrap()) > cosine(&q8, &model.embed(far).unwrap()));
    assert!(cosine(&q32, &fp32.embed(near[1]).unwrap()) > cosine(&q32, &fp32.embed(far).unwrap()));
}

/// Without the ONNX files, `auto` falls back to candle and `onnx` says what is missing.
#[test]
fn auto_falls_back_to_candle_where_onnx_runtime_is_not_installed() {
    let installed = minilm_dir(None);
    let dir = tempfile::tempdir().unwrap();
    for name in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::os::unix::fs::symlink(installed.join(name), dir.path().join(name)).unwrap();
    }
    let auto = MiniLmEmbedder::load_with(dir.path(), MiniLmRuntime::Auto).unwrap();
    assert_eq!(auto.runtime(), MiniLmRuntime::Candle);
    assert_eq!(auto.model(), MINILM_MODEL);
    assert!(auto.label().contains("candle"), "{}", auto.label());
    match MiniLmEmbedder::load_with(dir.path(), MiniLmRuntime::Onnx) {
        Err(EmbedError::ModelMissing { path, hint }) => {
            assert!(path.ends_with("onnx/model-int8.onnx"), "{}", path.display());
            assert!(hint.contains("scripts/install-model"), "{hint}");
        }
        Err(e) => panic!("expected the missing model named, got {e}"),
        Ok(_) => panic!("loaded ONNX Runtime without its files"),
    }
}
