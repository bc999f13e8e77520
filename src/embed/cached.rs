use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{EmbedError, Embedder, EmbedderKind};

/// Remembers single-text embeddings, for replaying the same queries many times.
pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    cache: Mutex<HashMap<String, Vec<f32>>>,
}

impl CachedEmbedder {
    pub fn new(inner: Arc<dyn Embedder>) -> Self {
        CachedEmbedder {
            inner,
            cache: Mutex::new(HashMap::new()),
        }
    }
}

impl Embedder for CachedEmbedder {
    fn kind(&self) -> EmbedderKind {
        self.inner.kind()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    fn label(&self) -> String {
        self.inner.label()
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.inner.embed_batch(texts)
    }

    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        if let Ok(cache) = self.cache.lock()
            && let Some(v) = cache.get(text)
        {
            return Ok(v.clone());
        }
        let v = self.inner.embed(text)?;
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(text.to_string(), v.clone());
        }
        Ok(v)
    }
}
