use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// Mean ranking quality over a set of queries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    pub ac1: f64,
    pub ac3: f64,
    pub mrr: f64,
    pub ndcg10: f64,
    /// The share of the expected episodes in the top 10 (absent from reports before it).
    #[serde(default)]
    pub r10: f64,
}

/// Binary-relevance nDCG at `n`.
pub fn ndcg_at(ranked: &[String], expected: &HashSet<&str>, n: usize) -> f64 {
    let gain = |i: usize| 1.0 / ((i + 2) as f64).log2();
    let dcg: f64 = ranked
        .iter()
        .take(n)
        .enumerate()
        .filter(|(_, fp)| expected.contains(fp.as_str()))
        .map(|(i, _)| gain(i))
        .sum();
    let ideal: f64 = (0..expected.len().min(n)).map(gain).sum();
    if ideal == 0.0 { 0.0 } else { dcg / ideal }
}

impl Metrics {
    /// Scores one ranking against the expected fingerprints.
    pub fn of(ranked: &[String], expected: &[String]) -> Metrics {
        let expected: HashSet<&str> = expected.iter().map(String::as_str).collect();
        let first = ranked.iter().position(|fp| expected.contains(fp.as_str()));
        Metrics {
            ac1: f64::from(u8::from(first == Some(0))),
            ac3: f64::from(u8::from(first.is_some_and(|i| i < 3))),
            mrr: first.map_or(0.0, |i| 1.0 / (i + 1) as f64),
            ndcg10: ndcg_at(ranked, &expected, 10),
            r10: if expected.is_empty() {
                0.0
            } else {
                ranked
                    .iter()
                    .take(10)
                    .filter(|fp| expected.contains(fp.as_str()))
                    .count() as f64
                    / expected.len() as f64
            },
        }
    }

    /// The best of several rankings of one query: the one with the highest MRR, then nDCG.
    pub fn best(all: &[Metrics]) -> Metrics {
        all.iter()
            .copied()
            .max_by(|a, b| a.mrr.total_cmp(&b.mrr).then(a.ndcg10.total_cmp(&b.ndcg10)))
            .unwrap_or_default()
    }

    pub fn mean(all: &[Metrics]) -> Metrics {
        let n = all.len().max(1) as f64;
        let sum = |f: fn(&Metrics) -> f64| all.iter().map(f).sum::<f64>() / n;
        Metrics {
            ac1: sum(|m| m.ac1),
            ac3: sum(|m| m.ac3),
            mrr: sum(|m| m.mrr),
            ndcg10: sum(|m| m.ndcg10),
            r10: sum(|m| m.r10),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn metrics_by_hand() {
        let m = Metrics::of(&s(&["x", "a", "y", "b"]), &s(&["a", "b"]));
        assert_eq!((m.ac1, m.ac3, m.mrr, m.r10), (0.0, 1.0, 0.5, 1.0));
        let half = Metrics::of(&s(&["a", "x"]), &s(&["a", "b"]));
        assert_eq!(half.r10, 0.5);
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let ideal = 1.0 + 1.0 / 3f64.log2();
        assert!((m.ndcg10 - dcg / ideal).abs() < 1e-12);
        let perfect = Metrics::of(&s(&["a", "b"]), &s(&["a", "b"]));
        assert_eq!(
            perfect,
            Metrics {
                ac1: 1.0,
                ac3: 1.0,
                mrr: 1.0,
                ndcg10: 1.0,
                r10: 1.0
            }
        );
        let miss = Metrics::of(&s(&["x"]), &s(&["a"]));
        assert_eq!(miss, Metrics::default());
        let mean = Metrics::mean(&[perfect, miss]);
        assert_eq!(mean.ac1, 0.5);
    }
}
