//! The state with no worker at all: every change is checked by the requests it returns.

use ratatui::layout::Rect;

use super::{App, Effects, Options};
use crate::explorer::action::Action;
use crate::explorer::key::KeyChord;
use crate::explorer::keymap::Keymap;
use crate::explorer::pane::Pane;
use crate::explorer::theme::Theme;
use crate::explorer::ui::layout;
use crate::explorer::worker::{Reply, Request, View};
use crate::model::{FactEdge, MemoryEpisode, Provenance, Relation, Timestamp};
use crate::query::views::{EpisodeDetail, TimelineRow, TimelineRows};

fn app() -> (App, Effects) {
    app_sized(120, 40)
}

fn app_sized(width: u16, height: u16) -> (App, Effects) {
    App::new(
        Options {
            now: Timestamp::from_millis(1_000_000_000_000),
            theme: Theme::default(),
            keymap: Keymap::defaults().unwrap(),
            mask_volatile: true,
            record_events: true,
            recall_k: 10,
            live_clock: false,
            recall_mode: Default::default(),
            reviewer: Some("reviewer".into()),
            write_at: Ok(crate::store::KnowledgeTime::At(Timestamp::from_millis(
                1_000_000_000_000,
            ))),
        },
        Rect::new(0, 0, width, height),
    )
}

fn row(i: usize) -> TimelineRow {
    TimelineRow {
        fingerprint: format!("INC-{i}"),
        concluded_at: Timestamp::from_millis(1_000 * i as i64),
        ingested_at: Timestamp::from_millis(1_000 * i as i64),
        summary: format!("incident {i}"),
        supersedes: false,
        superseded: false,
    }
}

fn detail(fp: &str) -> EpisodeDetail {
    EpisodeDetail {
        episode: MemoryEpisode {
            incident_fingerprint: fp.into(),
            summary_nl: "disk full on the WAL volume".into(),
            resolution_nl: "grew the volume".into(),
            concluded_at: Timestamp::from_millis(0),
            t_valid: Timestamp::from_millis(0),
            ingested_at: Timestamp::from_millis(0),
            provenance: Provenance {
                source: "test".into(),
                status: "concluded".into(),
                confidence_score: 1.0,
            },
            versions: Vec::new(),
        },
        lesson: None,
        skills: Vec::new(),
        facts: Vec::new(),
        supersedes: Vec::new(),
        superseded_by: Vec::new(),
    }
}

fn episodes_asked(effects: &Effects) -> Vec<&str> {
    effects
        .requests
        .iter()
        .filter_map(|r| match r {
            Request::View(View::Episode(fp)) => Some(fp.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn opening_asks_for_the_summary_and_the_first_page() {
    let (_, effects) = app();
    assert!(matches!(
        effects.requests.as_slice(),
        [
            Request::View(View::Stats),
            Request::LoadHistory,
            Request::View(View::Timeline { offset: 0, .. })
        ]
    ));
}

#[test]
fn moving_through_the_timeline_selects_each_row() {
    let (mut app, _) = app();
    let page = TimelineRows {
        offset: 0,
        total: 3,
        rows: (1..=3).map(row).collect(),
    };
    let effects = app.on_reply(Reply::Timeline(Ok(page)));
    assert_eq!(episodes_asked(&effects), ["INC-1"]);
    assert!(effects.requests.iter().any(|r| matches!(
        r,
        Request::View(View::Lineage { fingerprint, .. }) if fingerprint == "INC-1"
    )));
    let effects = app.on_key(KeyChord::char('j'));
    assert_eq!(episodes_asked(&effects), ["INC-2"]);
    assert_eq!(effects.actions, [Action::Down]);
    let effects = app.dispatch(Action::Bottom);
    assert_eq!(episodes_asked(&effects), ["INC-3"]);
    assert_eq!(app.shared.selected(), Some("INC-3"));
}

#[test]
fn recall_seeded_from_the_selection_leaves_it_out() {
    let (mut app, _) = app();
    let effects = app.dispatch(Action::RecallSeed);
    assert!(effects.requests.is_empty());
    assert!(app.shared.message.is_some());
    app.select("INC-7", false);
    let _ = app.take_effects();
    let _ = app.on_reply(Reply::Episode(Ok(Some(detail("INC-7")))));
    let effects = app.dispatch(Action::RecallSeed);
    match effects.requests.as_slice() {
        [Request::Recall(r)] => {
            assert_eq!(r.exclude, ["INC-7"]);
            assert_eq!(r.text, "disk full on the WAL volume");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(app.shared.focus, Pane::Recall);
    // A leg toggled reruns the same recall, still leaving the episode out.
    let effects = app.dispatch(Action::Focus(Pane::Recall));
    assert!(effects.requests.is_empty());
    let effects = app.on_key(KeyChord::char('b'));
    assert!(matches!(
        effects.requests.as_slice(),
        [Request::Recall(r)] if r.exclude == ["INC-7"]
    ));
}

#[test]
fn text_inputs_take_the_keys_the_keymap_leaves_them() {
    let (mut app, _) = app();
    let _ = app.on_key(KeyChord::char('/'));
    for c in "q disk".chars() {
        let effects = app.on_key(KeyChord::char(c));
        assert!(effects.actions.is_empty(), "{c} typed, not an action");
    }
    assert!(!app.shared.quit);
    let effects = app.on_key(KeyChord::plain(crate::explorer::key::KeyCode::Enter));
    assert_eq!(
        app.panes.timeline.filter.text.as_deref(),
        Some("q disk"),
        "{effects:?}"
    );
    assert!(
        effects
            .requests
            .iter()
            .any(|r| matches!(r, Request::View(View::Timeline { .. })))
    );
}

fn fact(episode: &str, entity: &str, t_invalid: Option<i64>) -> FactEdge {
    FactEdge {
        episode: episode.into(),
        relation: Relation::Mentions,
        entity: entity.parse().unwrap(),
        t_valid: Timestamp::from_millis(0),
        t_invalid: t_invalid.map(Timestamp::from_millis),
        ingested_at: Timestamp::from_millis(0),
        expired_at: t_invalid.map(Timestamp::from_millis),
        superseded_by: None,
        provenance: Provenance {
            source: "test".into(),
            status: "concluded".into(),
            confidence_score: 1.0,
        },
        versions: Vec::new(),
    }
}

/// An app with a timeline page of `rows` and the first row's detail loaded.
fn browsing(rows: usize) -> App {
    let (mut app, _) = app();
    let page = TimelineRows {
        offset: 0,
        total: rows,
        rows: (1..=rows).map(row).collect(),
    };
    let _ = app.on_reply(Reply::Timeline(Ok(page)));
    let mut d = detail("INC-1");
    d.facts = vec![
        fact("INC-1", "service:db", None),
        fact("INC-1", "host:a", Some(1_000)),
        fact("INC-1", "service:db", None),
    ];
    let _ = app.on_reply(Reply::Episode(Ok(Some(d))));
    app
}

fn recall_asked(effects: &Effects) -> &crate::recall::RecallRequest {
    match effects.requests.as_slice() {
        [Request::Recall(r)] => r,
        other => panic!("expected one recall, got {other:?}"),
    }
}

#[test]
fn y_in_the_timeline_recalls_like_the_row_seeding_the_graph_with_its_entities() {
    let mut app = browsing(3);
    assert_eq!(app.shared.focus, Pane::Timeline);
    let effects = app.on_key(KeyChord::char('y'));
    let asked = recall_asked(&effects);
    assert_eq!(asked.exclude, ["INC-1"]);
    let entities: Vec<String> = asked.entities.iter().map(|e| e.flag_form()).collect();
    assert_eq!(
        entities,
        ["service:db"],
        "host:a's fact was invalidated before now; service:db counted once"
    );
    assert_eq!(app.shared.focus, Pane::Recall);
    assert_eq!(app.shared.message.as_deref(), Some("recalling like INC-1…"));
    assert!(
        layout::pane_area(&app, Pane::Recall).is_some(),
        "the recall pane is on screen"
    );
    // Its answer replaces what the status bar announced.
    let mut response =
        crate::recall::RecallResponse::unavailable(asked, "the legs are not open in this test");
    response.entities = vec!["service:db".into()];
    let _ = app.on_reply(Reply::Recall(Box::new(response), Default::default()));
    let said = app.shared.message.clone().unwrap();
    assert!(
        said.contains("like INC-1") && said.contains("seeded by its 1 entity"),
        "{said}"
    );
}

#[test]
fn y_on_an_entity_row_reads_that_episode_and_leaves_the_selection_alone() {
    let mut app = browsing(3);
    let _ = app.dispatch(Action::Focus(Pane::Entity));
    let mut entity_facts = vec![fact("INC-9", "service:db", None)];
    entity_facts.push(fact("INC-1", "service:db", None));
    let episodes = ["INC-9", "INC-1"]
        .into_iter()
        .map(|fp| {
            let mut e = detail(fp).episode;
            e.concluded_at = Timestamp::from_millis(if fp == "INC-9" { 9 } else { 1 });
            (fp.to_string(), e)
        })
        .collect();
    let _ = app.on_reply(Reply::Entity(Ok(crate::query::views::EntityDetail {
        key: "service:db".parse().unwrap(),
        facts: entity_facts,
        episodes,
    })));
    let effects = app.on_key(KeyChord::char('y'));
    assert!(
        matches!(effects.requests.as_slice(), [Request::View(View::Seed(fp))] if fp == "INC-9"),
        "{effects:?}"
    );
    assert_eq!(app.shared.message.as_deref(), Some("recalling like INC-9…"));
    let mut d = detail("INC-9");
    d.episode.summary_nl = "the newest one".into();
    d.facts = vec![fact("INC-9", "service:cache", None)];
    let effects = app.on_reply(Reply::Seed(Ok(Some(d))));
    let asked = recall_asked(&effects);
    assert_eq!(asked.exclude, ["INC-9"]);
    assert_eq!(asked.text, "the newest one");
    assert_eq!(asked.entities[0].flag_form(), "service:cache");
    assert_eq!(app.shared.selected(), Some("INC-1"));
    assert_eq!(app.shared.focus, Pane::Recall);
}

#[test]
fn a_query_typed_while_a_seed_is_read_wins() {
    let mut app = browsing(3);
    let _ = app.dispatch(Action::Focus(Pane::Lineage));
    let _ = app.on_reply(Reply::Lineage(Err(
        crate::explorer::worker::CallError::NotOpen,
    )));
    let _ = app.take_effects();
    app.shared.selection.detail = None;
    let effects = app.dispatch(Action::RecallSeed);
    assert!(matches!(
        effects.requests.as_slice(),
        [Request::View(View::Seed(_))]
    ));
    let _ = app.dispatch(Action::RecallQuery("disk full".into()));
    let effects = app.on_reply(Reply::Seed(Ok(Some(detail("INC-1")))));
    assert!(effects.requests.is_empty(), "{effects:?}");
    assert_eq!(app.panes.recall.query.lines(), ["disk full"]);
}

fn typed(app: &App) -> String {
    app.panes.recall.query.lines().join("\n")
}

fn keys(app: &mut App, keys: &[&str]) -> Vec<Effects> {
    keys.iter()
        .map(|k| app.on_key(k.parse().unwrap()))
        .collect()
}

#[test]
fn the_query_box_edits_like_a_shell_line() {
    let mut app = browsing(3);
    let _ = app.on_key(KeyChord::char('y'));
    let _ = app.on_key(KeyChord::char('i'));
    assert!(!typed(&app).is_empty());
    // The case: text already in the box, Ctrl-U clears it.
    keys(&mut app, &["Ctrl+u"]);
    assert_eq!(typed(&app), "");
    assert!(app.panes.recall.seed.is_none(), "no longer the episode's");
    for c in "disk full on db".chars() {
        let _ = app.on_key(KeyChord::char(c));
    }
    keys(&mut app, &["Ctrl+w"]);
    assert_eq!(typed(&app), "disk full on ");
    keys(&mut app, &["Ctrl+a", "Alt+f", "Ctrl+k"]);
    assert_eq!(typed(&app), "disk ");
    keys(&mut app, &["Ctrl+y"]);
    assert_eq!(typed(&app), "disk full on ", "yank puts back the last kill");
    keys(&mut app, &["Alt+b", "Ctrl+u", "Ctrl+e"]);
    assert_eq!(typed(&app), "on ");
    keys(&mut app, &["Ctrl+m"]);
    assert_eq!(typed(&app), "on ", "the box stays one line");
    // The same edits in the search box.
    let _ = app.on_key(KeyChord::plain(crate::explorer::key::KeyCode::Esc));
    let _ = app.on_key(KeyChord::char('/'));
    for c in "pgbouncer pool".chars() {
        let _ = app.on_key(KeyChord::char(c));
    }
    keys(&mut app, &["Ctrl+w"]);
    assert_eq!(app.shared.search.lines(), ["pgbouncer "]);
}

#[test]
fn queries_that_ran_are_kept_and_browsed_with_up_and_down() {
    let mut app = browsing(3);
    let _ = app.on_reply(Reply::History(Ok(vec!["from an earlier session".into()])));
    let mut saved = Vec::new();
    for q in ["disk full", "tls expiry"] {
        let _ = app.on_key(KeyChord::char('3'));
        let _ = app.on_key(KeyChord::char('i'));
        keys(&mut app, &["Ctrl+u"]);
        for c in q.chars() {
            let _ = app.on_key(KeyChord::char(c));
        }
        let effects = app.on_key(KeyChord::plain(crate::explorer::key::KeyCode::Enter));
        saved.extend(effects.requests.iter().filter_map(|r| match r {
            Request::SaveQuery(q) => Some(q.clone()),
            _ => None,
        }));
        assert!(
            effects
                .requests
                .iter()
                .any(|r| matches!(r, Request::Recall(_)))
        );
    }
    assert_eq!(saved, ["disk full", "tls expiry"]);
    // A seeded recall is the episode's, not a query to keep.
    let _ = app.dispatch(Action::Focus(Pane::Timeline));
    let effects = app.on_key(KeyChord::char('y'));
    assert!(
        !effects
            .requests
            .iter()
            .any(|r| matches!(r, Request::SaveQuery(_)))
    );
    let _ = app.on_key(KeyChord::char('i'));
    keys(&mut app, &["Ctrl+u"]);
    for c in "half".chars() {
        let _ = app.on_key(KeyChord::char(c));
    }
    keys(&mut app, &["Up"]);
    assert_eq!(typed(&app), "tls expiry");
    assert_eq!(app.shared.message.as_deref(), Some("query history 3/3"));
    keys(&mut app, &["Up", "Up"]);
    assert_eq!(typed(&app), "from an earlier session");
    keys(&mut app, &["Up"]);
    assert_eq!(typed(&app), "from an earlier session");
    keys(&mut app, &["Down", "Down", "Down"]);
    assert_eq!(typed(&app), "half", "past the newest: what was typed");
}

/// The focused pane is always on screen, every pane on screen gets its minimum size, and a
/// strip of tabs names every pane when some are not on screen.
#[test]
fn the_layout_adapts_to_the_terminal() {
    for (width, height, shown) in [
        (80, 24, 2),
        (100, 30, 3),
        (120, 40, 3),
        (200, 50, 6),
        (50, 16, 1),
    ] {
        let (mut app, _) = app_sized(width, height);
        for pane in Pane::ALL {
            let _ = app.dispatch(Action::Focus(pane));
            let areas = layout::areas(&app);
            // The review pane is a view of its own at every size.
            let shown = if pane == Pane::Review { 1 } else { shown };
            assert_eq!(areas.panes.len(), shown, "{width}x{height} focus {pane:?}");
            assert!(
                areas.panes.iter().any(|(p, _)| *p == pane),
                "{width}x{height}: the focused {pane:?} is not on screen"
            );
            if shown > 1 {
                for (p, r) in &areas.panes {
                    let (w, h) = layout::min_size(*p);
                    assert!(
                        r.width >= w && r.height >= h,
                        "{width}x{height} {p:?} {r:?}"
                    );
                }
            }
            assert_eq!(areas.tabs.is_some(), shown < 6, "{width}x{height}");
        }
        let _ = app.dispatch(Action::Focus(Pane::Entity));
        let _ = app.dispatch(Action::Zoom);
        let areas = layout::areas(&app);
        assert_eq!(areas.panes.len(), 1);
        assert!(areas.tabs.is_some());
        assert_eq!(areas.panes[0].0, Pane::Entity);
    }
}

#[test]
fn the_pane_beside_the_facts_is_the_one_focused_last() {
    let (mut app, _) = app_sized(120, 40);
    let below = |app: &App| layout::areas(app).panes[2].0;
    assert_eq!(below(&app), Pane::Recall);
    let _ = app.dispatch(Action::Focus(Pane::Lineage));
    assert_eq!(below(&app), Pane::Lineage);
    let _ = app.dispatch(Action::Focus(Pane::Timeline));
    assert_eq!(
        below(&app),
        Pane::Lineage,
        "it stays when the focus moves on"
    );
    // A click on a tab brings its pane forward.
    let strip = layout::areas(&app).tabs.unwrap();
    let (_, lessons) = strip.tabs[3];
    let _ = app.on_mouse(super::MouseKind::Click, lessons.x + 1, lessons.y);
    assert_eq!(app.shared.focus, Pane::Lessons);
    assert_eq!(below(&app), Pane::Lessons);
}

fn review_row() -> crate::query::ReviewRow {
    crate::query::ReviewRow {
        episode: "INC-2".into(),
        prior: "INC-1".into(),
        entity_type: "change".into(),
        entity_ref: "cfg-1".into(),
        closed_at: Timestamp::from_millis(0),
        recorded_at: Timestamp::from_millis(0),
        episode_summary: "new".into(),
        prior_summary: "old".into(),
        source: "agent".into(),
        status: "resolved".into(),
        confidence_score: 0.5,
        verdict: "unreviewed".into(),
        review: None,
    }
}

fn corrections_asked(effects: &Effects) -> Vec<&crate::correct::CorrectionLine> {
    effects
        .requests
        .iter()
        .filter_map(|r| match r {
            Request::Correct { line, .. } => Some(line),
            _ => None,
        })
        .collect()
}

/// A retraction asks a reason, then a confirmation; only `y` writes, and `n` writes nothing.
#[test]
fn a_retraction_is_written_only_once_confirmed() {
    let (mut app, _) = app();
    let effects = app.dispatch(Action::Focus(Pane::Review));
    assert!(
        effects
            .requests
            .iter()
            .any(|r| matches!(r, Request::View(View::Review { .. })))
    );
    let _ = app.on_reply(Reply::Review(Ok(vec![review_row()])));
    let key = |app: &mut App, k: &str| app.on_key(k.parse::<KeyChord>().unwrap());
    assert!(corrections_asked(&key(&mut app, "x")).is_empty());
    assert_eq!(app.shared.mode, super::Mode::Correct);
    // An empty reason is refused as `strata correct` refuses it.
    let _ = key(&mut app, "Enter");
    assert!(
        app.shared
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("reason")
    );
    for c in "wrong fix".chars() {
        let _ = app.on_key(KeyChord::char(c));
    }
    assert!(corrections_asked(&key(&mut app, "Enter")).is_empty());
    // `y` typed a reason before; now it records, once.
    let effects = key(&mut app, "y");
    let asked = corrections_asked(&effects);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].reason, "wrong fix");
    assert_eq!(asked[0].by, "reviewer");
    assert_eq!(app.shared.mode, super::Mode::Normal);

    let _ = key(&mut app, "x");
    let _ = app.on_key(KeyChord::char('r'));
    let _ = key(&mut app, "Enter");
    assert!(corrections_asked(&key(&mut app, "n")).is_empty());
    assert!(
        app.shared
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("cancelled")
    );
}
