//! Writers racing on one FalkorDB graph: real `strata` processes started together. Of two
//! conflicting batches exactly one lands and the other is refused with the embedded store's
//! words; batches that do not conflict all land; a writer killed mid-batch blocks no one.

mod common;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use common::falkordb::graph_url;
use common::{ndjson, record, stderr};
use serde_json::{Value, json};
use strata::store::MemoryStore;
use strata::store::falkordb::{FalkorStore, FalkorUrl};

const SETUP_AT: &str = "2026-05-01T00:00:00Z";
const NOW: &str = "2026-06-01T00:00:00Z";
const RACE_TRIALS: usize = 20;
const RACE_PADDING: usize = 3_000;
/// What the writer that found the graph moved on under it logs before validating again.
const RETRY_LOG: &str = "another writer landed first";

/// A scratch directory with the files a test writes and one data directory per process.
struct Scratch {
    dir: tempfile::TempDir,
    processes: std::cell::Cell<usize>,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            dir: tempfile::tempdir().unwrap(),
            processes: std::cell::Cell::new(0),
        }
    }

    fn file(&self, name: &str, records: &[Value]) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, ndjson(records)).unwrap();
        path
    }

    /// A fresh data directory, so each process has its own log and indexes.
    fn data(&self) -> PathBuf {
        let n = self.processes.get();
        self.processes.set(n + 1);
        let path = self.dir.path().join(format!("data-{n}"));
        std::fs::create_dir_all(&path).unwrap();
        path
    }
}

fn command(data: &Path, store: Option<&FalkorUrl>, now: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strata"));
    cmd.env("STRATA_EMBEDDER", "hash")
        .env_remove("STRATA_STORE")
        .arg("--data")
        .arg(data)
        .args(["--now", now]);
    if let Some(url) = store {
        cmd.args(["--store", &url.to_string()]);
    }
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

fn ingest_args(file: &Path) -> Vec<&str> {
    vec!["ingest", "--no-index", file.to_str().unwrap()]
}

fn skill_add_args(file: &Path) -> Vec<&str> {
    vec!["skill", "add", file.to_str().unwrap()]
}

fn run(scratch: &Scratch, store: Option<&FalkorUrl>, now: &str, args: &[&str]) -> Output {
    command(&scratch.data(), store, now, args).output().unwrap()
}

fn succeed(scratch: &Scratch, store: Option<&FalkorUrl>, now: &str, args: &[&str]) {
    let out = run(scratch, store, now, args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
}

/// One run of a raced command: its output and whether it had to validate again.
struct Raced {
    output: Output,
    retried: bool,
}

/// Starts every command before waiting for any, each with its own data directory.
fn race(scratch: &Scratch, store: &FalkorUrl, commands: &[Vec<&str>]) -> Vec<Raced> {
    let started: Vec<(PathBuf, Child)> = commands
        .iter()
        .map(|args| {
            let data = scratch.data();
            let child = command(&data, Some(store), NOW, args).spawn().unwrap();
            (data, child)
        })
        .collect();
    started
        .into_iter()
        .map(|(data, child)| {
            let output = child.wait_with_output().unwrap();
            let log = std::fs::read_to_string(data.join("strata.log")).unwrap_or_default();
            Raced {
                output,
                retried: log.contains(RETRY_LOG),
            }
        })
        .collect()
}

/// What a refused ingest says, without the progress lines.
fn rejection(out: &Output) -> Vec<String> {
    stderr(out)
        .lines()
        .filter(|l| !l.starts_with('['))
        .map(str::to_string)
        .collect()
}

/// What the embedded store says when `second` is ingested after `first` (and `setup`).
fn embedded_rejection(
    scratch: &Scratch,
    setup: &[&Path],
    first: &Path,
    second: &Path,
) -> Vec<String> {
    let data = scratch.data();
    for file in setup {
        let out = command(&data, None, SETUP_AT, &ingest_args(file))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let out = command(&data, None, NOW, &ingest_args(first))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = command(&data, None, NOW, &ingest_args(second))
        .output()
        .unwrap();
    assert!(!out.status.success(), "the embedded store refuses it too");
    let lines = rejection(&out);
    assert!(!lines.is_empty(), "{}", stderr(&out));
    lines
}

fn padding(side: &str, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| record(&format!("PAD-{side}-{i:05}"), "2026-01-01T00:00:00Z"))
        .collect()
}

fn race_record(version: &str) -> Value {
    json!({
        "incident_fingerprint": "INC-RACE",
        "summary_nl": version,
        "resolution_nl": format!("resolution {version}"),
        "concluded_at": "2026-03-01T12:00:00Z",
        "mentions": [{"entity_type": "service", "entity_ref": version.to_lowercase()}],
    })
}

fn check_passes(scratch: &Scratch, store: &FalkorUrl) {
    let out = run(scratch, Some(store), NOW, &["check"]);
    assert!(out.status.success(), "strata check: {}", stderr(&out));
}

/// Exactly one of two raced commands succeeded: (winner, loser) indexes.
fn one_winner(runs: &[Raced]) -> (usize, usize) {
    let ok: Vec<bool> = runs.iter().map(|r| r.output.status.success()).collect();
    match ok[..] {
        [true, false] => (0, 1),
        [false, true] => (1, 0),
        _ => panic!(
            "expected exactly one to succeed, got {ok:?}:\n{}\n---\n{}",
            stderr(&runs[0].output),
            stderr(&runs[1].output)
        ),
    }
}

#[test]
fn two_versions_of_one_episode_racing_one_lands_whole_and_the_other_is_refused() {
    let scratch = Scratch::new();
    let versions = ["A", "B"];
    let files: Vec<PathBuf> = versions
        .iter()
        .map(|v| {
            let mut records = vec![race_record(v)];
            records.extend(padding(v, RACE_PADDING));
            scratch.file(&format!("race-{v}.ndjson"), &records)
        })
        .collect();
    // The loser of each order must be refused exactly as the embedded store refuses it.
    let expected = [
        embedded_rejection(&scratch, &[], &files[1], &files[0]),
        embedded_rejection(&scratch, &[], &files[0], &files[1]),
    ];
    let mut raced = 0;
    for trial in 0..RACE_TRIALS {
        let url = graph_url("race");
        let runs = race(
            &scratch,
            &url,
            &[ingest_args(&files[0]), ingest_args(&files[1])],
        );
        let (winner, loser) = one_winner(&runs);
        assert_eq!(
            rejection(&runs[loser].output),
            expected[loser],
            "trial {trial}: the loser is refused with the embedded store's words"
        );
        raced += usize::from(runs[loser].retried);

        let store = FalkorStore::connect(&url).unwrap();
        let episode = store.episode("INC-RACE").unwrap().unwrap();
        assert_eq!(episode.summary_nl, versions[winner], "trial {trial}");
        let entities: BTreeSet<String> = store
            .facts("INC-RACE")
            .unwrap()
            .into_iter()
            .map(|f| f.entity.to_string())
            .collect();
        assert_eq!(
            entities,
            BTreeSet::from([format!("service|{}", versions[winner].to_lowercase())]),
            "trial {trial}: the winner's facts and only those"
        );
        assert_eq!(store.stats().unwrap().episodes as usize, RACE_PADDING + 1);
        assert_eq!(store.generation().unwrap(), 1, "one write landed");
        check_passes(&scratch, &url);
    }
    assert!(
        raced > 0,
        "in none of {RACE_TRIALS} trials did both writers validate before either wrote"
    );
}

#[test]
fn two_supersessions_of_one_fact_racing_one_wins_and_the_other_is_refused() {
    let scratch = Scratch::new();
    let prior = scratch.file("prior.ndjson", &[record("INC-P", "2026-02-01T00:00:00Z")]);
    let closings: Vec<PathBuf> = ["2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"]
        .iter()
        .enumerate()
        .map(|(n, at)| {
            let mut closing = record(&format!("INC-Q{n}"), at);
            closing["supersedes"] = json!([{
                "incident_fingerprint": "INC-P", "entity_type": "change", "entity_ref": "cfg-INC-P",
                "t_invalid": at
            }]);
            let mut records = vec![closing];
            records.extend(padding(&format!("Q{n}"), 500));
            scratch.file(&format!("closing-{n}.ndjson"), &records)
        })
        .collect();
    let expected = [
        embedded_rejection(&scratch, &[prior.as_path()], &closings[1], &closings[0]),
        embedded_rejection(&scratch, &[prior.as_path()], &closings[0], &closings[1]),
    ];
    assert!(
        expected[0]
            .iter()
            .any(|l| l.contains("refusing to re-invalidate"))
    );
    for trial in 0..5 {
        let url = graph_url("supersede");
        succeed(&scratch, Some(&url), SETUP_AT, &ingest_args(&prior));
        let runs = race(
            &scratch,
            &url,
            &[ingest_args(&closings[0]), ingest_args(&closings[1])],
        );
        let (winner, loser) = one_winner(&runs);
        assert_eq!(
            rejection(&runs[loser].output),
            expected[loser],
            "trial {trial}"
        );
        let store = FalkorStore::connect(&url).unwrap();
        let closed: Vec<_> = store
            .facts("INC-P")
            .unwrap()
            .into_iter()
            .filter(|f| f.t_invalid.is_some())
            .collect();
        assert_eq!(closed.len(), 1, "trial {trial}");
        assert_eq!(
            closed[0].superseded_by.as_deref(),
            Some(format!("INC-Q{winner}").as_str()),
            "trial {trial}: closed by the winner, at its time"
        );
        assert_eq!(
            store.superseded_by("INC-P").unwrap().len(),
            1,
            "no orphaned lineage edge"
        );
        check_passes(&scratch, &url);
    }
}

#[test]
fn two_versions_of_the_same_skills_racing_are_both_kept() {
    let scratch = Scratch::new();
    const SKILLS: usize = 200;
    let skills = |steps: &str| -> Vec<Value> {
        (0..SKILLS)
            .map(|i| {
                json!({"name": format!("runbook-{i:03}"), "trigger_entities": ["service:authelia"],
                       "steps": [steps]})
            })
            .collect()
    };
    let base = scratch.file("skills-base.ndjson", &skills("restart"));
    let versions = ["flush sessions", "rotate the secret"];
    let files: Vec<PathBuf> = versions
        .iter()
        .enumerate()
        .map(|(n, steps)| scratch.file(&format!("skills-{n}.ndjson"), &skills(steps)))
        .collect();
    for trial in 0..5 {
        let url = graph_url("skills");
        succeed(&scratch, Some(&url), SETUP_AT, &skill_add_args(&base));
        let runs = race(
            &scratch,
            &url,
            &[skill_add_args(&files[0]), skill_add_args(&files[1])],
        );
        for r in &runs {
            assert!(
                r.output.status.success(),
                "trial {trial}: {}",
                stderr(&r.output)
            );
        }
        let store = FalkorStore::connect(&url).unwrap();
        let all = store.skills().unwrap();
        assert_eq!(all.len(), 3 * SKILLS, "trial {trial}: every version kept");
        for i in 0..SKILLS {
            let name = format!("runbook-{i:03}");
            let mut of: Vec<_> = all.iter().filter(|s| s.name == name).collect();
            of.sort_by_key(|s| s.version);
            assert_eq!(
                of.iter().map(|s| s.version).collect::<Vec<_>>(),
                [1, 2, 3],
                "trial {trial}: {name}"
            );
            let later: BTreeSet<&str> = of[1..].iter().map(|s| s.steps[0].as_str()).collect();
            assert_eq!(later, BTreeSet::from(versions), "trial {trial}: {name}");
        }
    }
}

#[test]
fn two_batches_that_do_not_conflict_racing_both_land() {
    let scratch = Scratch::new();
    let files: Vec<PathBuf> = ["X", "Y"]
        .iter()
        .map(|side| scratch.file(&format!("{side}.ndjson"), &padding(side, 1_000)))
        .collect();
    for trial in 0..5 {
        let url = graph_url("disjoint");
        let runs = race(
            &scratch,
            &url,
            &[ingest_args(&files[0]), ingest_args(&files[1])],
        );
        for r in &runs {
            assert!(
                r.output.status.success(),
                "trial {trial}: {}",
                stderr(&r.output)
            );
        }
        let store = FalkorStore::connect(&url).unwrap();
        assert_eq!(store.stats().unwrap().episodes, 2_000, "trial {trial}");
        assert_eq!(store.generation().unwrap(), 2, "trial {trial}: two writes");
        check_passes(&scratch, &url);
    }
}

/// The writer is killed while its batch is being written (the server's main thread is busy
/// with it, which a PING that goes unanswered proves): the server finishes the batch it was
/// sent, whole, and the next writer is blocked by nothing.
#[test]
fn a_writer_killed_mid_batch_blocks_no_one() {
    let scratch = Scratch::new();
    // A server of its own: the probe below reads a blocked main thread as this writer's batch
    // in flight, which another test's write on a shared server would fake.
    let server = common::falkordb::Server::start(None);
    let url: FalkorUrl = format!("falkordb://127.0.0.1:{}/killed", server.port)
        .parse()
        .unwrap();
    let big = scratch.file("big.ndjson", &padding("BIG", 8_000));
    let small = scratch.file("small.ndjson", &padding("SMALL", 100));
    let mut child = command(&scratch.data(), Some(&url), NOW, &ingest_args(&big))
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines {
        let line = line.unwrap();
        seen.push(line.clone());
        if line.ends_with("writing") {
            break;
        }
    }
    assert!(seen.iter().any(|l| l.ends_with("writing")), "{seen:?}");
    let addr = format!("{}:{}", url.host, url.port);
    let writing = common::falkordb::wait_until_writing(
        &addr,
        &mut || child.try_wait().unwrap().is_some(),
        Duration::from_secs(60),
    );
    assert!(writing, "the batch was never seen in flight: {seen:?}");
    child.kill().unwrap();
    child.wait().unwrap();

    succeed(&scratch, Some(&url), NOW, &ingest_args(&small));
    let store = FalkorStore::connect(&url).unwrap();
    assert_eq!(
        store.stats().unwrap().episodes,
        8_100,
        "a batch in flight when its writer died lands whole"
    );
    assert!(store.episode("PAD-SMALL-00099").unwrap().is_some());
    check_passes(&scratch, &url);
}

#[test]
fn identity_and_generation_come_from_one_meta_node_that_only_a_write_creates() {
    let url = graph_url("meta");
    let store = FalkorStore::connect(&url).unwrap();
    assert_eq!(store.identity().unwrap(), None);
    assert_eq!(store.generation().unwrap(), 0);
    assert_eq!(store.identity().unwrap(), None, "reading created nothing");

    let first = [record("INC-1", "2026-03-01T00:00:00Z")];
    common::ingest_at(&store, &first, SETUP_AT).unwrap();
    let id = store
        .identity()
        .unwrap()
        .expect("the first write records an identity");
    assert_eq!(id.len(), 36, "a UUID: {id}");
    assert_eq!(store.generation().unwrap(), 1);

    common::ingest_at(&store, &first, NOW).unwrap();
    assert_eq!(
        store.generation().unwrap(),
        1,
        "nothing new, nothing written"
    );
    let mut rewritten = record("INC-1", "2026-03-01T00:00:00Z");
    rewritten["summary_nl"] = json!("another summary");
    assert!(common::ingest_at(&store, &[rewritten], NOW).is_err());
    assert_eq!(
        store.generation().unwrap(),
        1,
        "a refused batch writes nothing"
    );

    common::ingest_at(&store, &[record("INC-2", "2026-03-02T00:00:00Z")], NOW).unwrap();
    assert_eq!(store.generation().unwrap(), 2);
    let again = FalkorStore::connect(&url).unwrap();
    assert_eq!(
        again.identity().unwrap(),
        Some(id),
        "stable across connections"
    );
}
