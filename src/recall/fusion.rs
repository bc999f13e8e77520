//! Reciprocal Rank Fusion: `score = Σ w_leg/(60 + rank)` over the legs, ranks 0-based, under
//! four policies: adaptive RRF (the default: each weight scaled by the leg's confidence for
//! the query, a leg below a floor abstaining), weighted RRF, plain RRF (every weight 1) and
//! the source design's ordering of plain RRF.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::str::FromStr;

use serde::Serialize;

use super::leg::{ChoiceError, Leg};
use crate::model::Timestamp;

pub const RRF_K: f64 = 60.0;

#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    serde::Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FusionPolicy {
    /// score ↓, legs hit ↓, concluded_at ↓, fingerprint ↑
    Rrf,
    /// The source design: legs hit ↓, concluded_at ↓, score ↓, fingerprint ↑
    Seed,
    /// Weighted RRF, each leg's reciprocal rank times its weight; then as rrf
    Weighted,
    /// Weighted RRF with each weight scaled by the leg's confidence for this query; a leg
    /// below the floor abstains; then as rrf
    Adaptive,
}

impl Default for FusionPolicy {
    /// Adaptive: on the GitBugs dev set, the public postmortems and the synthetic case it beats
    /// `weighted` and every leg alone (docs/recall.md, "Evaluation").
    fn default() -> Self {
        FusionPolicy::Adaptive
    }
}

/// Each leg's weight under [`FusionPolicy::Weighted`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LegWeights {
    pub semantic: f64,
    pub bm25: f64,
    pub graph: f64,
}

impl Default for LegWeights {
    /// BM25 counts half: on the GitBugs dev set it trails the semantic leg by 0.2 MRR, and on
    /// the postmortems it is level with semantic and far behind the graph (README,
    /// "Evaluation").
    fn default() -> Self {
        LegWeights {
            semantic: 1.0,
            bm25: 0.5,
            graph: 1.0,
        }
    }
}

impl LegWeights {
    pub fn get(&self, leg: Leg) -> f64 {
        match leg {
            Leg::Semantic => self.semantic,
            Leg::Bm25 => self.bm25,
            Leg::Graph => self.graph,
        }
    }

    /// Every weight finite and not negative, at least one above zero.
    pub fn check(&self) -> Result<(), ChoiceError> {
        for leg in Leg::ALL {
            let weight = self.get(leg);
            if !weight.is_finite() || weight < 0.0 {
                return Err(ChoiceError::WeightOutOfRange { leg, weight });
            }
        }
        if Leg::ALL.iter().all(|l| self.get(*l) == 0.0) {
            return Err(ChoiceError::AllWeightsZero);
        }
        Ok(())
    }
}

impl FromStr for LegWeights {
    type Err = ChoiceError;

    /// `semantic=1,bm25=0.5,graph=1`; a leg left out keeps its default weight.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut w = LegWeights::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (leg, value) = part
                .split_once('=')
                .ok_or_else(|| ChoiceError::WeightSyntax(part.to_string()))?;
            let value: f64 = value
                .trim()
                .parse()
                .map_err(|_| ChoiceError::WeightNotANumber(part.to_string()))?;
            match leg.trim().parse::<Leg>()? {
                Leg::Semantic => w.semantic = value,
                Leg::Bm25 => w.bm25 = value,
                Leg::Graph => w.graph = value,
            }
        }
        w.check()?;
        Ok(w)
    }
}

impl FusionPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            FusionPolicy::Rrf => "rrf",
            FusionPolicy::Seed => "seed",
            FusionPolicy::Weighted => "weighted",
            FusionPolicy::Adaptive => "adaptive",
        }
    }

    pub const ALL: [FusionPolicy; 4] = [
        FusionPolicy::Rrf,
        FusionPolicy::Seed,
        FusionPolicy::Weighted,
        FusionPolicy::Adaptive,
    ];

    /// The next policy, for a key that cycles through them.
    pub fn next(self) -> Self {
        match self {
            FusionPolicy::Rrf => FusionPolicy::Seed,
            FusionPolicy::Seed => FusionPolicy::Weighted,
            FusionPolicy::Weighted => FusionPolicy::Adaptive,
            FusionPolicy::Adaptive => FusionPolicy::Rrf,
        }
    }

    /// The weight each leg's reciprocal ranks count with under this policy, given each leg's
    /// confidence for the query (`None`: the leg could not say).
    pub fn leg_weight(self, leg: Leg, weights: &LegWeights, confidence: Option<f64>) -> f64 {
        match self {
            FusionPolicy::Rrf | FusionPolicy::Seed => 1.0,
            FusionPolicy::Weighted => weights.get(leg),
            FusionPolicy::Adaptive => {
                weights.get(leg) * super::confidence::fusion_weight(leg, confidence)
            }
        }
    }

    pub fn keys(self) -> [OrderKey; 4] {
        match self {
            FusionPolicy::Rrf | FusionPolicy::Weighted | FusionPolicy::Adaptive => [
                OrderKey::Score,
                OrderKey::LegsHit,
                OrderKey::ConcludedAt,
                OrderKey::Fingerprint,
            ],
            FusionPolicy::Seed => [
                OrderKey::LegsHit,
                OrderKey::ConcludedAt,
                OrderKey::Score,
                OrderKey::Fingerprint,
            ],
        }
    }
}

impl FromStr for FusionPolicy {
    type Err = ChoiceError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "rrf" => Ok(FusionPolicy::Rrf),
            "seed" => Ok(FusionPolicy::Seed),
            "weighted" => Ok(FusionPolicy::Weighted),
            "adaptive" => Ok(FusionPolicy::Adaptive),
            other => Err(ChoiceError::UnknownFusion(other.to_string())),
        }
    }
}

/// The ordering key that placed a result below its predecessor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrderKey {
    Score,
    LegsHit,
    ConcludedAt,
    Fingerprint,
    /// Placed directly after the episode it superseded (the `follow` stale policy).
    Successor,
}

impl OrderKey {
    pub fn as_str(self) -> &'static str {
        match self {
            OrderKey::Score => "score",
            OrderKey::LegsHit => "legs_hit",
            OrderKey::ConcludedAt => "concluded_at",
            OrderKey::Fingerprint => "fingerprint",
            OrderKey::Successor => "successor",
        }
    }
}

/// Where one leg placed a result and what that added to its score: `weight / (60 + rank)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LegRank {
    /// 0-based.
    pub rank: usize,
    /// The leg's own score for it (cosine, BM25, shared seeds).
    pub score: f64,
    /// The weight the leg's reciprocal ranks counted with under the policy, for this query.
    pub weight: f64,
    pub contribution: f64,
}

/// One leg's ranking for fusion: fingerprints best first, their scores, and the weight its
/// reciprocal ranks count with.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    pub leg: Leg,
    pub fingerprints: Vec<String>,
    /// The leg's score of each fingerprint, in order; missing ones count as 0.
    pub scores: Vec<f64>,
    pub weight: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct PerLeg {
    pub semantic: Option<LegRank>,
    pub bm25: Option<LegRank>,
    pub graph: Option<LegRank>,
}

impl PerLeg {
    pub fn get(&self, leg: Leg) -> Option<LegRank> {
        match leg {
            Leg::Semantic => self.semantic,
            Leg::Bm25 => self.bm25,
            Leg::Graph => self.graph,
        }
    }

    fn slot(&mut self, leg: Leg) -> &mut Option<LegRank> {
        match leg {
            Leg::Semantic => &mut self.semantic,
            Leg::Bm25 => &mut self.bm25,
            Leg::Graph => &mut self.graph,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fused {
    /// 1-based.
    pub position: usize,
    pub fingerprint: String,
    pub legs_hit: usize,
    pub rrf_score: f64,
    pub concluded_at: Timestamp,
    pub per_leg: PerLeg,
    /// Null for the first result.
    pub decided_by: Option<OrderKey>,
}

/// Scores compare after rounding away float summation noise, so equal rank sets tie exactly.
fn score_key(score: f64) -> i64 {
    (score * 1e12).round() as i64
}

fn compare(policy: FusionPolicy, a: &Fused, b: &Fused) -> (Ordering, Option<OrderKey>) {
    for key in policy.keys() {
        let o = match key {
            OrderKey::Score => score_key(b.rrf_score).cmp(&score_key(a.rrf_score)),
            OrderKey::LegsHit => b.legs_hit.cmp(&a.legs_hit),
            OrderKey::ConcludedAt => b.concluded_at.cmp(&a.concluded_at),
            OrderKey::Fingerprint => a.fingerprint.cmp(&b.fingerprint),
            OrderKey::Successor => Ordering::Equal,
        };
        if o != Ordering::Equal {
            return (o, Some(key));
        }
    }
    (Ordering::Equal, None)
}

/// Fuses the legs' rankings, each counting with its own weight, and keeps the top `k` in
/// `policy`'s order. Fingerprints missing from `concluded_at` sort as oldest.
pub fn rrf(
    lists: &[Ranking],
    concluded_at: &HashMap<String, Timestamp>,
    policy: FusionPolicy,
    k: usize,
) -> Vec<Fused> {
    let mut by_fp: HashMap<&str, Fused> = HashMap::new();
    for list in lists {
        let (leg, weight) = (&list.leg, list.weight);
        // A leg weighted 0 is off: it neither scores nor counts as a leg that found anything.
        if weight == 0.0 {
            continue;
        }
        for (rank, fp) in list.fingerprints.iter().enumerate() {
            let entry = by_fp.entry(fp.as_str()).or_insert_with(|| Fused {
                position: 0,
                fingerprint: fp.clone(),
                legs_hit: 0,
                rrf_score: 0.0,
                concluded_at: concluded_at.get(fp).copied().unwrap_or(Timestamp::MIN),
                per_leg: PerLeg {
                    semantic: None,
                    bm25: None,
                    graph: None,
                },
                decided_by: None,
            });
            let slot = entry.per_leg.slot(*leg);
            if slot.is_some() {
                continue;
            }
            let contribution = weight / (RRF_K + rank as f64);
            *slot = Some(LegRank {
                rank,
                score: list.scores.get(rank).copied().unwrap_or(0.0),
                weight,
                contribution,
            });
            entry.legs_hit += 1;
        }
    }
    let mut fused: Vec<Fused> = by_fp
        .into_values()
        .map(|mut f| {
            f.rrf_score = Leg::ALL
                .iter()
                .filter_map(|l| f.per_leg.get(*l))
                .map(|r| r.contribution)
                .sum();
            f
        })
        .collect();
    fused.sort_by(|a, b| compare(policy, a, b).0);
    fused.truncate(k);
    for i in 0..fused.len() {
        fused[i].position = i + 1;
        if i > 0 {
            fused[i].decided_by = compare(policy, &fused[i - 1], &fused[i]).1;
        }
    }
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fuses plain lists with the weights `policy` gives them when no leg can say how sure
    /// it is.
    fn fuse(
        lists: &[(Leg, Vec<String>)],
        concluded_at: &HashMap<String, Timestamp>,
        policy: FusionPolicy,
        weights: &LegWeights,
        k: usize,
    ) -> Vec<Fused> {
        let rankings: Vec<Ranking> = lists
            .iter()
            .map(|(leg, fingerprints)| Ranking {
                leg: *leg,
                fingerprints: fingerprints.clone(),
                scores: Vec::new(),
                weight: policy.leg_weight(*leg, weights, None),
            })
            .collect();
        rrf(&rankings, concluded_at, policy, k)
    }

    fn fps(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn times(pairs: &[(&str, i64)]) -> HashMap<String, Timestamp> {
        pairs
            .iter()
            .map(|(fp, t)| (fp.to_string(), Timestamp::from_millis(*t)))
            .collect()
    }

    #[test]
    fn score_is_the_sum_of_reciprocal_ranks() {
        let lists = vec![
            (Leg::Semantic, fps(&["A", "B"])),
            (Leg::Bm25, fps(&["B", "A"])),
            (Leg::Graph, fps(&["C"])),
        ];
        let out = fuse(
            &lists,
            &times(&[("A", 1), ("B", 2), ("C", 3)]),
            FusionPolicy::Rrf,
            &LegWeights::default(),
            10,
        );
        let a = out.iter().find(|f| f.fingerprint == "A").unwrap();
        assert!((a.rrf_score - (1.0 / 60.0 + 1.0 / 61.0)).abs() < 1e-15);
        assert_eq!(a.per_leg.semantic.unwrap().rank, 0);
        assert_eq!(a.per_leg.bm25.unwrap().rank, 1);
        assert!(a.per_leg.graph.is_none());
        // A and B tie on score and legs: the newer (B) wins on concluded_at.
        assert_eq!(out[0].fingerprint, "B");
        assert_eq!(out[1].fingerprint, "A");
        assert_eq!(out[1].decided_by, Some(OrderKey::ConcludedAt));
        assert_eq!(out[2].fingerprint, "C");
        assert_eq!(out[2].decided_by, Some(OrderKey::Score));
        assert_eq!(out[0].decided_by, None);
        assert_eq!(
            out.iter().map(|f| f.position).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
    }

    #[test]
    fn seed_puts_breadth_before_a_single_high_rank_and_recency_breaks_ties() {
        // X is first in one leg; Y is found by two legs at low ranks; Z by two legs, newer.
        let lists = vec![
            (Leg::Semantic, fps(&["X", "P1", "P2", "P3", "P4", "Y"])),
            (
                Leg::Bm25,
                fps(&["Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Y", "Z"]),
            ),
            (
                Leg::Graph,
                fps(&["R1", "R2", "R3", "R4", "R5", "R6", "R7", "Z"]),
            ),
        ];
        let t = times(&[("X", 100), ("Y", 10), ("Z", 20)]);
        let seed = fuse(&lists, &t, FusionPolicy::Seed, &LegWeights::default(), 3);
        let order: Vec<_> = seed.iter().map(|f| f.fingerprint.as_str()).collect();
        assert_eq!(order, ["Z", "Y", "X"]);
        assert_eq!(seed[1].decided_by, Some(OrderKey::ConcludedAt));
        assert_eq!(seed[2].decided_by, Some(OrderKey::LegsHit));
        // Under rrf the score leads: a single first place (1/60) beats two late ranks?
        let plain = fuse(&lists, &t, FusionPolicy::Rrf, &LegWeights::default(), 20);
        let y = plain.iter().find(|f| f.fingerprint == "Y").unwrap();
        let x = plain.iter().find(|f| f.fingerprint == "X").unwrap();
        assert!(
            y.rrf_score > x.rrf_score,
            "two legs at ranks 5 and 6 outscore one first place"
        );
        for w in plain.windows(2) {
            assert!(score_key(w[0].rrf_score) >= score_key(w[1].rrf_score));
        }
    }

    #[test]
    fn rrf_keeps_an_older_exact_match_above_a_recent_weak_one() {
        let lists = vec![
            (
                Leg::Semantic,
                fps(&["OLD", "F1", "F2", "F3", "F4", "F5", "F6", "F7", "NEW"]),
            ),
            (Leg::Bm25, fps(&["OLD", "F8", "F9", "NEW"])),
        ];
        let t = times(&[("OLD", 1), ("NEW", 1000)]);
        let seed = fuse(&lists, &t, FusionPolicy::Seed, &LegWeights::default(), 2);
        assert_eq!(
            seed[0].fingerprint, "NEW",
            "seed: recency among equal breadth"
        );
        let plain = fuse(&lists, &t, FusionPolicy::Rrf, &LegWeights::default(), 2);
        assert_eq!(plain[0].fingerprint, "OLD", "rrf: the exact match leads");
    }

    #[test]
    fn order_is_total_stable_and_bounded() {
        let lists = vec![
            (Leg::Semantic, fps(&["C", "B", "A", "D"])),
            (Leg::Graph, fps(&["D", "A", "B", "C"])),
        ];
        let t = times(&[("A", 5), ("B", 5), ("C", 5), ("D", 5)]);
        for policy in FusionPolicy::ALL {
            let full = fuse(&lists, &t, policy, &LegWeights::default(), 10);
            assert_eq!(full.len(), 4);
            let again = fuse(&lists, &t, policy, &LegWeights::default(), 10);
            assert_eq!(full, again);
            for w in full.windows(2) {
                assert_eq!(
                    compare(policy, &w[0], &w[1]).0,
                    Ordering::Less,
                    "strict: no ties left"
                );
            }
            let top2 = fuse(&lists, &t, policy, &LegWeights::default(), 2);
            assert_eq!(top2.len(), 2);
            assert_eq!(top2[..], full[..2]);
            assert!(fuse(&lists, &t, policy, &LegWeights::default(), 0).is_empty());
        }
        // Equal scores, legs and times: the fingerprint decides.
        let full = fuse(&lists, &t, FusionPolicy::Rrf, &LegWeights::default(), 10);
        let tied: Vec<_> = full
            .iter()
            .filter(|f| f.decided_by == Some(OrderKey::Fingerprint))
            .collect();
        assert!(!tied.is_empty());
    }

    #[test]
    fn weighted_scales_each_legs_reciprocal_rank() {
        let lists = vec![
            (Leg::Semantic, fps(&["A", "B"])),
            (Leg::Bm25, fps(&["B", "A"])),
        ];
        let t = times(&[("A", 1), ("B", 2)]);
        let w: LegWeights = "semantic=1,bm25=0.25".parse().unwrap();
        let out = fuse(&lists, &t, FusionPolicy::Weighted, &w, 10);
        assert_eq!(
            out[0].fingerprint, "A",
            "the heavier leg's first place leads"
        );
        assert!((out[0].rrf_score - (1.0 / 60.0 + 0.25 / 61.0)).abs() < 1e-15);
        assert_eq!(out[0].per_leg.bm25.unwrap().contribution, 0.25 / 61.0);
        // Under rrf the same lists tie, and the newer (B) wins.
        assert_eq!(
            fuse(&lists, &t, FusionPolicy::Rrf, &w, 10)[0].fingerprint,
            "B"
        );
        // A leg weighted 0 is off: no score, no leg hit, nothing it alone found.
        let lists = vec![
            (Leg::Semantic, fps(&["A", "B"])),
            (Leg::Bm25, fps(&["B", "A", "C"])),
        ];
        let off: LegWeights = "bm25=0".parse().unwrap();
        let out = fuse(&lists, &t, FusionPolicy::Weighted, &off, 10);
        assert_eq!(out.len(), 2, "C was found by the switched-off leg only");
        assert_eq!(out[1].rrf_score, 1.0 / 61.0);
        assert!(
            out.iter()
                .all(|f| f.legs_hit == 1 && f.per_leg.bm25.is_none())
        );
    }

    #[test]
    fn weights_parse_and_name_what_is_wrong() {
        let w: LegWeights = " graph=2 ".parse().unwrap();
        assert_eq!((w.semantic, w.bm25, w.graph), (1.0, 0.5, 2.0));
        assert!(
            "graph"
                .parse::<LegWeights>()
                .unwrap_err()
                .to_string()
                .contains("LEG=WEIGHT")
        );
        assert!(
            "graph=x"
                .parse::<LegWeights>()
                .unwrap_err()
                .to_string()
                .contains("not a number")
        );
        assert!(
            "vector=1"
                .parse::<LegWeights>()
                .unwrap_err()
                .to_string()
                .contains("unknown leg")
        );
        assert!(
            "bm25=-1"
                .parse::<LegWeights>()
                .unwrap_err()
                .to_string()
                .contains("≥ 0")
        );
        assert!(
            "semantic=0,bm25=0,graph=0"
                .parse::<LegWeights>()
                .unwrap_err()
                .to_string()
                .contains("at least one")
        );
    }
}
