//! Keys and the mouse. Every key goes through the keymap, in the context of the mode and
//! the focused pane; in a text input, a key the keymap does not bind types.

use ratatui::layout::{Position, Rect};
use ratatui_textarea::Key;

use super::{App, DraftStep, Effects, Mode};
use crate::explorer::action::Action;
use crate::explorer::key::KeyChord;
use crate::explorer::keymap::Context;
use crate::explorer::ui::layout;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MouseKind {
    Click,
    ScrollUp,
    ScrollDown,
}

impl App {
    pub fn on_key(&mut self, key: KeyChord) -> Effects {
        let mode = self.shared.mode;
        let contexts: &[Context] = match mode {
            Mode::Normal => &[Context::Pane(self.shared.focus), Context::Global],
            Mode::Help => &[Context::Help],
            Mode::Search => &[Context::Search, Context::Input],
            Mode::Palette => &[Context::Palette, Context::Input],
            Mode::Query => &[Context::Query, Context::Input],
            Mode::Correct => match self.shared.draft.as_ref().map(|d| d.step) {
                Some(DraftStep::Confirm) | None => &[Context::Confirm],
                Some(_) => &[Context::Reason, Context::Input],
            },
        };
        match self.shared.keymap.lookup(contexts, key) {
            Some(action) => match mode {
                Mode::Normal => self.act(action),
                Mode::Help => self.in_help(action),
                Mode::Search | Mode::Palette | Mode::Query => self.in_input(action),
                Mode::Correct => self.in_correction(action),
            },
            None => self.type_key(key),
        }
        self.take_effects()
    }

    /// While help is open, moves scroll it and `back` closes it.
    fn in_help(&mut self, action: Action) {
        let s = &mut self.shared;
        match action {
            Action::Up => s.help_scroll = s.help_scroll.saturating_sub(1),
            Action::Down => s.help_scroll = s.help_scroll.saturating_add(1),
            Action::PageUp => s.help_scroll = s.help_scroll.saturating_sub(10),
            Action::PageDown => s.help_scroll = s.help_scroll.saturating_add(10),
            Action::Top => s.help_scroll = 0,
            Action::Back => {
                s.mode = Mode::Normal;
                s.help_scroll = 0;
            }
            other => self.act(other),
        }
    }

    /// In a text input, `open` runs what was typed and `back` leaves it.
    fn in_input(&mut self, action: Action) {
        let mode = self.shared.mode;
        match action {
            Action::Open => {
                self.shared.mode = Mode::Normal;
                match mode {
                    Mode::Search => {
                        let text = self.shared.search.lines().join(" ");
                        self.act(Action::FilterText(text));
                    }
                    Mode::Palette => {
                        let line = self.shared.palette.lines().join(" ");
                        if !line.trim().is_empty() {
                            match Action::parse_line(&line) {
                                Ok(action) => self.act(action),
                                Err(e) => self.shared.message = Some(e.to_string()),
                            }
                        }
                    }
                    Mode::Query => {
                        self.leave_query();
                        self.act(Action::RecallRun);
                    }
                    Mode::Normal | Mode::Help | Mode::Correct => {}
                }
            }
            Action::Back if mode == Mode::Query => self.leave_query(),
            Action::Back => self.shared.mode = Mode::Normal,
            other => self.act(other),
        }
    }

    fn type_key(&mut self, key: KeyChord) {
        let input = key.to_input();
        // The boxes are one line: what would break it is not typed.
        if matches!(input.key, Key::Enter | Key::Char('\n' | '\r'))
            || (input.ctrl && input.key == Key::Char('m'))
        {
            return;
        }
        match self.shared.mode {
            Mode::Search => {
                self.shared.search.input(input);
            }
            Mode::Palette => {
                self.shared.palette.input(input);
            }
            Mode::Query => self.change_query(|query| query.input(input)),
            Mode::Correct => {
                if let Some(text) = self.shared.draft.as_mut().and_then(|d| d.input()) {
                    text.input(input);
                }
            }
            Mode::Normal | Mode::Help => {}
        }
    }

    pub fn on_resize(&mut self, width: u16, height: u16) -> Effects {
        self.shared.size = Rect::new(0, 0, width, height);
        self.keep_visible();
        self.take_effects()
    }

    /// A click focuses the pane under the pointer and selects the row clicked, or brings
    /// forward the pane whose tab it is; the wheel moves the selection of the pane under
    /// the pointer.
    pub fn on_mouse(&mut self, kind: MouseKind, column: u16, row: u16) -> Effects {
        if self.shared.mode != Mode::Normal {
            return self.take_effects();
        }
        let areas = layout::areas(self);
        let point = Position::new(column, row);
        let tab = areas
            .tabs
            .iter()
            .flat_map(|strip| &strip.tabs)
            .find(|(_, r)| r.contains(point));
        if let Some((pane, _)) = tab {
            if kind == MouseKind::Click {
                self.act(Action::Focus(*pane));
            }
            return self.take_effects();
        }
        let Some((pane, rect)) = areas.panes.iter().find(|(_, r)| r.contains(point)).copied()
        else {
            return self.take_effects();
        };
        self.shared.set_focus(pane);
        match kind {
            MouseKind::ScrollUp => self.act(Action::Up),
            MouseKind::ScrollDown => self.act(Action::Down),
            MouseKind::Click => {
                let first = layout::list_top(self, pane, rect);
                let line = row.checked_sub(first).map(usize::from);
                if let Some(line) = line.filter(|l| *l < layout::list_height(self, pane))
                    && let Some(index) = self.panes.get(pane).row_at(line)
                {
                    self.select_row(pane, index);
                }
            }
        }
        self.take_effects()
    }
}
