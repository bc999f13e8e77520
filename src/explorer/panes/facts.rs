use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::{Chrome, Component, Intent};
use crate::explorer::app::{App, Shared};
use crate::explorer::cursor::Cursor;
use crate::explorer::pane::Pane;
use crate::explorer::theme::Theme;
use crate::explorer::ui::{clip, inner, pane_block};
use crate::model::{EntityKey, FactState, Timestamp};
use crate::query::FactView;

pub fn state_style(t: &Theme, state: FactState) -> Style {
    match state {
        FactState::Valid => t.good(),
        FactState::Invalidated => t.bad(),
        FactState::NotYetValid => t.warn(),
        FactState::NotYetKnown => t.muted(),
    }
}

/// The selected episode's facts, each with its state at the as-of point.
#[derive(Default)]
pub struct FactsPane {
    pub cursor: Cursor,
}

impl FactsPane {
    pub fn reset(&mut self) {
        self.cursor = Cursor::default();
    }

    /// Keeps the cursor on a fact after the selection or the as-of point changed.
    pub fn clamp(&mut self, shared: &Shared) {
        let len = self.len(shared);
        self.cursor.set(self.cursor.index, len);
    }
}

/// The selection's facts, each with its state at (V, K).
pub fn fact_views(shared: &Shared) -> Vec<FactView> {
    let Some(d) = &shared.selection.detail else {
        return Vec::new();
    };
    if !shared.as_of.knows(d.episode.ingested_at) {
        return Vec::new();
    }
    // Facts recorded after K stay listed, greyed as `not yet known`.
    d.facts
        .iter()
        .map(|f| FactView::of(f, &shared.as_of))
        .collect()
}

impl Component for FactsPane {
    fn chrome(&self) -> Chrome {
        Chrome { above: 4, below: 1 }
    }

    fn len(&self, shared: &Shared) -> usize {
        fact_views(shared).len()
    }

    fn cursor(&self) -> Option<&Cursor> {
        Some(&self.cursor)
    }

    fn cursor_mut(&mut self) -> Option<&mut Cursor> {
        Some(&mut self.cursor)
    }

    /// Opens the fact's entity.
    fn open(&self, shared: &Shared) -> Option<Intent> {
        let views = fact_views(shared);
        let v = views.get(self.cursor.index)?;
        EntityKey::new(&v.entity_type, &v.entity_ref)
            .ok()
            .map(Intent::OpenEntity)
    }

    fn render(&self, frame: &mut Frame, rect: Rect, app: &App) {
        render(self, frame, app, rect);
    }
}

fn render(pane: &FactsPane, frame: &mut Frame, app: &App, rect: Rect) {
    let s = &app.shared;
    let t = &s.theme;
    let mut title = Line::default();
    if let Some(fp) = s.selected() {
        title.push_span(Span::styled(format!("{} ", clip(fp, 40)), t.muted()));
    }
    if let Some(note) = &s.live.selection_note {
        title.push_span(Span::styled(format!("· {} ", clip(note, 80)), t.warn()));
    }
    frame.render_widget(pane_block(app, Pane::Facts, title), rect);
    let area = inner(rect);
    if area.height < 4 {
        return;
    }
    let Some(d) = &s.selection.detail else {
        let msg = if s.selected().is_some() {
            "loading…"
        } else {
            "select an episode in the timeline"
        };
        frame.render_widget(Paragraph::new(Line::styled(msg, t.muted())), area);
        return;
    };
    // Its text as known at K: as written, or as corrected by then.
    let e = &d.episode.known_at(s.as_of.known_at);
    let width = area.width as usize;
    let head = vec![
        Line::from(vec![
            Span::styled(format!("concluded {}", e.concluded_at.short()), t.text()),
            Span::styled(format!(" · valid from {}", e.t_valid.short()), t.muted()),
            Span::styled(
                format!(" · known since {}", e.ingested_at.short()),
                t.muted(),
            ),
            Span::styled(
                format!(
                    " · {} {} {:.2}",
                    e.provenance.source, e.provenance.status, e.provenance.confidence_score
                ),
                t.muted(),
            ),
        ]),
        Line::from(vec![
            Span::styled("summary ", t.accent()),
            Span::raw(clip(&e.summary_nl, width.saturating_sub(8))),
        ]),
        Line::from(vec![
            Span::styled("resolved ", t.accent()),
            Span::raw(clip(&e.resolution_nl, width.saturating_sub(9))),
        ]),
    ];
    frame.render_widget(Paragraph::new(head), Rect { height: 3, ..area });
    let list = Rect {
        y: area.y + 3,
        height: area.height - 3,
        ..area
    };
    if !s.as_of.knows(e.ingested_at) {
        frame.render_widget(
            Paragraph::new(Line::styled(
                format!(
                    "not yet known at {} (recorded {}): step knowledge time forward (t, ])",
                    s.as_of.known_at.short(),
                    e.ingested_at.short()
                ),
                t.warn(),
            )),
            list,
        );
        return;
    }
    let views = fact_views(s);
    let (axis_start, axis_end) = chart_span(&views, s.now);
    let focused = s.focus == Pane::Facts;
    let table_area = Rect {
        height: list.height.saturating_sub(1),
        ..list
    };
    let height = table_area.height.saturating_sub(1) as usize;
    let start = pane.cursor.scroll;
    let chart_width = 20usize;
    // Narrow panes drop the known date (the detail line has it), then the chart.
    let with_known = list.width >= 140;
    let with_chart = list.width >= 90;
    let with_valid = list.width >= 120 || (!with_chart && list.width >= 72);
    let date = |t: Timestamp| t.short().chars().take(10).collect::<String>();
    let rows: Vec<Row> = views
        .iter()
        .enumerate()
        .skip(start)
        .take(height)
        .map(|(i, v)| {
            let valid = format!(
                "{} → {}",
                date(v.t_valid),
                v.t_invalid.map(date).unwrap_or_default()
            );
            let mut cells = vec![
                Cell::from(Span::styled(v.state.as_str(), state_style(t, v.state))),
                Cell::from(v.relation.clone()),
                Cell::from(format!("{}:{}", v.entity_type, v.entity_ref)),
            ];
            if with_chart {
                cells.push(Cell::from(chart(s, v, axis_start, axis_end, chart_width)));
            }
            if with_valid {
                cells.push(Cell::from(valid));
            }
            if with_known {
                cells.push(Cell::from(Span::styled(date(v.ingested_at), t.muted())));
            }
            let row = Row::new(cells);
            if i == pane.cursor.index {
                row.style(t.selected(focused))
            } else {
                row
            }
        })
        .collect();
    let mut widths = vec![
        Constraint::Length(13),
        Constraint::Length(11),
        Constraint::Min(12),
    ];
    let mut header = vec!["state", "relation", "entity"];
    if with_chart {
        widths.push(Constraint::Length(chart_width as u16));
        header.push("valid ━ known ✕ V │");
    }
    if with_valid {
        widths.push(Constraint::Length(23));
        header.push("valid");
    }
    if with_known {
        widths.push(Constraint::Length(10));
        header.push("known");
    }
    let table = Table::new(rows, widths).header(Row::new(header).style(t.heading()));
    frame.render_widget(table, table_area);
    let detail_area = Rect {
        y: list.y + list.height.saturating_sub(1),
        height: 1,
        ..list
    };
    if let Some(v) = views.get(pane.cursor.index) {
        frame.render_widget(Paragraph::new(detail(t, v)), detail_area);
    }
    if views.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled("no facts known at this point", t.muted())),
            Rect {
                y: list.y + 1,
                height: 1,
                ..list
            },
        );
    }
}

/// Every time and the provenance of the selected fact, in full.
fn detail(t: &Theme, v: &FactView) -> Line<'static> {
    let end = |x: Option<Timestamp>| x.map(|x| x.short()).unwrap_or_else(|| "open".into());
    let mut spans = vec![
        Span::styled("▸ ", t.accent()),
        Span::styled(
            format!("valid {} → {}", v.t_valid.short(), end(v.t_invalid)),
            t.text(),
        ),
        Span::styled(
            format!(" · known {} → {}", v.ingested_at.short(), end(v.expired_at)),
            t.muted(),
        ),
        Span::styled(
            format!(" · {} {} {:.2}", v.source, v.status, v.confidence_score),
            t.muted(),
        ),
    ];
    if let Some(by) = &v.superseded_by {
        spans.push(Span::styled(format!(" · closed by {by}"), t.warn()));
    }
    Line::from(spans)
}

/// The time range the interval charts share: the earliest fact to now.
fn chart_span(views: &[FactView], now: Timestamp) -> (Timestamp, Timestamp) {
    let start = views.iter().map(|v| v.t_valid).min().unwrap_or(now);
    let end = now.max(start.plus_millis(86_400_000));
    let pad = (end.millis() - start.millis()) / 20;
    (start.plus_millis(-pad), end)
}

/// A compact interval chart: `━` while valid, `✕` where the invalidation became known,
/// `│` at the valid-time slider.
fn chart(
    s: &Shared,
    v: &FactView,
    start: Timestamp,
    end: Timestamp,
    width: usize,
) -> Line<'static> {
    let t = &s.theme;
    let range = (end.millis() - start.millis()).max(1) as f64;
    let col = |at: Timestamp| -> usize {
        (((at.millis() - start.millis()) as f64 / range) * (width - 1) as f64)
            .round()
            .clamp(0.0, (width - 1) as f64) as usize
    };
    let from = col(v.t_valid);
    let to = v.t_invalid.map(col).unwrap_or(width - 1);
    let known = v.expired_at.map(col);
    let cursor = col(s.as_of.valid_at);
    let spans: Vec<Span<'static>> = (0..width)
        .map(|c| {
            if Some(c) == known {
                Span::styled("✕", t.bad())
            } else if c == cursor {
                Span::styled("│", t.accent())
            } else if c >= from && c <= to {
                Span::styled("━", state_style(t, v.state))
            } else {
                Span::styled("·", t.muted())
            }
        })
        .collect();
    Line::from(spans)
}
