//! Where each pane goes, as a pure function of the screen size and the focus: rendering,
//! mouse hit-testing and scrolling all use it.

use ratatui::layout::{Constraint, Layout, Rect};

use crate::explorer::app::App;
use crate::explorer::pane::Pane;

pub struct Areas {
    pub header: Rect,
    pub banner: Option<Rect>,
    pub panes: Vec<(Pane, Rect)>,
    pub footer: Rect,
}

pub const HEADER_ROWS: u16 = 2;
pub const FOOTER_ROWS: u16 = 2;

pub fn areas(app: &App) -> Areas {
    let s = &app.shared;
    let size = s.size;
    let banner_rows = u16::from(s.store.banner.is_some());
    let [header, banner, body, footer] = Layout::vertical([
        Constraint::Length(HEADER_ROWS),
        Constraint::Length(banner_rows),
        Constraint::Min(3),
        Constraint::Length(FOOTER_ROWS),
    ])
    .areas(size);
    let banner = (banner_rows > 0).then_some(banner);
    let panes = if s.zoom {
        vec![(s.focus, body)]
    } else if body.width >= 110 && body.height >= 24 {
        wide(body)
    } else {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                .areas(body);
        let other = if s.focus == Pane::Timeline {
            Pane::Facts
        } else {
            s.focus
        };
        vec![(Pane::Timeline, left), (other, right)]
    };
    Areas {
        header,
        banner,
        panes,
        footer,
    }
}

fn wide(body: Rect) -> Vec<(Pane, Rect)> {
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(body);
    let [facts, recall, bottom] = Layout::vertical([
        Constraint::Percentage(36),
        Constraint::Percentage(40),
        Constraint::Percentage(24),
    ])
    .areas(right);
    let [lessons, lineage, entity] = Layout::horizontal([
        Constraint::Percentage(24),
        Constraint::Percentage(40),
        Constraint::Percentage(36),
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
