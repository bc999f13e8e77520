use serde::Serialize;

/// Terminal-safe text: secrets and PII redacted, control characters shown escaped,
/// never interpreted.
pub fn safe(s: &str) -> String {
    let s = strata::redact::redact(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if strata::redact::is_terminal_unsafe(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// A message for the terminal: secrets redacted, and every control character that data may
/// carry (ESC, BEL, CSI, OSC, carriage returns…) shown escaped as `\u{1b}`, never emitted.
/// Line breaks and tabs of the message itself are kept.
pub fn terminal(s: &str) -> String {
    let s = strata::redact::redact(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c if strata::redact::is_terminal_unsafe(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// `eprintln!` through [`terminal`]: what Strata says on stderr.
macro_rules! say {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::cli::output::terminal(&format!($($arg)*)))
    };
}
pub(crate) use say;

/// At most `width` characters of terminal-safe text, with an ellipsis when cut.
pub fn excerpt(s: &str, width: usize) -> String {
    let s = safe(s);
    if s.chars().count() <= width {
        return s;
    }
    let mut cut: String = s.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Pretty JSON on stdout, every string redacted again on the way out. JSON escapes control
/// characters itself; the bidirectional overrides it leaves raw are escaped too (`\u202e`,
/// the same string to a JSON reader).
pub fn print_json<T: Serialize>(value: &T) -> color_eyre::eyre::Result<()> {
    let mut value = serde_json::to_value(value)?;
    strata::redact::redact_json(&mut value);
    let text = serde_json::to_string_pretty(&value)?;
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if strata::redact::is_terminal_unsafe(c) && !c.is_ascii() {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    println!("{out}");
    Ok(())
}

pub fn opt_time(t: Option<strata::model::Timestamp>) -> String {
    t.map_or_else(|| "-".to_string(), |t| t.short())
}
