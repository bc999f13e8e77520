//! End to end: the real binary in a real terminal (tmux), driven by keys.

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn tmux(socket: &Path, args: &[&str]) -> Output {
    Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .args(args)
        .output()
        .expect("tmux is installed by scripts/test")
}

fn screen(socket: &Path) -> String {
    String::from_utf8_lossy(&tmux(socket, &["capture-pane", "-p", "-t", "strata"]).stdout)
        .into_owned()
}

/// Polls the pane until `ready` holds; a real terminal has no idle signal to wait on.
fn wait_for(socket: &Path, what: &str, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let s = screen(socket);
        if ready(&s) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; the screen:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

struct Session<'a>(&'a Path);

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = tmux(self.0, &["kill-server"]);
    }
}

#[test]
fn the_explorer_runs_in_a_real_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("tmux.sock");
    let data = dir.path().join("data");
    let command = format!(
        "env STRATA_EMBEDDER=hash STRATA_NOW=2026-12-01T00:00:00Z {} --data {}",
        env!("CARGO_BIN_EXE_strata"),
        data.display()
    );
    let started = tmux(
        &socket,
        &[
            "new-session",
            "-d",
            "-s",
            "strata",
            "-x",
            "120",
            "-y",
            "40",
            &command,
        ],
    );
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let _guard = Session(&socket);

    let first = wait_for(&socket, "the demo memory and recall", |s| {
        s.contains("300 episodes") && s.contains("hash-v1")
    });
    assert!(first.contains("seeded the demo memory"), "{first}");
    assert!(first.contains("1 Timeline") && first.contains("2 Facts"));

    tmux(&socket, &["send-keys", "-t", "strata", "?"]);
    wait_for(&socket, "the help screen", |s| {
        s.contains("asof.next_change")
    });
    tmux(&socket, &["send-keys", "-t", "strata", "Escape"]);
    wait_for(&socket, "help to close", |s| {
        !s.contains("asof.next_change")
    });

    tmux(&socket, &["send-keys", "-t", "strata", "r"]);
    wait_for(&socket, "a recall breakdown", |s| {
        s.contains("#1 score") && s.contains("recall ")
    });

    tmux(&socket, &["send-keys", "-t", "strata", "q"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while tmux(&socket, &["has-session", "-t", "strata"])
        .status
        .success()
    {
        assert!(
            Instant::now() < deadline,
            "q did not quit:\n{}",
            screen(&socket)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
