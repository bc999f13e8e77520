//! End to end: the real binary in a real terminal (tmux), driven by keys.

mod common;

use common::tmux::{Tmux, wait_for};

#[test]
fn the_explorer_runs_in_a_real_terminal() {
    // The first launch on the default data directory (here under a scratch XDG_DATA_HOME)
    // is the one place the demo is seeded unasked.
    let dir = tempfile::tempdir().unwrap();
    let tmux = Tmux::start(
        dir.path(),
        &format!(
            "env -u STRATA_DATA XDG_DATA_HOME={} STRATA_EMBEDDER=hash STRATA_NOW=2026-12-01T00:00:00Z {}",
            dir.path().join("xdg").display(),
            env!("CARGO_BIN_EXE_strata"),
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
        s.contains("#1 score") && s.contains("recalled 10 incidents like INC-0300")
    });

    tmux.quit();
}

#[test]
fn an_empty_store_opens_empty_and_says_how_to_fill_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let strata = env!("CARGO_BIN_EXE_strata");
    let tmux = Tmux::start(
        dir.path(),
        &format!(
            "env STRATA_EMBEDDER=hash STRATA_NOW=2026-12-01T00:00:00Z {strata} --data {}",
            data.display()
        ),
    );
    let screen = wait_for(&tmux, "the empty-state screen", |s| {
        s.contains("this memory is empty")
    });
    assert!(screen.contains("strata ingest FILE"), "{screen}");
    assert!(screen.contains("strata demo"), "{screen}");
    assert!(!screen.contains("seeded the demo memory"), "{screen}");
    tmux.quit();
    drop(tmux);
    let stats = std::process::Command::new(strata)
        .args(["--data", data.to_str().unwrap(), "stats", "--json"])
        .env("STRATA_EMBEDDER", "hash")
        .output()
        .unwrap();
    assert!(
        stats.status.success(),
        "{}",
        String::from_utf8_lossy(&stats.stderr)
    );
    let stats: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(stats["episodes"], 0, "{stats}");

    // Asked for, the demo goes in.
    let tmux = Tmux::start(
        dir.path(),
        &format!(
            "env STRATA_EMBEDDER=hash STRATA_NOW=2026-12-01T00:00:00Z {strata} --data {} --demo",
            data.display()
        ),
    );
    let screen = wait_for(&tmux, "the demo seeded with --demo", |s| {
        s.contains("300 episodes")
    });
    assert!(screen.contains("seeded the demo memory"), "{screen}");
}

/// At 80x24: two panes and a strip of tabs naming the others; `y` in the timeline brings
/// recall forward; the query box clears with Ctrl-U and keeps its history across sessions;
/// grown to 200x50, every pane is on screen and the tabs go.
#[test]
fn a_small_terminal_shows_tabs_and_every_pane_is_a_key_away() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let command = format!(
        "env STRATA_EMBEDDER=hash STRATA_NOW=2026-12-01T00:00:00Z {} --data {} --demo",
        env!("CARGO_BIN_EXE_strata"),
        data.display()
    );
    let tmux = Tmux::start_sized(dir.path(), &command, 80, 24);
    // (The status bar is cut before the embedder's name at 80 columns; `y` waits for
    // recall to open.)
    let screen = wait_for(&tmux, "the demo at 80x24", |s| s.contains("300 episodes"));
    assert!(
        screen.contains("[1 Timeline]") && screen.contains(" 6 Entity "),
        "{screen}"
    );
    tmux.keys("y");
    let screen = wait_for(&tmux, "recall like the first row", |s| {
        s.contains("recalled 10 incidents like INC-0300")
    });
    assert!(
        screen.contains("[3 Recall]") && screen.contains("3 Recall fusion"),
        "{screen}"
    );

    tmux.keys("i");
    tmux.keys("C-u");
    tmux.type_text("disk full on the wal volume");
    tmux.keys("Enter");
    wait_for(&tmux, "the typed query to run", |s| {
        s.contains("disk full on the wal") && !s.contains("like INC-0300 (left out")
    });
    tmux.keys("6");
    wait_for(&tmux, "the entity pane brought forward", |s| {
        s.contains("[6 Entity]") && s.contains("Enter on a fact opens")
    });
    tmux.keys("7");
    wait_for(&tmux, "the review view at 80x24", |s| {
        s.contains("[7 Review]") && s.contains("177 supersessions") && s.contains("── evidence")
    });
    tmux.quit();
    drop(tmux);

    let tmux = Tmux::start_sized(dir.path(), &command, 80, 24);
    wait_for(&tmux, "the second session", |s| s.contains("300 episodes"));
    tmux.keys("3");
    tmux.keys("i");
    tmux.keys("Up");
    wait_for(&tmux, "the query from the last session", |s| {
        s.contains("disk full on the wal") && s.contains("query history 1/1")
    });
    tmux.keys("Escape");
    tmux.resize(200, 50);
    let screen = wait_for(&tmux, "every pane at 200x50", |s| {
        ["Lessons & skills", "5 Lineage", "6 Entity", "2 Facts"]
            .iter()
            .all(|p| s.contains(p))
    });
    assert!(!screen.contains("Tab/1-8 switch"), "{screen}");
    tmux.keys("8");
    wait_for(&tmux, "the changes feed at 200x50", |s| {
        s.contains("[7 Review]") && s.contains("changes up to K")
    });
    tmux.quit();
}
