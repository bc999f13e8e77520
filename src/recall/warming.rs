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

    pub fn set_running(&self, running: bool) {
        self.running.store(running, Ordering::SeqCst);
    }

    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    /// Why the semantic leg cannot answer yet, if it cannot.
    pub fn reason(&self) -> Option<String> {
        let lag = self.lag.lock().ok()?;
        match lag.as_ref()? {
            Lag::Embedding { done, total } => Some(format!(
                "embedding the memory: {done} of {total} episodes; the semantic leg answers when that is done"
            )),
            Lag::Stopped(why) => Some(format!("embedding the memory stopped: {why}")),
        }
    }

    fn set(&self, lag: Option<Lag>) {
        if let Ok(mut l) = self.lag.lock() {
            *l = lag;
        }
    }
}
