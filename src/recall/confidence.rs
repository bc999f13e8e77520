//! How sure a leg is of its ranking for one query, from its own evidence and nothing labelled
//! (query-performance prediction): the estimated chance that the leg's first result is one the
//! query is after. The semantic leg reads it from how far its best cosine stands above its
//! tenth, BM25 from that and from how far its best document leads the second, the graph leg
//! from where its seeds came and how many episodes they lead to.
//!
//! The estimates are logistic in that evidence; their constants were fitted on whether each
//! leg's first result was right on the GitBugs SeaMonkey dev set, the public postmortems and
//! the synthetic sanity case together (docs/recall.md, "Adaptive fusion"), not on any one query.

use serde::Serialize;

use super::leg::Leg;

/// A leg's confidence for one query: `value` in [0, 1], and the evidence it was computed from.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Confidence {
    /// The estimated chance that the leg's first result is right.
    pub value: f64,
    pub evidence: Vec<Evidence>,
}

/// One named measurement a confidence rests on.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Evidence {
    pub name: String,
    pub value: f64,
}

impl Confidence {
    /// The value is kept to 3 decimals: stores that compute the same cosine a float ulp apart
    /// then weigh the legs alike, and rank alike.
    fn of(value: f64, evidence: &[(&str, f64)]) -> Self {
        Confidence {
            value: if value.is_finite() {
                (value.clamp(0.0, 1.0) * 1000.0).round() / 1000.0
            } else {
                0.0
            },
            evidence: evidence
                .iter()
                .map(|(name, value)| Evidence {
                    name: (*name).to_string(),
                    value: *value,
                })
                .collect(),
        }
    }

    /// The value of one piece of evidence, by name.
    pub fn evidence(&self, name: &str) -> Option<f64> {
        self.evidence
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.value)
    }

    /// The evidence as `name value` pairs, for one line of text.
    pub fn describe(&self) -> String {
        self.evidence
            .iter()
            .map(|e| format!("{} {}", e.name, short(e.value)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A number with at most three decimals and no trailing zeros.
fn short(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// What a leg knows of a query beyond its scores.
#[derive(Clone, Debug, Default)]
pub enum Signals {
    /// Nothing: the confidence rests on the scores alone.
    #[default]
    Scores,
    /// The graph leg: where its seeds came from and where they led.
    Seeds(SeedEvidence),
}

/// Where the graph leg's seeds came from and where they led.
#[derive(Clone, Debug, Default)]
pub struct SeedEvidence {
    /// The caller implicated the seeds (rather than the leg finding them in the text).
    pub implicated: bool,
    /// Seeds followed.
    pub seeds: usize,
    /// Episodes found at hop 1 (those with a valid fact about a seed), among those returned.
    pub hop1: usize,
}

/// A leg's confidence in its ranking (scores best first, after any excluded episode was left
/// out), from the scores and what else it knew.
pub fn assess(leg: Leg, scores: &[f64], signals: &Signals) -> Confidence {
    match (leg, signals) {
        (Leg::Graph, Signals::Seeds(seeds)) => graph(seeds),
        (Leg::Graph, Signals::Scores) => graph(&SeedEvidence::default()),
        (Leg::Bm25, _) => bm25(scores),
        (Leg::Semantic, _) => semantic(scores),
    }
}

fn logistic(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// How far the best score stands above the tenth (or the last of a shorter list), as a share
/// of the best: near 0 when the top ten are alike.
fn lead_over_tenth(scores: &[f64]) -> f64 {
    match (scores.first(), scores.get(9).or(scores.last())) {
        (Some(&top), Some(&tenth)) if top > 0.0 && scores.len() > 1 => (top - tenth) / top,
        _ => 0.0,
    }
}

/// How many standard deviations of the whole list the best score leads the second by.
fn lead_over_second(scores: &[f64]) -> f64 {
    if scores.len() < 3 {
        return 0.0;
    }
    let n = scores.len() as f64;
    let mean = scores.iter().sum::<f64>() / n;
    let sd = (scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n).sqrt();
    if sd <= f64::EPSILON {
        0.0
    } else {
        (scores[0] - scores[1]) / sd
    }
}

/// The semantic leg, from its cosine scores (best first).
fn semantic(scores: &[f64]) -> Confidence {
    if scores.is_empty() {
        return Confidence::of(0.0, &[]);
    }
    let tenth = lead_over_tenth(scores);
    Confidence::of(logistic(-2.3 + 7.7 * tenth), &[("lead_over_tenth", tenth)])
}

/// The BM25 leg, from its scores (best first).
fn bm25(scores: &[f64]) -> Confidence {
    if scores.is_empty() {
        return Confidence::of(0.0, &[]);
    }
    let tenth = lead_over_tenth(scores);
    let second = lead_over_second(scores);
    Confidence::of(
        logistic(-2.6 + 3.1 * tenth + 0.6 * second),
        &[("lead_over_tenth", tenth), ("lead_over_second_sd", second)],
    )
}

/// The graph leg: seeds found in the text say nothing (on every labelled set they never led
/// to a right answer first); implicated seeds are as sure as a pick among the episodes they
/// lead to, one in `√hop1`.
fn graph(seeds: &SeedEvidence) -> Confidence {
    let value = if seeds.implicated && seeds.hop1 > 0 {
        1.0 / (seeds.hop1 as f64).sqrt()
    } else {
        0.0
    };
    Confidence::of(
        value,
        &[
            ("implicated", f64::from(u8::from(seeds.implicated))),
            ("seeds", seeds.seeds as f64),
            ("hop1", seeds.hop1 as f64),
        ],
    )
}

/// Below this confidence a leg abstains under the adaptive policy.
pub const FLOOR: f64 = 0.05;

/// How sharply the adaptive policy follows the confidences: each weight goes with the odds of
/// its leg's first result being right, to this power.
const SHARPNESS: f64 = 1.25;

/// The adaptive policy's prior on each leg, on top of the configured weights (whose defaults,
/// semantic 1, bm25 0.5, graph 1, make semantic 1, bm25 0.25, graph 2).
fn prior(leg: Leg) -> f64 {
    match leg {
        Leg::Semantic => 1.0,
        Leg::Bm25 => 0.5,
        Leg::Graph => 2.0,
    }
}

/// What a leg's configured weight is multiplied by under the adaptive policy: 0 below the
/// floor, else its prior times the odds of its first result being right (capped at 99 to 1),
/// to the power [`SHARPNESS`]. A leg that cannot say how sure it is counts with its prior.
pub fn fusion_weight(leg: Leg, confidence: Option<f64>) -> f64 {
    match confidence {
        None => prior(leg),
        Some(c) if c.is_nan() || c < FLOOR => 0.0,
        Some(c) => {
            let c = c.min(0.99);
            prior(leg) * (c / (1.0 - c)).powf(SHARPNESS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_stay_in_range_and_empty_lists_say_nothing() {
        assert_eq!(semantic(&[]).value, 0.0);
        assert_eq!(bm25(&[]).value, 0.0);
        assert_eq!(graph(&SeedEvidence::default()).value, 0.0);
        for scores in [
            vec![100.0, 0.0, 0.0, 0.0],
            vec![0.5, 0.5, 0.5],
            vec![1.0],
            vec![-1.0, -2.0],
        ] {
            for c in [semantic(&scores), bm25(&scores)] {
                assert!((0.0..=1.0).contains(&c.value), "{c:?}");
            }
        }
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(2.0), "2");
    }

    #[test]
    fn a_clear_leader_is_surer_than_a_flat_list() {
        let flat = [
            0.80, 0.79, 0.79, 0.78, 0.78, 0.78, 0.77, 0.77, 0.77, 0.76, 0.70,
        ];
        let clear = [
            0.90, 0.60, 0.59, 0.58, 0.57, 0.56, 0.55, 0.54, 0.53, 0.52, 0.40,
        ];
        assert!(semantic(&clear).value > semantic(&flat).value);
        assert!(bm25(&clear).value > bm25(&flat).value);
        // A rare token BM25 alone matches: one document far ahead of a flat rest.
        let mut rare = vec![20.0];
        rare.extend(std::iter::repeat_n(11.7, 49));
        assert!(bm25(&rare).value > 0.95);
        // One outlier among n leads the rest by n/√(n-1) standard deviations.
        let lead = bm25(&rare).evidence("lead_over_second_sd").unwrap();
        assert!((lead - 50.0 / 49f64.sqrt()).abs() < 1e-9, "{lead}");
    }

    #[test]
    fn the_graph_is_sure_of_few_implicated_episodes_and_never_of_text_seeds() {
        let few = SeedEvidence {
            implicated: true,
            seeds: 1,
            hop1: 1,
        };
        let many = SeedEvidence { hop1: 100, ..few };
        let named = SeedEvidence {
            implicated: false,
            ..few
        };
        assert_eq!(graph(&few).value, 1.0);
        assert!((graph(&many).value - 0.1).abs() < 1e-12);
        assert_eq!(graph(&named).value, 0.0);
    }

    #[test]
    fn adaptive_weights_follow_the_odds_and_abstain_below_the_floor() {
        assert_eq!(fusion_weight(Leg::Bm25, Some(0.01)), 0.0);
        assert_eq!(fusion_weight(Leg::Graph, Some(0.0)), 0.0);
        assert_eq!(fusion_weight(Leg::Semantic, Some(0.5)), 1.0);
        assert!(fusion_weight(Leg::Semantic, Some(0.9)) > fusion_weight(Leg::Semantic, Some(0.6)));
        // Capped: a certain leg counts as 99 to 1.
        assert_eq!(
            fusion_weight(Leg::Semantic, Some(1.0)),
            fusion_weight(Leg::Semantic, Some(0.99))
        );
        assert_eq!(fusion_weight(Leg::Graph, None), 2.0);
    }
}
