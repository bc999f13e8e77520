use ratatui::layout::{Position, Rect};

use super::{App, Mode};
use crate::explorer::action::Action;
use crate::explorer::key::{KeyChord, KeyCode};
use crate::explorer::pane::Pane;
use crate::explorer::ui::layout;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MouseKind {
    Click,
    ScrollUp,
    ScrollDown,
}

impl App {
    pub fn on_key(&mut self, key: KeyChord) {
        let enter = key == KeyChord::plain(KeyCode::Enter);
        let esc = key == KeyChord::plain(KeyCode::Esc);
        if self.mode != Mode::Normal && key.ctrl && key.code == KeyCode::Char('c') {
            self.dispatch(Action::Quit);
            return;
        }
        match self.mode {
            Mode::Help => match key.code {
                _ if esc || key == KeyChord::char('?') || key == KeyChord::char('q') => {
                    self.mode = Mode::Normal;
                    self.help_scroll = 0;
                }
                KeyCode::Down | KeyCode::Char('j') => {
                    self.help_scroll = self.help_scroll.saturating_add(1)
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    self.help_scroll = self.help_scroll.saturating_sub(1)
                }
                KeyCode::PageDown => self.help_scroll = self.help_scroll.saturating_add(10),
                KeyCode::PageUp => self.help_scroll = self.help_scroll.saturating_sub(10),
                KeyCode::Home => self.help_scroll = 0,
                _ => {}
            },
            Mode::Search => {
                if enter {
                    self.mode = Mode::Normal;
                    let text = self.search.lines().join(" ");
                    self.dispatch(Action::FilterText(text));
                } else if esc {
                    self.mode = Mode::Normal;
                } else {
                    self.search.input(key.to_input());
                }
            }
            Mode::Palette => {
                if enter {
                    self.mode = Mode::Normal;
                    let line = self.palette.lines().join(" ");
                    if !line.trim().is_empty() {
                        match Action::parse_line(&line) {
                            Ok(action) => self.dispatch(action),
                            Err(e) => self.message = Some(e),
                        }
                    }
                } else if esc {
                    self.mode = Mode::Normal;
                } else {
                    self.palette.input(key.to_input());
                }
            }
            Mode::Query => {
                if enter {
                    self.mode = Mode::Normal;
                    self.run_recall();
                } else if esc {
                    self.mode = Mode::Normal;
                } else {
                    self.recall.query.input(key.to_input());
                }
            }
            Mode::Normal => {
                if let Some(action) = self.keymap.lookup(self.focus, key) {
                    self.dispatch(action);
                }
            }
        }
    }

    pub fn on_resize(&mut self, width: u16, height: u16) {
        self.size = Rect::new(0, 0, width, height);
        self.after_resize();
    }

    /// A click focuses the pane under the pointer and selects the row clicked; the wheel
    /// moves the selection of the pane under the pointer.
    pub fn on_mouse(&mut self, kind: MouseKind, column: u16, row: u16) {
        if self.mode != Mode::Normal {
            return;
        }
        let areas = layout::areas(self);
        let point = Position::new(column, row);
        let Some((pane, rect)) = areas.panes.iter().find(|(_, r)| r.contains(point)).copied()
        else {
            return;
        };
        self.focus = pane;
        match kind {
            MouseKind::ScrollUp => self.dispatch(Action::Up),
            MouseKind::ScrollDown => self.dispatch(Action::Down),
            MouseKind::Click => {
                let first = layout::list_top(self, pane, rect);
                if row < first {
                    return;
                }
                let offset = (row - first) as usize;
                if offset >= layout::list_height(self, pane) {
                    return;
                }
                let scroll = match pane {
                    Pane::Timeline => self.timeline.cursor.scroll,
                    Pane::Facts => self.facts_cursor.scroll,
                    Pane::Recall => self.recall.cursor.scroll,
                    Pane::Entity => self.entity_cursor.scroll,
                    Pane::Lineage | Pane::Lessons => return,
                };
                self.select_row(pane, scroll + offset);
            }
        }
    }
}
