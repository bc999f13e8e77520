//! The warm signal: of the last recalls (a window), the share whose fused top k held an
//! episode the memory knew before the query's knowledge time — a real hit from the past, not
//! the incident being recorded now. It says, in words, whether the memory looks ready to go
//! from shadow to active.

use serde::Serialize;

use crate::recall::RecallMode;

/// Recalls the warm signal looks back over unless `[recall] warm_window` says.
pub const DEFAULT_WINDOW: usize = 200;
/// The share of warm recalls at which the memory looks ready, unless `[recall] warm_ready`
/// says.
pub const DEFAULT_READY_AT: f64 = 0.5;

/// One recall in the window: its mode, whether it was warm, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecentRecall {
    pub mode: RecallMode,
    pub warm: bool,
    pub at_ms: i64,
}

impl RecentRecall {
    pub(super) fn encode(&self) -> [u8; 10] {
        let mut out = [0u8; 10];
        out[0] = self.mode.index() as u8;
        out[1] = u8::from(self.warm);
        out[2..].copy_from_slice(&self.at_ms.to_le_bytes());
        out
    }

    pub(super) fn decode(bytes: &[u8]) -> Option<RecentRecall> {
        let [mode, warm, rest @ ..] = bytes else {
            return None;
        };
        Some(RecentRecall {
            mode: *RecallMode::ALL.get(usize::from(*mode))?,
            warm: *warm != 0,
            at_ms: i64::from_le_bytes(rest.try_into().ok()?),
        })
    }
}

/// What the window says.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WarmSignal {
    /// Recalls looked back over at most.
    pub window: usize,
    /// Recalls in the window (fewer than `window` while the memory is new).
    pub recalls: usize,
    pub warm: usize,
    /// `warm / recalls`; `None` with no recalls.
    pub ratio: Option<f64>,
    /// Of the window's recalls, how many ran in shadow mode.
    pub shadow: usize,
    /// The share at which the memory looks ready.
    pub ready_at: f64,
    pub readiness: Readiness,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Readiness {
    /// Nothing recorded yet.
    NoRecalls,
    /// Fewer recalls than the signal needs to say anything (a quarter of the window).
    TooFew,
    /// Too few of them warm.
    Cold,
    /// Warm enough to go active, once the evaluation gate passes.
    Ready,
}

impl WarmSignal {
    /// The signal of `recent` (newest first), over the last `window` of them.
    pub fn of(recent: &[RecentRecall], window: usize, ready_at: f64) -> WarmSignal {
        let seen = &recent[..recent.len().min(window)];
        let warm = seen.iter().filter(|r| r.warm).count();
        let ratio = (!seen.is_empty()).then(|| warm as f64 / seen.len() as f64);
        let readiness = match ratio {
            None => Readiness::NoRecalls,
            Some(_) if seen.len() < Self::needed(window) => Readiness::TooFew,
            Some(r) if r >= ready_at => Readiness::Ready,
            Some(_) => Readiness::Cold,
        };
        WarmSignal {
            window,
            recalls: seen.len(),
            warm,
            ratio,
            shadow: seen.iter().filter(|r| r.mode == RecallMode::Shadow).count(),
            ready_at,
            readiness,
        }
    }

    /// Recalls the window must hold before the signal says anything.
    pub fn needed(window: usize) -> usize {
        window.div_ceil(4).max(1)
    }

    /// `62%`, or `–` with no recalls: for a status bar.
    pub fn short(&self) -> String {
        match self.ratio {
            Some(r) => format!("{:.0}%", r * 100.0),
            None => "–".to_string(),
        }
    }

    /// Whether the memory looks ready to go active, and what to do next, in words.
    pub fn verdict(&self) -> String {
        let pct = |r: f64| format!("{:.0}%", r * 100.0);
        let share = format!(
            "{} of the last {} recalls ({}) found an incident known before they were asked",
            self.warm,
            self.recalls,
            pct(self.ratio.unwrap_or(0.0))
        );
        match self.readiness {
            Readiness::NoRecalls => "no recalls recorded yet: run the agent with [recall] mode = \
                 \"shadow\" (or STRATA_RECALL_MODE=shadow) and look again once it has recalled"
                .to_string(),
            Readiness::TooFew => format!(
                "not enough recalls yet: {} recorded, the signal needs {} (a quarter of the \
                 window of {}); keep recall in shadow mode",
                self.recalls,
                Self::needed(self.window),
                self.window
            ),
            Readiness::Cold => format!(
                "not ready: {share}; going active needs {}. Keep recall in shadow mode while \
                 the memory fills",
                pct(self.ready_at)
            ),
            Readiness::Ready => format!(
                "ready to go active: {share} ({} needed). Next: strata eval --gate \
                 BASELINE.json, and if it passes, [recall] mode = \"active\"",
                pct(self.ready_at)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recalls(warm: usize, cold: usize) -> Vec<RecentRecall> {
        let r = |warm| RecentRecall {
            mode: RecallMode::Shadow,
            warm,
            at_ms: 0,
        };
        (0..warm)
            .map(|_| r(true))
            .chain((0..cold).map(|_| r(false)))
            .collect()
    }

    #[test]
    fn the_window_decides_and_says_so() {
        assert_eq!(
            WarmSignal::of(&[], 200, 0.5).readiness,
            Readiness::NoRecalls
        );
        assert_eq!(
            WarmSignal::of(&recalls(10, 0), 200, 0.5).readiness,
            Readiness::TooFew
        );
        let cold = WarmSignal::of(&recalls(20, 80), 200, 0.5);
        assert_eq!(cold.readiness, Readiness::Cold);
        assert!(
            cold.verdict().contains("20 of the last 100 recalls (20%)"),
            "{}",
            cold.verdict()
        );
        // Only the newest `window` count: 150 warm ones, then 150 cold ones older.
        let ready = WarmSignal::of(&recalls(150, 150), 200, 0.5);
        assert_eq!((ready.recalls, ready.warm), (200, 150));
        assert_eq!(ready.readiness, Readiness::Ready);
        assert!(
            ready.verdict().contains("strata eval --gate"),
            "{}",
            ready.verdict()
        );
    }

    #[test]
    fn a_recent_recall_round_trips() {
        let r = RecentRecall {
            mode: RecallMode::Shadow,
            warm: true,
            at_ms: 1_700_000_000_123,
        };
        assert_eq!(RecentRecall::decode(&r.encode()), Some(r));
        assert_eq!(RecentRecall::decode(&[9, 0, 0]), None);
    }
}
