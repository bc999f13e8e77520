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

/// Rows inside a pane's border above its list, and below it.
pub fn chrome(pane: Pane) -> (u16, u16) {
    match pane {
        Pane::Timeline => (2, 0),
        Pane::Facts => (4, 1),
        Pane::Recall => (5, 2),
        Pane::Lineage => (1, 0),
        Pane::Entity => (3, 0),
        Pane::Lessons => (0, 0),
    }
}

pub fn areas(app: &App) -> Areas {
    let size = app.size;
    let banner_rows = u16::from(app.banner.is_some());
    let [header, banner, body, footer] = Layout::vertical([
        Constraint::Length(HEADER_ROWS),
        Constraint::Length(banner_rows),
        Constraint::Min(3),
        Constraint::Length(FOOTER_ROWS),
    ])
    .areas(size);
    let banner = (banner_rows > 0).then_some(banner);
    let panes = if app.zoom {
        vec![(app.focus, body)]
    } else if body.width >= 110 && body.height >= 24 {
        wide(body)
    } else {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)])
                .areas(body);
        let other = if app.focus == Pane::Timeline {
            Pane::Facts
        } else {
            app.focus
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
pub fn list_top(_app: &App, pane: Pane, rect: Rect) -> u16 {
    rect.y + 1 + chrome(pane).0
}

/// How many list rows a pane shows (0 when it is not on screen).
pub fn list_height(app: &App, pane: Pane) -> usize {
    pane_area(app, pane).map_or(0, |r| {
        let (top, bottom) = chrome(pane);
        r.height.saturating_sub(2 + top + bottom) as usize
    })
}
