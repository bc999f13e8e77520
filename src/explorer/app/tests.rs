//! The state with no worker at all: every change is checked by the requests it returns.

use ratatui::layout::Rect;

use super::{App, Effects, Options};
use crate::explorer::action::Action;
use crate::explorer::key::KeyChord;
use crate::explorer::keymap::Keymap;
use crate::explorer::pane::Pane;
use crate::explorer::theme::Theme;
use crate::explorer::worker::{Reply, Request, View};
use crate::model::{MemoryEpisode, Provenance, Timestamp};
use crate::query::views::{EpisodeDetail, TimelineRow, TimelineRows};

fn app() -> (App, Effects) {
    App::new(
        Options {
            now: Timestamp::from_millis(1_000_000_000_000),
            theme: Theme::default(),
            keymap: Keymap::defaults().unwrap(),
            mask_volatile: true,
            record_events: true,
            recall_k: 10,
            live_clock: false,
        },
        Rect::new(0, 0, 120, 40),
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
