//! The headless script language: one command per line, `#` comments.

use std::fmt;

use crate::explorer::action::Action;
use crate::explorer::key::KeyChord;

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Type(String),
    Key(KeyChord, usize),
    Action(Action),
    Resize(u16, u16),
    WaitIdle,
    Snapshot(String),
    Expect(String),
    ExpectNot(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// 1-based line number in the script.
    pub number: usize,
    pub command: Command,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ScriptError {
    pub line: usize,
    pub message: String,
}

pub const COMMANDS: &str = "Type \"text\", Key NAME [COUNT], Action NAME [ARG], Resize COLSxROWS, WaitIdle, Snapshot NAME, Expect \"text\", ExpectNot \"text\"";

/// Parses a whole script; the first bad line fails it before anything runs.
pub fn parse(text: &str) -> Result<Vec<Line>, ScriptError> {
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let number = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fail = |message: String| ScriptError {
            line: number,
            message,
        };
        let (word, rest) = match line.split_once(char::is_whitespace) {
            Some((w, r)) => (w, r.trim()),
            None => (line, ""),
        };
        let command = match word {
            "Type" => Command::Type(quoted(rest).map_err(|e| fail(e.to_string()))?),
            "Expect" => Command::Expect(quoted(rest).map_err(|e| fail(e.to_string()))?),
            "ExpectNot" => Command::ExpectNot(quoted(rest).map_err(|e| fail(e.to_string()))?),
            "Key" => {
                let mut parts = rest.split_whitespace();
                let name = parts
                    .next()
                    .ok_or_else(|| fail("Key expects a key name, e.g. Key Down 3".into()))?;
                let key: KeyChord = name
                    .parse()
                    .map_err(|e: crate::explorer::key::KeyError| fail(e.to_string()))?;
                let count = match parts.next() {
                    Some(n) => n
                        .parse::<usize>()
                        .ok()
                        .filter(|n| (1..=10_000).contains(n))
                        .ok_or_else(|| {
                            fail(format!("Key count {n:?} is not a number from 1 to 10000"))
                        })?,
                    None => 1,
                };
                if let Some(extra) = parts.next() {
                    return Err(fail(format!("unexpected {extra:?} after the key count")));
                }
                Command::Key(key, count)
            }
            "Action" => {
                let (name, arg) = match rest.split_once(char::is_whitespace) {
                    Some((n, a)) => (n, Some(a.trim())),
                    None => (rest, None),
                };
                if name.is_empty() {
                    return Err(fail(
                        "Action expects an action name, e.g. Action focus.recall".into(),
                    ));
                }
                let arg = match arg {
                    Some(a) if a.starts_with('"') => {
                        Some(quoted(a).map_err(|e| fail(e.to_string()))?)
                    }
                    Some(a) => Some(a.to_string()),
                    None => None,
                };
                Command::Action(
                    Action::parse(name, arg.as_deref()).map_err(|e| fail(e.to_string()))?,
                )
            }
            "Resize" => {
                let (c, r) = rest
                    .split_once(['x', 'X'])
                    .ok_or_else(|| fail(format!("Resize expects COLSxROWS, got {rest:?}")))?;
                let dim = |s: &str, min: u16| {
                    s.trim()
                        .parse::<u16>()
                        .ok()
                        .filter(|n| (min..=1000).contains(n))
                        .ok_or_else(|| {
                            fail(format!(
                                "Resize expects COLSxROWS from 20x8 to 1000x1000, got {rest:?}"
                            ))
                        })
                };
                Command::Resize(dim(c, 20)?, dim(r, 8)?)
            }
            "WaitIdle" if rest.is_empty() => Command::WaitIdle,
            "Snapshot" => {
                let valid = !rest.is_empty()
                    && rest
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
                    && !rest.starts_with('.');
                if !valid {
                    return Err(fail(format!(
                        "Snapshot expects a file name of letters, digits, '-', '_' or '.', got {rest:?}"
                    )));
                }
                Command::Snapshot(rest.to_string())
            }
            other => {
                return Err(fail(format!(
                    "unknown command {other:?}{}; expected one of: {COMMANDS}",
                    if rest.is_empty() {
                        ""
                    } else {
                        " (or bad arguments)"
                    }
                )));
            }
        };
        lines.push(Line { number, command });
    }
    Ok(lines)
}

/// A double-quoted string with `\"`, `\\`, `\n` and `\t` escapes, and nothing after it.
fn quoted(text: &str) -> Result<String, QuoteError> {
    let mut chars = text.chars();
    if chars.next() != Some('"') {
        return Err(QuoteError::NotQuoted(text.to_string()));
    }
    let mut out = String::new();
    loop {
        match chars.next() {
            None => return Err(QuoteError::Unterminated(text.to_string())),
            Some('"') => break,
            Some('\\') => match chars.next() {
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                other => {
                    return Err(QuoteError::Escape {
                        escape: other.map(String::from).unwrap_or_default(),
                        text: text.to_string(),
                    });
                }
            },
            Some(c) => out.push(c),
        }
    }
    let rest: String = chars.collect();
    if !rest.trim().is_empty() {
        return Err(QuoteError::Trailing(rest.trim().to_string()));
    }
    Ok(out)
}

#[derive(Debug, thiserror::Error)]
enum QuoteError {
    #[error("expected a \"quoted string\", got {0:?}")]
    NotQuoted(String),
    #[error("unterminated string {0:?}")]
    Unterminated(String),
    #[error("unknown escape \\{escape} in {text:?}; expected \\\" \\\\ \\n or \\t")]
    Escape { escape: String, text: String },
    #[error("unexpected {0:?} after the closing quote")]
    Trailing(String),
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Type(t) => write!(f, "Type {t:?}"),
            Command::Key(k, n) => write!(f, "Key {k} {n}"),
            Command::Action(a) => match a.argument() {
                Some(arg) => write!(f, "Action {} {arg}", a.name()),
                None => write!(f, "Action {}", a.name()),
            },
            Command::Resize(c, r) => write!(f, "Resize {c}x{r}"),
            Command::WaitIdle => f.write_str("WaitIdle"),
            Command::Snapshot(n) => write!(f, "Snapshot {n}"),
            Command::Expect(t) => write!(f, "Expect {t:?}"),
            Command::ExpectNot(t) => write!(f, "ExpectNot {t:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explorer::key::KeyCode;

    #[test]
    fn parses_every_command() {
        let script = parse(
            "# a comment\n\nType \"disk \\\"full\\\"\"\nKey Down 3\nKey Ctrl+r\nAction filter.text \"a b\"\nAction focus.recall\nResize 80x24\nWaitIdle\nSnapshot timeline-1\nExpect \"Timeline\"\nExpectNot \"error\"\n",
        )
        .unwrap();
        assert_eq!(script.len(), 10);
        assert_eq!(script[0].number, 3);
        assert_eq!(script[0].command, Command::Type("disk \"full\"".into()));
        assert_eq!(
            script[1].command,
            Command::Key(KeyChord::plain(KeyCode::Down), 3)
        );
        assert_eq!(
            script[3].command,
            Command::Action(Action::FilterText("a b".into()))
        );
        assert_eq!(script[5].command, Command::Resize(80, 24));
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        let cases = [
            ("Key\n", 1, "expects a key name"),
            ("WaitIdle\nKey Hyperdrive\n", 2, "unknown key"),
            ("Key Down many\n", 1, "not a number"),
            ("Type hello\n", 1, "quoted string"),
            ("Type \"open\n", 1, "unterminated"),
            ("Type \"a\" b\n", 1, "after the closing quote"),
            ("Action teleport\n", 1, "unknown action"),
            ("Action asof.valid yesterday\n", 1, "asof.valid"),
            ("Resize 80by24\n", 1, "COLSxROWS"),
            ("Snapshot ../etc/passwd\n", 1, "file name"),
            ("\n\nPress Enter\n", 3, "unknown command"),
            ("WaitIdle now\n", 1, "unknown command"),
        ];
        for (text, line, needle) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}");
            assert!(e.message.contains(needle), "{text:?}: {}", e.message);
        }
    }
}
