use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

use super::{inner, pane_block};
use crate::explorer::app::App;
use crate::explorer::pane::Pane;

/// Until the learning layer exists, the pane says what it will hold, and shows what the
/// episode itself records about its resolution.
pub fn render(frame: &mut Frame, app: &App, rect: Rect) {
    let t = &app.theme;
    frame.render_widget(pane_block(app, Pane::Lessons, ""), rect);
    let area = inner(rect);
    let mut lines = vec![
        Line::styled("Not built yet: the learning layer.", t.warn()),
        Line::styled(
            "Here: the Reflexion lesson rendered from this episode's facts, and the runbook skills whose trigger entities it shares.",
            t.muted(),
        ),
    ];
    if let Some(d) = &app.detail {
        lines.push(Line::raw(""));
        lines.push(Line::styled("What resolved it, as recorded:", t.accent()));
        lines.push(Line::raw(d.episode.resolution_nl.clone()));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
}
