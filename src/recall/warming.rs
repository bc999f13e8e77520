//! How far the semantic leg's vectors lag the store while a first embedding runs in the
//! background: until they catch up the leg answers nothing and says how far along it is, and
//! the other legs answer as usual.

use std::sync::Mutex;

#[derive(Debug, Default)]
pub struct Warming {
    /// `(embedded, total)` episodes while behind; `None` once caught up.
    behind: Mutex<Option<(u64, u64)>>,
}

impl Warming {
    pub fn behind(&self, embedded: u64, total: u64) {
        if let Ok(mut b) = self.behind.lock() {
            *b = Some((embedded, total));
        }
    }

    pub fn caught_up(&self) {
        if let Ok(mut b) = self.behind.lock() {
            *b = None;
        }
    }

    /// Moves the count on, only while behind.
    pub fn progress(&self, embedded: u64, total: u64) {
        if let Ok(mut b) = self.behind.lock()
            && b.is_some()
        {
            *b = Some((embedded, total));
        }
    }

    /// Why the semantic leg cannot answer yet, if it cannot.
    pub fn reason(&self) -> Option<String> {
        let (done, total) = self.behind.lock().ok().and_then(|b| *b)?;
        Some(format!(
            "embedding the memory: {done} of {total} episodes; the semantic leg answers when that is done"
        ))
    }
}
