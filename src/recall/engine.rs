use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::Instrument;

use super::brief;
use super::confidence;
use super::fate::{self, StalePolicy};
use super::fusion::{self, Fused, FusionPolicy, LegWeights, Ranking};
use super::leg::{Leg, LegError, LegHits, LegQuery, LegSet, RecallLeg};
use super::mode::RecallMode;
use super::response::{
    LegReport, LegReports, LegStatus, RecallResponse, RecallResult, SkillSuggestion,
};
use crate::learning::skill;
use crate::model::{AsOf, EntityKey, MemoryEpisode, Timestamp};
use crate::store::{MemoryStore, StoreError};
use crate::telemetry::{Observation, Recorder};

pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(250);
pub const DEFAULT_LEG_LIMIT: usize = 50;

#[derive(Clone, Debug)]
pub struct RecallRequest {
    pub text: String,
    pub entities: Vec<EntityKey>,
    pub as_of: AsOf,
    pub k: usize,
    pub legs: LegSet,
    pub fusion: FusionPolicy,
    /// What to do with results a later episode superseded.
    pub stale: StalePolicy,
    /// Episodes left out of every leg's list before fusion, e.g. the episode a query was
    /// seeded from: the ranks are among the others.
    pub exclude: Vec<String>,
}

/// A recall's answer and what it was fused from.
pub struct Recalled {
    pub response: RecallResponse,
    pub run: LegRun,
    /// When each candidate any leg found concluded.
    pub concluded_at: HashMap<String, Timestamp>,
    /// Results the memory knew before the request's knowledge time.
    pub known_before: usize,
}

impl Recalled {
    /// Its top k held an episode known before the query's knowledge time: a real hit from
    /// the past, what the warm signal counts.
    pub fn warm(&self) -> bool {
        self.known_before > 0
    }
}

/// A count for a span: signed, which OpenTelemetry exports as a number (unsigned values reach
/// it as text).
fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Milliseconds to a tenth, for a span.
fn round_ms(ms: f64) -> f64 {
    (ms * 10.0).round() / 10.0
}

/// What the legs answered for one request, before fusion.
pub struct LegRun {
    pub reports: LegReports,
    /// The rankings of the legs that answered, in leg order.
    pub rankings: Vec<(Leg, LegHits)>,
}

impl LegRun {
    /// The rankings of the legs in `legs`, fused under `policy`: each leg counts with the
    /// weight the policy gives it for its confidence in this query.
    pub fn fuse(
        &self,
        legs: LegSet,
        policy: FusionPolicy,
        weights: &LegWeights,
        concluded_at: &HashMap<String, Timestamp>,
        k: usize,
    ) -> Vec<Fused> {
        let counted = self.weights(legs, policy, weights);
        let lists: Vec<Ranking> = self
            .rankings
            .iter()
            .filter(|(leg, _)| legs.contains(*leg))
            .map(|(leg, hits)| Ranking {
                leg: *leg,
                fingerprints: hits.fingerprints.clone(),
                scores: hits.scores.clone(),
                weight: counted[leg.index()],
            })
            .collect();
        fusion::rrf(&lists, concluded_at, policy, k)
    }

    /// The weight each leg of `legs` that answered counts with under `policy` (0 for the
    /// others), indexed by [`Leg::index`]. Adaptive weights are scaled so the surest leg counts
    /// 1: only their ratios order the results.
    pub fn weights(&self, legs: LegSet, policy: FusionPolicy, weights: &LegWeights) -> [f64; 3] {
        let mut out = [0.0; 3];
        for (leg, _) in self.rankings.iter().filter(|(leg, _)| legs.contains(*leg)) {
            let confidence = self.reports.get(*leg).confidence.as_ref().map(|c| c.value);
            out[leg.index()] = policy.leg_weight(*leg, weights, confidence);
        }
        let top = out.iter().copied().fold(0.0, f64::max);
        if policy == FusionPolicy::Adaptive && top > 0.0 {
            for w in &mut out {
                *w /= top;
            }
        }
        out
    }
}

/// Runs the legs in parallel, each as its own task with a timeout, and fuses what answered.
pub struct RecallEngine {
    legs: Vec<Arc<dyn RecallLeg>>,
    store: Arc<dyn MemoryStore>,
    embedder_label: String,
    pub timeout: Duration,
    pub leg_limit: usize,
    /// The legs' weights under [`super::FusionPolicy::Weighted`] and, scaled by each leg's
    /// confidence, [`super::FusionPolicy::Adaptive`].
    pub weights: LegWeights,
    /// The brief's length bound, in characters.
    pub brief_chars: usize,
    /// The stale policy of requests that do not choose one (`[recall] stale`).
    pub stale: StalePolicy,
    /// What the agent-facing surfaces hand back (`[recall] mode`); every answer says it.
    pub mode: RecallMode,
    /// Where each recall is counted, for the surfaces an agent recalls through (the MCP
    /// server, `strata recall`); `None` counts nothing (the explorer, the evaluation).
    pub recorder: Option<Arc<Recorder>>,
}

impl RecallEngine {
    pub fn new(
        legs: Vec<Arc<dyn RecallLeg>>,
        store: Arc<dyn MemoryStore>,
        embedder_label: String,
    ) -> Self {
        RecallEngine {
            legs,
            store,
            embedder_label,
            timeout: DEFAULT_TIMEOUT,
            leg_limit: DEFAULT_LEG_LIMIT,
            weights: LegWeights::default(),
            brief_chars: brief::DEFAULT_CHARS,
            stale: StalePolicy::default(),
            mode: RecallMode::default(),
            recorder: None,
        }
    }

    /// [`RecallLeg::warm`] of every leg; what stopped one is returned, not raised.
    pub fn warm_legs(&self) -> Vec<String> {
        self.each_leg("warm-up", |leg| leg.warm())
    }

    /// Every leg brought up to the store (see [`RecallLeg::catch_up`]); what stopped one is
    /// returned, not raised.
    pub fn catch_up_legs(&self) -> Vec<String> {
        self.each_leg("catch-up", |leg| leg.catch_up())
    }

    /// Runs `step` on every leg, logging how long each took; what stopped one, as a notice.
    fn each_leg(
        &self,
        what: &str,
        step: impl Fn(&dyn RecallLeg) -> Result<(), LegError>,
    ) -> Vec<String> {
        self.legs
            .iter()
            .filter_map(|leg| {
                let started = Instant::now();
                let done = step(leg.as_ref());
                tracing::info!(leg = %leg.leg(), ms = started.elapsed().as_millis() as u64, "leg {what} done");
                done.err()
                    .map(|e| format!("{} leg {what} stopped: {e}", leg.leg()))
            })
            .collect()
    }

    pub fn embedder_label(&self) -> &str {
        &self.embedder_label
    }

    pub async fn recall(&self, request: &RecallRequest) -> RecallResponse {
        self.recall_explained(request).await.response
    }

    /// Recall, and what it was fused from: every leg's ranking and the candidates' dates, so
    /// the same legs can be fused again under other policies (the evaluation does).
    ///
    /// Each recall is a `recall` span carrying counts and times only (each leg's status, hits
    /// and latency, the results, whether it was warm): never the query, a summary or a
    /// fingerprint.
    pub async fn recall_explained(&self, request: &RecallRequest) -> Recalled {
        let span = tracing::info_span!(
            "recall",
            mode = self.mode.as_str(),
            k = count(request.k),
            fusion = request.fusion.as_str(),
            entities = count(request.entities.len()),
            semantic = tracing::field::Empty,
            semantic_hits = tracing::field::Empty,
            semantic_ms = tracing::field::Empty,
            bm25 = tracing::field::Empty,
            bm25_hits = tracing::field::Empty,
            bm25_ms = tracing::field::Empty,
            graph = tracing::field::Empty,
            graph_hits = tracing::field::Empty,
            graph_ms = tracing::field::Empty,
            results = tracing::field::Empty,
            warm = tracing::field::Empty,
            ms = tracing::field::Empty,
        );
        let recalled = self
            .recall_unrecorded(request)
            .instrument(span.clone())
            .await;
        let response = &recalled.response;
        let warm = recalled.warm();
        for leg in Leg::ALL {
            let r = response.legs.get(leg);
            let field = |what: &str| format!("{}{what}", leg.as_str());
            span.record(field("").as_str(), r.status.as_str());
            if r.status != super::response::LegStatus::Disabled {
                span.record(field("_hits").as_str(), count(r.hits));
                span.record(field("_ms").as_str(), round_ms(r.latency_ms));
            }
        }
        span.record("results", count(response.results.len()));
        span.record("warm", warm);
        span.record("ms", round_ms(response.latency_ms));
        match &self.recorder {
            Some(recorder) => {
                tracing::info!(parent: &span, "recall answered");
                recorder.record(Observation::of(response, warm));
            }
            None => tracing::debug!(parent: &span, "recall answered"),
        }
        recalled
    }

    async fn recall_unrecorded(&self, request: &RecallRequest) -> Recalled {
        let started = Instant::now();
        let mut run = self.run_legs(request).await;
        let (concluded, mut unreadable) = self.candidate_dates(&run).await;
        let fused = run.fuse(
            request.legs,
            request.fusion,
            &self.weights,
            &concluded,
            request.k,
        );
        let counted = run.weights(request.legs, request.fusion, &self.weights);
        for leg in Leg::ALL {
            run.reports.get_mut(leg).weight = counted[leg.index()];
        }
        let shown: Vec<String> = fused.iter().map(|f| f.fingerprint.clone()).collect();
        let (episodes, also_unreadable) = self.episodes_of(shown).await;
        unreadable.extend(also_unreadable);
        let results = fused
            .into_iter()
            .map(|f| {
                // The text as known at K: a correction recorded later is not shown.
                let known = episodes
                    .get(&f.fingerprint)
                    .and_then(Option::as_ref)
                    .map(|e| e.known_at(request.as_of.known_at));
                let episode = known.as_ref();
                RecallResult {
                    summary: match (episode, unreadable.get(&f.fingerprint)) {
                        (_, Some(why)) => format!("(its record cannot be read: {why})"),
                        (e, None) => e.map(|e| e.summary_nl.clone()).unwrap_or_default(),
                    },
                    resolution: episode.map(|e| e.resolution_nl.clone()).unwrap_or_default(),
                    resolved_by: Vec::new(),
                    superseded_by: None,
                    current_successor: None,
                    follows: None,
                    position: f.position,
                    fingerprint: f.fingerprint,
                    legs_hit: f.legs_hit,
                    rrf_score: f.rrf_score,
                    concluded_at: f.concluded_at,
                    per_leg: f.per_leg,
                    decided_by: f.decided_by,
                }
            })
            .collect::<Vec<_>>();
        let (results, skills) = self.settle(results, &episodes, request).await;
        let brief = brief::render(&results, request.stale, self.brief_chars);
        let response = RecallResponse {
            query: request.text.clone(),
            entities: request.entities.iter().map(EntityKey::flag_form).collect(),
            valid_at: request.as_of.valid_at,
            known_at: request.as_of.known_at,
            k: request.k,
            fusion: request.fusion,
            stale: request.stale,
            weights: self.weights,
            embedder: self.embedder_label.clone(),
            legs: run.reports.clone(),
            results,
            skills,
            brief,
            latency_ms: started.elapsed().as_secs_f64() * 1e3,
            mode: self.mode,
            withheld: 0,
        };
        let known_before = response
            .results
            .iter()
            .filter(|r| {
                episodes
                    .get(&r.fingerprint)
                    .and_then(Option::as_ref)
                    .is_some_and(|e| e.ingested_at < request.as_of.known_at)
            })
            .count();
        Recalled {
            response,
            run,
            concluded_at: concluded,
            known_before,
        }
    }

    /// What became of each result's fix as of the request's (V, K), the `follow` stale policy,
    /// and the skills the results suggest: the results' facts are read once, in one batch, for
    /// both, in one blocking task under the leg deadline. A slow or failing store leaves the
    /// results as fused and suggests nothing, and says so in the log.
    async fn settle(
        &self,
        results: Vec<RecallResult>,
        episodes: &HashMap<String, Option<MemoryEpisode>>,
        request: &RecallRequest,
    ) -> (Vec<RecallResult>, Vec<SkillSuggestion>) {
        let found: Vec<MemoryEpisode> = results
            .iter()
            .filter_map(|r| episodes.get(&r.fingerprint).cloned().flatten())
            .collect();
        if found.is_empty() {
            return (results, Vec::new());
        }
        let store = self.store.clone();
        let (as_of, stale, k) = (request.as_of, request.stale, request.k);
        let fused = results.clone();
        let work = tokio::task::spawn_blocking(move || {
            let mut results = results;
            let fps: Vec<String> = found
                .iter()
                .map(|e| e.incident_fingerprint.clone())
                .collect();
            let facts = store.facts_of_episodes(&fps)?;
            let refs: Vec<&MemoryEpisode> = found.iter().collect();
            let mut fates = fate::fates(store.as_ref(), &refs, &facts, &as_of)?;
            for r in results.iter_mut() {
                let Some(fate) = fates.remove(&r.fingerprint) else {
                    continue;
                };
                r.resolved_by = fate.resolved_by;
                if stale != StalePolicy::Keep {
                    r.superseded_by = Some(fate.superseded_by);
                    r.current_successor = fate.current_successor;
                }
            }
            if stale == StalePolicy::Follow {
                fate::follow(&mut results, k);
            }
            let skills = match store.skills() {
                Ok(versions) => suggest_skills(&versions, &results, &facts, as_of),
                Err(e) => {
                    tracing::warn!(error = %e, "skill suggestions unavailable");
                    Vec::new()
                }
            };
            Ok::<_, StoreError>((results, skills))
        });
        match tokio::time::timeout(self.timeout, work).await {
            Ok(Ok(Ok(settled))) => settled,
            Ok(Ok(Err(e))) => {
                tracing::warn!(error = %e, "what became of the results' fixes is unavailable");
                (fused, Vec::new())
            }
            _ => {
                tracing::warn!("what became of the results' fixes did not arrive in time");
                (fused, Vec::new())
            }
        }
    }

    /// The current successor of each of these episodes that a later one superseded, as of
    /// `as_of`: what [`StalePolicy::Follow`] places after it. Empty when the store cannot say.
    pub async fn current_successors(
        &self,
        fingerprints: Vec<String>,
        as_of: AsOf,
    ) -> HashMap<String, String> {
        let store = self.store.clone();
        let work = tokio::task::spawn_blocking(move || -> Result<_, StoreError> {
            let episodes = store.episodes(&fingerprints)?;
            let facts = store.facts_of_episodes(&fingerprints)?;
            let refs: Vec<&MemoryEpisode> = episodes.iter().collect();
            Ok(fate::fates(store.as_ref(), &refs, &facts, &as_of)?
                .into_iter()
                .filter_map(|(fp, f)| f.current_successor.map(|s| (fp, s.fingerprint)))
                .collect())
        });
        match work.await {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "current successors unavailable");
                HashMap::new()
            }
            Err(e) => {
                tracing::warn!(error = %e, "current successors unavailable");
                HashMap::new()
            }
        }
    }

    /// Every leg of `request.legs` once, in parallel, each under the engine's timeout; what
    /// answered, with the request's excluded episodes left out, and a report per leg.
    pub async fn run_legs(&self, request: &RecallRequest) -> LegRun {
        let started = Instant::now();
        let query = LegQuery {
            text: request.text.clone(),
            entities: request.entities.clone(),
            as_of: request.as_of,
            limit: self.leg_limit,
            deadline: Some(started + self.timeout),
        };
        let mut reports = LegReports {
            semantic: LegReport::disabled(),
            bm25: LegReport::disabled(),
            graph: LegReport::disabled(),
        };
        let mut tasks = Vec::new();
        for leg in &self.legs {
            let kind = leg.leg();
            if !request.legs.contains(kind) {
                continue;
            }
            let leg = leg.clone();
            let q = query.clone();
            let handle = tokio::task::spawn_blocking(move || {
                let t0 = Instant::now();
                // A panic in a leg (a library tripping over a damaged index) is that leg's
                // failure, in one line; it is logged, never printed.
                let result = crate::caught::catch(&format!("the {kind} leg"), || leg.search(&q))
                    .unwrap_or_else(|panic| Err(LegError::Failed(panic)));
                (result, t0.elapsed().as_secs_f64() * 1e3)
            });
            tasks.push((kind, tokio::time::timeout(self.timeout, handle)));
        }
        let mut rankings: Vec<(Leg, LegHits)> = Vec::new();
        for (kind, task) in tasks {
            let outcome = task.await;
            let report = reports.get_mut(kind);
            report.latency_ms = self.timeout.as_secs_f64() * 1e3;
            if let Ok(Ok((_, ms))) = &outcome {
                report.latency_ms = *ms;
            }
            match outcome.map(|r| r.map(|(result, _)| result)) {
                Ok(Ok(Ok(mut hits))) => {
                    if !request.exclude.is_empty() {
                        let mut scores = std::mem::take(&mut hits.scores).into_iter();
                        let (fingerprints, kept): (Vec<String>, Vec<f64>) =
                            std::mem::take(&mut hits.fingerprints)
                                .into_iter()
                                .map(|fp| (fp, scores.next().unwrap_or(0.0)))
                                .filter(|(fp, _)| !request.exclude.contains(fp))
                                .unzip();
                        hits.fingerprints = fingerprints;
                        hits.scores = kept;
                    }
                    report.status = match hits.lag {
                        Some(_) => LegStatus::Behind,
                        None => LegStatus::Ok,
                    };
                    report.error = hits.lag.take();
                    report.hits = hits.fingerprints.len();
                    report.embed_ms = hits.embed_ms;
                    report.note = hits.note.take();
                    report.confidence = Some(confidence::assess(kind, &hits.scores, &hits.signals));
                    rankings.push((kind, hits));
                }
                Ok(Ok(Err(LegError::Failed(why)))) => {
                    report.status = LegStatus::Failed;
                    report.error = Some(why);
                }
                Ok(Err(join)) => {
                    report.status = LegStatus::Failed;
                    report.error = Some(format!("leg task ended abnormally: {join}"));
                }
                // A leg that stopped at the deadline by itself timed out all the same.
                Ok(Ok(Err(LegError::Deadline))) | Err(_) => {
                    report.status = LegStatus::Timeout;
                    report.error =
                        Some(format!("no answer within {} ms", self.timeout.as_millis()));
                }
            }
            if !report.status.answered() {
                tracing::warn!(leg = %kind, error = ?report.error, "recall leg contributed nothing");
            }
        }
        rankings.sort_by_key(|(leg, _)| *leg);
        LegRun { reports, rankings }
    }

    /// When each candidate of every leg concluded, for fusion's order: one light read where
    /// the store can. A candidate whose record cannot be read is named with why.
    pub async fn candidate_dates(
        &self,
        run: &LegRun,
    ) -> (HashMap<String, Timestamp>, HashMap<String, String>) {
        let mut wanted: Vec<String> = run
            .rankings
            .iter()
            .flat_map(|(_, h)| h.fingerprints.iter().cloned())
            .collect();
        wanted.sort();
        wanted.dedup();
        let store = self.store.clone();
        let lookup = tokio::task::spawn_blocking(move || match store.episode_dates(&wanted) {
            Ok(dates) => (dates.into_iter().collect(), HashMap::new()),
            // A record that cannot be read: one by one, so only its row goes without a date,
            // and says why instead of showing nothing.
            Err(_) => {
                let (mut dates, mut unreadable) = (HashMap::new(), HashMap::new());
                for fp in wanted {
                    match store.episode(&fp) {
                        Ok(Some(e)) => drop(dates.insert(fp, e.concluded_at)),
                        Ok(None) => {}
                        Err(e) => drop(unreadable.insert(fp, e.to_string())),
                    }
                }
                (dates, unreadable)
            }
        });
        match tokio::time::timeout(self.timeout, lookup).await {
            Ok(Ok(found)) => found,
            _ => {
                tracing::warn!("candidates' dates did not arrive in time; fused without them");
                (HashMap::new(), HashMap::new())
            }
        }
    }

    /// The episodes of the results, in one read: their text, for the answer and its fates.
    async fn episodes_of(
        &self,
        wanted: Vec<String>,
    ) -> (
        HashMap<String, Option<MemoryEpisode>>,
        HashMap<String, String>,
    ) {
        let store = self.store.clone();
        let lookup = tokio::task::spawn_blocking(move || {
            let mut found: HashMap<String, Option<MemoryEpisode>> = HashMap::new();
            let mut unreadable = HashMap::new();
            match store.episodes(&wanted) {
                Ok(episodes) => found.extend(
                    episodes
                        .into_iter()
                        .map(|e| (e.incident_fingerprint.clone(), Some(e))),
                ),
                Err(_) => {
                    for fp in &wanted {
                        match store.episode(fp) {
                            Ok(e) => drop(found.insert(fp.clone(), e)),
                            Err(e) => drop(unreadable.insert(fp.clone(), e.to_string())),
                        }
                    }
                }
            }
            for fp in wanted {
                found.entry(fp).or_insert(None);
            }
            (found, unreadable)
        });
        match tokio::time::timeout(self.timeout, lookup).await {
            Ok(Ok(found)) => found,
            _ => {
                tracing::warn!("episode details did not arrive in time; results lack summaries");
                (HashMap::new(), HashMap::new())
            }
        }
    }
}

/// Skills current at K whose trigger entities the results' facts valid at (V, K) share, most
/// matches first. `facts`: the results' facts, as read for their fates.
fn suggest_skills(
    versions: &[crate::learning::Skill],
    results: &[RecallResult],
    facts: &[crate::model::FactEdge],
    as_of: AsOf,
) -> Vec<SkillSuggestion> {
    if versions.is_empty() {
        return Vec::new();
    }
    let skills = skill::current(versions, as_of.known_at);
    let mut valid: HashMap<&str, Vec<EntityKey>> = HashMap::new();
    for f in facts.iter().filter(|f| as_of.fact_valid(f)) {
        valid
            .entry(f.episode.as_str())
            .or_default()
            .push(f.entity.clone());
    }
    let mut by_name: BTreeMap<String, SkillSuggestion> = BTreeMap::new();
    for r in results {
        let Some(entities) = valid.get(r.fingerprint.as_str()) else {
            continue;
        };
        for (s, shared) in skill::matching(&skills, entities) {
            let entry = by_name
                .entry(s.name.clone())
                .or_insert_with(|| SkillSuggestion {
                    name: s.name.clone(),
                    version: s.version,
                    steps: s.steps.len(),
                    applied: s.applied,
                    succeeded: s.succeeded,
                    shared: Vec::new(),
                    results: Vec::new(),
                    matches: 0,
                });
            entry.results.push(r.position);
            entry.matches += shared.len();
            for e in shared {
                let e = e.flag_form();
                if !entry.shared.contains(&e) {
                    entry.shared.push(e);
                }
            }
        }
    }
    let mut out: Vec<SkillSuggestion> = by_name.into_values().collect();
    out.sort_by(|a, b| b.matches.cmp(&a.matches).then_with(|| a.name.cmp(&b.name)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::{FusionPolicy, LegSet};

    /// A leg that trips over its index the way a library reading damaged files can.
    struct Tripping;

    impl RecallLeg for Tripping {
        fn leg(&self) -> Leg {
            Leg::Bm25
        }

        fn search(&self, _: &LegQuery) -> Result<LegHits, LegError> {
            panic!("mid > len\nstack backtrace: \u{1b}[31m…");
        }
    }

    #[test]
    fn a_panic_in_a_leg_is_that_legs_failure_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn MemoryStore> =
            Arc::new(crate::store::embedded::EmbeddedStore::open(dir.path()).unwrap());
        let mut engine = RecallEngine::new(vec![Arc::new(Tripping)], store, "none".into());
        engine.timeout = Duration::from_secs(30);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let r = runtime.block_on(engine.recall(&RecallRequest {
            text: "anything".into(),
            entities: Vec::new(),
            as_of: AsOf::now(Timestamp::from_millis(0)),
            k: 5,
            legs: LegSet::ALL,
            fusion: FusionPolicy::Rrf,
            exclude: Vec::new(),
            stale: Default::default(),
        }));
        assert_eq!(r.legs.bm25.status, LegStatus::Failed);
        assert_eq!(
            r.legs.bm25.error.as_deref(),
            Some("the bm25 leg stopped on an internal error: mid > len")
        );
        assert!(r.results.is_empty());
    }
}
