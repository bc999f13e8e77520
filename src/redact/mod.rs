//! Redaction: one stripper applied when text is written and again when it is rendered.
//!
//! [`Redactor`] replaces secrets and personal data with deterministic placeholders such as
//! `<email>`. Built-in kinds and their order are documented in `patterns.rs`; extra
//! patterns come from configuration via [`Redactor::with_extra`]. Output is a fixpoint:
//! redacting it again changes nothing, and no placeholder is itself matched.

mod checks;
mod error;
mod patterns;
mod rule;
mod shown;

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

pub use error::RedactError;
use rule::Rule;
pub use shown::Shown;

/// A pass can expose a match that a context check rejected before (a neighbour was
/// replaced); passes repeat until nothing changes. Built-ins settle in one or two.
const MAX_PASSES: usize = 4;

static BUILTIN_RULES: LazyLock<Vec<Rule>> = LazyLock::new(patterns::compile);
static DEFAULT: LazyLock<Redactor> = LazyLock::new(Redactor::new);

/// Compiled redaction patterns, applied in order.
#[derive(Clone, Debug)]
pub struct Redactor {
    rules: Vec<Rule>,
}

impl Default for Redactor {
    fn default() -> Self {
        Self::new()
    }
}

impl Redactor {
    /// The built-in patterns only.
    pub fn new() -> Self {
        Self {
            rules: BUILTIN_RULES.clone(),
        }
    }

    /// Built-ins plus extra patterns from configuration: (placeholder name, regex), applied
    /// after the built-ins in the given order. A match becomes `<name>`. Fails, naming the
    /// pattern, on a bad regex, a name that is not `[A-Za-z0-9_-]+`, or a pattern that would
    /// match a placeholder (redaction would then not be stable).
    pub fn with_extra(extra: &[(String, String)]) -> Result<Self, RedactError> {
        let mut rules = BUILTIN_RULES.clone();
        for (name, pattern) in extra {
            let name_ok = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !name_ok {
                return Err(RedactError::InvalidName { name: name.clone() });
            }
            let regex = Regex::new(pattern).map_err(|e| RedactError::InvalidRegex {
                name: name.clone(),
                reason: e.to_string(),
            })?;
            // Extra patterns hide their whole match (empty matches are skipped by the rule).
            rules.push(Rule::new(name, regex, checks::whole));
        }
        for rule in &rules {
            if let Some(p) = rules.iter().map(Rule::placeholder).find(|p| rule.finds(p)) {
                return Err(RedactError::MatchesPlaceholder {
                    name: rule.name().to_owned(),
                    placeholder: p.to_owned(),
                });
            }
        }
        Ok(Self { rules })
    }

    /// Replaces every match with its placeholder. Returns `Cow::Borrowed` when nothing
    /// matched, which costs one scan per pattern and no allocation.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut current = Cow::Borrowed(text);
        for _ in 0..MAX_PASSES {
            let mut changed = false;
            for rule in &self.rules {
                if let Some(next) = rule.apply(&current) {
                    current = Cow::Owned(next);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        current
    }

    /// Whether any pattern matches.
    pub fn finds_secret(&self, text: &str) -> bool {
        self.rules.iter().any(|rule| rule.finds(text))
    }
}

static CONFIGURED: std::sync::OnceLock<Redactor> = std::sync::OnceLock::new();

/// Adds configured patterns to the process-wide redactor. Call once, at startup, before
/// anything is redacted; a later call is ignored.
pub fn configure(extra: &[(String, String)]) -> Result<(), RedactError> {
    if !extra.is_empty() {
        let redactor = Redactor::with_extra(extra)?;
        let _ = CONFIGURED.set(redactor);
    }
    Ok(())
}

/// Redacts every string in a JSON value, in place (what leaves Strata as JSON).
pub fn redact_json(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(s) => {
            if let Cow::Owned(clean) = redact(s) {
                *s = clean;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_json),
        serde_json::Value::Object(map) => map.values_mut().for_each(redact_json),
        _ => {}
    }
}

/// Redacts with the process-wide [`Redactor`]: the built-in patterns, plus any
/// [`configure`]d ones.
pub fn redact(text: &str) -> Cow<'_, str> {
    CONFIGURED.get().unwrap_or(&DEFAULT).redact(text)
}

/// Characters that never reach a terminal raw: control characters, and the bidirectional
/// overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder what a terminal
/// shows after them, so a hostile string could make a line read other than it is.
pub fn is_terminal_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every [`is_terminal_unsafe`] character written as its `\u{…}` escape.
pub fn escape_terminal_unsafe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if is_terminal_unsafe(c) {
                format!("\\u{{{:x}}}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}
