use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::facts::state_style;
use super::{Chrome, Component, Intent};
use crate::explorer::app::{App, Shared};
use crate::explorer::cursor::Cursor;
use crate::explorer::pane::Pane;
use crate::explorer::ui::{inner, pane_block};
use crate::model::{EntityKey, FactState, Timestamp};
use crate::query::views::EntityDetail;

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

pub struct EntityRow {
    pub fingerprint: String,
    pub concluded_at: Timestamp,
    pub relation: &'static str,
    pub state: FactState,
    pub summary: String,
}

/// An entity: every episode with a fact about it, newest first, and when they happened.
#[derive(Default)]
pub struct EntityPane {
    pub entity: Option<EntityDetail>,
    pub cursor: Cursor,
}

impl EntityPane {
    pub fn key(&self) -> Option<&EntityKey> {
        self.entity.as_ref().map(|e| &e.key)
    }

    /// Another entity is on its way: its rows start at the top.
    pub fn opening(&mut self) {
        self.cursor = Cursor::default();
    }

    pub fn loaded(&mut self, entity: EntityDetail, shared: &Shared) {
        self.entity = Some(entity);
        let len = self.len(shared);
        self.cursor.set(self.cursor.index, len);
    }

    pub fn rows(&self, shared: &Shared) -> Vec<EntityRow> {
        let Some(e) = &self.entity else {
            return Vec::new();
        };
        let mut rows: Vec<EntityRow> = e
            .facts
            .iter()
            .filter_map(|f| {
                let episode = e.episodes.get(&f.episode)?;
                Some(EntityRow {
                    fingerprint: f.episode.clone(),
                    concluded_at: episode.concluded_at,
                    relation: f.relation.as_str(),
                    state: shared.as_of.fact_state(f),
                    summary: episode
                        .summary_nl
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                })
            })
            .collect();
        rows.sort_by(|a, b| {
            (b.concluded_at, &a.fingerprint, a.relation).cmp(&(
                a.concluded_at,
                &b.fingerprint,
                b.relation,
            ))
        });
        rows
    }
}

impl Component for EntityPane {
    fn chrome(&self) -> Chrome {
        Chrome { above: 3, below: 0 }
    }

    fn len(&self, shared: &Shared) -> usize {
        self.rows(shared).len()
    }

    fn cursor(&self) -> Option<&Cursor> {
        Some(&self.cursor)
    }

    fn cursor_mut(&mut self) -> Option<&mut Cursor> {
        Some(&mut self.cursor)
    }

    /// Selects the episode.
    fn open(&self, shared: &Shared) -> Option<Intent> {
        let rows = self.rows(shared);
        let row = rows.get(self.cursor.index)?;
        Some(Intent::Follow {
            fingerprint: row.fingerprint.clone(),
            focus: Some(Pane::Facts),
        })
    }

    fn episode(&self, shared: &Shared) -> Option<String> {
        self.rows(shared)
            .into_iter()
            .nth(self.cursor.index)
            .map(|r| r.fingerprint)
            .or_else(|| shared.selected().map(str::to_string))
    }

    fn render(&self, frame: &mut Frame, rect: Rect, app: &App) {
        render(self, frame, app, rect);
    }
}

fn render(pane: &EntityPane, frame: &mut Frame, app: &App, rect: Rect) {
    let s = &app.shared;
    let t = &s.theme;
    frame.render_widget(pane_block(app, Pane::Entity, ""), rect);
    let area = inner(rect);
    if area.height < 4 {
        return;
    }
    let Some(e) = &pane.entity else {
        frame.render_widget(
            Paragraph::new(Line::styled(
                "Enter on a fact opens its entity: every episode that mentions it, over time",
                t.muted(),
            )),
            area,
        );
        return;
    };
    let rows = pane.rows(s);
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
    let focused = s.focus == Pane::Entity;
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
        .skip(pane.cursor.scroll)
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
            if i == pane.cursor.index {
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
fn histogram(rows: &[EntityRow], width: usize) -> String {
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
