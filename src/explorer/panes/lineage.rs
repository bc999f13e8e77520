use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{Chrome, Component, Intent};
use crate::explorer::app::{App, Shared};
use crate::explorer::cursor::Cursor;
use crate::explorer::pane::Pane;
use crate::explorer::theme::Theme;
use crate::explorer::ui::{clip, inner, pane_block};
use crate::query::{Lineage, LineageLink, NearestLineage};

/// One row of the lineage pane: a link above (it superseded the selection's chain) or
/// below (the selection's chain superseded it).
pub struct LineageRow<'a> {
    pub later: bool,
    pub link: &'a LineageLink,
}

impl LineageRow<'_> {
    /// The episode on the far side of the link from the selection.
    pub fn target(&self) -> &str {
        if self.later {
            &self.link.episode
        } else {
            &self.link.prior
        }
    }
}

/// The selection's supersession chains, later links above it and earlier ones below.
#[derive(Default)]
pub struct LineagePane {
    pub lineage: Option<Lineage>,
    /// Links beyond the nearest ones read were left out.
    pub cut: bool,
    pub cursor: Cursor,
}

impl LineagePane {
    pub fn reset(&mut self) {
        *self = LineagePane::default();
    }

    /// The selection's lineage arrived (`None`: it could not be read).
    pub fn loaded(&mut self, lineage: Option<NearestLineage>) {
        self.cut = lineage.as_ref().is_some_and(|l| l.cut);
        self.lineage = lineage.map(|l| l.lineage);
        let len = self.rows().len();
        self.cursor.set(self.cursor.index, len);
    }

    pub fn rows(&self) -> Vec<LineageRow<'_>> {
        let Some(l) = &self.lineage else {
            return Vec::new();
        };
        let mut rows: Vec<LineageRow<'_>> = l
            .forwards
            .iter()
            .rev()
            .map(|link| LineageRow { later: true, link })
            .collect();
        rows.extend(
            l.backwards
                .iter()
                .map(|link| LineageRow { later: false, link }),
        );
        rows
    }
}

impl Component for LineagePane {
    fn chrome(&self) -> Chrome {
        Chrome { above: 1, below: 0 }
    }

    fn len(&self, _shared: &Shared) -> usize {
        self.rows().len()
    }

    fn cursor(&self) -> Option<&Cursor> {
        Some(&self.cursor)
    }

    fn cursor_mut(&mut self) -> Option<&mut Cursor> {
        Some(&mut self.cursor)
    }

    /// Its lines are not its rows (the selection sits between the two directions).
    fn row_at(&self, _line: usize) -> Option<usize> {
        None
    }

    /// Follows the link to the episode on its far side.
    fn open(&self, _shared: &Shared) -> Option<Intent> {
        let rows = self.rows();
        let row = rows.get(self.cursor.index)?;
        Some(Intent::Follow {
            fingerprint: row.target().to_string(),
            focus: None,
        })
    }

    /// The episode on the far side of the link under the cursor; with no link, the
    /// selection at the centre.
    fn episode(&self, shared: &Shared) -> Option<String> {
        let rows = self.rows();
        rows.get(self.cursor.index)
            .map(|r| r.target().to_string())
            .or_else(|| shared.selected().map(str::to_string))
    }

    fn render(&self, frame: &mut Frame, rect: Rect, app: &App) {
        render(self, frame, app, rect);
    }
}

fn render(pane: &LineagePane, frame: &mut Frame, app: &App, rect: Rect) {
    let s = &app.shared;
    let t = &s.theme;
    let note = s
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
    let Some(fp) = s.selected() else {
        frame.render_widget(
            Paragraph::new(Line::styled("no selection", t.muted())),
            area,
        );
        return;
    };
    let rows = pane.rows();
    let later = rows.iter().filter(|r| r.later).count();
    let mut lines = vec![Line::styled(
        format!(
            "▲ {later} later · ▼ {} earlier{} · Enter follows a link",
            rows.len() - later,
            if pane.cut {
                " (the nearest; more beyond)"
            } else {
                ""
            }
        ),
        t.muted(),
    )];
    let focused = s.focus == Pane::Lineage;
    let height = (area.height as usize).saturating_sub(2);
    let width = area.width as usize;
    let mut body: Vec<Line> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if !row.later && (i == 0 || rows[i - 1].later) {
            body.push(center(t, fp));
        }
        let l = row.link;
        let indent = "  ".repeat(l.depth.saturating_sub(1));
        let arrow = if row.later { "▲" } else { "▼" };
        let verdict = l
            .review
            .as_ref()
            .map(|r| format!(" · {} by {}", r.verdict.as_str(), r.by))
            .unwrap_or_default();
        let text = format!(
            "{indent}{arrow} {} closed {}:{} valid {} known {}{verdict}",
            row.target(),
            l.entity_type,
            l.entity_ref,
            l.closed_at.short(),
            l.recorded_at.short()
        );
        let line = Line::from(clip(&text, width));
        body.push(if i == pane.cursor.index {
            line.style(t.selected(focused))
        } else {
            line
        });
    }
    if rows.iter().all(|r| r.later) {
        body.push(center(t, fp));
    }
    if pane.lineage.is_none() {
        body = vec![Line::styled("loading…", t.muted())];
    } else if rows.is_empty() {
        body.push(Line::styled(
            "nothing superseded it, and it superseded nothing",
            t.muted(),
        ));
    }
    // Keep the selected link in view; the centre line shifts rows below it by one.
    let selected_line = pane.cursor.index + usize::from(pane.cursor.index >= later);
    let avail = height + 1;
    let first = (selected_line + 1).saturating_sub(avail);
    lines.extend(body.into_iter().skip(first).take(avail));
    frame.render_widget(Paragraph::new(lines), area);
}

fn center(t: &Theme, fp: &str) -> Line<'static> {
    Line::from(vec![
        Span::styled("● ", t.accent()),
        Span::styled(fp.to_string(), t.heading()),
    ])
}
