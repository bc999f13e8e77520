//! The explorer's state and everything that changes it: actions, keys, the mouse and the
//! replies of background requests. Nothing here does I/O: each change returns the
//! [`Effects`] it asks for, and [`crate::explorer::Explorer`] carries them out. Rendering
//! reads the state and never changes it.

mod correcting;
mod dispatch;
mod editing;
mod health;
mod input;
mod live;
mod recall;
mod replies;
#[cfg(test)]
mod tests;

use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

use super::action::{Action, Axis};
use super::history::QueryHistory;
use super::keymap::Keymap;
use super::pane::Pane;
use super::panes::Panes;
use super::theme::Theme;
use super::worker::{Request, View};
use crate::model::{AsOf, Timestamp};
use crate::query::views::{EpisodeDetail, StoreSummary};
use crate::recall::RecallMode;
use crate::store::KnowledgeTime;
use crate::telemetry::WarmSignal;

pub use correcting::{Draft, DraftStep, DraftTarget};
pub use health::Health;
pub use input::MouseKind;
pub use live::{LiveState, what_changed};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Search,
    Palette,
    Query,
    Help,
    /// Drafting a correction: its text, its reason, then a confirmation.
    Correct,
}

pub struct Options {
    pub now: Timestamp,
    pub theme: Theme,
    pub keymap: Keymap,
    /// Show latencies as `~ms` and hide the store path, so frames are byte-identical
    /// between runs and machines.
    pub mask_volatile: bool,
    pub record_events: bool,
    pub recall_k: usize,
    /// Follow the wall clock on `asof.now` and `refresh` (false when `--now` fixed it).
    pub live_clock: bool,
    /// The mode agents recall in, shown in the status bar (the explorer shows results in
    /// either).
    pub recall_mode: RecallMode,
    /// Who the explorer's corrections are by (`--by`, `STRATA_BY`, else the login name);
    /// `None`: corrections ask for it.
    pub reviewer: Option<String>,
    /// The knowledge time corrections are recorded at, or why they are refused (a `--now`
    /// too far ahead of the clock).
    pub write_at: Result<KnowledgeTime, String>,
}

/// What a change of state asks of the outside world.
#[derive(Debug, Default)]
pub struct Effects {
    /// Requests for the worker, in order.
    pub requests: Vec<Request>,
    /// The actions carried out, for the event log.
    pub actions: Vec<Action>,
}

/// The store as the status bar shows it.
pub struct StoreState {
    pub backend: String,
    pub health: Health,
    /// The store opened (a later failure is a call failing, not the store missing).
    pub opened: bool,
    pub summary: Option<StoreSummary>,
    /// The embedder's label once recall has opened.
    pub embedder: Option<String>,
    pub progress: Option<super::worker::Progress>,
    pub notices: Vec<String>,
    pub banner: Option<String>,
    /// Requests sent and not yet answered.
    pub pending: usize,
    pub recall_mode: RecallMode,
    /// The warm signal of the agents' recalls, once read.
    pub warm: Option<WarmSignal>,
}

/// The selected episode, which the facts, lessons and lineage panes show.
#[derive(Default)]
pub struct Selection {
    pub fingerprint: Option<String>,
    pub detail: Option<EpisodeDetail>,
    /// Earlier selections, for `back`.
    pub history: Vec<String>,
}

/// What every pane may read: the clock and the as-of point, focus and mode, the store and
/// the selection.
pub struct Shared {
    pub now: Timestamp,
    pub live_clock: bool,
    pub theme: Theme,
    pub keymap: Keymap,
    pub mask_volatile: bool,
    pub size: Rect,
    /// The focused pane; changed through [`Shared::set_focus`], which keeps `recent`.
    pub focus: Pane,
    /// Every pane, the most recently focused first: which the layout shows where it
    /// has room for fewer than all.
    pub recent: Vec<Pane>,
    pub zoom: bool,
    pub mode: Mode,
    pub quit: bool,
    pub as_of: AsOf,
    pub axis: Axis,
    pub store: StoreState,
    pub selection: Selection,
    /// What other processes wrote while the explorer was open.
    pub live: LiveState,
    /// A one-line answer to the last command (a palette error, an empty query).
    pub message: Option<String>,
    /// First line of the help screen shown.
    pub help_scroll: u16,
    pub search: TextArea<'static>,
    pub palette: TextArea<'static>,
    /// The correction being drafted.
    pub draft: Option<Draft>,
    pub reviewer: Option<String>,
    pub write_at: Result<KnowledgeTime, String>,
}

impl Shared {
    /// The knowledge time the timeline must hide later episodes at, when K is before now.
    pub fn known_filter(&self) -> Option<Timestamp> {
        (self.as_of.known_at < self.now).then_some(self.as_of.known_at)
    }

    pub fn selected(&self) -> Option<&str> {
        self.selection.fingerprint.as_deref()
    }

    pub fn set_focus(&mut self, pane: Pane) {
        self.focus = pane;
        self.recent.retain(|p| *p != pane);
        self.recent.insert(0, pane);
    }

    /// Of `panes`, the one focused last.
    pub fn last_focused(&self, panes: &[Pane]) -> Option<Pane> {
        self.recent.iter().copied().find(|p| panes.contains(p))
    }
}

pub struct App {
    pub shared: Shared,
    pub panes: Panes,
    effects: Effects,
    record_events: bool,
    /// The episode being read to seed recall from.
    seeding: Option<String>,
    /// The status message saying what the running recall is for.
    announced: Option<String>,
    /// The store's recall queries, for ↑/↓ in the query box.
    pub history: QueryHistory,
}

impl App {
    /// The state before anything has loaded, and the requests that load it.
    pub fn new(options: Options, size: Rect) -> (App, Effects) {
        let mut app = App {
            shared: Shared {
                now: options.now,
                live_clock: options.live_clock,
                theme: options.theme,
                keymap: options.keymap,
                mask_volatile: options.mask_volatile,
                size,
                focus: Pane::Timeline,
                recent: Pane::ALL.to_vec(),
                zoom: false,
                mode: Mode::Normal,
                quit: false,
                as_of: AsOf::now(options.now),
                axis: Axis::Valid,
                store: StoreState {
                    backend: "opening the store…".into(),
                    health: Health::Opening,
                    opened: false,
                    summary: None,
                    embedder: None,
                    progress: None,
                    notices: Vec::new(),
                    banner: None,
                    pending: 0,
                    recall_mode: options.recall_mode,
                    warm: None,
                },
                selection: Selection::default(),
                live: LiveState::default(),
                message: None,
                help_scroll: 0,
                search: TextArea::default(),
                palette: TextArea::default(),
                draft: None,
                reviewer: options.reviewer,
                write_at: options.write_at,
            },
            panes: Panes::new(options.recall_k),
            effects: Effects::default(),
            record_events: options.record_events,
            seeding: None,
            announced: None,
            history: QueryHistory::default(),
        };
        app.request(View::Stats);
        app.request(Request::LoadHistory);
        app.reload_timeline(0, true);
        let effects = app.take_effects();
        (app, effects)
    }

    /// Nothing is pending and recall has opened (or the store could not): what a headless
    /// `WaitIdle` waits for.
    pub fn is_idle(&self) -> bool {
        let store = &self.shared.store;
        store.pending == 0 && (store.embedder.is_some() || self.shared.health().is_down())
    }

    /// The worker's count of unanswered requests, shown in the status bar.
    pub fn set_pending(&mut self, pending: usize) {
        self.shared.store.pending = pending;
    }

    pub fn take_effects(&mut self) -> Effects {
        std::mem::take(&mut self.effects)
    }

    fn request(&mut self, request: impl Into<Request>) {
        self.effects.requests.push(request.into());
    }

    fn record_action(&mut self, action: &Action) {
        if self.record_events {
            self.effects.actions.push(action.clone());
        }
    }

    fn reload_timeline(&mut self, offset: usize, select_on_load: bool) {
        let known_at = self.shared.known_filter();
        let request = self.panes.timeline.load(offset, select_on_load, known_at);
        self.request(request);
    }

    pub fn select(&mut self, fingerprint: &str, remember: bool) {
        let selection = &mut self.shared.selection;
        if selection.fingerprint.as_deref() == Some(fingerprint) {
            return;
        }
        if remember && let Some(previous) = selection.fingerprint.take() {
            selection.history.push(previous);
        }
        selection.fingerprint = Some(fingerprint.to_string());
        selection.detail = None;
        self.shared.live.selection_note = None;
        self.shared.live.compare_detail = false;
        self.panes.facts.reset();
        self.panes.lineage.reset();
        self.request(View::Episode(fingerprint.to_string()));
        self.request_lineage();
    }

    /// Re-reads the review pane's list at the as-of point, once it has been shown.
    fn request_review(&mut self) {
        if self.panes.review.opened {
            let view = self.panes.review.load(self.shared.as_of.known_at);
            self.request(view);
        }
    }

    fn request_lineage(&mut self) {
        if let Some(fp) = self.shared.selection.fingerprint.clone() {
            self.request(View::Lineage {
                fingerprint: fp,
                known_at: self.shared.as_of.known_at,
            });
        }
    }
}

impl Shared {
    pub fn health(&self) -> &Health {
        &self.store.health
    }
}
