//! Earlier recall queries, oldest first: browsed with ↑/↓ in the query box as a shell's
//! history is, each kept once (a query run again moves to the end), bounded, and in the
//! form it is kept in: one line, secrets and PII redacted. Reading and writing the file
//! is the worker's (`worker/history_file.rs`); this is the state.

use crate::redact::redact;

/// Queries kept, in memory and in the file.
pub const HISTORY_LIMIT: usize = 500;

/// The characters of a query kept.
pub const ENTRY_CHARS: usize = 2_000;

#[derive(Debug, Default)]
pub struct QueryHistory {
    entries: Vec<String>,
    /// While browsing: the entry shown, and what was typed before browsing began.
    browsing: Option<(usize, String)>,
}

/// A query as the history keeps it: one line, control characters as spaces, secrets and
/// PII redacted, at most [`ENTRY_CHARS`]; `None` when nothing is left.
pub fn kept_form(text: &str) -> Option<String> {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let line = redact(line.trim());
    let kept: String = line.chars().take(ENTRY_CHARS).collect();
    (!kept.is_empty()).then_some(kept)
}

impl QueryHistory {
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    /// What the file held: older than anything recorded since it was asked for.
    pub fn loaded(&mut self, older: Vec<String>) {
        let recorded = std::mem::take(&mut self.entries);
        for entry in older.iter().filter_map(|e| kept_form(e)).chain(recorded) {
            self.push(entry);
        }
        self.browsing = None;
    }

    /// A query that ran; the entry to write to the file, unless it adds nothing (it is the
    /// newest already, or blank).
    pub fn record(&mut self, text: &str) -> Option<String> {
        self.browsing = None;
        let entry = kept_form(text)?;
        if self.entries.last() == Some(&entry) {
            return None;
        }
        self.push(entry.clone());
        Some(entry)
    }

    fn push(&mut self, entry: String) {
        self.entries.retain(|e| *e != entry);
        self.entries.push(entry);
        if self.entries.len() > HISTORY_LIMIT {
            let extra = self.entries.len() - HISTORY_LIMIT;
            self.entries.drain(..extra);
        }
    }

    /// The entry before the one shown (or the newest, when not browsing: `typed` is kept
    /// to come back to); `None` at the oldest.
    pub fn older(&mut self, typed: &str) -> Option<&str> {
        let (at, typed) = self
            .browsing
            .take()
            .unwrap_or_else(|| (self.entries.len(), typed.to_string()));
        let to = at.checked_sub(1);
        self.browsing = Some((to.unwrap_or(at), typed));
        to.map(|i| self.entries[i].as_str())
    }

    /// The entry after the one shown, or what was typed before browsing once past the
    /// newest; `None` when not browsing.
    pub fn newer(&mut self) -> Option<String> {
        let (at, typed) = self.browsing.take()?;
        match self.entries.get(at + 1) {
            Some(entry) => {
                self.browsing = Some((at + 1, typed));
                Some(entry.clone())
            }
            None => Some(typed),
        }
    }

    /// Typing on from an entry, or leaving the box: the next ↑ starts from the newest.
    pub fn stop_browsing(&mut self) {
        self.browsing = None;
    }

    /// Which entry is shown, 1-based, of how many.
    pub fn position(&self) -> Option<(usize, usize)> {
        self.browsing
            .as_ref()
            .map(|(at, _)| (at + 1, self.entries.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browses_back_and_forward_to_what_was_typed() {
        let mut h = QueryHistory::default();
        for q in ["disk full", "oom killer", "tls expiry"] {
            assert_eq!(h.record(q).as_deref(), Some(q));
        }
        assert_eq!(h.older("half typ"), Some("tls expiry"));
        assert_eq!(h.position(), Some((3, 3)));
        assert_eq!(h.older(""), Some("oom killer"));
        assert_eq!(h.older(""), Some("disk full"));
        assert_eq!(h.older(""), None, "the oldest stays");
        assert_eq!(h.newer().as_deref(), Some("oom killer"));
        assert_eq!(h.newer().as_deref(), Some("tls expiry"));
        assert_eq!(h.newer().as_deref(), Some("half typ"));
        assert_eq!(h.newer(), None);
    }

    #[test]
    fn keeps_each_query_once_newest_last_bounded_and_redacted() {
        let mut h = QueryHistory::default();
        h.record("a");
        h.record("b");
        assert_eq!(h.record("b"), None, "the newest again adds nothing");
        assert_eq!(h.record("a").as_deref(), Some("a"));
        assert_eq!(h.entries(), ["b", "a"]);
        assert_eq!(h.record("  \n "), None);
        let kept = h
            .record("login fails for ops@example.com\u{1b}[2J")
            .unwrap();
        assert!(!kept.contains("ops@example.com"), "{kept}");
        assert!(!kept.chars().any(char::is_control), "{kept:?}");
        for i in 0..HISTORY_LIMIT + 10 {
            h.record(&format!("q{i}"));
        }
        assert_eq!(h.entries().len(), HISTORY_LIMIT);
        assert_eq!(
            h.entries().last().unwrap(),
            &format!("q{}", HISTORY_LIMIT + 9)
        );
        assert!(h.record(&"x".repeat(ENTRY_CHARS * 2)).unwrap().len() == ENTRY_CHARS);
    }

    #[test]
    fn what_the_file_held_comes_before_what_ran_since() {
        let mut h = QueryHistory::default();
        h.record("typed before the file was read");
        h.loaded(vec![
            "old".into(),
            "typed before the file was read".into(),
            "older\u{7}bell".into(),
        ]);
        assert_eq!(
            h.entries(),
            ["old", "older bell", "typed before the file was read"]
        );
    }
}
