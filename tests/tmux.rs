//! End to end: the real binary in a real terminal (tmux), driven by keys.

mod common;

use std::time::{Duration, Instant};

use common::tmux::{Tmux, wait_for};

#[test]
fn the_explorer_runs_in_a_real_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let tmux = Tmux::start(
        dir.path(),
        &format!(
            "env STRATA_EMBEDDER=hash STRATA_NOW=2026-12-01T00:00:00Z {} --data {}",
            env!("CARGO_BIN_EXE_strata"),
            data.display()
        ),
    );

    let first = wait_for(&tmux, "the demo memory and recall", |s| {
        s.contains("300 episodes") && s.contains("hash-v1")
    });
    assert!(first.contains("seeded the demo memory"), "{first}");
    assert!(first.contains("1 Timeline") && first.contains("2 Facts"));

    tmux.keys("?");
    wait_for(&tmux, "the help screen", |s| s.contains("asof.next_change"));
    tmux.keys("Escape");
    wait_for(&tmux, "help to close", |s| !s.contains("asof.next_change"));

    tmux.keys("r");
    wait_for(&tmux, "a recall breakdown", |s| {
        s.contains("#1 score") && s.contains("recall ")
    });

    tmux.keys("q");
    let deadline = Instant::now() + Duration::from_secs(30);
    while tmux.is_running() {
        assert!(
            Instant::now() < deadline,
            "q did not quit:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
