use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{inner, pane_block};
use crate::explorer::app::App;
use crate::explorer::pane::Pane;
use crate::learning::{LessonState, LessonView};

/// The selection's Reflexion lesson at the as-of point. Skills are not built yet; the
/// pane says so.
pub fn render(frame: &mut Frame, app: &App, rect: Rect) {
    let t = &app.theme;
    frame.render_widget(pane_block(app, Pane::Lessons, ""), rect);
    let area = inner(rect);
    let Some(d) = &app.detail else {
        frame.render_widget(
            Paragraph::new(Line::styled(
                "select an episode to see its lesson",
                t.muted(),
            )),
            area,
        );
        return;
    };
    let mut lines = Vec::new();
    match &d.lesson {
        Some(lesson) => {
            let view = LessonView::at(lesson.clone(), d.episode.ingested_at, &d.facts, &app.as_of);
            let style = match view.state {
                LessonState::Current => t.good(),
                LessonState::Superseded => t.bad(),
                LessonState::NotYetKnown => t.muted(),
            };
            let mut state = vec![Span::styled(view.state.as_str(), style)];
            if let Some(by) = &view.superseded_by {
                state.push(Span::styled(
                    format!(
                        " by {by} · valid until {} · recorded {}",
                        view.superseded_at.map(|x| x.short()).unwrap_or_default(),
                        view.superseded_known_at
                            .map(|x| x.short())
                            .unwrap_or_default()
                    ),
                    t.muted(),
                ));
            }
            lines.push(Line::from(state));
            lines.push(Line::raw(view.lesson.text.clone()));
            lines.push(Line::styled(
                format!("rests on {}", view.lesson.cites.join(", ")),
                t.muted(),
            ));
        }
        None => lines.push(Line::styled("no lesson recorded", t.muted())),
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "Skills (runbooks) are not built yet.",
        t.warn(),
    ));
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
}
