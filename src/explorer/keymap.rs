//! Keys to actions, per context, with the defaults below and overrides from the config
//! file merged over them. Every mode's keys are here: the help screen lists them all and
//! a user can rebind any of them.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::action::{Action, ActionError, ActionName};
use super::key::{KeyChord, KeyError};
use super::pane::Pane;

/// Where a binding applies: everywhere, while a pane has focus, or in one of the modes
/// that take the keys for themselves (in a text input, an unbound key types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Context {
    Global,
    Pane(Pane),
    Help,
    Search,
    Palette,
    Query,
    /// Typing a correction's new text or its reason.
    Reason,
    /// Asked to confirm a correction before it is recorded.
    Confirm,
    /// Any text box: the search, the palette, the query and a correction's.
    Input,
}

impl Context {
    pub const ALL: [Context; 15] = [
        Context::Global,
        Context::Pane(Pane::Timeline),
        Context::Pane(Pane::Facts),
        Context::Pane(Pane::Recall),
        Context::Pane(Pane::Lessons),
        Context::Pane(Pane::Lineage),
        Context::Pane(Pane::Entity),
        Context::Pane(Pane::Review),
        Context::Help,
        Context::Search,
        Context::Palette,
        Context::Query,
        Context::Reason,
        Context::Confirm,
        Context::Input,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::Pane(p) => p.name(),
            Context::Help => "help",
            Context::Search => "search",
            Context::Palette => "palette",
            Context::Query => "query",
            Context::Reason => "reason",
            Context::Confirm => "confirm",
            Context::Input => "input",
        }
    }

    /// What the help screen says of the context, beside its name.
    pub fn about(self) -> &'static str {
        match self {
            Context::Global | Context::Pane(_) => "",
            Context::Help => " (while this help is open)",
            Context::Search => " (typing a search; other keys type)",
            Context::Palette => " (typing a command; other keys type)",
            Context::Query => " (typing a recall query; other keys type)",
            Context::Reason => " (typing a correction's text or reason; other keys type)",
            Context::Confirm => " (asked to confirm a correction)",
            Context::Input => " (in every text box, as in a shell)",
        }
    }

    fn parse(name: &str) -> Option<Context> {
        Context::ALL.into_iter().find(|c| c.name() == name)
    }
}

const DEFAULTS: &[(&str, &str, ActionName)] = {
    use ActionName as A;
    &[
        ("global", "q", A::Quit),
        ("global", "Ctrl+c", A::Quit),
        ("global", "?", A::Help),
        ("global", ":", A::Palette),
        ("global", "/", A::Search),
        ("global", "Tab", A::FocusNext),
        ("global", "Shift+Tab", A::FocusPrev),
        ("global", "1", A::FocusTimeline),
        ("global", "2", A::FocusFacts),
        ("global", "3", A::FocusRecall),
        ("global", "4", A::FocusLessons),
        ("global", "5", A::FocusLineage),
        ("global", "6", A::FocusEntity),
        ("global", "7", A::FocusReview),
        ("global", "8", A::FocusChanges),
        ("global", "z", A::Zoom),
        ("global", "k", A::Up),
        ("global", "Up", A::Up),
        ("global", "j", A::Down),
        ("global", "Down", A::Down),
        ("global", "PageUp", A::PageUp),
        ("global", "Ctrl+u", A::PageUp),
        ("global", "PageDown", A::PageDown),
        ("global", "Ctrl+d", A::PageDown),
        ("global", "g", A::Top),
        ("global", "Home", A::Top),
        ("global", "G", A::Bottom),
        ("global", "End", A::Bottom),
        ("global", "Enter", A::Open),
        ("global", "Esc", A::Back),
        ("global", "t", A::AsOfAxis),
        ("global", "[", A::AsOfBackDay),
        ("global", "]", A::AsOfForwardDay),
        ("global", "{", A::AsOfBackWeek),
        ("global", "}", A::AsOfForwardWeek),
        ("global", "<", A::AsOfPrevChange),
        ("global", ">", A::AsOfNextChange),
        ("global", "n", A::AsOfNow),
        ("global", "Ctrl+r", A::Refresh),
        ("global", "r", A::RecallSeed),
        ("global", "y", A::RecallSeed),
        ("global", "c", A::FilterClear),
        ("global", "x", A::CorrectRetract),
        ("global", "v", A::CorrectConfirm),
        ("global", "e", A::CorrectSummary),
        ("global", "E", A::CorrectResolution),
        ("timeline", "Left", A::AsOfBackDay),
        ("timeline", "Right", A::AsOfForwardDay),
        ("facts", "Left", A::AsOfBackDay),
        ("facts", "Right", A::AsOfForwardDay),
        ("recall", "i", A::RecallEdit),
        ("recall", "e", A::RecallEdit),
        ("recall", "r", A::RecallRun),
        ("recall", "s", A::RecallSemantic),
        ("recall", "b", A::RecallBm25),
        ("recall", "g", A::RecallGraph),
        ("recall", "f", A::RecallFusion),
        ("recall", "o", A::RecallSuccessor),
        ("entity", "f", A::FilterSelected),
        ("help", "Esc", A::Back),
        ("help", "q", A::Back),
        ("help", "?", A::Help),
        ("help", "Ctrl+c", A::Quit),
        ("help", "j", A::Down),
        ("help", "Down", A::Down),
        ("help", "k", A::Up),
        ("help", "Up", A::Up),
        ("help", "PageDown", A::PageDown),
        ("help", "PageUp", A::PageUp),
        ("help", "Home", A::Top),
        ("search", "Enter", A::Open),
        ("search", "Esc", A::Back),
        ("search", "Ctrl+c", A::Quit),
        ("palette", "Enter", A::Open),
        ("palette", "Esc", A::Back),
        ("palette", "Ctrl+c", A::Quit),
        ("reason", "Enter", A::Open),
        ("reason", "Esc", A::Back),
        ("reason", "Ctrl+c", A::Quit),
        ("confirm", "y", A::CorrectRecord),
        ("confirm", "n", A::Back),
        ("confirm", "Esc", A::Back),
        ("confirm", "Ctrl+c", A::Quit),
        ("query", "Enter", A::Open),
        ("query", "Esc", A::Back),
        ("query", "Ctrl+c", A::Quit),
        ("query", "Up", A::HistoryPrev),
        ("query", "Ctrl+p", A::HistoryPrev),
        ("query", "Down", A::HistoryNext),
        ("query", "Ctrl+n", A::HistoryNext),
        ("input", "Ctrl+a", A::InputStart),
        ("input", "Home", A::InputStart),
        ("input", "Ctrl+e", A::InputEnd),
        ("input", "End", A::InputEnd),
        ("input", "Alt+b", A::InputWordBack),
        ("input", "Ctrl+Left", A::InputWordBack),
        ("input", "Alt+f", A::InputWordForward),
        ("input", "Ctrl+Right", A::InputWordForward),
        ("input", "Ctrl+u", A::InputKillToStart),
        ("input", "Ctrl+k", A::InputKillToEnd),
        ("input", "Ctrl+w", A::InputKillWord),
        ("input", "Alt+Backspace", A::InputKillWord),
        ("input", "Ctrl+y", A::InputYank),
    ]
};

/// `[keymap.CONTEXT]` tables of `"KEY" = "action"`; `"none"` unbinds a default.
pub type KeymapOverrides = BTreeMap<String, BTreeMap<String, String>>;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(transparent)]
pub struct KeymapSection(pub KeymapOverrides);

#[derive(Debug, thiserror::Error)]
pub enum KeymapError {
    #[error("keymap.{context}.{key:?}: unknown context {context:?}; expected one of {expected}")]
    Context {
        context: String,
        key: String,
        expected: String,
    },
    #[error("keymap.{context}.{key:?}: {source}")]
    Key {
        context: String,
        key: String,
        source: KeyError,
    },
    #[error("keymap.{context}.{key:?}: {source}")]
    Action {
        context: String,
        key: String,
        source: ActionError,
    },
}

#[derive(Clone, Debug)]
pub struct Keymap {
    bindings: BTreeMap<(Context, KeyChord), Action>,
}

impl Keymap {
    pub fn defaults() -> Result<Keymap, KeymapError> {
        Keymap::with_overrides(&KeymapOverrides::new())
    }

    /// The defaults with `overrides` merged over them; a bad key, context or action is an
    /// error naming it.
    pub fn with_overrides(overrides: &KeymapOverrides) -> Result<Keymap, KeymapError> {
        let mut bindings = BTreeMap::new();
        for (context, key, action) in DEFAULTS {
            bind(&mut bindings, context, key, action.as_str())?;
        }
        for (context, keys) in overrides {
            for (key, action) in keys {
                bind(&mut bindings, context, key, action)?;
            }
        }
        Ok(Keymap { bindings })
    }

    /// The action bound to `key` in the first of `contexts` that binds it.
    pub fn lookup(&self, contexts: &[Context], key: KeyChord) -> Option<Action> {
        contexts
            .iter()
            .find_map(|c| self.bindings.get(&(*c, key)))
            .cloned()
    }

    /// Every context with its actions and the keys bound to each, in vocabulary order.
    pub fn help(&self) -> Vec<HelpSection> {
        Context::ALL
            .into_iter()
            .filter_map(|context| {
                let rows: Vec<HelpRow> = ActionName::all()
                    .filter_map(|name| {
                        let keys: Vec<String> = self
                            .bindings
                            .iter()
                            .filter(|((c, _), a)| *c == context && a.kind() == name)
                            .map(|((_, k), _)| k.to_string())
                            .collect();
                        (!keys.is_empty()).then(|| HelpRow {
                            keys: keys.join(" "),
                            action: name.as_str(),
                            about: name.about(),
                        })
                    })
                    .collect();
                (!rows.is_empty()).then_some(HelpSection { context, rows })
            })
            .collect()
    }
}

pub struct HelpSection {
    pub context: Context,
    pub rows: Vec<HelpRow>,
}

pub struct HelpRow {
    pub keys: String,
    pub action: &'static str,
    pub about: &'static str,
}

fn bind(
    bindings: &mut BTreeMap<(Context, KeyChord), Action>,
    context: &str,
    key: &str,
    action: &str,
) -> Result<(), KeymapError> {
    let at = || (context.to_string(), key.to_string());
    let Some(ctx) = Context::parse(context) else {
        let (context, key) = at();
        return Err(KeymapError::Context {
            context,
            key,
            expected: Context::ALL.map(|c| c.name()).join(", "),
        });
    };
    let chord: KeyChord = key.parse().map_err(|source| {
        let (context, key) = at();
        KeymapError::Key {
            context,
            key,
            source,
        }
    })?;
    if action == "none" {
        bindings.remove(&(ctx, chord));
        return Ok(());
    }
    let action = Action::parse(action, None).map_err(|source| {
        let (context, key) = at();
        KeymapError::Action {
            context,
            key,
            source,
        }
    })?;
    bindings.insert((ctx, chord), action);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explorer::key::KeyCode;

    fn normal(pane: Pane) -> [Context; 2] {
        [Context::Pane(pane), Context::Global]
    }

    #[test]
    fn defaults_resolve_and_panes_override_global() {
        let map = Keymap::defaults().unwrap();
        let g = KeyChord::char('g');
        assert_eq!(map.lookup(&normal(Pane::Timeline), g), Some(Action::Top));
        assert_eq!(
            map.lookup(&normal(Pane::Recall), g),
            Some(Action::RecallToggle(crate::recall::Leg::Graph))
        );
        assert_eq!(
            map.lookup(&normal(Pane::Facts), KeyChord::plain(KeyCode::Enter)),
            Some(Action::Open)
        );
    }

    #[test]
    fn overrides_merge_and_unbind() {
        let mut o = KeymapOverrides::new();
        o.entry("global".into())
            .or_default()
            .insert("x".into(), "quit".into());
        o.entry("global".into())
            .or_default()
            .insert("q".into(), "none".into());
        let map = Keymap::with_overrides(&o).unwrap();
        assert_eq!(
            map.lookup(&normal(Pane::Timeline), KeyChord::char('x')),
            Some(Action::Quit)
        );
        assert_eq!(
            map.lookup(&normal(Pane::Timeline), KeyChord::char('q')),
            None
        );
        assert_eq!(
            map.lookup(&normal(Pane::Timeline), KeyChord::char('?')),
            Some(Action::Help)
        );
        let mut bad = KeymapOverrides::new();
        bad.entry("global".into())
            .or_default()
            .insert("x".into(), "select".into());
        assert!(
            Keymap::with_overrides(&bad)
                .unwrap_err()
                .to_string()
                .contains("expects")
        );
    }

    #[test]
    fn text_boxes_edit_as_a_shell_line_and_the_query_box_has_history() {
        use crate::explorer::action::LineEdit;
        let map = Keymap::defaults().unwrap();
        let ctrl_u: KeyChord = "Ctrl+u".parse().unwrap();
        assert_eq!(
            map.lookup(&normal(Pane::Recall), ctrl_u),
            Some(Action::PageUp)
        );
        for typing in [Context::Search, Context::Palette, Context::Query] {
            assert_eq!(
                map.lookup(&[typing, Context::Input], ctrl_u),
                Some(Action::Edit(LineEdit::KillToStart)),
                "{typing:?}"
            );
        }
        let up = KeyChord::plain(KeyCode::Up);
        assert_eq!(
            map.lookup(&[Context::Query, Context::Input], up),
            Some(Action::HistoryPrev)
        );
        assert_eq!(map.lookup(&[Context::Search, Context::Input], up), None);
        assert_eq!(
            map.lookup(&normal(Pane::Timeline), KeyChord::char('y')),
            Some(Action::RecallSeed)
        );
    }

    #[test]
    fn help_lists_every_bound_action_under_its_context() {
        let map = Keymap::defaults().unwrap();
        let help = map.help();
        let global = &help[0];
        assert_eq!(global.context, Context::Global);
        let quit = global.rows.iter().find(|r| r.action == "quit").unwrap();
        assert!(quit.keys.contains('q') && quit.keys.contains("Ctrl+c"));
    }
}
