use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{Chrome, Component};
use crate::explorer::app::{App, Shared};
use crate::explorer::pane::Pane;
use crate::explorer::ui::{inner, pane_block};
use crate::learning::{LessonState, LessonView};

/// The selection's Reflexion lesson at the as-of point, the skills its entities trigger
/// (as known at K), and the skills the last recall suggested. It has no list.
pub struct LessonsPane;

impl Component for LessonsPane {
    fn chrome(&self) -> Chrome {
        Chrome { above: 0, below: 0 }
    }

    fn len(&self, _shared: &Shared) -> usize {
        0
    }

    fn render(&self, frame: &mut Frame, rect: Rect, app: &App) {
        render(frame, app, rect);
    }
}

fn render(frame: &mut Frame, app: &App, rect: Rect) {
    let s = &app.shared;
    let t = &s.theme;
    frame.render_widget(pane_block(app, Pane::Lessons, ""), rect);
    let area = inner(rect);
    let Some(d) = &s.selection.detail else {
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
            let view = LessonView::at(lesson.clone(), d.episode.ingested_at, &d.facts, &s.as_of);
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
    let entities: Vec<_> = d
        .facts
        .iter()
        .filter(|f| s.as_of.fact_valid(f))
        .map(|f| f.entity.clone())
        .collect();
    let current = crate::learning::skill::current(&d.skills, s.as_of.known_at);
    let matched = crate::learning::skill::matching(&current, &entities);
    if matched.is_empty() {
        lines.push(Line::styled(
            "No skill is triggered by its entities.",
            t.muted(),
        ));
    }
    for (s, shared) in matched {
        lines.push(Line::from(vec![
            Span::styled(format!("skill {} v{}", s.name, s.version), t.accent()),
            Span::styled(
                format!(
                    " · {}/{} succeeded · on {}",
                    s.succeeded,
                    s.applied,
                    shared
                        .iter()
                        .map(|e| format!("{}:{}", e.entity_type, e.entity_ref))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                t.muted(),
            ),
        ]));
        for (i, step) in s.steps.iter().enumerate() {
            lines.push(Line::raw(format!("  {}. {step}", i + 1)));
        }
    }
    if let Some(r) = &app.panes.recall.response
        && !r.skills.is_empty()
    {
        lines.push(Line::styled("Suggested by the last recall:", t.heading()));
        for s in &r.skills {
            lines.push(Line::raw(format!(
                "  {} v{} (results {}; shares {})",
                s.name,
                s.version,
                s.results
                    .iter()
                    .map(|p| format!("#{p}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                s.shared.join(", ")
            )));
        }
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
}
