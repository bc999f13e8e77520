//! Drawing what is around the panes (header, status bar, help and palette) and the panes
//! where the layout puts them. Every function here reads the [`App`] and writes to the
//! frame; none changes state.

mod chrome;
pub mod layout;
mod overlay;
mod tabs;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType};

use super::app::{App, Mode, Shared};
use super::pane::Pane;

pub fn render(frame: &mut Frame, app: &App) {
    let areas = layout::areas(app);
    chrome::header(frame, app, areas.header);
    if let Some(banner) = areas.banner {
        chrome::banner(frame, app, banner);
    }
    if let Some(strip) = &areas.tabs {
        tabs::tab_strip(frame, app, &areas, strip);
    }
    for (pane, rect) in &areas.panes {
        app.panes.get(*pane).render(frame, *rect, app);
    }
    chrome::footer(frame, app, areas.footer);
    match app.shared.mode {
        Mode::Help => overlay::help(frame, app),
        Mode::Palette => overlay::palette(frame, app),
        Mode::Correct => overlay::correction(frame, app),
        Mode::Normal | Mode::Search | Mode::Query => {}
    }
    defuse(frame.buffer_mut());
}

/// Characters that would reorder what the terminal shows (bidirectional overrides), in any
/// text a pane drew, become U+FFFD; ratatui already keeps control characters out.
fn defuse(buffer: &mut ratatui::buffer::Buffer) {
    for cell in &mut buffer.content {
        if cell.symbol().chars().any(crate::redact::is_terminal_unsafe) {
            let shown: String = cell
                .symbol()
                .chars()
                .map(|c| {
                    if crate::redact::is_terminal_unsafe(c) {
                        '\u{fffd}'
                    } else {
                        c
                    }
                })
                .collect();
            cell.set_symbol(&shown);
        }
    }
}

/// The bordered frame of a pane, its number and title on the border.
pub(crate) fn pane_block<'a>(app: &App, pane: Pane, extra: impl Into<Line<'a>>) -> Block<'a> {
    let focused = app.shared.focus == pane;
    let theme = &app.shared.theme;
    let mut title = Line::from(format!(" {} {} ", pane.number(), pane.title()));
    title.spans.extend(extra.into().spans);
    Block::bordered()
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(theme.border(focused))
        .title(title.style(theme.border(focused)))
}

/// The area inside a pane's border.
pub(crate) fn inner(rect: Rect) -> Rect {
    Rect {
        x: rect.x + 1,
        y: rect.y + 1,
        width: rect.width.saturating_sub(2),
        height: rect.height.saturating_sub(2),
    }
}

pub(crate) fn ms(shared: &Shared, value: f64) -> String {
    if shared.mask_volatile {
        "~ms".into()
    } else if value < 10.0 {
        format!("{value:.1}ms")
    } else {
        format!("{value:.0}ms")
    }
}

/// At most `max` characters, with an ellipsis when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    let text = text.replace(['\n', '\r', '\t'], " ");
    if text.chars().count() <= max {
        return text;
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}
