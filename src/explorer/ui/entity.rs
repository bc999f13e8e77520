use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::facts::state_style;
use super::{inner, pane_block};
use crate::explorer::app::App;
use crate::explorer::pane::Pane;

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

pub fn render(frame: &mut Frame, app: &App, rect: Rect) {
    let t = &app.theme;
    frame.render_widget(pane_block(app, Pane::Entity, ""), rect);
    let area = inner(rect);
    if area.height < 4 {
        return;
    }
    let Some(e) = &app.entity else {
        frame.render_widget(
            Paragraph::new(Line::styled(
                "Enter on a fact opens its entity: every episode that mentions it, over time",
                t.muted(),
            )),
            area,
        );
        return;
    };
    let rows = app.entity_rows();
    let head = vec![
        Line::from(vec![
            Span::styled(
                format!("{}:{}", e.key.entity_type, e.key.entity_ref),
                t.heading(),
            ),
            Span::styled(
                format!(" · {} facts known · f filters the timeline", rows.len()),
                t.muted(),
            ),
        ]),
        Line::from(vec![
            Span::styled("over time ", t.muted()),
            Span::styled(
                histogram(&rows, area.width.saturating_sub(10) as usize),
                t.accent(),
            ),
        ]),
    ];
    frame.render_widget(Paragraph::new(head), Rect { height: 2, ..area });
    let list = Rect {
        y: area.y + 2,
        height: area.height - 2,
        ..area
    };
    let focused = app.focus == Pane::Entity;
    let height = list.height.saturating_sub(1) as usize;
    let wide = list.width >= 70;
    let fp_width = rows
        .iter()
        .map(|r| r.fingerprint.chars().count())
        .max()
        .unwrap_or(8)
        .clamp(8, 26) as u16;
    let table_rows: Vec<Row> = rows
        .iter()
        .enumerate()
        .skip(app.entity_cursor.scroll)
        .take(height)
        .map(|(i, r)| {
            let mut cells = vec![
                Cell::from(Span::styled(
                    r.concluded_at.short().chars().take(10).collect::<String>(),
                    t.muted(),
                )),
                Cell::from(r.fingerprint.clone()),
                Cell::from(Span::styled(r.state.as_str(), state_style(t, r.state))),
            ];
            if wide {
                cells.push(Cell::from(r.relation));
            }
            cells.push(Cell::from(r.summary.clone()));
            let row = Row::new(cells);
            if i == app.entity_cursor.index {
                row.style(t.selected(focused))
            } else {
                row
            }
        })
        .collect();
    let mut widths = vec![
        Constraint::Length(10),
        Constraint::Length(fp_width),
        Constraint::Length(13),
    ];
    let mut header = vec!["concluded", "episode", "state"];
    if wide {
        widths.push(Constraint::Length(11));
        header.push("relation");
    }
    widths.push(Constraint::Fill(1));
    header.push("summary");
    frame.render_widget(
        Table::new(table_rows, widths).header(Row::new(header).style(t.heading())),
        list,
    );
}

/// Episodes per time bucket, oldest left, as a one-line bar chart.
fn histogram(rows: &[crate::explorer::app::EntityRow], width: usize) -> String {
    let width = width.clamp(1, 60);
    let (Some(min), Some(max)) = (
        rows.iter().map(|r| r.concluded_at).min(),
        rows.iter().map(|r| r.concluded_at).max(),
    ) else {
        return String::new();
    };
    let span = (max.millis() - min.millis()).max(1) as f64;
    let mut buckets = vec![0usize; width];
    for r in rows {
        let i = (((r.concluded_at.millis() - min.millis()) as f64 / span) * (width - 1) as f64)
            .round() as usize;
        buckets[i.min(width - 1)] += 1;
    }
    let top = buckets.iter().copied().max().unwrap_or(1).max(1);
    buckets
        .iter()
        .map(|&n| {
            if n == 0 {
                ' '
            } else {
                BARS[((n * (BARS.len() - 1)) / top).min(BARS.len() - 1)]
            }
        })
        .collect()
}
