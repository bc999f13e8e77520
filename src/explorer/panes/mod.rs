//! The panes, one component each. A component owns its rows, its cursor and the rows of
//! chrome around its list; it answers keys and clicks with [`Intent`]s instead of acting
//! on the rest of the app, and renders from an immutable [`App`].

mod entity;
mod facts;
mod lessons;
mod lineage;
mod recall;
mod recall_seed;
mod review;
mod timeline;

use ratatui::Frame;
use ratatui::layout::Rect;

pub use entity::{EntityPane, EntityRow};
pub use facts::{FactsPane, fact_views, state_style};
pub use lessons::LessonsPane;
pub use lineage::{LineagePane, LineageRow};
pub use recall::RecallPane;
pub use recall_seed::RecallSeed;
pub use review::{ReviewPane, ReviewView};
pub use timeline::{TIMELINE_PAGE, TimelinePane};

use super::app::{App, Shared};
use super::cursor::Cursor;
use super::pane::Pane;
use super::worker::Request;
use crate::model::EntityKey;

/// Rows inside a pane's border above its list, and below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chrome {
    pub above: u16,
    pub below: u16,
}

/// What a pane asks of the app after a key or a click.
#[derive(Clone, Debug)]
pub enum Intent {
    /// Select an episode and remember the one it replaces for `back`; then focus a pane.
    Follow {
        fingerprint: String,
        focus: Option<Pane>,
    },
    /// Show the episode under the timeline cursor (not remembered).
    Show(String),
    OpenEntity(EntityKey),
    Focus(Pane),
    Request(Request),
}

pub trait Component {
    fn chrome(&self) -> Chrome;

    /// Rows in its list.
    fn len(&self, shared: &Shared) -> usize;

    /// Its selection, for panes with a list.
    fn cursor(&self) -> Option<&Cursor> {
        None
    }

    fn cursor_mut(&mut self) -> Option<&mut Cursor> {
        None
    }

    /// The row shown on the list's `line`th line, for a click.
    fn row_at(&self, line: usize) -> Option<usize> {
        self.cursor().map(|c| c.scroll + line)
    }

    /// What moving its cursor asks for.
    fn moved(&mut self, _shared: &Shared) -> Vec<Intent> {
        Vec::new()
    }

    /// What `open` on the row under the cursor asks for.
    fn open(&self, _shared: &Shared) -> Option<Intent> {
        None
    }

    /// The episode an action on "this episode" (`recall.seed`) means here: the one under
    /// the cursor where rows are episodes, else the selection.
    fn episode(&self, shared: &Shared) -> Option<String> {
        shared.selected().map(str::to_string)
    }

    fn render(&self, frame: &mut Frame, rect: Rect, app: &App);
}

pub struct Panes {
    pub timeline: TimelinePane,
    pub facts: FactsPane,
    pub recall: RecallPane,
    pub lessons: LessonsPane,
    pub lineage: LineagePane,
    pub entity: EntityPane,
    pub review: ReviewPane,
}

impl Panes {
    pub fn new(recall_k: usize) -> Panes {
        Panes {
            timeline: TimelinePane::default(),
            facts: FactsPane::default(),
            recall: RecallPane::new(recall_k),
            lessons: LessonsPane,
            lineage: LineagePane::default(),
            entity: EntityPane::default(),
            review: ReviewPane::default(),
        }
    }

    /// The one place a pane is routed to its component.
    pub fn get(&self, pane: Pane) -> &dyn Component {
        match pane {
            Pane::Timeline => &self.timeline,
            Pane::Facts => &self.facts,
            Pane::Recall => &self.recall,
            Pane::Lessons => &self.lessons,
            Pane::Lineage => &self.lineage,
            Pane::Entity => &self.entity,
            Pane::Review => &self.review,
        }
    }

    pub fn get_mut(&mut self, pane: Pane) -> &mut dyn Component {
        match pane {
            Pane::Timeline => &mut self.timeline,
            Pane::Facts => &mut self.facts,
            Pane::Recall => &mut self.recall,
            Pane::Lessons => &mut self.lessons,
            Pane::Lineage => &mut self.lineage,
            Pane::Entity => &mut self.entity,
            Pane::Review => &mut self.review,
        }
    }
}
