//! `strata export`, `restore` and `backup`: lossless round trips between the embedded store
//! and FalkorDB (byte for byte, and every view at a grid of (V, K)), refused files that write
//! nothing, a killed restore run again, and an online backup under a concurrent writer.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{
    falkordb, ingest_at, record, seed_superseded, shared_dir, strata, strata_command, ts,
};
use strata::model::{AsOf, Timestamp};
use strata::store::embedded::EmbeddedStore;
use strata::store::falkordb::FalkorStore;
use strata::store::{MemoryStore, TimelineQuery};
use strata::transfer::TransferError;
use strata::transfer::export::{Destination, ExportOptions, export};
use strata::transfer::format;
use strata::transfer::restore::{RestoreOptions, restore};

fn export_bytes(store: &dyn MemoryStore, known_at: Option<Timestamp>) -> Vec<u8> {
    let mut out = Vec::new();
    export(
        store,
        &ExportOptions {
            known_at,
            embedding_model: Some("hash".into()),
            vectors: None,
        },
        Destination::Writer(&mut out),
        &mut |_, _| {},
    )
    .unwrap();
    out
}

fn restore_file(store: &dyn MemoryStore, file: &Path) -> Result<&'static str, TransferError> {
    restore(store, file, RestoreOptions::default(), &mut |_, _| {}).map(|r| r.outcome)
}

/// The demo memory and the public postmortems, in one embedded store.
fn demo_and_postmortems(dir: &Path) -> EmbeddedStore {
    let store = EmbeddedStore::open(dir).unwrap();
    strata::demo::seed(&store).unwrap();
    strata::import::postmortems::import_dir(
        &store,
        &shared_dir().join("data/postmortems"),
        ts("2027-06-01T00:00:00Z"),
    )
    .unwrap();
    store
}

/// Every view the explorer and the CLI answer from, compared on two stores at a grid of
/// knowledge times K and valid times V: the timeline as of K, each episode's facts with
/// their state at (V, K), its lineage both ways, and its lesson.
fn assert_same_memory(a: &dyn MemoryStore, b: &dyn MemoryStore) {
    let all = a
        .timeline(&TimelineQuery {
            limit: usize::MAX,
            ..TimelineQuery::default()
        })
        .unwrap();
    assert!(!all.is_empty());
    let mut times: Vec<Timestamp> = all.iter().map(|e| e.ingested_at).collect();
    times.sort();
    let grid: Vec<Timestamp> = [0, times.len() / 3, times.len() / 2, times.len() - 1]
        .iter()
        .map(|&i| times[i])
        .chain([ts("2020-01-01T00:00:00Z"), ts("2030-01-01T00:00:00Z")])
        .collect();
    for &k in &grid {
        let q = TimelineQuery {
            known_at: Some(k),
            limit: usize::MAX,
            ..TimelineQuery::default()
        };
        assert_eq!(
            a.timeline(&q).unwrap(),
            b.timeline(&q).unwrap(),
            "timeline at K={k}"
        );
    }
    for e in &all {
        let fp = &e.incident_fingerprint;
        let (fa, fb) = (a.facts(fp).unwrap(), b.facts(fp).unwrap());
        assert_eq!(fa, fb, "facts of {fp}");
        for &k in &grid {
            for &v in &grid {
                let at = AsOf {
                    valid_at: v,
                    known_at: k,
                };
                let sa: Vec<_> = fa.iter().map(|f| at.fact_state(f)).collect();
                let sb: Vec<_> = fb.iter().map(|f| at.fact_state(f)).collect();
                assert_eq!(sa, sb, "states of {fp}'s facts at V={v} K={k}");
            }
        }
        assert_eq!(a.supersedes(fp).unwrap(), b.supersedes(fp).unwrap(), "{fp}");
        assert_eq!(a.superseded_by(fp).unwrap(), b.superseded_by(fp).unwrap());
        assert_eq!(
            a.lesson(fp).unwrap(),
            b.lesson(fp).unwrap(),
            "lesson of {fp}"
        );
    }
    assert_eq!(a.skills().unwrap(), b.skills().unwrap());
    assert_eq!(a.code_units().unwrap(), b.code_units().unwrap());
    assert_eq!(a.stats().unwrap(), b.stats().unwrap());
}

#[test]
fn embedded_export_is_deterministic_and_restores_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let a = demo_and_postmortems(&dir.path().join("a"));
    let first = export_bytes(&a, None);
    assert_eq!(
        first,
        export_bytes(&a, None),
        "the same store exports the same bytes"
    );
    let file = dir.path().join("a.ndjson");
    std::fs::write(&file, &first).unwrap();

    let b = EmbeddedStore::open(&dir.path().join("b")).unwrap();
    assert_eq!(restore_file(&b, &file).unwrap(), "restored");
    assert_eq!(export_bytes(&b, None), first);
    assert_same_memory(&a, &b);
    // Run again on the store it made, the restore has nothing to do.
    assert_eq!(restore_file(&b, &file).unwrap(), "already_restored");
}

/// The file's lines, each without its newline.
fn lines_of(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

fn join(lines: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

/// The lines again, each line's chain recomputed from its content (a careful forger).
fn rechain(lines: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut chain = 0;
    for l in lines {
        let mut content = Vec::new();
        let n = l.len();
        content.extend_from_slice(&l[..n - 28]);
        content.push(b'}');
        chain = format::frame(&content, chain, &mut out);
    }
    out
}

/// The lines with every chain recomputed and the trailer's SHA-256 made to match (a file
/// another writer made with these records).
fn with_trailer_sha(lines: &[Vec<u8>]) -> Vec<u8> {
    use sha2::Digest;
    let n = lines.len();
    let body = rechain(&lines[..n - 1]);
    let mut sha = sha2::Sha256::new();
    for l in lines_of(&body).iter().skip(1) {
        sha.update(l);
        sha.update(b"\n");
    }
    let mut trailer = String::from_utf8(lines[n - 1].clone()).unwrap();
    let at = trailer.find("\"sha256\":\"").unwrap() + 10;
    trailer.replace_range(at..at + 64, &format::hex(&sha.finalize()));
    let mut lines = lines_of(&body);
    lines.push(trailer.into_bytes());
    rechain(&lines)
}

fn refused(bytes: &[u8]) -> (u64, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.ndjson");
    std::fs::write(&file, bytes).unwrap();
    let store = EmbeddedStore::open(&dir.path().join("s")).unwrap();
    let err = restore_file(&store, &file).unwrap_err();
    assert_eq!(
        store.stats().unwrap().episodes,
        0,
        "a refused file wrote nothing"
    );
    assert!(store.skills().unwrap().is_empty());
    match err {
        TransferError::Refused { line, message, .. } => (line, message),
        other => panic!("expected a refusal, got {other}"),
    }
}

#[test]
fn damaged_files_are_refused_naming_the_line_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    strata::demo::seed(&store).unwrap();
    let good = export_bytes(&store, None);
    let lines = lines_of(&good);
    let n = lines.len();

    // Cut short: the trailer missing, or the last line cut in the middle.
    let (line, m) = refused(&join(&lines[..n - 1]));
    assert!(
        m.contains("without its trailer") && line == (n - 1) as u64,
        "{m}"
    );
    let (line, m) = refused(&good[..good.len() - 40]);
    assert_eq!(line, n as u64, "{m}");

    // Two records swapped: the first of them is named.
    let mut swapped = lines.clone();
    swapped.swap(40, 41);
    let (line, m) = refused(&join(&swapped));
    assert_eq!(line, 41, "{m}");
    assert!(m.contains("chain"), "{m}");

    // One character of a summary changed.
    let mut tampered = lines.clone();
    let episode = (50..n)
        .find(|&i| lines[i].starts_with(b"{\"kind\":\"episode\""))
        .unwrap();
    let at = tampered[episode]
        .windows(12)
        .position(|w| w == b"\"summary_nl\"")
        .unwrap()
        + 15;
    tampered[episode][at] ^= 0x01;
    let (line, m) = refused(&join(&tampered));
    assert_eq!(line, episode as u64 + 1, "{m}");

    // Changed with every chain recomputed: the trailer's SHA-256 still tells.
    let (line, m) = refused(&rechain(&tampered));
    assert!(m.contains("SHA-256") && line == n as u64, "{m}");

    // Reordered with chains recomputed: the order of the records tells, at the line.
    let (line, m) = refused(&rechain(&swapped));
    assert_eq!(line, 42, "{m}");

    // A record removed with chains recomputed: the counts tell.
    let mut removed = lines.clone();
    removed.remove(200);
    let (_, m) = refused(&rechain(&removed));
    assert!(m.contains("counts"), "{m}");

    // A newer format is refused at the header, before its records are read.
    let mut newer = lines.clone();
    newer[0] = String::from_utf8(newer[0].clone())
        .unwrap()
        .replace("\"format_version\":2", "\"format_version\":3")
        .into_bytes();
    let (line, m) = refused(&rechain(&newer));
    assert!(line == 1 && m.contains("format version 3 is newer"), "{m}");

    // Not an export at all.
    let (line, _) = refused(b"{\"incident_fingerprint\":\"x\"}\n");
    assert_eq!(line, 1);
}

#[test]
fn a_store_that_is_not_empty_is_refused_unless_merging_by_ingests_rules() {
    let dir = tempfile::tempdir().unwrap();
    let a = EmbeddedStore::open(&dir.path().join("a")).unwrap();
    common::ingest_at(
        &a,
        &[common::record("INC-A1", "2026-01-01T00:00:00Z")],
        "2026-01-02T00:00:00Z",
    )
    .unwrap();
    let file = dir.path().join("a.ndjson");
    std::fs::write(&file, export_bytes(&a, None)).unwrap();

    // B learned something else later than A's episode: merging A's would rewrite what B
    // knew at an earlier K, and is refused; an unmerged restore is refused outright.
    let b = EmbeddedStore::open(&dir.path().join("b")).unwrap();
    common::ingest_at(
        &b,
        &[common::record("INC-B1", "2026-02-01T00:00:00Z")],
        "2026-02-02T00:00:00Z",
    )
    .unwrap();
    let before = export_bytes(&b, None);
    assert!(matches!(
        restore_file(&b, &file),
        Err(TransferError::NotEmpty { .. })
    ));
    let merged = restore(&b, &file, RestoreOptions { merge: true }, &mut |_, _| {});
    assert!(merged.is_err(), "a merge before the store's knowledge time");
    assert_eq!(
        export_bytes(&b, None),
        before,
        "the refused merge wrote nothing"
    );

    // C learned of its episode before A's: the merge adds A's, and again changes nothing.
    let c = EmbeddedStore::open(&dir.path().join("c")).unwrap();
    common::ingest_at(
        &c,
        &[common::record("INC-C1", "2025-12-01T00:00:00Z")],
        "2025-12-02T00:00:00Z",
    )
    .unwrap();
    let merge = |s: &EmbeddedStore| {
        restore(s, &file, RestoreOptions { merge: true }, &mut |_, _| {}).unwrap()
    };
    let report = merge(&c);
    assert_eq!((report.outcome, report.applied.new_episodes), ("merged", 1));
    assert_eq!(c.episode("INC-A1").unwrap(), a.episode("INC-A1").unwrap());
    assert_eq!(
        merge(&c).applied.new_episodes,
        0,
        "an identical record changes nothing"
    );
}

#[test]
fn known_at_exports_memory_as_it_stood_then() {
    let dir = tempfile::tempdir().unwrap();
    let a = EmbeddedStore::open(&dir.path().join("a")).unwrap();
    strata::demo::seed(&a).unwrap();
    let all = a
        .timeline(&TimelineQuery {
            limit: usize::MAX,
            ..TimelineQuery::default()
        })
        .unwrap();
    let mut times: Vec<Timestamp> = all.iter().map(|e| e.ingested_at).collect();
    times.sort();
    let k = times[times.len() / 2];
    let cut = export_bytes(&a, Some(k));
    let file = dir.path().join("k.ndjson");
    std::fs::write(&file, &cut).unwrap();
    let b = EmbeddedStore::open(&dir.path().join("b")).unwrap();
    restore_file(&b, &file).unwrap();
    // Nothing learned after K came along, and as of any K' <= K both answer the same.
    assert!(b.stats().unwrap().episodes < a.stats().unwrap().episodes);
    for e in b
        .timeline(&TimelineQuery {
            limit: usize::MAX,
            ..TimelineQuery::default()
        })
        .unwrap()
    {
        assert!(e.ingested_at <= k);
        for (fa, fb) in a
            .facts(&e.incident_fingerprint)
            .unwrap()
            .iter()
            .zip(b.facts(&e.incident_fingerprint).unwrap())
        {
            for kk in [times[0], times[times.len() / 4], k] {
                let at = AsOf {
                    valid_at: ts("2030-01-01T00:00:00Z"),
                    known_at: kk,
                };
                assert_eq!(at.fact_state(fa), at.fact_state(&fb));
            }
            assert!(fb.expired_at.is_none_or(|x| x <= k));
        }
    }
    let q = TimelineQuery {
        known_at: Some(k),
        limit: usize::MAX,
        ..TimelineQuery::default()
    };
    assert_eq!(a.timeline(&q).unwrap(), b.timeline(&q).unwrap());
    // The restored store exports as the file (its header aside: it knows only up to K).
    let again = export_bytes(&b, None);
    let records = |bytes: &[u8]| -> Vec<Vec<u8>> {
        let lines = lines_of(bytes);
        lines[1..lines.len() - 1]
            .iter()
            .map(|l| l[..l.len() - 28].to_vec())
            .collect()
    };
    assert_eq!(records(&again), records(&cut));
    let header = String::from_utf8(lines_of(&cut)[0].clone()).unwrap();
    assert!(
        header.contains(&format!("\"known_at\":\"{k}\"")),
        "{header}"
    );
}

#[test]
fn embedded_to_falkordb_and_back_is_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let a = demo_and_postmortems(&dir.path().join("a"));
    let bytes = export_bytes(&a, None);
    let file = dir.path().join("a.ndjson");
    std::fs::write(&file, &bytes).unwrap();

    let graph = FalkorStore::connect(&falkordb::graph_url("transfer")).unwrap();
    assert_eq!(restore_file(&graph, &file).unwrap(), "restored");
    let from_graph = export_bytes(&graph, None);
    assert_eq!(from_graph, bytes, "FalkorDB exports the same bytes");
    assert_same_memory(&a, &graph);
    assert!(graph.check().unwrap().is_consistent());

    let back_file = dir.path().join("f.ndjson");
    std::fs::write(&back_file, &from_graph).unwrap();
    let c = EmbeddedStore::open(&dir.path().join("c")).unwrap();
    restore_file(&c, &back_file).unwrap();
    assert_eq!(export_bytes(&c, None), bytes);
    assert_same_memory(&graph, &c);
}

/// A file of `n` synthetic episodes, exported from an embedded store.
fn synthetic_export(dir: &Path, n: usize) -> PathBuf {
    let records = dir.join("synthetic.ndjson");
    let out = strata(
        &dir.join("scratch"),
        &["synthesize", "--episodes", &n.to_string()],
    );
    assert!(out.status.success());
    std::fs::write(&records, &out.stdout).unwrap();
    let source = dir.join("source");
    let o = strata(
        &source,
        &[
            "--now",
            "2026-06-01T00:00:00Z",
            "ingest",
            "--no-index",
            records.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let file = dir.join("export.ndjson");
    let o = strata(&source, &["export", "--to", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    file
}

/// Starts `strata restore`, waits until `ready` says it is part way, and kills it with
/// SIGKILL. Returns whether it was still running when killed.
fn kill_part_way(mut command: Command, ready: &mut dyn FnMut(&str) -> bool) -> bool {
    let mut child = command
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut killed = false;
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        if ready(&line) {
            common::signal(child.id(), "KILL");
            killed = true;
            break;
        }
    }
    let status = child.wait().unwrap();
    killed && !status.success()
}

#[test]
fn a_killed_embedded_restore_run_again_ends_as_one_uninterrupted() {
    let dir = tempfile::tempdir().unwrap();
    let file = synthetic_export(dir.path(), 20_000);
    let target = dir.path().join("target");
    let cmd = strata_command(&target, &["restore", "--no-index", file.to_str().unwrap()]);
    // Killed while its transaction is open (a chunk of episodes handed to it).
    let killed = kill_part_way(cmd, &mut |l| l.starts_with("restored episodes: 1000/"));
    assert!(killed, "the restore was killed part way");
    let o = strata(&target, &["restore", "--no-index", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let out = dir.path().join("again.ndjson");
    let o = strata(&target, &["export", "--to", out.to_str().unwrap()]);
    assert!(o.status.success());
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&file).unwrap());
    let o = strata(&target, &["check"]);
    assert!(o.status.success(), "{}", common::stdout(&o));
}

#[test]
fn a_killed_falkordb_restore_run_again_ends_as_one_uninterrupted() {
    let dir = tempfile::tempdir().unwrap();
    // Over 10,000 records: FalkorDB writes it in chunks under a marker.
    let file = synthetic_export(dir.path(), 12_000);
    let url = falkordb::graph_url("restore_killed");
    let store_arg = url.to_string();
    let data = dir.path().join("unused");
    let mut cmd = strata_command(
        &data,
        &[
            "--store",
            &store_arg,
            "restore",
            "--no-index",
            file.to_str().unwrap(),
        ],
    );
    // Killed once the graph holds some chunks and not all: polled from here.
    let poll_url = url.clone();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut killed_part_way = false;
    for _ in 0..60_000 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        let reply = falkordb::raw_query(
            &poll_url,
            "OPTIONAL MATCH (i:StrataIngest {status: 'partial'}) \
             WHERE i.written >= 1 AND i.written < i.chunks RETURN count(i)",
        );
        let text = format!("{reply:?}");
        if text.contains("Int(1)") || text.contains("int(1)") {
            common::signal(child.id(), "KILL");
            killed_part_way = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let status = child.wait().unwrap();
    assert!(
        killed_part_way && !status.success(),
        "killed after its first chunk"
    );
    let graph = FalkorStore::connect(&url).unwrap();
    assert!(
        !graph.check().unwrap().is_consistent(),
        "check reports the partial restore"
    );

    let o = strata(
        &data,
        &[
            "--store",
            &store_arg,
            "restore",
            "--no-index",
            file.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains("resumed"),
        "{}",
        common::stderr(&o)
    );
    assert_eq!(export_bytes(&graph, None), std::fs::read(&file).unwrap());
    assert!(graph.check().unwrap().is_consistent());
}

#[test]
fn an_online_backup_holds_whole_batches_and_opens_and_checks() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("live");
    let first: Vec<_> = (0..5)
        .map(|i| common::record(&format!("INC-F{i}"), "2026-01-01T00:00:00Z"))
        .collect();
    let first_file = dir.path().join("first.ndjson");
    std::fs::write(&first_file, common::ndjson(&first)).unwrap();
    let o = strata(
        &data,
        &["ingest", "--no-index", first_file.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let base = 5;
    // A writer adds batches of 7 episodes while the backups are taken.
    let batches: Vec<PathBuf> = (0..30)
        .map(|b| {
            let records: Vec<_> = (0..7)
                .map(|i| common::record(&format!("INC-W{b}-{i}"), "2026-01-01T00:00:00Z"))
                .collect();
            let path = dir.path().join(format!("batch{b}.ndjson"));
            std::fs::write(&path, common::ndjson(&records)).unwrap();
            path
        })
        .collect();
    let mut writer = strata_command(&data, &["ingest", "--no-index"]);
    writer.args(&batches);
    let mut writer = writer
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut counts = Vec::new();
    for n in 0..5 {
        let to = dir.path().join(format!("backup{n}"));
        let o = strata(&data, &["backup", to.to_str().unwrap(), "--json"]);
        assert!(o.status.success(), "{}", common::stderr(&o));
        let manifest: serde_json::Value = serde_json::from_str(&common::stdout(&o)).unwrap();
        let check = strata(&to, &["check"]);
        assert!(check.status.success(), "{}", common::stdout(&check));
        let copy = EmbeddedStore::open(&to).unwrap();
        let episodes = copy.stats().unwrap().episodes;
        assert_eq!(manifest["episodes"], episodes);
        assert_eq!((episodes - base) % 7, 0, "whole batches only: {episodes}");
        counts.push(episodes);
        drop(copy);
        std::fs::remove_dir_all(&to).unwrap();
    }
    assert!(writer.wait().unwrap().success());
    // Once the writer is done, a backup exports exactly as the live store.
    let to = dir.path().join("final");
    assert!(
        strata(&data, &["backup", to.to_str().unwrap()])
            .status
            .success()
    );
    let live = EmbeddedStore::open(&data).unwrap();
    let copy = EmbeddedStore::open(&to).unwrap();
    assert_eq!(export_bytes(&copy, None), export_bytes(&live, None));
    assert!(counts.windows(2).all(|w| w[0] <= w[1]));
    // A backup is never written over another.
    let o = strata(&data, &["backup", to.to_str().unwrap()]);
    assert!(!o.status.success());
}

/// Recall's top 10 (with the hash embedder: every leg answers) for a few questions, by
/// `strata recall --json` on `data` (and `store`, a FalkorDB graph, when given): each hit's
/// fingerprint, legs hit and fused score.
fn top_tens(data: &Path, store: Option<&str>) -> Vec<Vec<(String, String)>> {
    const QUESTIONS: [&str; 5] = [
        "database connection pool exhausted",
        "TLS certificate expired",
        "DNS resolution failures after a config push",
        "disk full on the primary",
        "error rate spike after a deploy, rolled back",
    ];
    QUESTIONS
        .iter()
        .map(|q| {
            let mut args = vec![
                "--now",
                "2027-07-01T00:00:00Z",
                "--allow-future-now",
                "recall",
                q,
                "--k",
                "10",
                "--json",
            ];
            if let Some(url) = store {
                args.splice(0..0, ["--store", url]);
            }
            let o = strata(data, &args);
            assert!(o.status.success(), "{}", common::stderr(&o));
            let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            for leg in ["semantic", "bm25", "graph"] {
                assert_eq!(json["legs"][leg]["status"], "ok", "{leg} for {q:?}");
            }
            json["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let (fp, legs) = (&r["fingerprint"], &r["legs_hit"]);
                    (fp.to_string(), format!("{legs} legs, {}", r["rrf_score"]))
                })
                .collect()
        })
        .collect()
}

#[test]
fn recall_top_ten_is_the_same_after_a_round_trip_on_both_backends() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let file = dir.path().join("a.ndjson");
    std::fs::write(&file, export_bytes(&demo_and_postmortems(&a), None)).unwrap();
    let before = top_tens(&a, None);
    assert!(before.iter().all(|hits| hits.len() == 10), "{before:?}");

    restore_file(&EmbeddedStore::open(&b).unwrap(), &file).unwrap();
    assert_eq!(top_tens(&b, None), before, "embedded -> embedded");

    let url = falkordb::graph_url("transfer_recall");
    restore_file(&FalkorStore::connect(&url).unwrap(), &file).unwrap();
    let on_graph = dir.path().join("g");
    assert_eq!(
        top_tens(&on_graph, Some(&url.to_string())),
        before,
        "embedded -> FalkorDB"
    );
}

/// `strata ARGS` against a FalkorDB graph and a Qdrant, with `data` for the local files.
fn on_servers(data: &Path, graph: &str, vectors: &str, args: &[&str]) -> String {
    let mut all = vec!["--store", graph, "--vectors", vectors];
    all.extend_from_slice(args);
    let o = strata(data, &all);
    assert!(
        o.status.success(),
        "strata {args:?}: {}{}",
        common::stdout(&o),
        common::stderr(&o)
    );
    common::stdout(&o)
}

/// The servers backed up together as docs/operations.md says (FalkorDB's RDB by `BGSAVE`,
/// then each Qdrant collection's snapshot), restored into fresh servers: `strata check`
/// passes, the vectors came back (nothing is embedded again) and recall answers the same.
#[test]
fn falkordb_and_qdrant_backed_up_together_restore_into_fresh_servers() {
    let Some(mut qdrant_a) = common::qdrant::Server::start() else {
        common::qdrant::skipping("falkordb_and_qdrant_backed_up_together");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut falkor_a = falkordb::Server::start(None);
    let graph_a = format!("falkordb://127.0.0.1:{}/memory", falkor_a.port);
    strata::demo::seed(&FalkorStore::connect(&graph_a.parse().unwrap()).unwrap()).unwrap();
    let data_a = dir.path().join("a");
    on_servers(&data_a, &graph_a, &qdrant_a.url(), &["index"]);
    let query = [
        "--now",
        "2026-12-01T00:00:00Z",
        "recall",
        "database",
        "--json",
    ];
    let recalled = on_servers(&data_a, &graph_a, &qdrant_a.url(), &query);

    // FalkorDB first: BGSAVE, and dump.rdb once LASTSAVE moves.
    let client = redis::Client::open(format!("redis://127.0.0.1:{}", falkor_a.port)).unwrap();
    let mut c = client.get_connection().unwrap();
    let last: i64 = redis::cmd("LASTSAVE").query(&mut c).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let _: redis::Value = redis::cmd("BGSAVE").query(&mut c).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while redis::cmd("LASTSAVE").query::<i64>(&mut c).unwrap() == last {
        assert!(
            std::time::Instant::now() < deadline,
            "BGSAVE did not finish"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (_, rdb_dir): (String, String) = redis::cmd("CONFIG")
        .arg("GET")
        .arg("dir")
        .query(&mut c)
        .unwrap();
    let falkor_b_dir = dir.path().join("falkordb-b");
    std::fs::create_dir_all(&falkor_b_dir).unwrap();
    std::fs::copy(
        Path::new(&rdb_dir).join("dump.rdb"),
        falkor_b_dir.join("dump.rdb"),
    )
    .unwrap();

    // Then Qdrant: a snapshot of each collection, downloaded.
    let http_a = format!("http://127.0.0.1:{}", qdrant_a.http_port);
    let listed: serde_json::Value = ureq::get(format!("{http_a}/collections"))
        .call()
        .unwrap()
        .body_mut()
        .read_json()
        .unwrap();
    let names: Vec<String> = listed["result"]["collections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!names.is_empty(), "the index made a collection");
    let qdrant_b = common::qdrant::Server::start().unwrap();
    let http_b = format!("http://127.0.0.1:{}", qdrant_b.http_port);
    std::fs::create_dir_all(qdrant_b.snapshots_dir()).unwrap();
    for name in &names {
        let made: serde_json::Value = ureq::post(format!("{http_a}/collections/{name}/snapshots"))
            .send_empty()
            .unwrap()
            .body_mut()
            .read_json()
            .unwrap();
        let snapshot = made["result"]["name"].as_str().unwrap();
        let bytes = ureq::get(format!("{http_a}/collections/{name}/snapshots/{snapshot}"))
            .call()
            .unwrap()
            .body_mut()
            .with_config()
            .limit(1 << 30)
            .read_to_vec()
            .unwrap();
        let file = qdrant_b.snapshots_dir().join(format!("{name}.snapshot"));
        std::fs::write(&file, bytes).unwrap();
        ureq::put(format!("{http_b}/collections/{name}/snapshots/recover"))
            .send_json(serde_json::json!({ "location": format!("file://{}", file.display()) }))
            .unwrap();
    }
    falkor_a.stop();
    qdrant_a.kill();

    let falkor_b = falkordb::Server::start_on_rdb(&falkor_b_dir);
    let graph_b = format!("falkordb://127.0.0.1:{}/memory", falkor_b.port);
    let data_b = dir.path().join("b");
    on_servers(&data_b, &graph_b, &qdrant_b.url(), &["check"]);
    let indexed: serde_json::Value = serde_json::from_str(&on_servers(
        &data_b,
        &graph_b,
        &qdrant_b.url(),
        &["index", "--json"],
    ))
    .unwrap();
    assert_eq!(
        indexed["vectors_embedded"], 0,
        "the vectors came back: {indexed}"
    );
    assert!(indexed["vectors"].as_u64().unwrap() > 0, "{indexed}");
    let strip = |s: &str| {
        let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
        let hits = v["results"].take();
        (hits, v["legs"]["semantic"]["status"].take())
    };
    assert_eq!(
        strip(&on_servers(&data_b, &graph_b, &qdrant_b.url(), &query)),
        strip(&recalled)
    );
}

/// A small memory with every kind of correction, a correction of a correction among them:
/// two episodes at K0, two superseding them at K1; at K2 a retraction, a confirmation, an
/// episode's summary and a fact's interval corrected; at K3 the retraction confirmed after
/// all, the episode's resolution and the fact corrected again.
const K2: &str = "2026-02-01T00:00:00Z";
const K3: &str = "2026-02-10T00:00:00Z";

const AT_K2: &str = concat!(
    r#"{"retract_supersession": {"episode": "CR-2", "prior": "CR-1", "entity_type": "change", "entity_ref": "cfg-CR-1"}, "reason": "CR-2 fixed \"another\" fault", "by": "ana"}"#,
    "\n",
    r#"{"confirm_supersession": {"episode": "CR-3", "prior": "OPS-1", "entity_type": "change", "entity_ref": "cfg-OPS-1"}, "reason": "checked the config history", "by": "ana"}"#,
    "\n",
    r#"{"correct_episode": {"incident_fingerprint": "OPS-1", "summary_nl": "OPS-1: the real cause was an expired certificate"}, "reason": "the summary left out the cause", "by": "ben"}"#,
    "\n",
    r#"{"correct_fact": {"episode": "CR-2", "relation": "MENTIONS", "entity_type": "service", "entity_ref": "authelia", "t_valid": "2026-01-14T00:00:00Z"}, "reason": "the outage began a day earlier", "by": "ben"}"#,
    "\n"
);

const AT_K3: &str = concat!(
    r#"{"confirm_supersession": {"episode": "CR-2", "prior": "CR-1", "entity_type": "change", "entity_ref": "cfg-CR-1"}, "reason": "it did replace the fix after all", "by": "cy"}"#,
    "\n",
    r#"{"correct_episode": {"incident_fingerprint": "OPS-1", "resolution_nl": "renewed the certificate"}, "reason": "resolution too", "by": "cy"}"#,
    "\n",
    r#"{"correct_fact": {"episode": "CR-2", "relation": "MENTIONS", "entity_type": "service", "entity_ref": "authelia", "t_invalid": "2026-03-01T00:00:00Z"}, "reason": "authelia was retired", "by": "cy"}"#,
    "\n"
);

fn correct_at(store: &dyn MemoryStore, text: &str, at: &str) {
    store
        .correct(&strata::correct::CorrectionBatch {
            items: strata::correct::parse_text("c.ndjson", text).unwrap(),
            at: strata::store::KnowledgeTime::At(ts(at)),
            origin: strata::correct::WriteOrigin::Human,
        })
        .unwrap();
}

fn corrected(dir: &Path, corrections: &[(&str, &str)]) -> EmbeddedStore {
    let store = EmbeddedStore::open(dir).unwrap();
    seed_superseded(&store);
    for (text, at) in corrections {
        correct_at(&store, text, at);
    }
    store
}

/// Every answer about the corrected memory at (V, K), as text: facts as of (V, K), lesson,
/// lineage both ways, the review list, what changed up to K, each episode as known at K.
fn corrected_answers(store: &dyn MemoryStore) -> Vec<String> {
    use strata::query::{changes, facts_as_of, lesson_as_of, lineage, review};
    fn text<T: serde::Serialize, E: std::fmt::Display>(r: Result<T, E>) -> String {
        match r {
            Ok(v) => serde_json::to_string(&v).unwrap(),
            Err(e) => format!("error: {e}"),
        }
    }
    let fps = ["CR-1", "CR-2", "CR-3", "OPS-1"];
    let known = [
        "2026-01-09T00:00:00Z",
        "2026-01-10T00:00:00Z",
        "2026-01-20T00:00:00Z",
        "2026-01-31T23:59:59.999Z",
        K2,
        "2026-02-05T00:00:00Z",
        K3,
        "2026-03-05T00:00:00Z",
    ];
    let valid = [
        "2026-01-01T00:00:00Z",
        "2026-01-14T12:00:00Z",
        "2026-01-15T00:00:00Z",
        "2026-01-16T00:00:00Z",
        "2026-02-05T00:00:00Z",
        "2026-03-05T00:00:00Z",
    ];
    let mut out = Vec::new();
    for k in known {
        let k = ts(k);
        out.push(text(review(store, k, false)));
        out.push(text(changes(store, ts("2000-01-01T00:00:00Z"), k)));
        for fp in fps {
            out.push(text(lineage(store, fp, k)));
            out.push(format!(
                "{:?}",
                store.episode(fp).unwrap().map(|e| e.known_at(k))
            ));
            for v in valid {
                let at = AsOf {
                    valid_at: ts(v),
                    known_at: k,
                };
                out.push(text(facts_as_of(store, fp, at)));
                out.push(text(lesson_as_of(store, fp, at)));
            }
        }
    }
    out
}

fn assert_same_corrected_memory(a: &dyn MemoryStore, b: &dyn MemoryStore) {
    assert_same_memory(a, b);
    assert_eq!(a.corrections().unwrap(), b.corrections().unwrap());
    for fp in ["CR-1", "CR-2", "CR-3", "OPS-1"] {
        assert_eq!(a.episode(fp).unwrap(), b.episode(fp).unwrap(), "{fp}");
    }
    let (x, y) = (corrected_answers(a), corrected_answers(b));
    assert_eq!(x.len(), y.len());
    for (i, (x, y)) in x.iter().zip(&y).enumerate() {
        assert_eq!(x, y, "answer {i}");
    }
    assert!(
        b.check().unwrap().is_consistent(),
        "{:?}",
        b.check().unwrap()
    );
}

fn kinds_in(bytes: &[u8]) -> Vec<String> {
    lines_of(bytes)
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_slice(l).unwrap();
            v["kind"].as_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn a_corrected_store_round_trips_with_every_version_and_correction() {
    let dir = tempfile::tempdir().unwrap();
    let a = corrected(&dir.path().join("a"), &[(AT_K2, K2), (AT_K3, K3)]);
    let bytes = export_bytes(&a, None);
    let kinds = kinds_in(&bytes);
    let count = |k: &str| kinds.iter().filter(|x| *x == k).count();
    assert_eq!(
        (
            count("episode_version"),
            count("fact_version"),
            count("review"),
            count("correction")
        ),
        (2, 4, 3, 7),
        "every version and every correction is exported"
    );
    let file = dir.path().join("a.ndjson");
    std::fs::write(&file, &bytes).unwrap();

    let b = EmbeddedStore::open(&dir.path().join("b")).unwrap();
    assert_eq!(restore_file(&b, &file).unwrap(), "restored");
    assert_eq!(
        export_bytes(&b, None),
        bytes,
        "exported again: the same bytes"
    );
    assert_same_corrected_memory(&a, &b);
    assert_eq!(restore_file(&b, &file).unwrap(), "already_restored");
    // Corrections go on from where the restored log left off, after its latest K.
    let err = b
        .correct(&strata::correct::CorrectionBatch {
            items: strata::correct::parse_text("c.ndjson", AT_K3).unwrap(),
            at: strata::store::KnowledgeTime::At(ts("2026-02-09T00:00:00Z")),
            origin: strata::correct::WriteOrigin::Human,
        })
        .unwrap_err();
    assert!(err.to_string().contains("in the past"), "{err}");
    let more = r#"{"retract_supersession": {"episode": "CR-3", "prior": "OPS-1", "entity_type": "change", "entity_ref": "cfg-OPS-1"}, "reason": "no", "by": "dee"}"#;
    correct_at(&b, more, "2026-03-01T00:00:00Z");
    assert_eq!(b.corrections().unwrap().last().unwrap().sequence, 8);

    // A merge does not interleave two logs of corrections.
    let c = corrected(&dir.path().join("c"), &[(AT_K2, K2)]);
    let err = restore(&c, &file, RestoreOptions { merge: true }, &mut |_, _| {}).unwrap_err();
    assert!(
        matches!(&err, TransferError::Refused { message, .. } if message.contains("cannot interleave")),
        "{err}"
    );
    assert_eq!(
        c.corrections().unwrap().len(),
        4,
        "the refused merge wrote nothing"
    );
    // Nor corrections recorded before what the store already knows.
    let e = corrected(&dir.path().join("e"), &[]);
    ingest_at(
        &e,
        &[record("LATE-1", "2026-02-20T00:00:00Z")],
        "2026-03-01T00:00:00Z",
    )
    .unwrap();
    let err = restore(&e, &file, RestoreOptions { merge: true }, &mut |_, _| {}).unwrap_err();
    assert!(
        matches!(&err, TransferError::Refused { message, .. } if message.contains("cannot be rewritten")),
        "{err}"
    );
    assert!(e.corrections().unwrap().is_empty());
}

#[test]
fn a_corrected_store_round_trips_through_falkordb() {
    let dir = tempfile::tempdir().unwrap();
    let a = corrected(&dir.path().join("a"), &[(AT_K2, K2), (AT_K3, K3)]);
    let bytes = export_bytes(&a, None);
    let file = dir.path().join("a.ndjson");
    std::fs::write(&file, &bytes).unwrap();

    let graph = FalkorStore::connect(&falkordb::graph_url("transfer_corrected")).unwrap();
    assert_eq!(restore_file(&graph, &file).unwrap(), "restored");
    let from_graph = export_bytes(&graph, None);
    assert_eq!(from_graph, bytes, "FalkorDB exports the same bytes");
    assert_same_corrected_memory(&a, &graph);

    let back_file = dir.path().join("f.ndjson");
    std::fs::write(&back_file, &from_graph).unwrap();
    let c = EmbeddedStore::open(&dir.path().join("c")).unwrap();
    assert_eq!(restore_file(&c, &back_file).unwrap(), "restored");
    assert_eq!(export_bytes(&c, None), bytes);
    assert_same_corrected_memory(&graph, &c);
}

#[test]
fn known_at_before_a_correction_is_the_store_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let both = corrected(&dir.path().join("both"), &[(AT_K2, K2), (AT_K3, K3)]);
    let first = corrected(&dir.path().join("first"), &[(AT_K2, K2)]);
    let none = corrected(&dir.path().join("none"), &[]);
    for k in ["2026-01-20T00:00:00Z", "2026-01-31T23:59:59.999Z"] {
        let k = Some(ts(k));
        assert_eq!(export_bytes(&both, k), export_bytes(&none, k), "at {k:?}");
    }
    for k in [K2, "2026-02-09T23:59:59.999Z"] {
        let k = Some(ts(k));
        assert_eq!(export_bytes(&both, k), export_bytes(&first, k), "at {k:?}");
    }
    // Restored, the cut at K answers as the store did at K.
    let cut = export_bytes(&both, Some(ts("2026-02-05T00:00:00Z")));
    assert_eq!(
        kinds_in(&cut).iter().filter(|k| *k == "correction").count(),
        4,
        "only the corrections known at K"
    );
    let file = dir.path().join("cut.ndjson");
    std::fs::write(&file, &cut).unwrap();
    let b = EmbeddedStore::open(&dir.path().join("b")).unwrap();
    restore_file(&b, &file).unwrap();
    assert_eq!(corrected_answers(&b), corrected_answers(&first));
}

#[test]
fn a_format_1_file_still_restores() {
    let dir = tempfile::tempdir().unwrap();
    let a = EmbeddedStore::open(&dir.path().join("a")).unwrap();
    strata::demo::seed(&a).unwrap();
    let bytes = export_bytes(&a, None);
    // The same records as version 1 wrote them: its header and trailer had no counts of
    // versions, reviews or corrections.
    let v1: Vec<Vec<u8>> = lines_of(&bytes)
        .into_iter()
        .map(|l| {
            let text = String::from_utf8(l).unwrap();
            if !text.starts_with(r#"{"kind":"header""#) && !text.starts_with(r#"{"kind":"trailer""#)
            {
                return text.into_bytes();
            }
            text.replace("\"format_version\":2", "\"format_version\":1")
                .replace(
                    ",\"episode_versions\":0,\"fact_versions\":0,\"reviews\":0,\"corrections\":0,\"vectors\":0",
                    "",
                )
                .into_bytes()
        })
        .collect();
    let v1 = with_trailer_sha(&v1);
    assert!(String::from_utf8_lossy(&v1).contains("\"format_version\":1"));
    assert!(!String::from_utf8_lossy(&v1).contains("\"corrections\":0"));
    let file = dir.path().join("v1.ndjson");
    std::fs::write(&file, &v1).unwrap();
    let b = EmbeddedStore::open(&dir.path().join("b")).unwrap();
    assert_eq!(restore_file(&b, &file).unwrap(), "restored");
    assert_eq!(export_bytes(&b, None), bytes);
}

#[test]
fn misplaced_versions_and_corrections_are_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let a = corrected(&dir.path().join("a"), &[(AT_K2, K2), (AT_K3, K3)]);
    let lines = lines_of(&export_bytes(&a, None));
    let kind_at = |k: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(format!("{{\"kind\":\"{k}\"").as_bytes()))
            .unwrap()
    };
    // A fact's version moved before the fact's episode's supersessions... to after them.
    for k in ["episode_version", "fact_version", "review"] {
        let mut moved = lines.clone();
        let at = kind_at(k);
        let line = moved.remove(at);
        moved.insert(1, line);
        let (line, m) = refused(&rechain(&moved));
        assert_eq!(line, 2, "{k}: {m}");
    }
    // Corrections out of sequence.
    let mut swapped = lines.clone();
    let first = kind_at("correction");
    swapped.swap(first, first + 1);
    let (line, m) = refused(&rechain(&swapped));
    assert!(
        line == first as u64 + 1 && m.contains("correction 2 where correction 1"),
        "{m}"
    );
}

/// The export's lines whose kind is `kind`, with their indexes.
fn lines_of_kind(lines: &[Vec<u8>], kind: &str) -> Vec<usize> {
    let prefix = format!("{{\"kind\":\"{kind}\"");
    (0..lines.len())
        .filter(|&i| lines[i].starts_with(prefix.as_bytes()))
        .collect()
}

/// `strata ARGS`, which must succeed; its stdout and stderr together.
fn run_ok(data: &Path, args: &[&str]) -> String {
    let o = strata(data, args);
    let said = format!("{}{}", common::stdout(&o), common::stderr(&o));
    assert!(o.status.success(), "{args:?}: {said}");
    said
}

#[test]
fn with_vectors_a_restore_embeds_nothing_and_recalls_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c, d) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
        dir.path().join("d"),
    );
    drop(demo_and_postmortems(&a));
    let before = top_tens(&a, None);
    let file = dir.path().join("v.ndjson");
    let path = file.to_str().unwrap();
    run_ok(&a, &["export", "--with-vectors", "--to", path]);
    let bytes = std::fs::read(&file).unwrap();
    let lines = lines_of(&bytes);
    let header = header_of(&lines);
    assert_eq!(header["vectors"]["model"], "hash-v1", "{header}");
    assert_eq!(header["vectors"]["encoding"], "f32le-base64");
    let vectors = lines_of_kind(&lines, "vector");
    assert_eq!(
        vectors.len() as u64,
        header["counts"]["episodes"].as_u64().unwrap(),
        "every episode's vector"
    );
    // Each right after its episode's block: the next line is another episode or an entity.
    for &i in &vectors {
        assert!(
            lines
                .get(i + 1)
                .is_some_and(|l| l.starts_with(b"{\"kind\":\"episode\"")
                    || l.starts_with(b"{\"kind\":\"entity\"")),
            "line {}",
            i + 1
        );
    }

    // Restored with the same embedder: the vectors come from the file, none is embedded.
    let said = run_ok(&b, &["restore", path]);
    assert!(
        said.contains(&format!("vectors: {} carried from the file", vectors.len())),
        "{said}"
    );
    assert!(said.contains("texts, 0 vectors added"), "{said}");
    assert_eq!(top_tens(&b, None), before, "recall's top 10 is the same");
    let again = dir.path().join("again.ndjson");
    run_ok(
        &b,
        &["export", "--with-vectors", "--to", again.to_str().unwrap()],
    );
    assert_eq!(
        std::fs::read(&again).unwrap(),
        bytes,
        "exported again: the same bytes"
    );

    // Proof that they are the file's and not embedded again: two episodes' vectors swapped
    // in the file come back swapped.
    let mut swapped = lines.clone();
    let (x, y) = (vectors[0], vectors[1]);
    let vector_of = |l: &[u8]| {
        let text = String::from_utf8(l.to_vec()).unwrap();
        let at = text.find("\"vector\":\"").unwrap() + 10;
        let end = at + text[at..].find('"').unwrap();
        (text.clone(), at, end)
    };
    let ((tx, ax, ex), (ty, ay, ey)) = (vector_of(&lines[x]), vector_of(&lines[y]));
    swapped[x] = format!("{}{}{}", &tx[..ax], &ty[ay..ey], &tx[ex..]).into_bytes();
    swapped[y] = format!("{}{}{}", &ty[..ay], &tx[ax..ex], &ty[ey..]).into_bytes();
    let swapped = with_trailer_sha(&swapped);
    let swapped_file = dir.path().join("swapped.ndjson");
    std::fs::write(&swapped_file, &swapped).unwrap();
    run_ok(&c, &["restore", swapped_file.to_str().unwrap()]);
    let out = dir.path().join("c.ndjson");
    run_ok(
        &c,
        &["export", "--with-vectors", "--to", out.to_str().unwrap()],
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        swapped,
        "the vectors are the file's"
    );

    // Another model's vectors are not used: the restore embeds, and says why.
    let other: Vec<Vec<u8>> = lines
        .iter()
        .map(|l| {
            String::from_utf8(l.clone())
                .unwrap()
                .replace("\"model\":\"hash-v1\"", "\"model\":\"another-model\"")
                .into_bytes()
        })
        .collect();
    let other_file = dir.path().join("other.ndjson");
    std::fs::write(&other_file, with_trailer_sha(&other)).unwrap();
    let said = run_ok(&d, &["restore", other_file.to_str().unwrap()]);
    assert!(
        said.contains("built by another-model") && said.contains("embedded again"),
        "{said}"
    );
    assert!(
        said.contains(&format!("texts, {} vectors added", vectors.len())),
        "{said}"
    );
    assert_eq!(top_tens(&d, None), before);
}

#[test]
fn with_minilm_vectors_a_restore_embeds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    strata::demo::seed(&EmbeddedStore::open(&a).unwrap()).unwrap();
    let minilm = |data: &Path, args: &[&str]| {
        let o = strata_command(data, args)
            .env("STRATA_EMBEDDER", "minilm")
            .output()
            .unwrap();
        let said = format!("{}{}", common::stdout(&o), common::stderr(&o));
        assert!(o.status.success(), "{args:?}: {said}");
        said
    };
    let file = dir.path().join("m.ndjson");
    let path = file.to_str().unwrap();
    minilm(&a, &["export", "--with-vectors", "--to", path]);
    let bytes = std::fs::read(&file).unwrap();
    let header = String::from_utf8_lossy(&lines_of(&bytes)[0]).into_owned();
    assert!(
        header.contains(r#""vectors":{"model":"all-MiniLM-L6-v2"#)
            && header.contains(r#""dimension":384,"encoding":"f32le-base64"}"#),
        "{header}"
    );
    let said = minilm(&b, &["restore", path]);
    assert!(said.contains("texts, 0 vectors added"), "{said}");
    let again = dir.path().join("again.ndjson");
    minilm(
        &b,
        &["export", "--with-vectors", "--to", again.to_str().unwrap()],
    );
    assert_eq!(std::fs::read(&again).unwrap(), bytes);
}

/// A file that passes every check of its own but that the store refuses part way (an
/// episode that rewrites one written before it, with tens of thousands of records still to come):
/// the store's refusal is what is said, and nothing is written.
#[test]
fn a_file_the_store_refuses_part_way_writes_nothing_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let a = EmbeddedStore::open(&dir.path().join("a")).unwrap();
    common::ingest_at(
        &a,
        &[common::record("A", "2026-01-01T00:00:00Z")],
        "2026-01-02T00:00:00Z",
    )
    .unwrap();
    let mut later = vec![common::record("B", "2026-01-03T00:00:00Z")];
    later.extend((0..10_000).map(|i| common::record(&format!("C{i:05}"), "2026-01-03T00:00:00Z")));
    common::ingest_at(&a, &later, "2026-01-04T00:00:00Z").unwrap();
    // B's lines renamed A: in (ingested_at, fingerprint) order still, but a second A.
    let lines: Vec<Vec<u8>> = lines_of(&export_bytes(&a, None))
        .into_iter()
        .map(|l| {
            String::from_utf8(l)
                .unwrap()
                .replace(
                    "\"incident_fingerprint\":\"B\"",
                    "\"incident_fingerprint\":\"A\"",
                )
                .replace("\"episode\":\"B\"", "\"episode\":\"A\"")
                .into_bytes()
        })
        .collect();
    let file = dir.path().join("twice.ndjson");
    std::fs::write(&file, with_trailer_sha(&lines)).unwrap();
    let b = EmbeddedStore::open(&dir.path().join("b")).unwrap();
    let err = restore_file(&b, &file).unwrap_err().to_string();
    assert!(
        err.contains("\"A\"") && !err.contains("stopped"),
        "the store's own refusal: {err}"
    );
    assert_eq!(b.stats().unwrap().episodes, 0, "nothing was written");
}

/// `--with-vectors` from a store whose vectors live in Qdrant: the file carries Qdrant's
/// vectors (the ones the local index holds, up to Qdrant's renormalising), and restored
/// into an embedded store with a local index they are written without embedding.
#[test]
fn with_vectors_from_qdrant_a_restore_embeds_nothing() {
    let Some(qdrant) = common::qdrant::Server::start() else {
        common::qdrant::skipping("with_vectors_from_qdrant_a_restore_embeds_nothing");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    drop(demo_and_postmortems(&a));
    let url = qdrant.url();
    run_ok(&a, &["--vectors", &url, "index"]);
    let (local, remote) = (dir.path().join("local.ndjson"), dir.path().join("q.ndjson"));
    run_ok(
        &a,
        &["export", "--with-vectors", "--to", local.to_str().unwrap()],
    );
    run_ok(
        &a,
        &[
            "--vectors",
            &url,
            "export",
            "--with-vectors",
            "--to",
            remote.to_str().unwrap(),
        ],
    );
    let (from_local, from_qdrant) = (carried_vectors(&local), carried_vectors(&remote));
    assert!(!from_qdrant.is_empty());
    assert_eq!(
        from_local.len(),
        from_qdrant.len(),
        "every episode's vector"
    );
    for ((fa, va), (fb, vb)) in from_local.iter().zip(&from_qdrant) {
        assert_eq!(fa, fb);
        let off = va
            .iter()
            .zip(vb)
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max);
        assert!(off < 1e-5, "{fa}: Qdrant's vector differs by {off}");
    }
    let said = run_ok(&b, &["restore", remote.to_str().unwrap()]);
    assert!(
        said.contains(&format!(
            "vectors: {} carried from the file",
            from_qdrant.len()
        )),
        "{said}"
    );
    assert!(said.contains("texts, 0 vectors added"), "{said}");
}

/// The header of an export's lines, as JSON (without its chain).
fn header_of(lines: &[Vec<u8>]) -> serde_json::Value {
    content_of(&lines[0])
}

/// A line's record, as JSON (without its chain).
fn content_of(line: &[u8]) -> serde_json::Value {
    serde_json::from_slice(
        &line[..line.len() - 28]
            .iter()
            .chain(b"}")
            .copied()
            .collect::<Vec<u8>>(),
    )
    .unwrap()
}

/// The dimension the header of an export's lines names for its vectors.
fn record_dimension(lines: &[Vec<u8>]) -> usize {
    header_of(lines)["vectors"]["dimension"].as_u64().unwrap() as usize
}

/// The vectors an export carries, by fingerprint, in file order.
fn carried_vectors(file: &Path) -> Vec<(String, Vec<f32>)> {
    let lines = lines_of(&std::fs::read(file).unwrap());
    let dimension = record_dimension(&lines);
    lines_of_kind(&lines, "vector")
        .into_iter()
        .map(|i| {
            let v = content_of(&lines[i]);
            let record = strata::transfer::format::VectorRecord {
                incident_fingerprint: v["incident_fingerprint"].as_str().unwrap().into(),
                vector: v["vector"].as_str().unwrap().into(),
            };
            let decoded = record.decode(dimension).unwrap();
            (record.incident_fingerprint, decoded)
        })
        .collect()
}

/// `--with-vectors` from FalkorDB's own vector index: the file carries exactly the vectors
/// the local index holds (read in FalkorDB's compact reply, not its six-digit text), and
/// restored into an embedded store they are written without embedding.
#[test]
fn with_vectors_from_falkordb_a_restore_embeds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    drop(demo_and_postmortems(&a));
    let (plain, local) = (dir.path().join("p.ndjson"), dir.path().join("l.ndjson"));
    run_ok(&a, &["export", "--to", plain.to_str().unwrap()]);
    run_ok(
        &a,
        &["export", "--with-vectors", "--to", local.to_str().unwrap()],
    );
    let url = falkordb::graph_url("transfer_vectors").to_string();
    let g = dir.path().join("g");
    let on_graph = |args: &[&str]| {
        let mut all = vec!["--store", url.as_str(), "--vectors", "falkordb"];
        all.extend_from_slice(args);
        run_ok(&g, &all)
    };
    on_graph(&["restore", "--no-index", plain.to_str().unwrap()]);
    on_graph(&["index"]);
    let remote = dir.path().join("g.ndjson");
    on_graph(&["export", "--with-vectors", "--to", remote.to_str().unwrap()]);
    let from_graph = carried_vectors(&remote);
    assert!(!from_graph.is_empty());
    assert_eq!(
        from_graph,
        carried_vectors(&local),
        "the same vectors, bit for bit"
    );
    let said = run_ok(
        &dir.path().join("b"),
        &["restore", remote.to_str().unwrap()],
    );
    assert!(
        said.contains(&format!(
            "vectors: {} carried from the file",
            from_graph.len()
        )),
        "{said}"
    );
    assert!(said.contains("texts, 0 vectors added"), "{said}");
}
