//! One compiled rule: a regex, a check that turns a match into the byte span to hide (or
//! rejects it), and the placeholder written over that span.

use std::ops::Range;

use regex::{Captures, Regex};

/// Decides whether a regex match is a secret and, if so, which bytes of `text` to replace.
/// The span must lie inside the match; context outside it (e.g. `Bearer `) is kept.
pub(crate) type Check = fn(text: &str, caps: &Captures<'_>) -> Option<Range<usize>>;

#[derive(Clone, Debug)]
pub(crate) struct Rule {
    name: String,
    placeholder: String,
    regex: Regex,
    check: Check,
}

impl Rule {
    pub(crate) fn new(name: &str, regex: Regex, check: Check) -> Self {
        Self {
            name: name.to_owned(),
            placeholder: format!("<{name}>"),
            regex,
            check,
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn placeholder(&self) -> &str {
        &self.placeholder
    }

    /// The accepted, non-empty, non-overlapping spans in `text`, in order.
    fn spans<'t>(&'t self, text: &'t str) -> impl Iterator<Item = Range<usize>> + 't {
        let mut floor = 0;
        self.regex.captures_iter(text).filter_map(move |caps| {
            let span = (self.check)(text, &caps)?;
            let usable =
                span.start >= floor && span.start < span.end && text.get(span.clone()).is_some();
            if !usable {
                return None;
            }
            floor = span.end;
            Some(span)
        })
    }

    pub(crate) fn finds(&self, text: &str) -> bool {
        self.spans(text).next().is_some()
    }

    /// The text with every accepted span replaced, or `None` when nothing was accepted.
    pub(crate) fn apply(&self, text: &str) -> Option<String> {
        let mut out: Option<String> = None;
        let mut last = 0;
        for span in self.spans(text) {
            let buf = out.get_or_insert_with(|| String::with_capacity(text.len()));
            buf.push_str(text.get(last..span.start)?);
            buf.push_str(&self.placeholder);
            last = span.end;
        }
        let mut buf = out?;
        buf.push_str(text.get(last..)?);
        Some(buf)
    }
}
