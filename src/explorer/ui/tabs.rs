//! The strip of tabs above the panes when some are not on screen: every pane by the key
//! that brings it forward, the focused one marked, those on screen in plain text and the
//! others muted.

use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::layout::{Areas, TabStrip, tab_label};
use crate::explorer::app::App;

pub fn tab_strip(frame: &mut Frame, app: &App, areas: &Areas, strip: &TabStrip) {
    let s = &app.shared;
    let t = &s.theme;
    for (pane, rect) in &strip.tabs {
        let label = tab_label(*pane);
        let (text, style) = if *pane == s.focus {
            (format!("[{label}]"), t.selected(true))
        } else {
            let shown = areas.panes.iter().any(|(p, _)| p == pane);
            let text = if usize::from(rect.width) > label.chars().count() {
                format!(" {label} ")
            } else {
                label
            };
            (text, if shown { t.text() } else { t.muted() })
        };
        frame.render_widget(Paragraph::new(Span::styled(text, style)), *rect);
    }
    let hints: &[&str] = if s.zoom {
        &["zoomed · z restores", "z restores"]
    } else {
        &["Tab/1-8 switch · z zoom", "z zoom"]
    };
    let rest = strip.rest;
    if let Some(hint) = hints
        .iter()
        .find(|h| usize::from(rest.width) > h.chars().count())
    {
        frame.render_widget(
            Paragraph::new(Line::styled(*hint, t.muted()).right_aligned()),
            rest,
        );
    }
}
