//! The corruption campaign: copies of a store with its indexes, each damaged one way (cut
//! short, a whole page of garbage, 16 bytes flipped at a seeded offset) in the store's file,
//! the vector index's file or a text index segment, and every read command run on each, then
//! `check`. The targets: no command ends by a signal or hangs, and none answers other than the
//! undamaged store did while exiting 0 (a recall whose legs say they failed or lag is not
//! lying; one whose legs all say `ok` must answer as before); `check` fails wherever the damage
//! shows; and a damaged index is whole again after one `strata index`. The counts are printed
//! (`cargo test --test corruption -- --nocapture`) and go in docs/reliability.md.

mod common;

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::copy_dir;
use serde_json::Value;

const NOW: &str = "2026-12-01T00:00:00Z";
/// A command still running after this long is a hang.
const HANG: Duration = Duration::from_secs(60);
/// The exit status of a process that stopped on a damaged file with a message.
const DAMAGED_EXIT: i32 = strata::lmdb::fatal::DAMAGED_EXIT;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Store,
    Vectors,
    Text,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    /// Cut to half its length, to 8 KiB, or one page short.
    Half,
    Small,
    PageShort,
    /// A whole 4 KiB page of garbage at a page picked by the seed.
    Page(u64),
    /// 16 bytes flipped at an offset picked by the seed.
    Flip(u64),
}

#[derive(Clone, Copy, Debug)]
struct Damage {
    target: Target,
    kind: Kind,
}

/// The campaign: truncations, pages and flips for each target.
fn campaign() -> Vec<Damage> {
    let mut all = Vec::new();
    for (target, pages, flips) in [
        (Target::Store, 30u64, 80u64),
        (Target::Vectors, 15, 30),
        (Target::Text, 15, 30),
    ] {
        for kind in [Kind::Half, Kind::Small, Kind::PageShort] {
            all.push(Damage { target, kind });
        }
        for seed in 0..pages {
            all.push(Damage {
                target,
                kind: Kind::Page(seed * 7919 + 13),
            });
        }
        for seed in 0..flips {
            all.push(Damage {
                target,
                kind: Kind::Flip(seed * 104_729 + 101),
            });
        }
    }
    all
}

fn run(data: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .env("STRATA_EMBEDDER", "hash")
        .env("XDG_CONFIG_HOME", data.join("no-user-config"))
        .env_remove("STRATA_STORE")
        .arg("--data")
        .arg(data)
        .args(["--now", NOW])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut bytes).ok();
        bytes
    });
    let err_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut bytes).ok();
        bytes
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > HANG {
            child.kill().unwrap();
            let _ = child.wait();
            panic!(
                "HANG: strata {args:?} on {} ran past {HANG:?}",
                data.display()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// What an answer is, for comparing: the output itself, except for recall, whose answer is
/// its ranked results with their summaries and whether every leg said `ok` (latencies vary),
/// and the statistics, whose recall counters count the campaign's own recalls.
fn answer(args: &[&str], out: &Output) -> (String, bool) {
    if args[0] == "stats"
        && let Ok(mut v) = serde_json::from_slice::<Value>(&out.stdout)
        && let Some(o) = v.as_object_mut()
    {
        o.remove("recall");
        return (v.to_string(), true);
    }
    if args[0] != "recall" {
        return (String::from_utf8_lossy(&out.stdout).into_owned(), true);
    }
    let Ok(v) = serde_json::from_slice::<Value>(&out.stdout) else {
        return (String::from_utf8_lossy(&out.stdout).into_owned(), false);
    };
    let results: Vec<String> = v["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| format!("{} {} {}", r["fingerprint"], r["summary"], r["rrf_score"]))
        .collect();
    // Every leg said ok, and no result says its record could not be read: a recall that says
    // what it could not do is not lying.
    let all_ok = ["semantic", "bm25", "graph"]
        .iter()
        .all(|leg| v["legs"][leg]["status"] == "ok")
        && !results
            .iter()
            .any(|r| r.contains("its record cannot be read"));
    (results.join("\n"), all_ok)
}

/// Every read command, on fingerprints and entities of the undamaged store.
fn read_commands(data: &Path) -> Vec<Vec<String>> {
    let out = run(data, &["timeline", "--limit", "500", "--json"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let timeline: Value = serde_json::from_slice(&out.stdout).unwrap();
    let fps: Vec<String> = timeline["episodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["incident_fingerprint"].as_str().unwrap().to_string())
        .collect();
    assert!(fps.len() > 100, "the demo memory: {}", fps.len());
    let picked = [
        &fps[0],
        &fps[fps.len() / 3],
        &fps[fps.len() * 2 / 3],
        &fps[fps.len() - 1],
    ];
    let facts = run(data, &["facts", picked[1], "--json"]);
    let facts: Value = serde_json::from_slice(&facts.stdout).unwrap();
    let entity = format!(
        "{}:{}",
        facts["facts"][0]["entity_type"].as_str().unwrap(),
        facts["facts"][0]["entity_ref"].as_str().unwrap()
    );
    let mut commands: Vec<Vec<String>> = vec![
        vec!["timeline".into(), "--json".into()],
        vec![
            "timeline".into(),
            "--limit".into(),
            "500".into(),
            "--json".into(),
        ],
        vec![
            "timeline".into(),
            "--entity".into(),
            entity.clone(),
            "--json".into(),
        ],
        vec!["stats".into(), "--json".into()],
        vec!["skills".into(), "--all".into(), "--json".into()],
    ];
    for fp in picked {
        for what in ["facts", "lineage", "lesson"] {
            commands.push(vec![what.into(), fp.clone(), "--json".into()]);
        }
    }
    commands.push(vec![
        "recall".into(),
        "users stuck in a login loop after the session secret rotated".into(),
        "--entity".into(),
        entity,
        "--json".into(),
    ]);
    commands
}

/// The file a damage goes to in `data`: the store's, the vector index's, or the largest file
/// of the text index's segments picked by the seed.
fn target_file(data: &Path, damage: &Damage) -> PathBuf {
    match damage.target {
        Target::Store => data.join("store/data.mdb"),
        Target::Vectors => {
            let dir = std::fs::read_dir(data.join("index"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("vectors"))
                })
                .unwrap();
            dir.join("data.mdb")
        }
        Target::Text => {
            let mut files: Vec<PathBuf> = std::fs::read_dir(data.join("index/bm25"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    !name.starts_with('.') && !name.ends_with(".json") && !name.ends_with(".lock")
                })
                .collect();
            files.sort();
            let seed = match damage.kind {
                Kind::Page(s) | Kind::Flip(s) => s,
                _ => 0,
            };
            files[(seed as usize / 7) % files.len()].clone()
        }
    }
}

fn damage(file: &Path, kind: Kind) {
    let mut bytes = std::fs::read(file).unwrap();
    let len = bytes.len();
    match kind {
        Kind::Half => bytes.truncate(len / 2),
        Kind::Small => bytes.truncate(8192.min(len / 2)),
        Kind::PageShort => bytes.truncate(len.saturating_sub(4096).max(len / 2)),
        Kind::Page(seed) => {
            let mut rng = fastrand::Rng::with_seed(seed);
            let pages = len.div_ceil(4096).max(1);
            let at = rng.usize(0..pages) * 4096;
            let end = (at + 4096).min(len);
            rng.fill(&mut bytes[at..end]);
        }
        Kind::Flip(seed) => {
            let mut rng = fastrand::Rng::with_seed(seed);
            let at = rng.usize(0..len.saturating_sub(16).max(1));
            for b in &mut bytes[at..(at + 16).min(len)] {
                *b ^= rng.u8(1..=255);
            }
        }
    }
    std::fs::write(file, bytes).unwrap();
}

#[derive(Default, Debug)]
struct Counts {
    damaged_copies: usize,
    commands: usize,
    signals: Vec<String>,
    wrong_answers: Vec<String>,
    stopped_with_message: usize,
    refused: usize,
    check_missed: Vec<String>,
    check_found: usize,
    not_whole_after_index: Vec<String>,
    unobservable: usize,
}

fn one(
    base: &Path,
    scratch: &Path,
    n: usize,
    d: Damage,
    reference: &[(Vec<String>, Output)],
) -> Counts {
    let mut c = Counts {
        damaged_copies: 1,
        ..Counts::default()
    };
    let data = scratch.join(format!("copy-{n}"));
    copy_dir(base, &data);
    let file = target_file(&data, &d);
    damage(&file, d.kind);
    let what = format!("{d:?} on {}", file.strip_prefix(&data).unwrap().display());
    let mut observable = false;
    let note = |out: &Output, args: &[String], c: &mut Counts| {
        c.commands += 1;
        if let Some(signal) = out.status.signal() {
            c.signals.push(format!(
                "{what}: strata {args:?} ended by signal {signal}: {}",
                common::stderr(out)
            ));
        } else if out.status.code() == Some(DAMAGED_EXIT) {
            c.stopped_with_message += 1;
        }
    };
    for (args, expected) in reference {
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&data, &argv);
        note(&out, args, &mut c);
        let (got, all_ok) = answer(&argv, &out);
        let (want, _) = answer(&argv, expected);
        if !out.status.success() {
            observable = true;
            c.refused += 1;
            let said = common::stderr(&out);
            assert!(
                !said.contains("\u{1b}[") && said.len() < 8192,
                "{what}: strata {args:?} said too much, or raw escapes: {said:?}"
            );
        } else if got != want {
            observable = true;
            if all_ok {
                c.wrong_answers.push(format!(
                    "{what}: strata {args:?} answered otherwise:\n{got}\ninstead of\n{want}"
                ));
                // For a look afterwards: STRATA_KEEP_DAMAGED=DIR keeps the copy there.
                if let Some(keep) = std::env::var_os("STRATA_KEEP_DAMAGED") {
                    copy_dir(&data, &PathBuf::from(keep).join(format!("copy-{n}")));
                }
            }
        } else if !all_ok {
            observable = true;
        }
    }
    // `check` checks the store; a damaged index is the next `strata index`'s to find.
    let check = run(&data, &["check"]);
    note(&check, &["check".into()], &mut c);
    match (observable, check.status.success()) {
        (true, true) if d.target == Target::Store => c.check_missed.push(format!(
            "{what}: check passed a store whose answers changed"
        )),
        (_, false) => c.check_found += 1,
        (false, true) => c.unobservable += 1,
        (true, true) => {}
    }
    if d.target != Target::Store {
        let index = run(&data, &["index"]);
        note(&index, &["index".into()], &mut c);
        let recall = reference.last().unwrap();
        let argv: Vec<&str> = recall.0.iter().map(String::as_str).collect();
        let after = run(&data, &argv);
        note(&after, &recall.0, &mut c);
        let (got, all_ok) = answer(&argv, &after);
        if !index.status.success() || !all_ok || got != answer(&argv, &recall.1).0 {
            c.not_whole_after_index.push(format!(
                "{what}: after one `strata index` (exit {:?}: {}), recall is not as before",
                index.status.code(),
                common::stderr(&index).trim()
            ));
        }
    }
    std::fs::remove_dir_all(&data).ok();
    c
}

#[test]
fn no_damage_crashes_strata_or_makes_it_lie() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    assert!(run(&base, &["demo"]).status.success());
    let indexed = run(&base, &["index"]);
    assert!(indexed.status.success(), "{}", common::stderr(&indexed));
    let reference: Vec<(Vec<String>, Output)> = read_commands(&base)
        .into_iter()
        .map(|args| {
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = run(&base, &argv);
            assert!(out.status.success(), "{args:?}: {}", common::stderr(&out));
            (args, out)
        })
        .collect();
    assert!(run(&base, &["check"]).status.success());

    let damages = campaign();
    let next = Mutex::new(0usize);
    let total = Mutex::new(Counts::default());
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let n = {
                        let mut next = next.lock().unwrap();
                        *next += 1;
                        *next - 1
                    };
                    let Some(d) = damages.get(n) else { break };
                    let c = one(&base, dir.path(), n, *d, &reference);
                    let mut t = total.lock().unwrap();
                    t.damaged_copies += c.damaged_copies;
                    t.commands += c.commands;
                    t.signals.extend(c.signals);
                    t.wrong_answers.extend(c.wrong_answers);
                    t.stopped_with_message += c.stopped_with_message;
                    t.refused += c.refused;
                    t.check_missed.extend(c.check_missed);
                    t.check_found += c.check_found;
                    t.not_whole_after_index.extend(c.not_whole_after_index);
                    t.unobservable += c.unobservable;
                }
            });
        }
    });
    let t = total.into_inner().unwrap();
    let summary = format!(
        "corruption campaign: {} damaged copies, {} commands in {:.0?}: {} ended by a signal, \
         {} hung, {} answered otherwise while exiting 0, {} refused with a message ({} of them \
         stopped on a damaged page, exit {DAMAGED_EXIT}); check found {} damaged copies and \
         passed {} whose answers changed; {} damages changed no answer; {} damaged indexes not \
         whole after one `strata index`",
        t.damaged_copies,
        t.commands,
        started.elapsed(),
        t.signals.len(),
        0,
        t.wrong_answers.len(),
        t.refused,
        t.stopped_with_message,
        t.check_found,
        t.check_missed.len(),
        t.unobservable,
        t.not_whole_after_index.len(),
    );
    // Past the test harness's capture: the counts are the point of the run.
    let _ = writeln!(std::io::stderr(), "{summary}");
    for line in t
        .signals
        .iter()
        .chain(&t.wrong_answers)
        .chain(&t.check_missed)
        .chain(&t.not_whole_after_index)
    {
        let _ = writeln!(std::io::stderr(), "  {line}");
    }
    assert!(t.signals.is_empty(), "{summary}");
    assert!(t.wrong_answers.is_empty(), "{summary}");
    assert!(t.check_missed.is_empty(), "{summary}");
    assert!(t.not_whole_after_index.is_empty(), "{summary}");
}

/// One record damaged in place, its checksum no longer holding: the indexes are built without
/// it and say so; `check` lists it by table and key; reading that episode is refused naming
/// the table and key, and every other read goes on.
#[test]
fn one_bad_record_does_not_stop_the_world() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    assert!(run(&data, &["demo"]).status.success());
    let out = run(&data, &["timeline", "--limit", "500", "--json"]);
    let timeline: Value = serde_json::from_slice(&out.stdout).unwrap();
    let episodes = timeline["episodes"].as_array().unwrap();
    // An episode whose summary no other episode shares, so only it is damaged.
    let texts: Vec<&str> = episodes
        .iter()
        .flat_map(|e| {
            [
                e["summary_nl"].as_str().unwrap(),
                e["resolution_nl"].as_str().unwrap(),
            ]
        })
        .collect();
    let (bad, summary) = episodes
        .iter()
        .map(|e| {
            (
                e["incident_fingerprint"].as_str().unwrap().to_string(),
                e["summary_nl"].as_str().unwrap().to_string(),
            )
        })
        .find(|(_, s)| s.len() > 40 && texts.iter().filter(|t| t.contains(s.as_str())).count() == 1)
        .unwrap();
    let good = episodes
        .iter()
        .map(|e| e["incident_fingerprint"].as_str().unwrap())
        .find(|fp| *fp != bad)
        .unwrap()
        .to_string();
    // Every copy of the summary in the file (pages earlier transactions left hold older ones),
    // so the live one is among them; and the indexes go, to be built from the damaged store.
    let file = data.join("store/data.mdb");
    let mut bytes = std::fs::read(&file).unwrap();
    let copies: Vec<usize> = bytes
        .windows(summary.len())
        .enumerate()
        .filter(|(_, w)| *w == summary.as_bytes())
        .map(|(at, _)| at)
        .collect();
    assert!(
        !copies.is_empty(),
        "the summary is stored as it was written"
    );
    for at in copies {
        bytes[at + summary.len() / 2] ^= 0x20;
    }
    std::fs::write(&file, bytes).unwrap();
    std::fs::remove_dir_all(data.join("index")).unwrap();

    let index = run(&data, &["index", "--json"]);
    assert!(index.status.success(), "{}", common::stderr(&index));
    assert!(
        common::stderr(&index).contains("1 episode(s) of the store cannot be read"),
        "{}",
        common::stderr(&index)
    );
    let report: Value = serde_json::from_slice(&index.stdout).unwrap();
    assert_eq!(report["text_documents"], episodes.len() - 1, "{report}");
    assert_eq!(report["vectors"], episodes.len() - 1, "{report}");

    let check = run(&data, &["check", "--json"]);
    assert!(!check.status.success());
    let found: Value = serde_json::from_slice(&check.stdout).unwrap();
    let key = format!("corrupt record in episodes at key {bad:?}");
    assert!(
        found["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p.as_str().unwrap().contains(&key)),
        "{found}"
    );

    let facts = run(&data, &["facts", &bad]);
    assert!(!facts.status.success());
    assert!(
        common::stderr(&facts).contains(&key),
        "{}",
        common::stderr(&facts)
    );
    for args in [
        vec!["facts", good.as_str()],
        vec!["stats"],
        vec!["recall", "login loop", "--json"],
    ] {
        let out = run(&data, &args);
        assert!(out.status.success(), "{args:?}: {}", common::stderr(&out));
    }
}

/// A store file that is cut short, emptied or missing is refused by every command with a
/// message naming the file, what is wrong and what to do; never mapped, never taken for a new
/// store over indexes built from the old one.
#[test]
fn a_short_empty_or_missing_store_file_is_refused_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base");
    assert!(run(&base, &["demo"]).status.success());
    assert!(run(&base, &["index"]).status.success());
    type Cut<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, Cut); 4] = [
        ("one page short", &|f: &Path| {
            let len = std::fs::metadata(f).unwrap().len();
            std::fs::OpenOptions::new()
                .write(true)
                .open(f)
                .unwrap()
                .set_len(len - 4096)
                .unwrap();
        }),
        ("8 KiB", &|f: &Path| {
            std::fs::OpenOptions::new()
                .write(true)
                .open(f)
                .unwrap()
                .set_len(8192)
                .unwrap();
        }),
        ("empty", &|f: &Path| std::fs::write(f, b"").unwrap()),
        ("missing", &|f: &Path| std::fs::remove_file(f).unwrap()),
    ];
    for (i, (what, cut)) in cases.iter().enumerate() {
        let data = dir.path().join(format!("case-{i}"));
        copy_dir(&base, &data);
        let file = data.join("store/data.mdb");
        cut(&file);
        for args in [
            vec!["stats"],
            vec!["timeline"],
            vec!["recall", "login loop"],
            vec!["check"],
        ] {
            let out = run(&data, &args);
            let said = common::stderr(&out) + &common::stdout(&out);
            assert_eq!(
                out.status.signal(),
                None,
                "{what}: {args:?} by a signal: {said}"
            );
            assert!(!out.status.success(), "{what}: {args:?} succeeded: {said}");
            assert!(
                said.contains(file.to_str().unwrap()) && said.contains("backup"),
                "{what}: {args:?} names the file and what to do: {said}"
            );
        }
        if i >= 2 {
            assert!(
                !file.exists() || std::fs::metadata(&file).unwrap().len() == 0,
                "{what}: no new store was made in its place"
            );
        }
        let index = data.join("index/bm25/meta.json");
        assert!(index.is_file(), "{what}: the indexes are left as they were");
    }
}

/// The store's file put back to an older copy: `check` says so, from the generation the last
/// write recorded outside the file.
#[test]
fn a_store_rolled_back_to_an_older_copy_is_caught_by_check() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    assert!(run(&data, &["demo"]).status.success());
    let backup = dir.path().join("backup");
    copy_dir(&data.join("store"), &backup);
    let file = dir.path().join("more.ndjson");
    std::fs::write(
        &file,
        common::ndjson(&[common::record("LATER-1", "2026-11-20T10:00:00Z")]),
    )
    .unwrap();
    assert!(
        run(&data, &["ingest", "--no-index", file.to_str().unwrap()])
            .status
            .success()
    );
    assert!(run(&data, &["check"]).status.success());

    std::fs::remove_dir_all(data.join("store")).unwrap();
    copy_dir(&backup, &data.join("store"));
    let check = run(&data, &["check"]);
    assert!(!check.status.success());
    let said = common::stdout(&check);
    assert!(said.contains("rolled back to an older copy"), "{said}");
}
