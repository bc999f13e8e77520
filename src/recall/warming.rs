//! How far the semantic leg's vectors lag the store while a first embedding runs in the
//! background: until they catch up the leg answers nothing and says how far along it is (or
//! why it stopped), and the other legs answer as usual.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug)]
enum Lag {
    Embedding { done: u64, total: u64 },
    Stopped(String),
}

#[derive(Debug, Default)]
pub struct Warming {
    lag: Mutex<Option<Lag>>,
    /// Why the index is being rebuilt from the store (damaged, another store's), if it is.
    rebuilding: Mutex<Option<String>>,
    /// A background embedding is under way: other catch-ups leave the vectors to it.
    running: AtomicBool,
}

impl Warming {
    pub fn behind(&self, embedded: u64, total: u64) {
        self.set(Some(Lag::Embedding {
            done: embedded,
            total,
        }));
    }

    pub fn caught_up(&self) {
        self.set(None);
        if let Ok(mut r) = self.rebuilding.lock() {
            *r = None;
        }
    }

    /// The background embedding failed: the leg says why until a later catch-up succeeds.
    pub fn stopped(&self, why: String) {
        self.set(Some(Lag::Stopped(why)));
    }

    /// Moves the count on, only while behind.
    pub fn progress(&self, embedded: u64, total: u64) {
        if let Ok(mut lag) = self.lag.lock()
            && matches!(*lag, Some(Lag::Embedding { .. }))
        {
            *lag = Some(Lag::Embedding {
                done: embedded,
                total,
            });
        }
    }

    /// The vectors are embedded afresh because the index was started over, for `why`.
    pub fn rebuilding(&self, why: String) {
        if let Ok(mut r) = self.rebuilding.lock() {
            *r = Some(why);
        }
    }

    pub fn set_running(&self, running: bool) {
        self.running.store(running, Ordering::SeqCst);
    }

    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    /// Why the semantic leg cannot answer yet, if it cannot.
    pub fn reason(&self) -> Option<String> {
        let lag = self.lag.lock().ok()?;
        let rebuilding = self.rebuilding.lock().ok().and_then(|r| r.clone());
        match (lag.as_ref()?, rebuilding) {
            (Lag::Embedding { done, total }, Some(why)) => Some(format!(
                "rebuilding its index ({why}): {done} of {total} episodes embedded; the \
                 semantic leg answers when that is done"
            )),
            (Lag::Embedding { done, total }, None) => Some(format!(
                "embedding the memory: {done} of {total} episodes; the semantic leg answers when that is done"
            )),
            (Lag::Stopped(why), _) => Some(format!("embedding the memory stopped: {why}")),
        }
    }

    fn set(&self, lag: Option<Lag>) {
        if let Ok(mut l) = self.lag.lock() {
            *l = lag;
        }
    }
}
