use super::{EmbedError, Embedder, EmbedderKind, l2_normalise};

pub const HASH_MODEL: &str = "hash-v1";

/// Signed feature hashing of lower-cased words and word pairs: deterministic, model-free,
/// and similar texts share features. Good for tests, not for meaning.
pub struct HashEmbedder {
    dimension: usize,
}

impl Default for HashEmbedder {
    fn default() -> Self {
        HashEmbedder { dimension: 384 }
    }
}

impl HashEmbedder {
    pub fn with_dimension(dimension: usize) -> Self {
        HashEmbedder {
            dimension: dimension.max(1),
        }
    }
}

/// FNV-1a: stable across platforms and releases, unlike the std hasher.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            h ^= 0x1f;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        for b in part.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

impl HashEmbedder {
    fn vector(&self, text: &str) -> Vec<f32> {
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let mut v = vec![0f32; self.dimension];
        let mut add = |h: u64, weight: f32| {
            let slot = (h % self.dimension as u64) as usize;
            let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
            v[slot] += sign * weight;
        };
        for w in &words {
            add(fnv1a(&[w]), 1.0);
        }
        for pair in words.windows(2) {
            add(fnv1a(pair), 0.5);
        }
        l2_normalise(&mut v);
        v
    }
}

impl Embedder for HashEmbedder {
    fn kind(&self) -> EmbedderKind {
        EmbedderKind::Hash
    }

    fn model(&self) -> &str {
        HASH_MODEL
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn deterministic_normalised_and_similarity_aware() {
        let e = HashEmbedder::default();
        let a = e.embed("Postgres connection pool exhausted").unwrap();
        assert_eq!(a, e.embed("Postgres connection pool exhausted").unwrap());
        assert!((cos(&a, &a) - 1.0).abs() < 1e-5);
        let near = e.embed("connection pool exhausted on postgres").unwrap();
        let far = e.embed("TLS certificate expired at the edge").unwrap();
        assert!(cos(&a, &near) > cos(&a, &far) + 0.3);
    }
}
