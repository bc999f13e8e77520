//! Keys to named actions, per context, with the defaults below and overrides from the
//! config file merged over them.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::action::{ACTIONS, Action};
use super::key::KeyChord;
use super::pane::Pane;

/// Where a binding applies: everywhere, or only while a pane has focus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Context {
    Global,
    Pane(Pane),
}

impl Context {
    pub fn name(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::Pane(p) => p.name(),
        }
    }

    fn parse(name: &str) -> Option<Context> {
        if name == "global" {
            return Some(Context::Global);
        }
        Pane::ALL
            .iter()
            .find(|p| p.name() == name)
            .map(|p| Context::Pane(*p))
    }
}

const DEFAULTS: &[(&str, &str, &str)] = &[
    ("global", "q", "quit"),
    ("global", "Ctrl+c", "quit"),
    ("global", "?", "help"),
    ("global", ":", "palette"),
    ("global", "/", "search"),
    ("global", "Tab", "focus.next"),
    ("global", "Shift+Tab", "focus.prev"),
    ("global", "1", "focus.timeline"),
    ("global", "2", "focus.facts"),
    ("global", "3", "focus.recall"),
    ("global", "4", "focus.lessons"),
    ("global", "5", "focus.lineage"),
    ("global", "6", "focus.entity"),
    ("global", "z", "zoom"),
    ("global", "k", "up"),
    ("global", "Up", "up"),
    ("global", "j", "down"),
    ("global", "Down", "down"),
    ("global", "PageUp", "page_up"),
    ("global", "Ctrl+u", "page_up"),
    ("global", "PageDown", "page_down"),
    ("global", "Ctrl+d", "page_down"),
    ("global", "g", "top"),
    ("global", "Home", "top"),
    ("global", "G", "bottom"),
    ("global", "End", "bottom"),
    ("global", "Enter", "open"),
    ("global", "Esc", "back"),
    ("global", "t", "asof.axis"),
    ("global", "[", "asof.back_day"),
    ("global", "]", "asof.forward_day"),
    ("global", "{", "asof.back_week"),
    ("global", "}", "asof.forward_week"),
    ("global", "<", "asof.prev_change"),
    ("global", ">", "asof.next_change"),
    ("global", "n", "asof.now"),
    ("global", "Ctrl+r", "refresh"),
    ("global", "r", "recall.seed"),
    ("global", "c", "filter.clear"),
    ("timeline", "Left", "asof.back_day"),
    ("timeline", "Right", "asof.forward_day"),
    ("facts", "Left", "asof.back_day"),
    ("facts", "Right", "asof.forward_day"),
    ("recall", "i", "recall.edit"),
    ("recall", "e", "recall.edit"),
    ("recall", "r", "recall.run"),
    ("recall", "y", "recall.seed"),
    ("recall", "s", "recall.semantic"),
    ("recall", "b", "recall.bm25"),
    ("recall", "g", "recall.graph"),
    ("recall", "f", "recall.fusion"),
    ("entity", "f", "filter.selected"),
];

/// `[keymap.CONTEXT]` tables of `"KEY" = "action"`; `"none"` unbinds a default.
pub type KeymapOverrides = BTreeMap<String, BTreeMap<String, String>>;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(transparent)]
pub struct KeymapSection(pub KeymapOverrides);

#[derive(Clone, Debug)]
pub struct Keymap {
    bindings: BTreeMap<(Context, KeyChord), String>,
}

impl Keymap {
    pub fn defaults() -> Result<Keymap, String> {
        Keymap::with_overrides(&KeymapOverrides::new())
    }

    /// The defaults with `overrides` merged over them; a bad key, context or action is an
    /// error naming it.
    pub fn with_overrides(overrides: &KeymapOverrides) -> Result<Keymap, String> {
        let mut bindings = BTreeMap::new();
        for (context, key, action) in DEFAULTS {
            bind(&mut bindings, context, key, action)?;
        }
        for (context, keys) in overrides {
            for (key, action) in keys {
                bind(&mut bindings, context, key, action)
                    .map_err(|e| format!("keymap.{context}.{key:?}: {e}"))?;
            }
        }
        Ok(Keymap { bindings })
    }

    /// The action bound to `key` when `pane` has focus: the pane's own binding first.
    pub fn lookup(&self, pane: Pane, key: KeyChord) -> Option<Action> {
        self.bindings
            .get(&(Context::Pane(pane), key))
            .or_else(|| self.bindings.get(&(Context::Global, key)))
            .and_then(|name| Action::parse(name, None).ok())
    }

    /// Every context with its actions and the keys bound to each, in vocabulary order.
    pub fn help(&self) -> Vec<HelpSection> {
        let mut contexts = vec![Context::Global];
        contexts.extend(Pane::ALL.iter().map(|p| Context::Pane(*p)));
        contexts
            .into_iter()
            .filter_map(|context| {
                let rows: Vec<HelpRow> = ACTIONS
                    .iter()
                    .filter_map(|spec| {
                        let keys: Vec<String> = self
                            .bindings
                            .iter()
                            .filter(|((c, _), a)| *c == context && a.as_str() == spec.name)
                            .map(|((_, k), _)| k.to_string())
                            .collect();
                        (!keys.is_empty()).then(|| HelpRow {
                            keys: keys.join(" "),
                            action: spec.name,
                            about: spec.about,
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
    bindings: &mut BTreeMap<(Context, KeyChord), String>,
    context: &str,
    key: &str,
    action: &str,
) -> Result<(), String> {
    let context = Context::parse(context).ok_or_else(|| {
        format!(
            "unknown context {context:?}; expected global or a pane ({})",
            Pane::ALL.map(|p| p.name()).join(", ")
        )
    })?;
    let key: KeyChord = key.parse()?;
    if action == "none" {
        bindings.remove(&(context, key));
        return Ok(());
    }
    match Action::parse(action, None) {
        Ok(_) => {
            bindings.insert((context, key), action.to_string());
            Ok(())
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explorer::key::KeyCode;

    #[test]
    fn defaults_resolve_and_panes_override_global() {
        let map = Keymap::defaults().unwrap();
        let g = KeyChord::char('g');
        assert_eq!(map.lookup(Pane::Timeline, g), Some(Action::Top));
        assert_eq!(
            map.lookup(Pane::Recall, g),
            Some(Action::RecallToggle(crate::recall::Leg::Graph))
        );
        assert_eq!(
            map.lookup(Pane::Facts, KeyChord::plain(KeyCode::Enter)),
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
            map.lookup(Pane::Timeline, KeyChord::char('x')),
            Some(Action::Quit)
        );
        assert_eq!(map.lookup(Pane::Timeline, KeyChord::char('q')), None);
        assert_eq!(
            map.lookup(Pane::Timeline, KeyChord::char('?')),
            Some(Action::Help)
        );
        let mut bad = KeymapOverrides::new();
        bad.entry("global".into())
            .or_default()
            .insert("x".into(), "select".into());
        assert!(
            Keymap::with_overrides(&bad)
                .unwrap_err()
                .contains("expects")
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
