//! The explorer follows the store while another process writes to it: new rows marked,
//! selection and scroll kept, the selection's superseded fact shown and said, the status bar
//! live, and recall finding what was just written. Headless, and in a real terminal.

mod common;

use std::path::Path;
use std::process::Command;

use common::tmux::{Tmux, wait_for};
use common::{explorer, play, ts};
use serde_json::json;
use strata::model::Timestamp;
use strata::store::embedded::EmbeddedStore;
use strata::store::{MemoryStore, TimelineQuery};

const NOW: &str = "2026-12-01T00:00:00Z";

/// `strata ingest FILE` in its own process, at the explorer's clock.
fn ingest(data: &Path, records: &[serde_json::Value]) {
    let file = data.join(format!("live-{}.ndjson", records.len()));
    std::fs::write(&file, common::ndjson(records)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .env("STRATA_EMBEDDER", "hash")
        .env("STRATA_NOW", NOW)
        .arg("--data")
        .arg(data)
        .arg("ingest")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ingest failed: {}",
        common::stderr(&out)
    );
}

/// An episode concluded after every other one (so first in the timeline), about words no
/// other episode uses.
fn newcomer(
    fp: &str,
    after: Timestamp,
    supersedes: Option<(&str, &str, &str)>,
) -> serde_json::Value {
    let mut r = json!({
        "incident_fingerprint": fp,
        "summary_nl": "Quokka ledger stalled on the zephyr relay",
        "resolution_nl": "Rotated the zephyr relay credentials",
        "concluded_at": after.plus_millis(3_600_000).to_rfc3339(),
        "t_valid": after.plus_millis(60_000).to_rfc3339(),
        "mentions": [{"entity_type": "service", "entity_ref": "zephyr-relay"}],
        "provenance": {"source": "live-test", "status": "concluded", "confidence_score": 0.8}
    });
    if let Some((prior, entity_type, entity_ref)) = supersedes {
        r["supersedes"] = json!([{"incident_fingerprint": prior, "entity_type": entity_type, "entity_ref": entity_ref}]);
    }
    r
}

/// The demo memory in `dir`: the newest episode's conclusion, and the third newest episode
/// with one of its facts still open.
fn demo(dir: &Path) -> (Timestamp, String, String, String) {
    let store = EmbeddedStore::open(dir).unwrap();
    strata::demo::seed(&store).unwrap();
    let page = store
        .timeline(&TimelineQuery {
            limit: 3,
            ..Default::default()
        })
        .unwrap();
    let third = &page[2];
    let open = store
        .facts(&third.incident_fingerprint)
        .unwrap()
        .into_iter()
        .find(|f| f.expired_at.is_none())
        .expect("the third newest demo episode has an open fact");
    (
        page[0].concluded_at,
        third.incident_fingerprint.clone(),
        open.entity.entity_type,
        open.entity.entity_ref,
    )
}

#[test]
fn a_headless_session_applies_another_writers_episodes_at_wait_idle() {
    let dir = tempfile::tempdir().unwrap();
    let (newest, selected, entity_type, entity_ref) = demo(dir.path());
    assert!(
        newest.plus_millis(3_600_000) < ts(NOW),
        "the newcomer concludes before now"
    );
    let mut s = explorer(dir.path(), 200, 60);
    play(&mut s, "WaitIdle\nKey Down 2\nWaitIdle\n");
    assert_eq!(s.app().shared.selected(), Some(selected.as_str()));
    let before = s.app().panes.timeline.cursor;
    let screen = s.text().unwrap();
    assert!(
        screen.contains("300 episodes") && screen.contains("live"),
        "{screen}"
    );
    assert!(!screen.contains("live · changed"), "{screen}");

    ingest(
        dir.path(),
        &[newcomer(
            "INC-LIVE-1",
            newest,
            Some((&selected, &entity_type, &entity_ref)),
        )],
    );
    let screen = play(&mut s, "WaitIdle\n");

    let row = screen
        .lines()
        .find(|l| l.contains("INC-LIVE-1") && l.contains("Quokka ledger"))
        .unwrap_or_else(|| panic!("the new episode is not in the timeline:\n{screen}"));
    assert!(row.contains('●'), "the new row is marked new: {row}");
    assert!(screen.contains("301 episodes"), "{screen}");
    let app = s.app();
    assert_eq!(
        app.shared.selected(),
        Some(selected.as_str()),
        "the selection stays"
    );
    assert_eq!(
        app.panes.timeline.cursor.scroll, before.scroll,
        "the scroll stays"
    );
    assert_eq!(
        app.panes.timeline.cursor.index,
        before.index + 1,
        "the cursor follows the selection"
    );
    let prefix: String = entity_ref.chars().take(12).collect();
    assert!(
        screen
            .lines()
            .any(|l| l.contains(&format!(":{prefix}")) && l.contains("invalidated")),
        "the superseded fact is not shown closed:\n{screen}"
    );
    assert!(
        screen.contains("updated: INC-LIVE-1 superseded"),
        "the facts pane says what changed:\n{screen}"
    );
    assert!(screen.contains("live · changed 00:00:00"), "{screen}");

    let screen = play(
        &mut s,
        "Action recall.query quokka ledger stalled on the zephyr relay\nWaitIdle\n",
    );
    let response = s
        .app()
        .panes
        .recall
        .response
        .as_ref()
        .expect("recall answered");
    let hit = response
        .results
        .iter()
        .find(|r| r.fingerprint == "INC-LIVE-1")
        .unwrap_or_else(|| panic!("recall misses the new episode:\n{screen}"));
    assert!(
        hit.per_leg.bm25.is_some(),
        "the text index caught up: {hit:?}"
    );
    assert!(
        hit.per_leg.semantic.is_some(),
        "the vector index caught up: {hit:?}"
    );
}

#[test]
fn a_change_is_applied_the_same_way_on_every_run() {
    let mut screens = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let (newest, ..) = demo(dir.path());
        let mut s = explorer(dir.path(), 120, 40);
        play(&mut s, "WaitIdle\nKey Down 1\nWaitIdle\n");
        ingest(dir.path(), &[newcomer("INC-LIVE-2", newest, None)]);
        screens.push(play(&mut s, "WaitIdle\n"));
    }
    assert!(screens[0].contains("INC-LIVE-2"), "{}", screens[0]);
    assert_eq!(screens[0], screens[1]);
}

#[test]
fn the_real_explorer_shows_an_episode_another_process_ingests() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (newest, ..) = demo(&data);
    let tmux = Tmux::start(
        dir.path(),
        &format!(
            "env STRATA_EMBEDDER=hash STRATA_NOW={NOW} {} --data {}",
            env!("CARGO_BIN_EXE_strata"),
            data.display()
        ),
    );
    wait_for(&tmux, "the explorer over the demo memory", |s| {
        s.contains("300 episodes") && s.contains("hash-v1") && s.contains("live")
    });
    ingest(&data, &[newcomer("INC-LIVE-TTY", newest, None)]);
    let screen = wait_for(&tmux, "the new episode", |s| {
        s.contains("INC-LIVE-TTY") && s.contains("301 episodes")
    });
    assert!(screen.contains("changed 00:00:00"), "{screen}");
}

/// One record for the graph-leg test: concluded an hour apart by `hour`, mentioning `refs`.
fn graph_record(fp: &str, hour: i64, refs: &[&str]) -> serde_json::Value {
    let at = ts("2026-11-01T00:00:00Z").plus_millis(hour * 3_600_000);
    json!({
        "incident_fingerprint": fp,
        "summary_nl": format!("{fp} incident"),
        "resolution_nl": "Restarted",
        "concluded_at": at.plus_millis(1_800_000).to_rfc3339(),
        "t_valid": at.to_rfc3339(),
        "mentions": refs.iter().map(|r| json!({"entity_type": "service", "entity_ref": r})).collect::<Vec<_>>(),
        "provenance": {"source": "live-test", "status": "concluded", "confidence_score": 0.8}
    })
}

#[test]
fn the_graph_leg_follows_another_processs_writes_exactly_as_a_fresh_one_reads_them() {
    use std::sync::Arc;
    use strata::model::AsOf;
    use strata::recall::legs::GraphLeg;
    use strata::recall::{LegQuery, RecallLeg};

    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    ingest(
        &data,
        &[
            graph_record("INC-A", 0, &["alpha-svc", "shared-db"]),
            graph_record("INC-B", 1, &["beta-svc", "shared-db"]),
        ],
    );
    let store: Arc<dyn MemoryStore> = Arc::new(EmbeddedStore::open(&data).unwrap());
    let query = LegQuery {
        text: "alpha-svc and gamma-svc are failing".into(),
        entities: Vec::new(),
        as_of: AsOf::now(ts(NOW)),
        limit: 10,
        deadline: None,
    };
    let live = GraphLeg::new(store.clone());
    let before = live.search(&query).unwrap();
    assert_eq!(before.fingerprints, ["INC-A", "INC-B"], "{before:?}");
    assert_eq!(
        before.note.as_deref(),
        Some("seeds named in the text: service|alpha-svc")
    );
    // A query that implicates entities walks from them alone: alpha-svc, named in its text, is
    // no seed of it (INC-A comes in at hop 2, through the shared database).
    let implicated = live
        .search(&LegQuery {
            entities: vec![strata::model::EntityKey::new("service", "beta-svc").unwrap()],
            ..query.clone()
        })
        .unwrap();
    assert_eq!(implicated.note.as_deref(), Some("seeds: service|beta-svc"));
    assert_eq!(
        implicated.fingerprints,
        ["INC-B", "INC-A"],
        "{implicated:?}"
    );
    // Past the engine's deadline the leg stops instead of walking on unheard.
    let late = LegQuery {
        deadline: Some(std::time::Instant::now()),
        ..query.clone()
    };
    let stopped = live.search(&late).unwrap_err();
    assert!(stopped.to_string().contains("deadline"), "{stopped}");

    let mut superseding = graph_record("INC-D", 3, &["delta-svc"]);
    superseding["supersedes"] = json!([{"incident_fingerprint": "INC-A", "entity_type": "service", "entity_ref": "alpha-svc"}]);
    ingest(
        &data,
        &[graph_record("INC-C", 2, &["gamma-svc"]), superseding],
    );
    let stale = live.search(&query).unwrap();
    assert_eq!(
        stale.note, before.note,
        "a search reads what the leg last caught up to and leaves the catch-up to catch_up"
    );
    live.catch_up().unwrap();
    let after = live.search(&query).unwrap();
    assert_eq!(
        after.note.as_deref(),
        Some("seeds named in the text: service|alpha-svc, service|gamma-svc"),
        "the entity written by the other process is found in the text"
    );
    assert_eq!(
        after.fingerprints,
        ["INC-C"],
        "INC-A's alpha-svc fact was closed by INC-D, so only the new episode is hop 1: {after:?}"
    );
    let fresh = GraphLeg::new(store).search(&query).unwrap();
    assert_eq!(after.fingerprints, fresh.fingerprints);
    assert_eq!(after.note, fresh.note);
}
