//! The header (as-of sliders), the error banner and the status bar.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::ms;
use crate::explorer::action::Axis;
use crate::explorer::app::{App, Health, Mode, Shared};
use crate::model::Timestamp;
use crate::recall::{Leg, LegStatus, RecallMode};
use crate::telemetry::Readiness;

pub fn header(frame: &mut Frame, app: &App, area: Rect) {
    let app = &app.shared;
    let t = &app.theme;
    let [top, sliders] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(area);
    let axis = |a: Axis| {
        if app.axis == a {
            t.heading()
        } else {
            t.muted()
        }
    };
    let mut spans = vec![
        Span::styled(" Strata ", t.heading()),
        Span::styled("│ as of ", t.muted()),
        Span::styled("valid ", axis(Axis::Valid)),
        Span::raw(app.as_of.valid_at.short()),
        Span::styled("  known ", axis(Axis::Known)),
        Span::raw(app.as_of.known_at.short()),
    ];
    if app.as_of.valid_at == app.now && app.as_of.known_at == app.now {
        spans.push(Span::styled("  (now)", t.muted()));
    }
    spans.push(Span::styled(
        format!("  │ slider: {} (t switches)", app.axis.name()),
        t.muted(),
    ));
    frame.render_widget(Paragraph::new(Line::from(spans)), top);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(sliders);
    let (start, end) = span(app);
    frame.render_widget(
        Paragraph::new(slider(
            app,
            Axis::Valid,
            app.as_of.valid_at,
            start,
            end,
            left.width,
        )),
        left,
    );
    frame.render_widget(
        Paragraph::new(slider(
            app,
            Axis::Known,
            app.as_of.known_at,
            start,
            end,
            right.width,
        )),
        right,
    );
}

/// The range the sliders cover: the store's first episode to now.
fn span(app: &Shared) -> (Timestamp, Timestamp) {
    let end = app.now;
    let start = app
        .store
        .summary
        .and_then(|s| s.earliest)
        .filter(|e| *e < end)
        .unwrap_or(end.plus_millis(-365 * 86_400_000));
    (start, end)
}

fn slider(
    app: &Shared,
    axis: Axis,
    at: Timestamp,
    start: Timestamp,
    end: Timestamp,
    width: u16,
) -> Line<'static> {
    let t = &app.theme;
    let label = format!(" {:<5} ", axis.name());
    let track = (width as usize).saturating_sub(label.len() + 4).max(4);
    let range = (end.millis() - start.millis()).max(1) as f64;
    let pos = (((at.millis() - start.millis()) as f64 / range) * (track - 1) as f64)
        .round()
        .clamp(0.0, (track - 1) as f64) as usize;
    let before: String = "─".repeat(pos);
    let after: String = "─".repeat(track - 1 - pos);
    let style = if app.axis == axis {
        t.accent()
    } else {
        t.muted()
    };
    Line::from(vec![
        Span::styled(label, style),
        Span::styled("├", t.muted()),
        Span::styled(before, t.muted()),
        Span::styled("●", style),
        Span::styled(after, t.muted()),
        Span::styled("┤", t.muted()),
    ])
}

pub fn banner(frame: &mut Frame, app: &App, area: Rect) {
    if let Some(b) = &app.shared.store.banner {
        frame.render_widget(
            Paragraph::new(format!(" {b}  (Ctrl+r retries)")).style(app.shared.theme.banner()),
            area,
        );
    }
}

pub fn footer(frame: &mut Frame, app: &App, area: Rect) {
    let s = &app.shared;
    let store = &s.store;
    let t = &s.theme;
    let [status, line] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(area);
    let health_style = match &store.health {
        Health::Opening => t.warn(),
        Health::Ok => t.good(),
        _ => t.bad(),
    };
    let mut spans = vec![
        Span::raw(" "),
        Span::raw(super::clip(
            if s.mask_volatile {
                store.backend.split(" (").next().unwrap_or_default()
            } else {
                &store.backend
            },
            48,
        )),
        Span::styled(" ● ", health_style),
        Span::styled(store.health.label(), health_style),
    ];
    if store.health == Health::Ok {
        spans.push(Span::styled(" · live", t.good()));
        if let Some(at) = s.live.changed_at {
            spans.push(Span::styled(
                format!(" · changed {}", at.clock()),
                t.accent(),
            ));
        }
    }
    // The agents' recall mode and warm signal: once a rollout has begun (shadow mode, or any
    // recall recorded); a memory nobody recalled from in active mode has nothing to say.
    let recorded = store.warm.as_ref().is_some_and(|w| w.recalls > 0);
    if store.recall_mode == RecallMode::Shadow || recorded {
        spans.push(Span::styled(" │ recall ", t.muted()));
        spans.push(match store.recall_mode {
            RecallMode::Active => Span::styled("active", t.good()),
            RecallMode::Shadow => Span::styled("shadow", t.warn()),
        });
        if let Some(warm) = &store.warm {
            let style = match warm.readiness {
                Readiness::Ready => t.good(),
                Readiness::Cold => t.warn(),
                Readiness::NoRecalls | Readiness::TooFew => t.muted(),
            };
            spans.push(Span::styled(format!(" · warm {}", warm.short()), style));
        }
    }
    if let Some(summary) = &store.summary {
        spans.push(Span::styled(
            format!(
                " │ {} episodes · {} entities",
                summary.stats.episodes, summary.stats.entities
            ),
            Style::new(),
        ));
    }
    spans.push(Span::styled(" │ ", t.muted()));
    match (&store.embedder, store.progress) {
        (_, Some(p)) => {
            let left = match p.eta_secs.filter(|_| !s.mask_volatile) {
                Some(s) if s >= 60 => format!(" · ~{} min left", s.div_ceil(60)),
                Some(s) => format!(" · ~{s} s left"),
                None => String::new(),
            };
            spans.push(Span::styled(
                format!("{} {}/{}{left}", p.label, p.done, p.total),
                t.warn(),
            ))
        }
        (Some(e), None) => spans.push(Span::raw(e.clone())),
        (None, None) => spans.push(Span::styled("recall opening", t.warn())),
    }
    if let Some(r) = &app.panes.recall.response {
        for leg in Leg::ALL {
            let report = r.legs.get(leg);
            let style = match report.status {
                LegStatus::Ok => t.good(),
                LegStatus::Disabled => t.muted(),
                LegStatus::Behind => t.warn(),
                LegStatus::Failed | LegStatus::Timeout => t.bad(),
            };
            spans.push(Span::styled(" │ ", t.muted()));
            spans.push(Span::raw(format!("{} ", leg.as_str())));
            spans.push(Span::styled(report.status.as_str(), style));
            if report.status != LegStatus::Disabled {
                spans.push(Span::raw(format!(" {}", ms(s, report.latency_ms))));
            }
        }
        spans.push(Span::styled(" │ ", t.muted()));
        spans.push(Span::raw(format!("recall {}", ms(s, r.latency_ms))));
    }
    if store.pending > 0 {
        spans.push(Span::styled(format!(" │ ⟳ {}", store.pending), t.warn()));
    }
    frame.render_widget(
        Paragraph::new(Line::from(spans)).style(t.status_bar()),
        status,
    );
    match s.mode {
        Mode::Search => input_line(frame, s, line, "/", &s.search),
        Mode::Palette => input_line(frame, s, line, ":", &s.palette),
        _ => {
            let text = match (&s.message, store.notices.is_empty()) {
                (Some(m), _) => Line::styled(format!(" {m}"), t.warn()),
                (None, false) => {
                    Line::styled(format!(" note: {}", store.notices.join(" · ")), t.warn())
                }
                (None, true) => Line::styled(hints(line.width), t.muted()),
            };
            frame.render_widget(Paragraph::new(text), line);
        }
    }
}

/// The keys a newcomer needs first, as many as fit in `width`, whole.
const HINTS: &[&str] = &[
    "? help",
    "q quit",
    "Tab/1-8 panes",
    "z zoom",
    "y recall like",
    "/ search",
    ": commands",
    "Enter open",
    "Esc back",
    "[ ] day",
    "{ } week",
    "< > change",
    "t axis",
];

fn hints(width: u16) -> String {
    let mut line = String::new();
    for hint in HINTS {
        if line.chars().count() + 2 + hint.chars().count() > usize::from(width) {
            break;
        }
        line.push_str(if line.is_empty() { " " } else { "  " });
        line.push_str(hint);
    }
    line
}

fn input_line(
    frame: &mut Frame,
    app: &Shared,
    area: Rect,
    prompt: &str,
    input: &ratatui_textarea::TextArea<'static>,
) {
    let [p, rest] = Layout::horizontal([Constraint::Length(2), Constraint::Min(1)]).areas(area);
    frame.render_widget(
        Paragraph::new(format!("{prompt} ")).style(app.theme.heading()),
        p,
    );
    frame.render_widget(input, rest);
}
