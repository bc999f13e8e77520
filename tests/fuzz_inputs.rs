//! A property harness over everything Strata parses from a user: ingest files (validated and
//! then written to a real embedded store), headless scripts, the config file, store and vector
//! URLs, and the `--now` / `--entity` values. For each target, random inputs (unstructured
//! text, and valid inputs mutated field by field with hostile values) must never panic or
//! hang, and what is refused must say where.
//!
//! Every target runs for `STRATA_FUZZ_SECONDS` (default 3) of fresh random cases, so CI spends
//! seconds on it and a long run is `STRATA_FUZZ_SECONDS=600 cargo test --release --test
//! fuzz_inputs -- --nocapture` (cases per second are printed). A failing input, shrunk, is
//! saved under `tests/fuzz_corpus/TARGET/` and fails the run; every file there is replayed
//! through its target on every run, so what was once found stays fixed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use serde_json::{Value, json};
use strata::model::{EntityKey, Timestamp};
use strata::store::MemoryStore;
use strata::store::embedded::EmbeddedStore;

/// One case running longer than this is a hang.
const HANG: Duration = Duration::from_secs(20);

fn budget() -> Duration {
    let seconds = std::env::var("STRATA_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(3.0);
    Duration::from_secs_f64(seconds)
}

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_corpus")
        .join(target)
}

fn save_to_corpus(target: &str, input: &str) -> PathBuf {
    let dir = corpus_dir(target);
    std::fs::create_dir_all(&dir).unwrap();
    let digest = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, input.as_bytes());
    let path = dir.join(format!("found-{}", &digest.simple().to_string()[..16]));
    std::fs::write(&path, input).unwrap();
    path
}

/// Watches the case in flight: one that runs past [`HANG`] is saved to the corpus and the
/// process stops, since a hung thread cannot be unwound.
struct Watchdog {
    started_ms: Arc<AtomicU64>,
    input: Arc<Mutex<String>>,
    done: Arc<AtomicBool>,
}

static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

fn elapsed_ms() -> u64 {
    EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64
}

impl Watchdog {
    fn start(target: &'static str) -> Watchdog {
        let started_ms = Arc::new(AtomicU64::new(u64::MAX));
        let input = Arc::new(Mutex::new(String::new()));
        let done = Arc::new(AtomicBool::new(false));
        let (s, i, d) = (started_ms.clone(), input.clone(), done.clone());
        std::thread::spawn(move || {
            while !d.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(200));
                let since = s.load(Ordering::Acquire);
                if since != u64::MAX && elapsed_ms().saturating_sub(since) > HANG.as_millis() as u64
                {
                    let input = i.lock().map(|g| g.clone()).unwrap_or_default();
                    let path = save_to_corpus(target, &input);
                    eprintln!(
                        "{target}: a case ran past {HANG:?}; its input is in {}",
                        path.display()
                    );
                    std::process::abort();
                }
            }
        });
        Watchdog {
            started_ms,
            input,
            done,
        }
    }

    fn enter(&self, input: &str) {
        if let Ok(mut g) = self.input.lock() {
            g.clear();
            g.push_str(input);
        }
        self.started_ms.store(elapsed_ms(), Ordering::Release);
    }

    fn leave(&self) {
        self.started_ms.store(u64::MAX, Ordering::Release);
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Release);
    }
}

/// Replays the target's corpus, then runs fresh random cases for the budget.
fn fuzz<S>(target: &'static str, strategy: S, check: impl Fn(&str) -> Result<(), String>)
where
    S: Strategy<Value = String>,
{
    let watchdog = Watchdog::start(target);
    let run = |input: &str| -> Result<(), TestCaseError> {
        watchdog.enter(input);
        let outcome = check(input);
        watchdog.leave();
        outcome.map_err(TestCaseError::fail)
    };
    let mut replayed = 0;
    if let Ok(entries) = std::fs::read_dir(corpus_dir(target)) {
        for entry in entries.flatten() {
            let bytes = std::fs::read(entry.path()).unwrap();
            let input = String::from_utf8_lossy(&bytes).into_owned();
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&input)));
            match outcome {
                Ok(Ok(())) => replayed += 1,
                Ok(Err(e)) => panic!("{target}: corpus {}: {e}", entry.path().display()),
                Err(_) => panic!("{target}: corpus {} panics", entry.path().display()),
            }
        }
    }
    let deadline = Instant::now() + budget();
    let started = Instant::now();
    let mut cases = 0u64;
    const ROUND: u32 = 64;
    while Instant::now() < deadline {
        let mut runner = TestRunner::new(Config {
            cases: ROUND,
            failure_persistence: None,
            max_shrink_iters: 2048,
            ..Config::default()
        });
        match runner.run(&strategy, |input| run(&input)) {
            Ok(()) => cases += u64::from(ROUND),
            Err(TestError::Fail(why, input)) => {
                let path = save_to_corpus(target, &input);
                panic!(
                    "{target}: {why}; the shrunk input is saved as {} (a regression case from now on)",
                    path.display()
                );
            }
            Err(TestError::Abort(why)) => panic!("{target}: {why}"),
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "{target}: {cases} random cases in {seconds:.1} s ({:.0}/s), {replayed} corpus cases, 0 panics, 0 hangs",
        cases as f64 / seconds.max(1e-9)
    );
}

/// Strings a hostile or careless writer would send.
fn hostile_string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("\u{1b}]0;PWNED\u{7}\u{1b}[2J".to_string()),
        Just("\"}) DETACH DELETE n //".to_string()),
        Just("' OR 1=1 --".to_string()),
        Just("\0".to_string()),
        Just("service:a|b".to_string()),
        Just("\u{feff}\u{202e}\u{200b}".to_string()),
        Just("9999-12-31T23:59:59Z".to_string()),
        Just("0000-01-01T00:00:00+23:59".to_string()),
        Just("2026-13-45T25:61:61Z".to_string()),
        Just("x".repeat(5000)),
        "\\PC{0,40}",
        any::<String>(),
    ]
}

/// Any JSON value, hostile strings and extreme numbers included.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        Just(json!(1e308)),
        Just(json!(-0.0)),
        hostile_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(hostile_string(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn seed_records() -> Vec<Value> {
    vec![
        json!({
            "incident_fingerprint": "INC-1", "summary_nl": "Login loop on the SSO portal",
            "resolution_nl": "Restarted authelia", "concluded_at": "2026-03-01T12:00:00Z",
            "t_valid": "2026-03-01T10:00:00Z",
            "mentions": [{"entity_type": "service", "entity_ref": "authelia", "t_valid": null, "t_invalid": null}],
            "resolved_by": [{"entity_type": "change", "entity_ref": "cfg-123"}],
            "provenance": {"source": "rca-agent", "status": "concluded", "confidence_score": 0.9},
            "skills": [{"name": "restart-sso", "trigger_entities": ["service:authelia"], "steps": ["restart"], "succeeded": true}]
        }),
        json!({
            "incident_fingerprint": "INC-2", "summary_nl": "Login loop again", "resolution_nl": "Reverted cfg",
            "concluded_at": "2026-03-02T12:00:00Z",
            "mentions": [{"entity_type": "service", "entity_ref": "authelia"}],
            "supersedes": [{"incident_fingerprint": "INC-1", "entity_type": "service", "entity_ref": "authelia", "t_invalid": null}]
        }),
        json!({"code_units": [{"repo": "infra", "path": "sso/authelia.yml", "service": "authelia"}]}),
    ]
}

/// A mutation of a valid value: a field replaced, removed or added, at any depth.
fn mutate(value: &mut Value, path: &[usize], replacement: Value, op: u8) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            let keys: Vec<String> = map.keys().cloned().collect();
            let key = &keys[path.first().copied().unwrap_or(0) % keys.len()];
            if path.len() <= 1 {
                match op % 3 {
                    0 => {
                        map.insert(key.clone(), replacement);
                    }
                    1 => {
                        map.remove(key);
                    }
                    _ => {
                        map.insert(format!("{key}_extra"), replacement);
                    }
                }
            } else if let Some(child) = map.get_mut(key) {
                mutate(child, &path[1..], replacement, op);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let i = path.first().copied().unwrap_or(0) % items.len();
            if path.len() <= 1 {
                match op % 3 {
                    0 => items[i] = replacement,
                    1 => {
                        items.remove(i);
                    }
                    _ => items.push(replacement),
                }
            } else {
                mutate(&mut items[i], &path[1..], replacement, op);
            }
        }
        other => *other = replacement,
    }
}

fn mutated_records() -> impl Strategy<Value = Vec<Value>> {
    let mutation = (
        proptest::collection::vec(0usize..16, 1..4),
        json_value(),
        any::<u8>(),
    );
    (
        proptest::collection::vec(0usize..3, 1..5),
        proptest::collection::vec((0usize..5, mutation), 0..5),
    )
        .prop_map(|(picks, mutations)| {
            let seeds = seed_records();
            let mut records: Vec<Value> = picks.iter().map(|&i| seeds[i].clone()).collect();
            for (which, (path, replacement, op)) in mutations {
                let n = records.len();
                mutate(&mut records[which % n], &path, replacement, op);
            }
            records
        })
}

fn ingest_file() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (mutated_records(), any::<bool>()).prop_map(|(records, array)| if array {
            Value::Array(records).to_string()
        } else {
            records
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        }),
        1 => any::<String>(),
        1 => proptest::collection::vec(json_value(), 0..4).prop_map(|v| v
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join("\n")),
        1 => "[\\[{}\":,0-9a-z \n]{0,200}",
    ]
}

#[test]
fn ingest_files_never_panic_and_every_refusal_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    let now = Timestamp::parse("2026-12-01T00:00:00Z").unwrap();
    fuzz(
        "ingest",
        ingest_file(),
        |text| match strata::ingest::prepare_text("fuzz.ndjson", text, now) {
            Ok(prepared) => match strata::ingest::write(&store, &prepared.batch) {
                Ok(_) => Ok(()),
                Err(strata::ingest::IngestFailure::Invalid(errors)) => {
                    for e in &errors {
                        let said = e.to_string();
                        if !said.starts_with("fuzz.ndjson") {
                            return Err(format!("a store refusal that does not say where: {said}"));
                        }
                    }
                    Ok(())
                }
                Err(other) => Err(format!("a valid batch failed to write: {other}")),
            },
            Err(strata::ingest::IngestFailure::Invalid(errors)) => {
                if errors.is_empty() {
                    return Err("refused with no error".into());
                }
                for e in &errors {
                    let said = e.to_string();
                    if !said.starts_with("fuzz.ndjson") {
                        return Err(format!("an error that does not name the file: {said}"));
                    }
                }
                Ok(())
            }
            Err(other) => Err(format!("unexpected failure: {other}")),
        },
    );
    let report = store.check().unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
}

fn script() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        Just("Type".to_string()),
        Just("Key".to_string()),
        Just("Action".to_string()),
        Just("Resize".to_string()),
        Just("WaitIdle".to_string()),
        Just("Snapshot".to_string()),
        Just("Expect".to_string()),
        Just("ExpectNot".to_string()),
        Just("#".to_string()),
        "[A-Za-z]{0,8}",
    ];
    let arg = prop_oneof![
        hostile_string(),
        "\"[^\"]{0,20}\"?",
        "[0-9]{1,25}",
        "[0-9]{0,6}[xX][0-9]{0,6}",
        Just("focus.recall".to_string()),
        Just("Down 3".to_string()),
        Just("Ctrl+c".to_string()),
        "[a-z]{1,10}\\.[a-z]{1,10}",
    ];
    prop_oneof![
        3 => proptest::collection::vec((word, arg), 0..12).prop_map(|lines| lines
            .into_iter()
            .map(|(w, a)| format!("{w} {a}"))
            .collect::<Vec<_>>()
            .join("\n")),
        1 => any::<String>(),
    ]
}

#[test]
fn headless_scripts_never_panic_and_every_refusal_names_its_line() {
    fuzz(
        "script",
        script(),
        |text| match strata::headless::script::parse(text) {
            Ok(_) => Ok(()),
            Err(e) => {
                let lines = text.lines().count();
                if e.line == 0 || e.line > lines {
                    return Err(format!("line {} of a {lines}-line script: {e}", e.line));
                }
                Ok(())
            }
        },
    );
}

fn config_text() -> impl Strategy<Value = String> {
    let section = prop_oneof![
        Just("[embedder]".to_string()),
        Just("[store]".to_string()),
        Just("[recall]".to_string()),
        Just("[explorer]".to_string()),
        Just("[keymap]".to_string()),
        Just("[theme]".to_string()),
        "\\[[a-z.]{0,10}\\]",
    ];
    let key = prop_oneof![
        Just("kind".to_string()),
        Just("url".to_string()),
        Just("vectors".to_string()),
        Just("openai_url".to_string()),
        Just("openai_dimension".to_string()),
        Just("minilm_dir".to_string()),
        "[a-z_]{1,12}",
    ];
    let value = prop_oneof![
        json_value().prop_map(|v| v.to_string()),
        "[0-9.eE+-]{1,20}",
        Just("true".to_string()),
        Just("\"hash\"".to_string()),
        Just("\"falkordb://u:PW7secret7PW@h:1/g\"".to_string()),
        Just("falkordb://u:PW7secret7PW@h:1/g".to_string()),
        "\\PC{0,20}",
    ];
    prop_oneof![
        3 => proptest::collection::vec((section, proptest::collection::vec((key, value), 0..4)), 0..5)
            .prop_map(|sections| sections
                .into_iter()
                .map(|(s, kv)| {
                    let body: Vec<String> = kv.into_iter().map(|(k, v)| format!("{k} = {v}")).collect();
                    format!("{s}\n{}", body.join("\n"))
                })
                .collect::<Vec<_>>()
                .join("\n")),
        1 => any::<String>(),
    ]
}

#[test]
fn config_files_never_panic_and_every_refusal_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    fuzz("config", config_text(), |text| {
        std::fs::write(&path, text).map_err(|e| e.to_string())?;
        match strata::config::Config::load(&path, true) {
            Ok(_) => Ok(()),
            Err(e) if e.to_string().contains("PW7secret7PW") => {
                Err(format!("a refusal that shows a password: {e}"))
            }
            Err(e) if e.to_string().contains("config.toml") => Ok(()),
            Err(e) => Err(format!("a refusal that does not name the file: {e}")),
        }
    });
}

/// A store or vector URL, often carrying a password that must never be shown.
fn location() -> impl Strategy<Value = String> {
    let scheme = prop_oneof![
        Just("falkordb://"),
        Just("falkordbs://"),
        Just("qdrant://"),
        Just("qdrants://"),
        Just("redis://"),
        Just(""),
    ];
    let junk = "[\\PC]{0,12}";
    (
        scheme,
        proptest::option::of("[a-z]{0,6}"),
        junk,
        "[\\[\\]:a-z0-9.%@]{0,16}",
        proptest::option::of("[0-9a-z]{0,7}"),
        proptest::option::of(junk),
    )
        .prop_map(|(scheme, user, host_junk, host, port, graph)| {
            let mut url = scheme.to_string();
            if let Some(user) = user {
                url.push_str(&format!("{user}:PW7secret7PW@"));
            }
            url.push_str(&host);
            url.push_str(&host_junk);
            if let Some(port) = port {
                url.push_str(&format!(":{port}"));
            }
            if let Some(graph) = graph {
                url.push_str(&format!("/{graph}"));
            }
            url
        })
}

#[test]
fn store_and_vector_urls_never_panic_and_never_show_a_password() {
    use strata::index::VectorLocation;
    use strata::store::StoreLocation;
    let data = Path::new("/nonexistent/strata-fuzz");
    fuzz("url", location(), |url| {
        let mut said = String::new();
        match url.parse::<strata::store::falkordb::FalkorUrl>() {
            Ok(parsed) => {
                said.push_str(&parsed.to_string());
                said.push_str(&format!("{parsed:?}"));
                said.push_str(&parsed.slug());
            }
            Err(e) => said.push_str(&e.to_string()),
        }
        match StoreLocation::parse(Some(url), data) {
            Ok(location) => {
                said.push_str(&format!("{location:?}"));
                match VectorLocation::parse(Some(url), &location) {
                    Ok(v) => said.push_str(&format!("{v:?}")),
                    Err(e) => said.push_str(&e.to_string()),
                }
            }
            Err(e) => said.push_str(&e.to_string()),
        }
        match VectorLocation::parse(Some(url), &StoreLocation::Embedded(data.into())) {
            Ok(v) => said.push_str(&format!("{v:?}")),
            Err(e) => said.push_str(&e.to_string()),
        }
        if let Err(e) = strata::index::qdrant::check_url(url) {
            said.push_str(&e.to_string());
        }
        if said.contains("PW7secret7PW") {
            return Err(format!("the password was shown: {said}"));
        }
        Ok(())
    });
}

#[test]
fn command_line_values_never_panic() {
    let value = prop_oneof![
        hostile_string(),
        "[0-9]{0,5}-[0-9]{0,3}-[0-9]{0,3}T[0-9:.]{0,14}(Z|[+-][0-9:]{0,6})?",
        "[a-z]{0,8}:[\\PC]{0,12}",
    ];
    fuzz("values", value, |text| {
        let _ = Timestamp::parse(text);
        if let Ok(key) = text.parse::<EntityKey>() {
            let again: EntityKey = key
                .flag_form()
                .parse()
                .map_err(|e| format!("{text:?} parsed, but its own rendering does not: {e}"))?;
            if again != key {
                return Err(format!(
                    "{text:?} does not round-trip: {key:?} vs {again:?}"
                ));
            }
        }
        Ok(())
    });
}
