//! The explorer, driven headlessly over the demo memory: every pane, the main key flows,
//! stale replies, mouse, and byte-identical frames.

mod common;

use common::{explorer, play, ts};
use strata::headless::{HeadlessError, frame, parse};
use strata::model::Supersession;
use strata::store::MemoryStore;
use strata::store::embedded::EmbeddedStore;

/// A demo store, and one supersession from it: (superseder, prior, edge).
fn seeded() -> (tempfile::TempDir, Supersession) {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    strata::demo::seed(&store).unwrap();
    let link = store
        .timeline(&strata::store::TimelineQuery {
            limit: usize::MAX,
            ..Default::default()
        })
        .unwrap()
        .iter()
        .find_map(|e| {
            store
                .supersedes(&e.incident_fingerprint)
                .unwrap()
                .into_iter()
                .next()
        })
        .expect("the demo memory has supersessions");
    (dir, link)
}

/// The facts-table line about `entity_ref`.
fn fact_line<'a>(screen: &'a str, entity_ref: &str) -> &'a str {
    screen
        .lines()
        .find(|l| {
            let prefix: String = entity_ref.chars().take(12).collect();
            l.contains(&format!(":{prefix}"))
                && (l.contains("MENTIONS") || l.contains("RESOLVED_BY"))
        })
        .unwrap_or_else(|| panic!("no fact line for {entity_ref} in\n{screen}"))
}

#[test]
fn first_screen_shows_the_timeline_the_selection_and_the_status() {
    let (dir, _) = seeded();
    let mut s = explorer(dir.path(), 120, 40);
    let screen = play(&mut s, "WaitIdle\n");
    assert!(screen.contains("1 Timeline") && screen.contains("2 Facts"));
    assert!(screen.contains("embedded ● ok"), "{screen}");
    assert!(
        screen.contains("hash-v1"),
        "the model-free embedder is labelled:\n{screen}"
    );
    insta::assert_snapshot!("first_screen_120x40", screen);
}

#[test]
fn every_pane_renders_at_200x60() {
    let (dir, link) = seeded();
    let mut s = explorer(dir.path(), 200, 60);
    let screen = play(
        &mut s,
        &format!(
            "WaitIdle\nAction select {}\nWaitIdle\nAction recall.seed\nWaitIdle\nAction focus.facts\nKey Enter\nWaitIdle\nAction focus.lineage\n",
            link.episode
        ),
    );
    for pane in [
        "1 Timeline",
        "2 Facts",
        "3 Recall",
        "4 Lessons",
        "5 Lineage",
        "6 Entity",
    ] {
        assert!(screen.contains(pane), "{pane} missing:\n{screen}");
    }
    insta::assert_snapshot!("all_panes_200x60", screen);
}

#[test]
fn small_terminal_shows_timeline_and_the_focused_pane() {
    let (dir, _) = seeded();
    let mut s = explorer(dir.path(), 80, 24);
    let screen = play(&mut s, "WaitIdle\nKey 3\n");
    assert!(screen.contains("1 Timeline") && screen.contains("3 Recall"));
    insta::assert_snapshot!("focused_recall_80x24", screen);
}

/// At 80x24 the recall table drops its least important columns before it cuts a
/// fingerprint: every result can be told apart.
#[test]
fn a_narrow_recall_table_keeps_fingerprints_whole() {
    let (dir, link) = seeded();
    let mut s = explorer(dir.path(), 80, 24);
    let screen = play(
        &mut s,
        &format!(
            "WaitIdle\nAction select {}\nWaitIdle\nAction recall.seed\nWaitIdle\n",
            link.episode
        ),
    );
    let results = &s.app().panes.recall.response.as_ref().unwrap().results;
    assert!(results.len() >= 5, "{screen}");
    for r in results.iter().take(5) {
        let row = screen
            .lines()
            .find(|l| l.contains(&format!(" {} ", r.fingerprint)))
            .unwrap_or_else(|| panic!("{} is not whole on screen:\n{screen}", r.fingerprint));
        assert!(row.contains(&format!("{:.5}", r.rrf_score)), "{row}");
    }
    insta::assert_snapshot!("recall_80x24", screen);
}

/// `y` on an episode recalls other incidents like it: the episode itself is left out of
/// every leg, and the query box says so.
#[test]
fn recall_seeded_from_an_episode_leaves_it_out() {
    let (dir, link) = seeded();
    let mut s = explorer(dir.path(), 200, 60);
    let screen = play(
        &mut s,
        &format!(
            "WaitIdle\nAction select {}\nWaitIdle\nKey 3\nKey y\nWaitIdle\n",
            link.episode
        ),
    );
    let response = s.app().panes.recall.response.as_ref().unwrap();
    assert!(!response.results.is_empty());
    assert!(
        response
            .results
            .iter()
            .all(|r| r.fingerprint != link.episode),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("like {} (left out of the results)", link.episode)),
        "{screen}"
    );
    // A typed query is no longer the episode's: nothing is left out.
    let screen = play(&mut s, "Key i\nType \" disk\"\nKey Enter\nWaitIdle\n");
    assert!(!screen.contains("left out"), "{screen}");
}

#[test]
fn help_is_generated_from_the_keymap() {
    let (dir, _) = seeded();
    let mut s = explorer(dir.path(), 160, 50);
    let screen = play(&mut s, "WaitIdle\nKey ?\n");
    for needle in [
        "recall.semantic",
        "Ctrl+c",
        "asof.next_change",
        "global",
        "recall",
    ] {
        assert!(screen.contains(needle), "{needle}:\n{screen}");
    }
    insta::assert_snapshot!("help_160x50", screen);
    let closed = play(&mut s, "Key Esc\n");
    assert!(!closed.contains("asof.next_change"));
}

#[test]
fn as_of_stepping_changes_fact_states_on_both_axes() {
    let (dir, link) = seeded();
    let entity = &link.entity.entity_ref;
    let mut s = explorer(dir.path(), 200, 50);
    let now = play(
        &mut s,
        &format!("WaitIdle\nAction select {}\nWaitIdle\n", link.prior),
    );
    assert!(fact_line(&now, entity).contains("invalidated"), "{now}");

    let before = link.t_valid.plus_millis(-86_400_000);
    let screen = play(&mut s, &format!("Action asof.valid {before}\nWaitIdle\n"));
    let line = fact_line(&screen, entity);
    assert!(
        line.contains("valid") && !line.contains("invalidated"),
        "{screen}"
    );
    insta::assert_snapshot!("facts_before_the_supersession_200x50", screen);

    // Back to now on valid time, but knowledge from before the invalidation was recorded.
    let unknown = link.ingested_at.plus_millis(-1);
    let screen = play(
        &mut s,
        &format!("Action asof.now\nAction asof.known {unknown}\nWaitIdle\n"),
    );
    let line = fact_line(&screen, entity);
    assert!(
        !line.contains("invalidated"),
        "not yet known to be invalid:\n{screen}"
    );

    // The next change on the knowledge axis is when the invalidation was recorded.
    let screen = play(
        &mut s,
        "Action asof.axis\nAction asof.next_change\nWaitIdle\n",
    );
    assert_eq!(s.app().shared.as_of.known_at, link.ingested_at);
    assert!(
        fact_line(&screen, entity).contains("invalidated"),
        "{screen}"
    );
}

#[test]
fn toggling_a_leg_changes_the_ranking_and_reports_it_disabled() {
    let (dir, _) = seeded();
    let mut s = explorer(dir.path(), 200, 60);
    let query = "Everyone is stuck in a login redirect loop since the secret rotation job ran; authelia rejects the session cookie";
    play(
        &mut s,
        &format!(
            "WaitIdle\nAction asof.valid 2026-01-10T13:46:00Z\nAction recall.query {query}\nWaitIdle\n"
        ),
    );
    let order = |s: &strata::headless::Session| -> Vec<String> {
        let r = s.app().panes.recall.response.as_ref().unwrap();
        r.results.iter().map(|x| x.fingerprint.clone()).collect()
    };
    let all = order(&s);
    assert_eq!(all.len(), 10);
    let screen = play(&mut s, "Key 3\nKey s\nWaitIdle\n");
    let without_semantic = order(&s);
    assert_ne!(all, without_semantic);
    assert!(screen.contains("[ ] semantic (s) disabled"), "{screen}");
    insta::assert_snapshot!("recall_without_semantic_200x60", screen);
    let screen = play(&mut s, "Key f\nWaitIdle\n");
    assert!(screen.contains("fusion rrf"), "{screen}");
    assert_eq!(
        s.app().panes.recall.response.as_ref().unwrap().fusion,
        strata::recall::FusionPolicy::Rrf
    );
    let screen = play(&mut s, "Key f\nWaitIdle\n");
    assert!(screen.contains("fusion seed"), "{screen}");
}

#[test]
fn lineage_drill_down_and_back() {
    let (dir, link) = seeded();
    let mut s = explorer(dir.path(), 200, 60);
    let screen = play(
        &mut s,
        &format!(
            "WaitIdle\nAction select {}\nWaitIdle\nKey 5\n",
            link.episode
        ),
    );
    assert!(
        screen.contains(&format!("▼ {} closed", link.prior)),
        "{screen}"
    );
    let rows = s.app().panes.lineage.rows();
    let index = rows.iter().position(|r| r.target() == link.prior).unwrap();
    drop(rows);
    let down = if index > 0 {
        format!("Key Down {index}\n")
    } else {
        String::new()
    };
    play(&mut s, &format!("{down}Key Enter\nWaitIdle\n"));
    assert_eq!(s.app().shared.selected(), Some(link.prior.as_str()));
    insta::assert_snapshot!("lineage_followed_200x60", s.text().unwrap());
    play(&mut s, "Key Esc\nWaitIdle\n");
    assert_eq!(s.app().shared.selected(), Some(link.episode.as_str()));
}

#[test]
fn stale_replies_are_dropped_and_the_last_selection_wins() {
    let (dir, _) = seeded();
    let mut s = explorer(dir.path(), 120, 40);
    play(&mut s, "WaitIdle\nKey Down 30\nWaitIdle\n");
    let app = s.app();
    let row = app.panes.timeline.row(30).unwrap().fingerprint.clone();
    assert_eq!(app.shared.selected(), Some(row.as_str()));
    assert_eq!(
        app.shared
            .selection
            .detail
            .as_ref()
            .unwrap()
            .episode
            .incident_fingerprint,
        row
    );
}

#[test]
fn the_palette_runs_named_actions_and_explains_mistakes() {
    let (dir, _) = seeded();
    let mut s = explorer(dir.path(), 120, 40);
    let screen = play(
        &mut s,
        "WaitIdle\nKey :\nType \"filter.class auth\"\nKey Enter\nWaitIdle\n",
    );
    assert!(screen.contains("filter: fault_class:auth"), "{screen}");
    let shown = s.app().panes.timeline.total.unwrap();
    assert!(shown > 0 && shown < 300);
    let screen = play(&mut s, "Key :\nType \"teleport now\"\nKey Enter\n");
    assert!(screen.contains("unknown action \"teleport\""), "{screen}");
    let screen = play(&mut s, "Key c\nWaitIdle\n");
    assert!(!screen.contains("filter:"), "{screen}");
}

#[test]
fn search_filters_the_timeline_by_text() {
    let (dir, _) = seeded();
    let mut s = explorer(dir.path(), 120, 40);
    let screen = play(
        &mut s,
        "WaitIdle\nKey /\nType \"pgbouncer\"\nKey Enter\nWaitIdle\n",
    );
    assert!(screen.contains("text \"pgbouncer\""), "{screen}");
    let app = s.app();
    let total = app.panes.timeline.total.unwrap();
    assert!(total > 0 && total < 300);
    let first = &app.shared.selection.detail.as_ref().unwrap().episode;
    let text = format!("{} {}", first.summary_nl, first.resolution_nl).to_lowercase();
    assert!(text.contains("pgbouncer"), "{text}");
}

#[test]
fn a_click_selects_the_row_under_the_pointer_and_the_wheel_scrolls() {
    let (dir, _) = seeded();
    let mut s = explorer(dir.path(), 120, 40);
    play(&mut s, "WaitIdle\n");
    // Header 2 rows, the tabs 1, border 1, filter line 1, column header 1: the first row
    // is at y=6.
    s.explorer_mut()
        .on_mouse(strata::explorer::app::MouseKind::Click, 10, 6 + 4);
    play(&mut s, "WaitIdle\n");
    let fourth = s.app().panes.timeline.row(4).unwrap().fingerprint.clone();
    assert_eq!(s.app().shared.selected(), Some(fourth.as_str()));
    s.explorer_mut()
        .on_mouse(strata::explorer::app::MouseKind::ScrollDown, 10, 10);
    play(&mut s, "WaitIdle\n");
    assert_eq!(s.app().panes.timeline.cursor.index, 5);
}

#[test]
fn the_same_script_gives_byte_identical_frames() {
    let script = "WaitIdle\nKey Down 3\nWaitIdle\nAction recall.seed\nWaitIdle\nAction asof.back_week\nWaitIdle\n";
    let frames: Vec<(String, String)> = (0..2)
        .map(|_| {
            let (dir, _) = seeded();
            let mut s = explorer(dir.path(), 140, 45);
            play(&mut s, script);
            let buffer = s.draw().unwrap();
            (frame::to_text(&buffer), frame::to_svg(&buffer, "strata"))
        })
        .collect();
    assert_eq!(frames[0].0, frames[1].0);
    assert_eq!(frames[0].1, frames[1].1);
}

#[test]
fn a_failed_expectation_names_the_line_and_prints_the_screen() {
    let (dir, _) = seeded();
    let mut s = explorer(dir.path(), 100, 30);
    let lines = parse("WaitIdle\n# comment\nExpect \"no such text anywhere\"\n").unwrap();
    match s.run(&lines) {
        Err(HeadlessError::Missing { line, screen, .. }) => {
            assert_eq!(line, 3);
            assert!(screen.contains("1 Timeline"));
        }
        other => panic!("expected a missing-text failure, got {other:?}"),
    }
    let lines = parse("ExpectNot \"Timeline\"\n").unwrap();
    assert!(matches!(
        s.run(&lines),
        Err(HeadlessError::Present { line: 1, .. })
    ));
}

#[test]
fn knowledge_time_hides_episodes_not_yet_recorded() {
    let (dir, _) = seeded();
    let mut s = explorer(dir.path(), 120, 40);
    play(&mut s, "WaitIdle\n");
    let all = s.app().panes.timeline.total.unwrap();
    let screen = play(&mut s, "Action asof.known 2025-06-01T00:00:00Z\nWaitIdle\n");
    let earlier = s.app().panes.timeline.total.unwrap();
    assert!(earlier < all && earlier > 0, "{earlier} of {all}");
    assert!(screen.contains("known by 2025-06-01"), "{screen}");
    let cutoff = ts("2025-06-01T00:00:00Z");
    assert!(
        s.app()
            .panes
            .timeline
            .rows
            .iter()
            .all(|r| r.ingested_at <= cutoff)
    );
}

/// `y` in the timeline recalls incidents like the row under the cursor at every size: the
/// recall pane comes forward focused, the status bar says what ran, the graph leg is
/// seeded from the episode's entities, and panes that do not fit are tabs.
#[test]
fn y_in_the_timeline_brings_recall_forward_at_every_size() {
    let (dir, _) = seeded();
    for (width, height) in [(80, 24), (100, 30), (120, 40), (200, 50)] {
        let mut s = explorer(dir.path(), width, height);
        let screen = play(&mut s, "WaitIdle\nKey Down 2\nWaitIdle\nKey y\nWaitIdle\n");
        let app = s.app();
        let fp = app.panes.timeline.row(2).unwrap().fingerprint.clone();
        assert_eq!(app.shared.focus, strata::explorer::pane::Pane::Recall);
        let response = app.panes.recall.response.as_ref().unwrap();
        assert!(!response.entities.is_empty(), "{width}x{height}");
        assert!(response.results.iter().all(|r| r.fingerprint != fp));
        assert!(screen.contains("3 Recall"), "{width}x{height}:\n{screen}");
        assert!(
            screen.contains(&format!("like {fp}")) && screen.contains("graph seeds:"),
            "{width}x{height}:\n{screen}"
        );
        assert!(
            screen.contains(&format!("recalled 10 incidents like {fp}")),
            "{width}x{height}:\n{screen}"
        );
        let tabs = screen.contains("[3 Recall]");
        assert_eq!(tabs, width < 200, "{width}x{height}:\n{screen}");
        // Every fingerprint on screen in the timeline is whole.
        for row in app.panes.timeline.rows.iter().take(5) {
            assert!(
                screen.contains(&format!(" {} ", row.fingerprint)),
                "{width}x{height}: {} cut:\n{screen}",
                row.fingerprint
            );
        }
        insta::assert_snapshot!(format!("recall_like_the_row_{width}x{height}"), screen);
        // Zoom gives the focused pane the whole body; Esc restores.
        let zoomed = play(&mut s, "Key z\n");
        assert!(
            zoomed.contains("z restores") && !zoomed.contains("1 Timeline 300"),
            "{zoomed}"
        );
        let back = play(&mut s, "Key Esc\n");
        assert!(back.contains("1 Timeline 300"), "{back}");
    }
}
