use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::{clip, inner, pane_block};
use crate::explorer::app::App;
use crate::explorer::pane::Pane;

/// What an empty memory says: nothing was seeded into it, and here is how to fill it.
const EMPTY_MEMORY: [&str; 5] = [
    "this memory is empty: no episode has been written to it yet",
    "  strata ingest FILE                  episodes from NDJSON or a JSON array",
    "  strata import postmortems DIR       public cloud postmortems",
    "  strata demo   (or strata --demo)    the demo memory, ~300 synthetic incidents",
    "new episodes appear here as soon as another process writes them",
];

pub fn render(frame: &mut Frame, app: &App, rect: Rect) {
    let t = &app.theme;
    let tl = &app.timeline;
    let mut count = match tl.total {
        Some(n) => format!("{n} episodes "),
        None => "loading… ".into(),
    };
    if !app.live.new_episodes.is_empty() {
        count.push_str(&format!("· {} new ", app.live.new_episodes.len()));
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
    if app.as_of.known_at < app.now {
        filter.push(format!("known by {}", app.as_of.known_at.short()));
    }
    let filter_line = if filter.is_empty() {
        let fresh = if app.live.new_episodes.is_empty() {
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
    let focused = app.focus == Pane::Timeline;
    let start = tl.cursor.scroll;
    let visible = start..(start + height).min(tl.len());
    let any_new = visible
        .clone()
        .filter_map(|i| tl.row(i))
        .any(|r| app.live.is_new(&r.fingerprint));
    let rows: Vec<Row> = (start..(start + height).min(tl.len()))
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
                        let new = if app.live.is_new(&r.fingerprint) {
                            "●"
                        } else {
                            " "
                        };
                        marks.push_span(Span::styled(new, t.accent()));
                    }
                    marks.push_span(Span::styled(mark, t.warn()));
                    Row::new(vec![
                        Cell::from(marks),
                        Cell::from(Span::styled(r.concluded_at.short(), t.muted())),
                        Cell::from(r.fingerprint.clone()),
                        Cell::from(r.summary.clone()),
                    ])
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
    let fp_width = visible
        .filter_map(|i| tl.row(i))
        .map(|r| r.fingerprint.chars().count())
        .max()
        .unwrap_or(11)
        .clamp(11, 32) as u16;
    let table = Table::new(
        rows,
        [
            Constraint::Length(if any_new { 3 } else { 2 }),
            Constraint::Length(16),
            Constraint::Length(fp_width),
            Constraint::Min(10),
        ],
    )
    .header(Row::new(vec!["", "concluded", "fingerprint", "summary"]).style(t.heading()));
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
