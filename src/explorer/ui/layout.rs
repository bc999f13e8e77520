//! Where each pane goes, as a pure function of the screen size, the focus and the panes
//! focused before it: rendering, mouse hit-testing and scrolling all use it.
//!
//! The richest arrangement whose panes all get their minimum size wins: all six panes;
//! the timeline beside the facts over one more pane; the timeline beside one pane; the
//! focused pane alone. The review pane is always alone: it needs the width for its evidence
//! side by side. The focused pane is always on screen, and when some pane is not,
//! a strip of tabs above the body names all seven (as when one is zoomed).

use ratatui::layout::{Constraint, Layout, Rect};

use crate::explorer::app::{App, Shared};
use crate::explorer::pane::Pane;

pub struct Areas {
    pub header: Rect,
    pub banner: Option<Rect>,
    /// The tabs of every pane, when some pane is not on screen.
    pub tabs: Option<TabStrip>,
    pub panes: Vec<(Pane, Rect)>,
    pub footer: Rect,
}

/// One row naming every pane; each tab's own cells, for a click.
pub struct TabStrip {
    pub area: Rect,
    pub tabs: Vec<(Pane, Rect)>,
    /// The cells after the last tab.
    pub rest: Rect,
}

pub const HEADER_ROWS: u16 = 2;
pub const FOOTER_ROWS: u16 = 2;

/// The smallest (width, height), borders included, at which a pane shows what it is for:
/// a few rows of its list and its columns side by side.
pub fn min_size(pane: Pane) -> (u16, u16) {
    match pane {
        Pane::Timeline => (36, 6),
        Pane::Facts => (38, 10),
        Pane::Recall => (40, 10),
        Pane::Lessons => (30, 6),
        Pane::Lineage => (30, 5),
        Pane::Entity => (36, 7),
        Pane::Review => (60, 8),
    }
}

/// The panes that share the slot below the facts, or beside the timeline.
const BELOW_FACTS: [Pane; 4] = [Pane::Recall, Pane::Lessons, Pane::Lineage, Pane::Entity];
const BESIDE_TIMELINE: [Pane; 5] = [
    Pane::Facts,
    Pane::Recall,
    Pane::Lessons,
    Pane::Lineage,
    Pane::Entity,
];

pub fn areas(app: &App) -> Areas {
    let s = &app.shared;
    let banner_rows = u16::from(s.store.banner.is_some());
    let [header, banner, body, footer] = Layout::vertical([
        Constraint::Length(HEADER_ROWS),
        Constraint::Length(banner_rows),
        Constraint::Min(3),
        Constraint::Length(FOOTER_ROWS),
    ])
    .areas(s.size);
    let banner = (banner_rows > 0).then_some(banner);
    let everything = all(body);
    // The review pane is a view of its own: it takes the body, named by its tab.
    let alone = s.zoom || s.focus == Pane::Review;
    let (tabs, panes) = if !alone && fits(&everything) {
        (None, everything)
    } else {
        let [strip, body] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(body);
        let panes = if alone {
            vec![(s.focus, body)]
        } else {
            [split(body, s), pair(body, s)]
                .into_iter()
                .find(|panes| fits(panes))
                .unwrap_or_else(|| vec![(s.focus, body)])
        };
        (Some(tab_strip(strip, s.focus)), panes)
    };
    Areas {
        header,
        banner,
        tabs,
        panes,
        footer,
    }
}

fn fits(panes: &[(Pane, Rect)]) -> bool {
    panes.iter().all(|(pane, rect)| {
        let (width, height) = min_size(*pane);
        rect.width >= width && rect.height >= height
    })
}

/// Every pane: the timeline on the left; facts, recall, and lessons, lineage and entity
/// side by side on the right.
fn all(body: Rect) -> Vec<(Pane, Rect)> {
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(38), Constraint::Fill(1)]).areas(body);
    let [facts, recall, bottom] = Layout::vertical([
        Constraint::Percentage(36),
        Constraint::Percentage(40),
        Constraint::Fill(1),
    ])
    .areas(right);
    let [lessons, lineage, entity] = Layout::horizontal([
        Constraint::Percentage(32),
        Constraint::Percentage(32),
        Constraint::Fill(1),
    ])
    .areas(bottom);
    vec![
        (Pane::Timeline, left),
        (Pane::Facts, facts),
        (Pane::Recall, recall),
        (Pane::Lessons, lessons),
        (Pane::Lineage, lineage),
        (Pane::Entity, entity),
    ]
}

/// The timeline beside the facts over the focused (or last focused) of the other four.
fn split(body: Rect, s: &Shared) -> Vec<(Pane, Rect)> {
    let [left, right] = beside_timeline(body);
    let [facts, below] =
        Layout::vertical([Constraint::Percentage(45), Constraint::Fill(1)]).areas(right);
    let below_pane = if BELOW_FACTS.contains(&s.focus) {
        s.focus
    } else {
        s.last_focused(&BELOW_FACTS).unwrap_or(Pane::Recall)
    };
    vec![
        (Pane::Timeline, left),
        (Pane::Facts, facts),
        (below_pane, below),
    ]
}

/// The timeline beside the focused (or last focused) other pane.
fn pair(body: Rect, s: &Shared) -> Vec<(Pane, Rect)> {
    let [left, right] = beside_timeline(body);
    let other = if s.focus == Pane::Timeline {
        s.last_focused(&BESIDE_TIMELINE).unwrap_or(Pane::Facts)
    } else {
        s.focus
    };
    vec![(Pane::Timeline, left), (other, right)]
}

/// 45% for the timeline, but never less than it needs.
fn beside_timeline(body: Rect) -> [Rect; 2] {
    let (least, _) = min_size(Pane::Timeline);
    let left = (body.width * 9 / 20).max(least).min(body.width);
    Layout::horizontal([Constraint::Length(left), Constraint::Fill(1)]).areas(body)
}

/// Cells left after the tabs for the shortest hint (`z restores`).
const HINT_CELLS: u16 = 12;

/// The tabs' cells: ` 1 Timeline ` and so on, a one-cell gap between them; where that
/// leaves no room for a hint, only the focused tab keeps its padding.
fn tab_strip(area: Rect, focus: Pane) -> TabStrip {
    let mut x = area.x;
    let right = area.x + area.width;
    let padded_width: u16 = Pane::ALL
        .iter()
        .map(|p| tab_label(*p).chars().count() as u16 + 3)
        .sum();
    let padded = padded_width + HINT_CELLS <= area.width;
    let mut tabs = Vec::new();
    for pane in Pane::ALL {
        let padding = if padded || pane == focus { 2 } else { 0 };
        let width = (tab_label(pane).chars().count() as u16 + padding).min(right.saturating_sub(x));
        tabs.push((pane, Rect { x, width, ..area }));
        x = (x + width + 1).min(right);
    }
    TabStrip {
        area,
        tabs,
        rest: Rect {
            x,
            width: right - x,
            ..area
        },
    }
}

/// What a pane's tab says: the key that focuses it and its name.
pub fn tab_label(pane: Pane) -> String {
    format!("{} {}", pane.number(), pane.short_title())
}

pub fn pane_area(app: &App, pane: Pane) -> Option<Rect> {
    areas(app)
        .panes
        .into_iter()
        .find(|(p, _)| *p == pane)
        .map(|(_, r)| r)
}

/// Screen row of a pane's first list row.
pub fn list_top(app: &App, pane: Pane, rect: Rect) -> u16 {
    rect.y + 1 + app.panes.get(pane).chrome().above
}

/// How many list rows a pane shows (0 when it is not on screen).
pub fn list_height(app: &App, pane: Pane) -> usize {
    pane_area(app, pane).map_or(0, |r| {
        let chrome = app.panes.get(pane).chrome();
        r.height.saturating_sub(2 + chrome.above + chrome.below) as usize
    })
}
