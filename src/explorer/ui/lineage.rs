use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{clip, inner, pane_block};
use crate::explorer::app::App;
use crate::explorer::pane::Pane;

pub fn render(frame: &mut Frame, app: &App, rect: Rect) {
    let t = &app.theme;
    let note = app
        .live
        .selection_note
        .as_deref()
        .map(|n| Span::styled(format!("{} ", clip(n, 60)), t.warn()))
        .unwrap_or_default();
    frame.render_widget(pane_block(app, Pane::Lineage, note), rect);
    let area = inner(rect);
    if area.height < 2 {
        return;
    }
    let Some(fp) = &app.selected else {
        frame.render_widget(
            Paragraph::new(Line::styled("no selection", t.muted())),
            area,
        );
        return;
    };
    let rows = app.lineage_rows();
    let later = rows.iter().filter(|r| r.later).count();
    let mut lines = vec![Line::styled(
        format!(
            "▲ {later} later · ▼ {} earlier · Enter follows a link",
            rows.len() - later
        ),
        t.muted(),
    )];
    let focused = app.focus == Pane::Lineage;
    let height = (area.height as usize).saturating_sub(2);
    let width = area.width as usize;
    let mut body: Vec<Line> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if !row.later && (i == 0 || rows[i - 1].later) {
            body.push(center(app, fp));
        }
        let l = row.link;
        let indent = "  ".repeat(l.depth.saturating_sub(1));
        let arrow = if row.later { "▲" } else { "▼" };
        let text = format!(
            "{indent}{arrow} {} closed {}:{} valid {} known {}",
            row.target(),
            l.entity_type,
            l.entity_ref,
            l.closed_at.short(),
            l.recorded_at.short()
        );
        let line = Line::from(clip(&text, width));
        body.push(if i == app.lineage_cursor.index {
            line.style(t.selected(focused))
        } else {
            line
        });
    }
    if rows.iter().all(|r| r.later) {
        body.push(center(app, fp));
    }
    if app.lineage.is_none() {
        body = vec![Line::styled("loading…", t.muted())];
    } else if rows.is_empty() {
        body.push(Line::styled(
            "nothing superseded it, and it superseded nothing",
            t.muted(),
        ));
    }
    // Keep the selected link in view; the centre line shifts rows below it by one.
    let selected_line = app.lineage_cursor.index + usize::from(app.lineage_cursor.index >= later);
    let avail = height + 1;
    let first = (selected_line + 1).saturating_sub(avail);
    lines.extend(body.into_iter().skip(first).take(avail));
    frame.render_widget(Paragraph::new(lines), area);
}

fn center(app: &App, fp: &str) -> Line<'static> {
    Line::from(vec![
        Span::styled("● ", app.theme.accent()),
        Span::styled(fp.to_string(), app.theme.heading()),
    ])
}
