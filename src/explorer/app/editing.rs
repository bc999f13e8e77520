//! The text boxes (search, palette, query) edited as a shell's line is, and the query
//! box's history: what the `input.*` and `history.*` actions do.

use ratatui_textarea::{CursorMove, TextArea};

use super::{App, Mode};
use crate::explorer::action::LineEdit;
use crate::explorer::pane::Pane;
use crate::explorer::worker::Request;

/// Carries out an edit with what the text box offers; returns whether the text changed.
pub fn apply(input: &mut TextArea<'static>, edit: LineEdit) -> bool {
    let moved = |input: &mut TextArea<'static>, to: CursorMove| {
        input.move_cursor(to);
        false
    };
    match edit {
        LineEdit::Start => moved(input, CursorMove::Head),
        LineEdit::End => moved(input, CursorMove::End),
        LineEdit::WordBack => moved(input, CursorMove::WordBack),
        LineEdit::WordForward => moved(input, CursorMove::WordForward),
        LineEdit::KillToStart => input.delete_line_by_head(),
        LineEdit::KillToEnd => input.delete_line_by_end(),
        LineEdit::KillWord => input.delete_word(),
        LineEdit::Yank => input.paste(),
    }
}

impl App {
    pub(super) fn edit_input(&mut self, edit: LineEdit) {
        match self.shared.mode {
            Mode::Search => {
                apply(&mut self.shared.search, edit);
            }
            Mode::Palette => {
                apply(&mut self.shared.palette, edit);
            }
            Mode::Query => self.change_query(|query| apply(query, edit)),
            Mode::Correct => self.edit_draft(edit),
            Mode::Normal | Mode::Help => {
                self.shared.message = Some("no text box is open to edit".into());
            }
        }
    }

    /// Edits the query box; a change to the text ends browsing the history.
    pub(super) fn change_query(&mut self, edit: impl FnOnce(&mut TextArea<'static>) -> bool) {
        let mut changed = false;
        self.panes.recall.edit(|query| {
            changed = edit(query);
            changed
        });
        if changed {
            self.history.stop_browsing();
        }
    }

    /// Opens the query box with the cursor at the end, as a shell line is.
    pub(super) fn edit_query(&mut self) {
        self.cancel_seed();
        self.history.stop_browsing();
        self.shared.set_focus(Pane::Recall);
        self.shared.mode = Mode::Query;
        self.panes.recall.query.move_cursor(CursorMove::End);
    }

    /// Leaves the query box showing the query from its start.
    pub(super) fn leave_query(&mut self) {
        self.shared.mode = Mode::Normal;
        self.history.stop_browsing();
        self.panes.recall.query.move_cursor(CursorMove::Head);
    }

    /// Shows an older (`back`) or newer query from the history in the query box.
    pub(super) fn browse_history(&mut self, back: bool) {
        if self.shared.mode != Mode::Query {
            self.edit_query();
        }
        let typed = self.panes.recall.query.lines().join(" ");
        let shown = if back {
            self.history.older(&typed).map(str::to_string)
        } else {
            self.history.newer()
        };
        match shown {
            Some(text) => {
                self.panes.recall.set_query(&text, None);
                self.panes.recall.query.move_cursor(CursorMove::End);
                if let Some((at, of)) = self.history.position() {
                    self.shared.message = Some(format!("query history {at}/{of}"));
                }
            }
            None if back && self.history.entries().is_empty() => {
                self.shared.message = Some("no earlier query on this store".into());
            }
            None if back => self.shared.message = Some("the oldest query in the history".into()),
            None => {}
        }
    }

    /// Keeps a query the user ran (not one seeded from an episode) in the history.
    pub(super) fn remember_query(&mut self) {
        if self.panes.recall.seed.is_some() {
            return;
        }
        let text = self.panes.recall.query.lines().join(" ");
        if let Some(entry) = self.history.record(&text) {
            self.request(Request::SaveQuery(entry));
        }
    }
}
