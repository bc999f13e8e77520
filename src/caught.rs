//! Panics where Strata reads files it did not write itself a moment ago (a library reading a
//! damaged index trusts what it finds, and some panic on it): caught where the failure can be
//! answered (a recall leg, opening an index), logged, and reported as that part's failure in
//! one line. While a panic is being caught, the panic hook keeps it off the terminal.

use std::cell::Cell;
use std::panic::AssertUnwindSafe;

thread_local! {
    /// How many [`catch`]es this thread is inside.
    static CATCHING: Cell<u32> = const { Cell::new(0) };
}

/// Runs `work`; a panic in it becomes `Err` with its message, `what` naming the part.
pub fn catch<T>(what: &str, work: impl FnOnce() -> T) -> Result<T, String> {
    CATCHING.with(|c| c.set(c.get() + 1));
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(work));
    CATCHING.with(|c| c.set(c.get().saturating_sub(1)));
    outcome.map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        let message = message.lines().next().unwrap_or_default().to_string();
        tracing::error!(part = what, panic = %message, "caught a panic");
        format!("{what} stopped on an internal error: {message}")
    })
}

/// Wraps the panic hook in place (the binary's): a panic inside [`catch`] is logged, not
/// printed; any other goes on to the hook as before.
pub fn quiet_caught_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if CATCHING.with(|c| c.get()) > 0 {
            tracing::error!(panic = %info, "caught a panic");
            return;
        }
        previous(info);
    }));
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_panic_is_one_line_of_error() {
        let err =
            super::catch("the bm25 leg", || -> u32 { panic!("mid > len\nmore") }).unwrap_err();
        assert_eq!(err, "the bm25 leg stopped on an internal error: mid > len");
        assert_eq!(super::catch("x", || 7), Ok(7));
    }
}
