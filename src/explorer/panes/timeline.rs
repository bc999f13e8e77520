//! The timeline: every episode, newest first, paged from the store as the cursor moves;
//! filtered by text, entity or knowledge time.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::{Chrome, Component, Intent};
use crate::explorer::app::{App, Shared};
use crate::explorer::cursor::Cursor;
use crate::explorer::pane::Pane;
use crate::explorer::ui::{clip, inner, pane_block};
use crate::explorer::worker::{Request, View};
use crate::model::{EntityKey, Timestamp};
use crate::query::views::{TimelineFilter, TimelineRow, TimelineRows};

/// Rows read per page.
pub const TIMELINE_PAGE: usize = 200;

/// What an empty memory says: nothing was seeded into it, and here is how to fill it.
const EMPTY_MEMORY: [&str; 5] = [
    "this memory is empty: no episode has been written to it yet",
    "  strata ingest FILE                  episodes from NDJSON or a JSON array",
    "  strata import postmortems DIR       public cloud postmortems",
    "  strata demo   (or strata --demo)    the demo memory, ~300 synthetic incidents",
    "new episodes appear here as soon as another process writes them",
];

pub struct TimelinePane {
    pub filter: TimelineFilter,
    /// Rows `offset..offset + rows.len()` of the (filtered) timeline.
    pub offset: usize,
    pub rows: Vec<TimelineRow>,
    pub total: Option<usize>,
    pub cursor: Cursor,
    pub loading: bool,
    /// When the page arrives, select the row under the cursor (the user moved there or
    /// changed the filter), rather than keep the selection and move the cursor to it.
    select_on_load: bool,
}

impl Default for TimelinePane {
    fn default() -> Self {
        TimelinePane {
            filter: TimelineFilter::default(),
            offset: 0,
            rows: Vec::new(),
            total: None,
            cursor: Cursor::default(),
            loading: false,
            select_on_load: true,
        }
    }
}

impl TimelinePane {
    pub fn row(&self, index: usize) -> Option<&TimelineRow> {
        index
            .checked_sub(self.offset)
            .and_then(|i| self.rows.get(i))
    }

    pub fn is_empty(&self) -> bool {
        self.total.unwrap_or(self.rows.len()) == 0
    }

    /// The request for the page at `offset`.
    pub fn load(
        &mut self,
        offset: usize,
        select_on_load: bool,
        known_at: Option<Timestamp>,
    ) -> Request {
        self.loading = true;
        self.select_on_load = select_on_load;
        Request::View(View::Timeline {
            filter: self.filter.clone(),
            known_at,
            offset,
            limit: TIMELINE_PAGE,
        })
    }

    /// Filters by text (blank: no text filter); the rows start over from the top.
    pub fn filter_text(&mut self, text: String) {
        self.filter.text = Some(text).filter(|t| !t.trim().is_empty());
        self.clear(true);
    }

    /// Filters by an entity; the rows start over from the top.
    pub fn filter_entity(&mut self, entity: EntityKey) {
        self.filter.entity = Some(entity);
        self.clear(true);
    }

    /// Drops every filter; returns whether there was one.
    pub fn clear_filter(&mut self) -> bool {
        if self.filter.is_empty() {
            return false;
        }
        self.filter = TimelineFilter::default();
        self.clear(true);
        true
    }

    /// The page could not be read.
    pub fn failed(&mut self) {
        self.loading = false;
    }

    /// Knowledge time moved: the rows around the cursor again, as known then.
    pub fn reload_around(&mut self, known_at: Option<Timestamp>) -> Request {
        self.clear(false);
        let around = self.cursor.index.saturating_sub(TIMELINE_PAGE / 2);
        self.load(around, false, known_at)
    }

    /// Forgets the rows (a new filter or knowledge time); `to_top` also moves the cursor
    /// to the first row.
    pub fn clear(&mut self, to_top: bool) {
        if to_top {
            self.cursor = Cursor::default();
        }
        self.rows.clear();
        self.total = None;
    }

    /// A page arrived: keep `selected` under the cursor if the page has it, or select the
    /// row under the cursor.
    pub fn loaded(
        &mut self,
        page: TimelineRows,
        selected: Option<&str>,
        shared: &Shared,
    ) -> Vec<Intent> {
        self.loading = false;
        self.offset = page.offset;
        self.total = Some(page.total);
        self.rows = page.rows;
        let len = self.len(shared);
        let kept = (!self.select_on_load)
            .then_some(selected)
            .flatten()
            .and_then(|fp| self.rows.iter().position(|r| r.fingerprint == fp));
        match kept {
            Some(i) => {
                self.cursor.set(self.offset + i, len);
                Vec::new()
            }
            None => {
                self.cursor.set(self.cursor.index, len);
                if self.row(self.cursor.index).is_some()
                    && (self.select_on_load || selected.is_none())
                {
                    self.moved(shared)
                } else {
                    Vec::new()
                }
            }
        }
    }
}

impl Component for TimelinePane {
    fn chrome(&self) -> Chrome {
        Chrome { above: 2, below: 0 }
    }

    fn len(&self, _shared: &Shared) -> usize {
        self.total.unwrap_or(self.rows.len())
    }

    fn cursor(&self) -> Option<&Cursor> {
        Some(&self.cursor)
    }

    fn cursor_mut(&mut self) -> Option<&mut Cursor> {
        Some(&mut self.cursor)
    }

    /// Selects the row under the cursor, loading its page first if needed.
    fn moved(&mut self, shared: &Shared) -> Vec<Intent> {
        let index = self.cursor.index;
        let around = index.saturating_sub(TIMELINE_PAGE / 2);
        let known_at = shared.known_filter();
        let mut out = Vec::new();
        match self.row(index).map(|r| r.fingerprint.clone()) {
            Some(fp) => out.push(Intent::Show(fp)),
            None if !self.loading && self.total.is_some_and(|t| index < t) => {
                out.push(Intent::Request(self.load(around, true, known_at)));
            }
            None => {}
        }
        let near_end = self.offset + self.rows.len();
        let window_edge = index + 10 >= near_end && near_end < self.len(shared);
        let window_start = index < self.offset + 10 && self.offset > 0;
        if !self.loading && (window_edge || window_start) {
            out.push(Intent::Request(self.load(around, true, known_at)));
        }
        out
    }

    fn open(&self, _shared: &Shared) -> Option<Intent> {
        Some(Intent::Focus(Pane::Facts))
    }

    fn episode(&self, shared: &Shared) -> Option<String> {
        self.row(self.cursor.index)
            .map(|r| r.fingerprint.clone())
            .or_else(|| shared.selected().map(str::to_string))
    }

    fn render(&self, frame: &mut Frame, rect: Rect, app: &App) {
        render(self, frame, app, rect);
    }
}

fn render(tl: &TimelinePane, frame: &mut Frame, app: &App, rect: Rect) {
    let s = &app.shared;
    let t = &s.theme;
    let mut count = match tl.total {
        Some(n) => format!("{n} episodes "),
        None => "loading… ".into(),
    };
    if !s.live.new_episodes.is_empty() {
        count.push_str(&format!("· {} new ", s.live.new_episodes.len()));
    }
    frame.render_widget(
        pane_block(app, Pane::Timeline, Span::styled(count, t.muted())),
        rect,
    );
    let area = inner(rect);
    if area.height < 3 {
        return;
    }
    let mut filter = Vec::new();
    if let Some(text) = &tl.filter.text {
        filter.push(format!("text \"{}\"", clip(text, 30)));
    }
    if let Some(e) = &tl.filter.entity {
        filter.push(format!("{}:{}", e.entity_type, clip(&e.entity_ref, 30)));
    }
    if s.as_of.known_at < s.now {
        filter.push(format!("known by {}", s.as_of.known_at.short()));
    }
    let filter_line = if filter.is_empty() {
        let fresh = if s.live.new_episodes.is_empty() {
            ""
        } else {
            " · ● new since opened"
        };
        Line::styled(
            format!("newest first · ▲ superseded an earlier one · ▽ superseded later{fresh}"),
            t.muted(),
        )
    } else {
        Line::from(vec![
            Span::styled("filter: ", t.warn()),
            Span::raw(filter.join(" · ")),
            Span::styled("  (c clears)", t.muted()),
        ])
    };
    frame.render_widget(Paragraph::new(filter_line), Rect { height: 1, ..area });
    let list = Rect {
        y: area.y + 1,
        height: area.height - 1,
        ..area
    };
    let height = list.height.saturating_sub(1) as usize;
    let focused = s.focus == Pane::Timeline;
    let start = tl.cursor.scroll;
    let visible = start..(start + height).min(tl.len(s));
    let any_new = visible
        .clone()
        .filter_map(|i| tl.row(i))
        .any(|r| s.live.is_new(&r.fingerprint));
    let columns = Columns::fit(tl, any_new, list.width);
    let rows: Vec<Row> = visible
        .map(|i| {
            let selected = i == tl.cursor.index;
            let row = match tl.row(i) {
                Some(r) => {
                    let mark = match (r.supersedes, r.superseded) {
                        (true, true) => "▲▽",
                        (true, false) => "▲ ",
                        (false, true) => " ▽",
                        (false, false) => "  ",
                    };
                    let mut marks = Line::default();
                    if any_new {
                        let new = if s.live.is_new(&r.fingerprint) {
                            "●"
                        } else {
                            " "
                        };
                        marks.push_span(Span::styled(new, t.accent()));
                    }
                    marks.push_span(Span::styled(mark, t.warn()));
                    let mut cells = vec![Cell::from(marks)];
                    if columns.concluded > 0 {
                        let when: String = r
                            .concluded_at
                            .short()
                            .chars()
                            .take(usize::from(columns.concluded))
                            .collect();
                        cells.push(Cell::from(Span::styled(when, t.muted())));
                    }
                    cells.push(Cell::from(r.fingerprint.clone()));
                    cells.push(Cell::from(r.summary.clone()));
                    Row::new(cells)
                }
                None => Row::new(vec![
                    Cell::from(""),
                    Cell::from(Span::styled("…", t.muted())),
                ]),
            };
            if selected {
                row.style(t.selected(focused))
            } else {
                row
            }
        })
        .collect();
    let mut widths = vec![Constraint::Length(columns.marks)];
    let mut header = vec![""];
    if columns.concluded > 0 {
        widths.push(Constraint::Length(columns.concluded));
        header.push("concluded");
    }
    widths.extend([Constraint::Length(columns.fingerprint), Constraint::Fill(1)]);
    header.extend([
        if columns.fingerprint >= 11 {
            "fingerprint"
        } else {
            "episode"
        },
        "summary",
    ]);
    let table = Table::new(rows, widths).header(Row::new(header).style(t.heading()));
    frame.render_widget(table, list);
    if tl.is_empty() && !tl.loading && tl.total.is_some() {
        let lines: Vec<Line> = if tl.filter.is_empty() {
            EMPTY_MEMORY
                .iter()
                .map(|l| Line::styled(*l, t.muted()))
                .collect()
        } else {
            vec![Line::styled(
                "no episode matches the filter (c clears it)",
                t.muted(),
            )]
        };
        frame.render_widget(
            Paragraph::new(lines),
            Rect {
                y: list.y + 1,
                height: list.height.saturating_sub(1),
                ..list
            },
        );
    }
}

/// The widths of the timeline's columns in a list `width` cells wide: the fingerprint as
/// wide as the longest on the page, never cut while the pane can hold it, and the
/// conclusion time shortened to a date, then dropped, before the summary is squeezed.
struct Columns {
    marks: u16,
    /// 0: not shown.
    concluded: u16,
    fingerprint: u16,
}

/// The summary keeps at least this much before the conclusion time gives way.
const SUMMARY_MIN: u16 = 10;

impl Columns {
    fn fit(tl: &TimelinePane, any_new: bool, width: u16) -> Columns {
        let marks = if any_new { 3 } else { 2 };
        let longest = tl
            .rows
            .iter()
            .map(|r| r.fingerprint.chars().count())
            .max()
            .unwrap_or(0);
        let fingerprint = (longest.max("episode".len()) as u16)
            .min(width.saturating_sub(marks + 1 + 1 + 1).max(1));
        let fixed = marks + 1 + fingerprint + 1;
        let concluded = [16, 10]
            .into_iter()
            .find(|c| fixed + c + 1 + SUMMARY_MIN <= width)
            .unwrap_or(0);
        Columns {
            marks,
            concluded,
            fingerprint,
        }
    }
}
