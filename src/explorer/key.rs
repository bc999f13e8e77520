//! A key press, independent of the terminal library: what keymaps, scripts and the
//! text inputs all speak.

use std::fmt;
use std::str::FromStr;

use ratatui::crossterm::event::{KeyCode as CtKey, KeyEvent, KeyModifiers};
use ratatui_textarea::{Input, Key};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyCode {
    Char(char),
    Enter,
    Esc,
    Tab,
    BackTab,
    Backspace,
    Delete,
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
    F(u8),
}

/// A key with its modifiers. Shift is folded into the character (`G`, `?`), except for
/// Shift+Tab, which is [`KeyCode::BackTab`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyChord {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
}

const NAMED: &[(&str, KeyCode)] = &[
    ("enter", KeyCode::Enter),
    ("esc", KeyCode::Esc),
    ("tab", KeyCode::Tab),
    ("backtab", KeyCode::BackTab),
    ("backspace", KeyCode::Backspace),
    ("delete", KeyCode::Delete),
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
    ("pageup", KeyCode::PageUp),
    ("pagedown", KeyCode::PageDown),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
    ("space", KeyCode::Char(' ')),
    ("pgup", KeyCode::PageUp),
    ("pgdn", KeyCode::PageDown),
];

impl KeyChord {
    pub const fn plain(code: KeyCode) -> Self {
        KeyChord {
            code,
            ctrl: false,
            alt: false,
        }
    }

    pub const fn char(c: char) -> Self {
        KeyChord::plain(KeyCode::Char(c))
    }

    pub fn from_event(event: &KeyEvent) -> Option<Self> {
        let code = match event.code {
            CtKey::Char(c) => KeyCode::Char(c),
            CtKey::Enter => KeyCode::Enter,
            CtKey::Esc => KeyCode::Esc,
            CtKey::Tab if event.modifiers.contains(KeyModifiers::SHIFT) => KeyCode::BackTab,
            CtKey::Tab => KeyCode::Tab,
            CtKey::BackTab => KeyCode::BackTab,
            CtKey::Backspace => KeyCode::Backspace,
            CtKey::Delete => KeyCode::Delete,
            CtKey::Up => KeyCode::Up,
            CtKey::Down => KeyCode::Down,
            CtKey::Left => KeyCode::Left,
            CtKey::Right => KeyCode::Right,
            CtKey::PageUp => KeyCode::PageUp,
            CtKey::PageDown => KeyCode::PageDown,
            CtKey::Home => KeyCode::Home,
            CtKey::End => KeyCode::End,
            CtKey::F(n) => KeyCode::F(n),
            _ => return None,
        };
        let ctrl = event.modifiers.contains(KeyModifiers::CONTROL);
        Some(KeyChord {
            code: match code {
                KeyCode::Char(c) if ctrl => KeyCode::Char(c.to_ascii_lowercase()),
                other => other,
            },
            ctrl,
            alt: event.modifiers.contains(KeyModifiers::ALT),
        })
    }

    /// The same key for a text input.
    pub fn to_input(self) -> Input {
        let (key, shift) = match self.code {
            KeyCode::Char(c) => (Key::Char(c), false),
            KeyCode::Enter => (Key::Enter, false),
            KeyCode::Esc => (Key::Esc, false),
            KeyCode::Tab => (Key::Tab, false),
            KeyCode::BackTab => (Key::Tab, true),
            KeyCode::Backspace => (Key::Backspace, false),
            KeyCode::Delete => (Key::Delete, false),
            KeyCode::Up => (Key::Up, false),
            KeyCode::Down => (Key::Down, false),
            KeyCode::Left => (Key::Left, false),
            KeyCode::Right => (Key::Right, false),
            KeyCode::PageUp => (Key::PageUp, false),
            KeyCode::PageDown => (Key::PageDown, false),
            KeyCode::Home => (Key::Home, false),
            KeyCode::End => (Key::End, false),
            KeyCode::F(n) => (Key::F(n), false),
        };
        Input {
            key,
            ctrl: self.ctrl,
            alt: self.alt,
            shift,
        }
    }
}

/// A key name that does not parse, with what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KeyError(String);

impl FromStr for KeyChord {
    type Err = KeyError;

    /// `j`, `G`, `?`, `Enter`, `PageDown`, `Space`, `Ctrl+r`, `Alt+x`, `Shift+Tab`, `F5`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut ctrl = false;
        let mut alt = false;
        let mut shift = false;
        let mut rest = s.trim();
        while let Some((modifier, tail)) = rest.split_once('+') {
            if tail.is_empty() {
                break;
            }
            match modifier.to_ascii_lowercase().as_str() {
                "ctrl" | "control" => ctrl = true,
                "alt" => alt = true,
                "shift" => shift = true,
                other => {
                    return Err(KeyError(format!(
                        "unknown modifier {other:?} in key {s:?}; expected Ctrl, Alt or Shift"
                    )));
                }
            }
            rest = tail;
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => KeyCode::Char(if ctrl { c.to_ascii_lowercase() } else { c }),
            _ => {
                let lower = rest.to_ascii_lowercase();
                if let Some(n) = lower.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
                    KeyCode::F(n)
                } else {
                    NAMED
                        .iter()
                        .find(|(name, _)| *name == lower)
                        .map(|(_, code)| *code)
                        .ok_or_else(|| {
                            KeyError(format!(
                                "unknown key {rest:?}; expected a character, F1-F12 or one of {}",
                                NAMED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                            ))
                        })?
                }
            }
        };
        let code = match (code, shift) {
            (KeyCode::Tab, true) => KeyCode::BackTab,
            (KeyCode::Char(c), true) => KeyCode::Char(c.to_ascii_uppercase()),
            (code, _) => code,
        };
        Ok(KeyChord { code, ctrl, alt })
    }
}

impl fmt::Display for KeyChord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ctrl {
            f.write_str("Ctrl+")?;
        }
        if self.alt {
            f.write_str("Alt+")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) => write!(f, "{c}"),
            KeyCode::F(n) => write!(f, "F{n}"),
            KeyCode::BackTab => f.write_str("Shift+Tab"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            other => {
                let name = NAMED
                    .iter()
                    .find(|(_, code)| *code == other)
                    .map(|(name, _)| *name)
                    .unwrap_or("?");
                let mut cs = name.chars();
                match cs.next() {
                    Some(first) => write!(f, "{}{}", first.to_ascii_uppercase(), cs.as_str()),
                    None => Ok(()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_round_trip() {
        for s in [
            "j",
            "G",
            "?",
            "Enter",
            "Ctrl+r",
            "Alt+x",
            "Shift+Tab",
            "F5",
            "Space",
            "PgDn",
        ] {
            let k: KeyChord = s.parse().unwrap();
            let again: KeyChord = k.to_string().parse().unwrap();
            assert_eq!(k, again, "{s}");
        }
        assert_eq!(
            "ctrl+R".parse::<KeyChord>().unwrap().code,
            KeyCode::Char('r')
        );
        assert_eq!(
            "shift+g".parse::<KeyChord>().unwrap().code,
            KeyCode::Char('G')
        );
        assert_eq!("+".parse::<KeyChord>().unwrap().code, KeyCode::Char('+'));
        assert!(
            "Hyper+x"
                .parse::<KeyChord>()
                .unwrap_err()
                .to_string()
                .contains("modifier")
        );
        assert!(
            "Return"
                .parse::<KeyChord>()
                .unwrap_err()
                .to_string()
                .contains("unknown key")
        );
    }
}
