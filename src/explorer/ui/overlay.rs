//! Windows drawn over the panes: help (generated from the keymap), the command palette and
//! the prompt of a correction.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};

use super::clip;

use crate::explorer::action::ActionName;
use crate::explorer::app::{App, DraftStep};

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

pub fn help(frame: &mut Frame, app: &App) {
    let app = &app.shared;
    let t = &app.theme;
    let area = centered(frame.area(), 150, frame.area().height.saturating_sub(2));
    frame.render_widget(Clear, area);
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(t.border(true))
        .title(" Keys · from the keymap; override in config.toml [keymap.CONTEXT] · j/k scroll · Esc closes ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let mut lines = Vec::new();
    for section in app.keymap.help() {
        lines.push(Line::from(vec![
            Span::styled(section.context.name().to_string(), t.heading()),
            Span::styled(section.context.about(), t.muted()),
        ]));
        for row in section.rows {
            lines.push(Line::from(vec![
                Span::styled(format!("  {:<20}", row.keys), t.accent()),
                Span::raw(format!("{:<20}", row.action)),
                Span::styled(row.about.to_string(), t.muted()),
            ]));
        }
    }
    lines.push(Line::styled(
        "palette (:) — actions that take an argument",
        t.heading(),
    ));
    for (name, argument) in ActionName::all().filter_map(|a| Some((a, a.argument()?))) {
        lines.push(Line::from(vec![
            Span::styled(format!("  :{:<19}", name.as_str()), t.accent()),
            Span::styled(format!("{argument:<20}"), t.warn()),
            Span::styled(name.about(), t.muted()),
        ]));
    }
    // As many columns of 48 cells as it takes to show every line, and fit.
    let needed = lines.len().div_ceil(usize::from(inner.height.max(1)));
    let columns = needed.clamp(1, usize::from(inner.width / 48).max(1));
    let per = lines.len().div_ceil(columns);
    let areas =
        Layout::horizontal(vec![Constraint::Ratio(1, columns as u32); columns]).split(inner);
    for (i, chunk) in lines.chunks(per.max(1)).enumerate() {
        if let Some(a) = areas.get(i) {
            frame.render_widget(
                Paragraph::new(chunk.to_vec()).scroll((app.help_scroll, 0)),
                *a,
            );
        }
    }
}

pub fn palette(frame: &mut Frame, app: &App) {
    let app = &app.shared;
    let t = &app.theme;
    let typed = app.palette.lines().join(" ");
    let name = typed.split_whitespace().next().unwrap_or_default();
    let matches: Vec<ActionName> = ActionName::all()
        .filter(|a| a.as_str().starts_with(name))
        .collect();
    let height = (matches.len() as u16 + 2)
        .min(frame.area().height.saturating_sub(4))
        .max(3);
    let full = frame.area();
    let area = Rect {
        x: full.x + 1,
        y: full.y + full.height.saturating_sub(height + 2),
        width: full.width.saturating_sub(2).min(90),
        height,
    };
    frame.render_widget(Clear, area);
    let block = Block::bordered()
        .border_style(t.border(true))
        .title(" Commands · type a name (and its argument), Enter runs, Esc closes ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let lines: Vec<Line> = matches
        .iter()
        .map(|a| {
            Line::from(vec![
                Span::styled(format!("{:<18}", a.as_str()), t.accent()),
                Span::styled(format!("{:<12}", a.argument().unwrap_or("")), t.warn()),
                Span::styled(a.about(), t.muted()),
            ])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The correction being drafted: what it is about, by whom, the box being typed in, and at
/// the end the question.
pub fn correction(frame: &mut Frame, app: &App) {
    let s = &app.shared;
    let t = &s.theme;
    let Some(draft) = &s.draft else {
        return;
    };
    let full = frame.area();
    let width = full.width.saturating_sub(2).min(110);
    let height = 7.min(full.height.saturating_sub(2));
    let area = Rect {
        x: full.x + 1,
        y: full.y + full.height.saturating_sub(height + 2),
        width,
        height,
    };
    frame.render_widget(Clear, area);
    let hint = match draft.step {
        DraftStep::Confirm => " y records it · n or Esc cancels ",
        _ => " Enter next · Esc cancels ",
    };
    let block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(t.border(true))
        .title(format!(" {} ·{hint}", draft.kind.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let w = usize::from(inner.width);
    let mut lines = vec![
        Line::from(vec![
            Span::styled("about  ", t.accent()),
            Span::raw(clip(&draft.about(), w.saturating_sub(7))),
        ]),
        Line::from(vec![
            Span::styled("by     ", t.accent()),
            Span::raw(clip(&draft.by, w.saturating_sub(7))),
        ]),
    ];
    let typed = |area: &ratatui_textarea::TextArea<'static>| area.lines().join(" ");
    if !draft.kind.is_verdict() {
        lines.push(Line::from(vec![
            Span::styled("text   ", t.accent()),
            Span::raw(clip(&typed(&draft.text), w.saturating_sub(7))),
        ]));
    }
    if draft.step != DraftStep::Text {
        lines.push(Line::from(vec![
            Span::styled("reason ", t.accent()),
            Span::raw(clip(&typed(&draft.reason), w.saturating_sub(7))),
        ]));
    }
    let question = match draft.step {
        DraftStep::Text => "type the new text".to_string(),
        DraftStep::Reason => "type why (required)".to_string(),
        DraftStep::Confirm => {
            "record it at the current knowledge time? (as of any earlier K, nothing changes)"
                .to_string()
        }
    };
    lines.push(Line::styled(clip(&question, w), t.warn()));
    frame.render_widget(Paragraph::new(lines), inner);
    // The box being typed in, over its line, so its cursor shows where typing goes.
    let row = match draft.step {
        DraftStep::Text => Some(2),
        DraftStep::Reason if draft.kind.is_verdict() => Some(2),
        DraftStep::Reason => Some(3),
        DraftStep::Confirm => None,
    };
    let input = match draft.step {
        DraftStep::Text => Some(&draft.text),
        DraftStep::Reason => Some(&draft.reason),
        DraftStep::Confirm => None,
    };
    if let (Some(row), Some(input)) = (row, input)
        && row < inner.height
    {
        let at = Rect {
            x: inner.x + 7,
            y: inner.y + row,
            width: inner.width.saturating_sub(7),
            height: 1,
        };
        frame.render_widget(Clear, at);
        frame.render_widget(input, at);
    }
}
