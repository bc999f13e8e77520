//! Deterministic generation of the demo incident history.

use chrono::{DateTime, NaiveDate, SecondsFormat, TimeDelta, Utc};
use fastrand::Rng;
use serde_json::{Value, json};

use super::labels::{self, LabelledQuery};
use super::world::{CAUSES, Cause, ChangeKind, HOSTS};

/// Seed of the demo history; the output only depends on it.
pub const DEMO_SEED: u64 = 0x5713_A7A0_2024_1201;

const INCIDENT_COUNT: usize = 300;
const MIN_OCCURRENCES: usize = 8;
const MIN_DURATION_MINUTES: i64 = 15;
const MAX_DURATION_MINUTES: i64 = 6 * 60;
/// Incidents never overlap, so `t_valid` order and `concluded_at` order agree.
const MIN_GAP_MINUTES: i64 = MAX_DURATION_MINUTES + 5;

/// One ingestible episode and the knowledge time at which the store learns it.
#[derive(Debug, Clone)]
pub struct DemoRecord {
    pub record: Value,
    pub ingested_at: DateTime<Utc>,
}

/// The demo history (sorted by `concluded_at`) and its labelled recall queries.
#[derive(Debug, Clone)]
pub struct DemoMemory {
    pub records: Vec<DemoRecord>,
    pub labels: Vec<LabelledQuery>,
}

/// Builds the demo memory; every call returns the same data.
pub fn generate() -> DemoMemory {
    let episodes = episodes(DEMO_SEED);
    let labels = labels::build(&episodes);
    let records = episodes.into_iter().map(|episode| episode.record).collect();
    DemoMemory { records, labels }
}

/// A generated record together with the ground truth the record itself does not carry.
pub(crate) struct Episode {
    pub(crate) fingerprint: String,
    pub(crate) cause: &'static Cause,
    pub(crate) concluded_at: DateTime<Utc>,
    pub(crate) record: DemoRecord,
}

#[derive(Clone)]
struct Previous {
    fingerprint: String,
    change: String,
    resolved_key: bool,
    ingested_at: DateTime<Utc>,
}

pub(crate) fn episodes(seed: u64) -> Vec<Episode> {
    let mut rng = Rng::with_seed(seed);
    let schedule = cause_schedule(&mut rng);
    let starts = start_times(&mut rng);
    let mut previous: Vec<Option<Previous>> = vec![None; CAUSES.len()];
    let mut changes = ChangeCounter::default();
    let mut episodes = Vec::with_capacity(INCIDENT_COUNT);
    for (index, (&cause_index, t_valid)) in schedule.iter().zip(starts).enumerate() {
        let cause: &'static Cause = &CAUSES[cause_index];
        let draft = Draft {
            fingerprint: format!("INC-{:04}", index + 1),
            cause,
            t_valid,
            prior: previous[cause_index].take(),
        };
        let (episode, latest) = draft.build(&mut rng, &mut changes);
        previous[cause_index] = Some(latest);
        episodes.push(episode);
    }
    episodes
}

/// Cause index per incident slot: every cause `MIN_OCCURRENCES` times, the rest by weight.
fn cause_schedule(rng: &mut Rng) -> Vec<usize> {
    let mut slots: Vec<usize> = (0..CAUSES.len())
        .flat_map(|cause| std::iter::repeat_n(cause, MIN_OCCURRENCES))
        .collect();
    let total_weight: u32 = CAUSES.iter().map(|cause| cause.weight).sum();
    while slots.len() < INCIDENT_COUNT {
        slots.push(weighted_cause(rng.u32(0..total_weight)));
    }
    for i in (1..slots.len()).rev() {
        let j = rng.u32(0..=i as u32) as usize;
        slots.swap(i, j);
    }
    slots
}

fn weighted_cause(mut ticket: u32) -> usize {
    for (index, cause) in CAUSES.iter().enumerate() {
        if ticket < cause.weight {
            return index;
        }
        ticket -= cause.weight;
    }
    CAUSES.len() - 1
}

/// Incident start times from 2024-12-01 to 2026-11-20 with pseudo-random spacing.
fn start_times(rng: &mut Rng) -> Vec<DateTime<Utc>> {
    let first = utc(2024, 12, 1, 0);
    let last = utc(2026, 11, 20, 0);
    let lead = rng.i64(0..=12 * 60);
    let gaps = INCIDENT_COUNT as i64 - 1;
    let slack = (last - first).num_minutes() - lead - gaps * MIN_GAP_MINUTES;
    let weights: Vec<i64> = (1..INCIDENT_COUNT).map(|_| rng.i64(1..=1000)).collect();
    let total: i64 = weights.iter().sum();
    let mut at = first + TimeDelta::minutes(lead);
    let mut times = Vec::with_capacity(INCIDENT_COUNT);
    times.push(at);
    for weight in weights {
        at += TimeDelta::minutes(MIN_GAP_MINUTES + weight * slack / total);
        times.push(at);
    }
    times
}

struct Draft {
    fingerprint: String,
    cause: &'static Cause,
    t_valid: DateTime<Utc>,
    prior: Option<Previous>,
}

impl Draft {
    fn build(self, rng: &mut Rng, changes: &mut ChangeCounter) -> (Episode, Previous) {
        let cause = self.cause;
        let minutes = rng.i64(MIN_DURATION_MINUTES..=MAX_DURATION_MINUTES);
        let concluded_at = self.t_valid + TimeDelta::minutes(minutes);
        let mut ingested_at = concluded_at + TimeDelta::minutes(ingest_delay_minutes(rng));
        let change = changes.next(rng, cause);
        let specifics =
            Specifics::draw(rng, minutes, &change, cause.config_key.unwrap_or_default());

        let summary_template = pick(rng, cause.summaries);
        let resolution_template = pick(rng, cause.resolutions);
        let summary = specifics.fill(summary_template);
        let mut resolution = specifics.fill(resolution_template);

        let mut mentions: Vec<Value> = cause
            .services
            .iter()
            .map(|service| entity("service", service.name()))
            .collect();
        let host_in_text =
            summary_template.contains("{host}") || resolution_template.contains("{host}");
        if cause.host_bound || host_in_text || rng.f64() < 0.25 {
            mentions.push(entity("host", specifics.host));
        }
        if rng.f64() < 0.6 {
            mentions.push(entity("fault_class", cause.class.as_str()));
        }
        if rng.f64() < 0.5 {
            mentions.push(entity("cause", cause.id));
        }

        let mut resolved_by = vec![entity("change", &change)];
        let resolved_key = match cause.config_key {
            Some(key) if resolution_template.contains("{key}") || rng.f64() < 0.5 => {
                resolved_by.push(entity("config_key", key));
                true
            }
            _ => false,
        };

        let mut supersedes = Vec::new();
        if let Some(prior) = &self.prior {
            if cause.chained {
                supersedes.push(superseded(prior, "change", &prior.change));
                resolution = format!(
                    "{resolution} This replaces {} from {}.",
                    prior.change, prior.fingerprint
                );
            }
            if let Some(key) = cause.config_key
                && resolved_key
                && prior.resolved_key
                && rng.f64() < 0.4
            {
                supersedes.push(superseded(prior, "config_key", key));
                resolution = format!(
                    "{resolution} The new {key} value overrides the one set in {}.",
                    prior.fingerprint
                );
            }
            // A superseding postmortem is never known before the one it supersedes.
            if !supersedes.is_empty() && ingested_at <= prior.ingested_at {
                ingested_at = prior.ingested_at + TimeDelta::minutes(rng.i64(1..=10));
            }
        }

        let source = if rng.f64() < 0.2 {
            "human-postmortem"
        } else {
            "rca-agent"
        };
        let confidence = f64::from(rng.u32(55..=98)) / 100.0;
        // Each cause's runbook: taught by its first occurrence (whose resolution gives the
        // steps), applied again by every later one.
        let mut runbook = json!({ "name": format!("runbook-{}", cause.id) });
        if self.prior.is_none() {
            let mut triggers = vec![format!("cause:{}", cause.id)];
            triggers.extend(
                cause
                    .services
                    .iter()
                    .take(1)
                    .map(|s| format!("service:{}", s.name())),
            );
            runbook["trigger_entities"] = json!(triggers);
            runbook["steps"] = json!(
                resolution
                    .split([';', '.'])
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
            );
        }
        let record = json!({
            "incident_fingerprint": self.fingerprint,
            "summary_nl": summary,
            "resolution_nl": resolution,
            "concluded_at": rfc3339(concluded_at),
            "t_valid": rfc3339(self.t_valid),
            "mentions": mentions,
            "resolved_by": resolved_by,
            "supersedes": supersedes,
            "skills": [runbook],
            "provenance": {
                "source": source,
                "status": "concluded",
                "confidence_score": confidence,
            },
        });

        let latest = Previous {
            fingerprint: self.fingerprint.clone(),
            change,
            resolved_key,
            ingested_at,
        };
        let episode = Episode {
            fingerprint: self.fingerprint,
            cause,
            concluded_at,
            record: DemoRecord {
                record,
                ingested_at,
            },
        };
        (episode, latest)
    }
}

/// Knowledge delay after conclusion: usually minutes to hours, sometimes days.
fn ingest_delay_minutes(rng: &mut Rng) -> i64 {
    if rng.f64() < 0.15 {
        rng.i64(6 * 60..=3 * 24 * 60)
    } else {
        rng.i64(10..=4 * 60)
    }
}

fn entity(kind: &str, reference: &str) -> Value {
    json!({ "entity_type": kind, "entity_ref": reference })
}

fn superseded(prior: &Previous, kind: &str, reference: &str) -> Value {
    json!({
        "incident_fingerprint": prior.fingerprint,
        "entity_type": kind,
        "entity_ref": reference,
    })
}

fn pick(rng: &mut Rng, options: &[&'static str]) -> &'static str {
    let len = u32::try_from(options.len()).unwrap_or(u32::MAX);
    if len == 0 {
        return "";
    }
    options
        .get(rng.u32(0..len) as usize)
        .copied()
        .unwrap_or_default()
}

/// Fresh change references; each kind's numbering only grows, so refs never repeat.
#[derive(Default)]
struct ChangeCounter {
    config: u32,
    pull_request: u32,
    rollback: u32,
}

impl ChangeCounter {
    fn next(&mut self, rng: &mut Rng, cause: &Cause) -> String {
        match cause.change {
            ChangeKind::Config => {
                self.config += rng.u32(1..=6);
                format!("cfg-{:04}", 100 + self.config)
            }
            ChangeKind::PullRequest => {
                self.pull_request += rng.u32(3..=40);
                format!("pr-{}", 3800 + self.pull_request)
            }
            ChangeKind::Rollback => {
                self.rollback += 1;
                let target = cause
                    .services
                    .last()
                    .map_or("app", |service| service.name());
                format!("rollback-{target}-{:03}", self.rollback)
            }
        }
    }
}

/// Per-occurrence details substituted into the cause's templates.
struct Specifics<'a> {
    host: &'static str,
    change: &'a str,
    key: &'static str,
    numbers: [(&'static str, i64); 12],
}

impl<'a> Specifics<'a> {
    fn draw(rng: &mut Rng, minutes: i64, change: &'a str, key: &'static str) -> Self {
        const DIMS: [i64; 3] = [384, 768, 1024];
        let host = pick(rng, &HOSTS);
        let dim = rng.u32(0..3) as usize;
        let dim2 = (dim + 1 + rng.u32(0..2) as usize) % DIMS.len();
        let pool = rng.i64(10..=40);
        let numbers = [
            ("{mins}", minutes),
            ("{users}", rng.i64(4..=350)),
            ("{n}", rng.i64(20..=900)),
            ("{pct}", rng.i64(86..=100)),
            ("{patch}", rng.i64(0..=12)),
            ("{pool}", pool),
            ("{pool2}", pool + rng.i64(10..=40)),
            ("{gb}", rng.i64(40..=400)),
            ("{dim}", DIMS[dim]),
            ("{dim2}", DIMS[dim2]),
            ("{skew}", rng.i64(31..=240)),
            ("{hours}", rng.i64(6..=72)),
        ];
        Self {
            host,
            change,
            key,
            numbers,
        }
    }

    fn fill(&self, template: &str) -> String {
        let mut text = template
            .replace("{host}", self.host)
            .replace("{change}", self.change)
            .replace("{key}", self.key);
        for &(placeholder, value) in &self.numbers {
            text = text.replace(placeholder, &value.to_string());
        }
        text
    }
}

pub(crate) fn utc(year: i32, month: u32, day: u32, hour: u32) -> DateTime<Utc> {
    NaiveDate::from_ymd_opt(year, month, day)
        .and_then(|date| date.and_hms_opt(hour, 0, 0))
        .map(|naive| naive.and_utc())
        .unwrap_or_default()
}

pub(crate) fn rfc3339(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::*;

    fn text(value: &Value, key: &str) -> String {
        value[key].as_str().unwrap().to_owned()
    }

    fn time(value: &Value, key: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(value[key].as_str().unwrap())
            .unwrap()
            .with_timezone(&Utc)
    }

    fn edges(value: &Value, key: &str) -> Vec<(String, String)> {
        value[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|edge| (text(edge, "entity_type"), text(edge, "entity_ref")))
            .collect()
    }

    #[test]
    fn generation_is_deterministic() {
        let snapshot = |memory: &DemoMemory| {
            let records: Vec<_> = memory
                .records
                .iter()
                .map(|r| (&r.record, r.ingested_at))
                .collect();
            (
                serde_json::to_string(&records).unwrap(),
                serde_json::to_string(&memory.labels).unwrap(),
            )
        };
        assert_eq!(snapshot(&generate()), snapshot(&generate()));
        assert_ne!(
            serde_json::to_string(&episodes(DEMO_SEED + 1)[0].record.record).unwrap(),
            serde_json::to_string(&episodes(DEMO_SEED)[0].record.record).unwrap()
        );
    }

    #[test]
    fn volume_order_and_recurrence() {
        let memory = generate();
        assert!((290..=310).contains(&memory.records.len()));
        let mut fingerprints = HashSet::new();
        let mut last_concluded: Option<DateTime<Utc>> = None;
        for (index, record) in memory.records.iter().enumerate() {
            let fingerprint = text(&record.record, "incident_fingerprint");
            assert_eq!(fingerprint, format!("INC-{:04}", index + 1));
            assert!(fingerprints.insert(fingerprint));
            let concluded = time(&record.record, "concluded_at");
            assert!(last_concluded.is_none_or(|last| last < concluded));
            last_concluded = Some(concluded);
        }
        let first = time(&memory.records[0].record, "t_valid");
        let last = time(&memory.records.last().unwrap().record, "t_valid");
        assert!(first >= utc(2024, 12, 1, 0) && last <= utc(2026, 11, 20, 0));

        let episodes = episodes(DEMO_SEED);
        for cause in CAUSES {
            let count = episodes.iter().filter(|e| e.cause.id == cause.id).count();
            assert!(
                count >= MIN_OCCURRENCES,
                "{} occurs {count} times",
                cause.id
            );
        }
        for class in ["auth", "data", "deploy"] {
            let causes = CAUSES.iter().filter(|c| c.class.as_str() == class).count();
            assert!((5..=6).contains(&causes), "{class} has {causes} causes");
        }
    }

    #[test]
    fn supersessions_are_valid_and_form_chains() {
        let memory = generate();
        let mut superseded_pairs = HashSet::new();
        let mut chain_length: HashMap<String, usize> = HashMap::new();
        let mut key_supersessions = 0;
        for (index, record) in memory.records.iter().enumerate() {
            let fingerprint = text(&record.record, "incident_fingerprint");
            let t_valid = time(&record.record, "t_valid");
            let mut length = 1;
            for entry in record.record["supersedes"].as_array().unwrap() {
                let prior_fp = text(entry, "incident_fingerprint");
                let target = (text(entry, "entity_type"), text(entry, "entity_ref"));
                let prior = memory.records[..index]
                    .iter()
                    .find(|p| text(&p.record, "incident_fingerprint") == prior_fp)
                    .unwrap();
                assert!(time(&prior.record, "t_valid") < t_valid);
                assert!(prior.ingested_at < record.ingested_at);
                let mut prior_edges = edges(&prior.record, "mentions");
                prior_edges.extend(edges(&prior.record, "resolved_by"));
                assert!(prior_edges.contains(&target), "{fingerprint} -> {prior_fp}");
                assert!(superseded_pairs.insert((prior_fp.clone(), target.clone())));
                match target.0.as_str() {
                    "change" => length = length.max(chain_length[&prior_fp] + 1),
                    "config_key" => key_supersessions += 1,
                    other => panic!("unexpected superseded entity type {other}"),
                }
            }
            chain_length.insert(fingerprint, length);
        }
        assert!(chain_length.values().any(|&length| length >= 3));
        assert!(key_supersessions > 0);
        assert!(CAUSES.iter().filter(|cause| cause.chained).count() >= 4);
    }

    #[test]
    fn records_follow_the_ingest_format() {
        const KEYS: &[&str] = crate::ingest::RECORD_FIELDS;
        let mut changes = HashSet::new();
        for record in generate().records {
            let value = &record.record;
            assert!(
                value
                    .as_object()
                    .unwrap()
                    .keys()
                    .all(|k| KEYS.contains(&k.as_str()))
            );
            for key in ["concluded_at", "t_valid"] {
                assert!(text(value, key).ends_with('Z'));
            }
            let stamp = rfc3339(record.ingested_at);
            assert!(stamp.ends_with('Z') && DateTime::parse_from_rfc3339(&stamp).is_ok());
            let t_valid = time(value, "t_valid");
            let concluded = time(value, "concluded_at");
            assert!(t_valid < concluded && concluded < record.ingested_at);
            let duration = concluded - t_valid;
            assert!(duration >= TimeDelta::minutes(15) && duration <= TimeDelta::hours(6));
            let delay = record.ingested_at - concluded;
            assert!(delay >= TimeDelta::minutes(10) && delay <= TimeDelta::days(3));

            for field in ["summary_nl", "resolution_nl"] {
                let prose = text(value, field);
                assert!(!prose.is_empty() && !prose.contains('{') && !prose.contains('}'));
            }
            let mut seen = HashSet::new();
            for field in ["mentions", "resolved_by"] {
                for (kind, reference) in edges(value, field) {
                    assert!(!kind.is_empty());
                    assert!(kind.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
                    assert!(!reference.is_empty() && !reference.contains('\0'));
                    if kind == "change" {
                        assert!(
                            changes.insert(reference.clone()),
                            "change {reference} reused"
                        );
                    }
                    assert!(seen.insert((kind, reference)));
                }
            }

            let provenance = &value["provenance"];
            assert!(
                ["rca-agent", "human-postmortem"].contains(&text(provenance, "source").as_str())
            );
            assert_eq!(text(provenance, "status"), "concluded");
            let confidence = provenance["confidence_score"].as_f64().unwrap();
            assert!((0.55..=0.98).contains(&confidence));
            assert!(((confidence * 100.0).round() / 100.0 - confidence).abs() < 1e-12);
        }
    }
}
