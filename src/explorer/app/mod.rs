//! The explorer's state and everything that changes it: actions, keys, mouse and the
//! replies of background requests. Rendering reads it and never changes it.

mod dispatch;
mod input;
mod live;
mod replies;

use std::collections::HashMap;

use ratatui::layout::Rect;
use ratatui_textarea::TextArea;
use serde_json::{Value, json};

use super::action::Axis;
use super::cursor::Cursor;
use super::keymap::Keymap;
use super::pane::Pane;
use super::theme::Theme;
use super::worker::{
    EntityDetail, EpisodeDetail, Request, StoreSummary, TimelineFilter, TimelineRow, Worker,
};
use crate::model::{AsOf, Timestamp};
use crate::query::Lineage;
use crate::recall::{FusionPolicy, LegSet, RecallResponse};

pub use dispatch::{EntityRow, LineageRow};
pub use input::MouseKind;
pub use live::{LiveState, what_changed};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Search,
    Palette,
    Query,
    Help,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Health {
    Opening,
    Ok,
    Down(String),
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
}

pub struct TimelineState {
    pub filter: TimelineFilter,
    /// Rows `offset..offset + rows.len()` of the (filtered) timeline.
    pub offset: usize,
    pub rows: Vec<TimelineRow>,
    pub total: Option<usize>,
    pub cursor: Cursor,
    pub loading: bool,
    /// When the page arrives, select the row under the cursor (the user moved there or
    /// changed the filter), rather than keep the selection and move the cursor to it.
    pub select_on_load: bool,
}

impl TimelineState {
    pub fn row(&self, index: usize) -> Option<&TimelineRow> {
        index
            .checked_sub(self.offset)
            .and_then(|i| self.rows.get(i))
    }

    pub fn len(&self) -> usize {
        self.total.unwrap_or(self.rows.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

pub struct RecallState {
    pub query: TextArea<'static>,
    pub legs: LegSet,
    pub fusion: FusionPolicy,
    pub response: Option<RecallResponse>,
    pub running: bool,
    pub cursor: Cursor,
    /// The code units each result's implicated services own.
    pub files: std::collections::HashMap<String, Vec<crate::learning::CodeUnit>>,
}

pub struct App {
    pub now: Timestamp,
    pub live_clock: bool,
    pub theme: Theme,
    pub keymap: Keymap,
    pub mask_volatile: bool,
    pub size: Rect,
    /// First line of the help screen shown.
    pub help_scroll: u16,
    pub focus: Pane,
    pub zoom: bool,
    pub mode: Mode,
    pub quit: bool,
    pub as_of: AsOf,
    pub axis: Axis,
    pub backend: String,
    pub health: Health,
    backend_opened: bool,
    pub summary: Option<StoreSummary>,
    pub embedder: Option<String>,
    pub progress: Option<(&'static str, u64, u64)>,
    pub notices: Vec<String>,
    pub banner: Option<String>,
    pub timeline: TimelineState,
    pub selected: Option<String>,
    pub detail: Option<EpisodeDetail>,
    pub history: Vec<String>,
    pub facts_cursor: Cursor,
    pub lineage: Option<Lineage>,
    pub lineage_cursor: Cursor,
    pub entity: Option<EntityDetail>,
    pub entity_cursor: Cursor,
    pub recall: RecallState,
    pub search: TextArea<'static>,
    pub palette: TextArea<'static>,
    /// A one-line answer to the last command (a palette error, an empty query).
    pub message: Option<String>,
    /// What other processes wrote while the explorer was open.
    pub live: LiveState,
    recall_k: usize,
    worker: Worker,
    latest: HashMap<&'static str, u64>,
    pending: usize,
    events: Option<Vec<Value>>,
}

pub const TIMELINE_PAGE: usize = 200;

impl App {
    pub fn new(options: Options, worker: Worker, size: Rect) -> App {
        let mut query = TextArea::default();
        query.set_placeholder_text("describe the incident, or press y to seed from the selection");
        let mut app = App {
            now: options.now,
            live_clock: options.live_clock,
            help_scroll: 0,
            theme: options.theme,
            keymap: options.keymap,
            mask_volatile: options.mask_volatile,
            size,
            focus: Pane::Timeline,
            zoom: false,
            mode: Mode::Normal,
            quit: false,
            as_of: AsOf::now(options.now),
            axis: Axis::Valid,
            backend: "opening the store…".into(),
            health: Health::Opening,
            backend_opened: false,
            summary: None,
            embedder: None,
            progress: None,
            notices: Vec::new(),
            banner: None,
            timeline: TimelineState {
                filter: TimelineFilter::default(),
                offset: 0,
                rows: Vec::new(),
                total: None,
                cursor: Cursor::default(),
                loading: false,
                select_on_load: true,
            },
            selected: None,
            detail: None,
            history: Vec::new(),
            facts_cursor: Cursor::default(),
            lineage: None,
            lineage_cursor: Cursor::default(),
            entity: None,
            entity_cursor: Cursor::default(),
            recall: RecallState {
                query,
                legs: LegSet::ALL,
                fusion: FusionPolicy::Rrf,
                response: None,
                running: false,
                cursor: Cursor::default(),
                files: Default::default(),
            },
            search: TextArea::default(),
            palette: TextArea::default(),
            message: None,
            live: LiveState::default(),
            recall_k: options.recall_k,
            worker,
            latest: HashMap::new(),
            pending: 0,
            events: options.record_events.then(Vec::new),
        };
        app.request(Request::Stats);
        app.reload_timeline(0, true);
        app
    }

    /// Requests sent and not yet answered, stale ones included.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Nothing is pending and recall has opened (or the store could not): what a headless
    /// `WaitIdle` waits for.
    pub fn is_idle(&self) -> bool {
        self.pending == 0 && (self.embedder.is_some() || matches!(self.health, Health::Down(_)))
    }

    pub fn worker(&self) -> &Worker {
        &self.worker
    }

    /// The events recorded since the last call (empty unless recording).
    pub fn take_events(&mut self) -> Vec<Value> {
        self.events.as_mut().map(std::mem::take).unwrap_or_default()
    }

    fn record(&mut self, event: Value) {
        if let Some(events) = &mut self.events {
            events.push(event);
        }
    }

    pub fn record_frame(&mut self, hash: &str) {
        self.record(json!({"event": "frame", "hash": hash}));
    }

    fn request(&mut self, request: Request) {
        let kind = request.kind();
        let id = self.worker.send(request);
        self.latest.insert(kind, id);
        self.pending += 1;
        self.record(json!({"event": "request", "kind": kind, "id": id}));
    }

    /// Whether the knowledge axis is before now, so the timeline must hide what was not yet known.
    fn known_filter(&self) -> Option<Timestamp> {
        (self.as_of.known_at < self.now).then_some(self.as_of.known_at)
    }

    fn reload_timeline(&mut self, offset: usize, select_on_load: bool) {
        self.timeline.loading = true;
        self.timeline.select_on_load = select_on_load;
        self.request(Request::Timeline {
            filter: self.timeline.filter.clone(),
            known_at: self.known_filter(),
            offset,
            limit: TIMELINE_PAGE,
        });
    }

    pub fn select(&mut self, fingerprint: &str, remember: bool) {
        if self.selected.as_deref() == Some(fingerprint) {
            return;
        }
        if remember && let Some(previous) = self.selected.take() {
            self.history.push(previous);
        }
        self.selected = Some(fingerprint.to_string());
        self.detail = None;
        self.live.selection_note = None;
        self.live.compare_detail = false;
        self.facts_cursor = Cursor::default();
        self.lineage = None;
        self.lineage_cursor = Cursor::default();
        self.request(Request::Episode(fingerprint.to_string()));
        self.request_lineage();
    }

    fn request_lineage(&mut self) {
        if let Some(fp) = self.selected.clone() {
            self.request(Request::Lineage {
                fingerprint: fp,
                known_at: self.as_of.known_at,
            });
        }
    }

    pub fn recall_k(&self) -> usize {
        self.recall_k
    }
}
