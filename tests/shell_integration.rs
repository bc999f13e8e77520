//! `strata completions SHELL` and `strata man` come from the same clap definitions as
//! `--help`: every subcommand `--help` lists is completed in each shell and named in the man
//! page, and neither opens a store, a config file or a log.

use std::path::Path;
use std::process::{Command, Output};

fn strata(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        // Anything that would open memory would create this directory or read this config.
        .env("STRATA_DATA", home.join("data"))
        .env("STRATA_CONFIG", home.join("missing-config.toml"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .output()
        .expect("strata runs")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("UTF-8 output")
}

/// The subcommands `--help` lists under "Commands:" (help itself aside).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn completions_name_every_subcommand_in_each_shell() {
    let home = tempfile::tempdir().unwrap();
    let top = subcommands(&stdout(&strata(home.path(), &["--help"])));
    assert!(
        top.len() >= 20 && top.iter().any(|c| c == "recall") && top.iter().any(|c| c == "man"),
        "{top:?}"
    );
    let bench = subcommands(&stdout(&strata(home.path(), &["bench", "--help"])));
    assert!(bench.iter().any(|c| c == "big-file"), "{bench:?}");
    for (shell, marker) in [
        ("bash", "complete -F _strata"),
        ("zsh", "#compdef strata"),
        ("fish", "complete -c strata"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let script = stdout(&strata(home.path(), &["completions", shell]));
        assert!(script.contains(marker), "{shell}: no {marker:?}");
        for name in top.iter().chain(&bench) {
            assert!(
                script.contains(name.as_str()),
                "{shell} completion lacks {name}"
            );
        }
        // A flag of a nested subcommand, from the same definitions.
        assert!(
            script.contains("reader-interval-ms"),
            "{shell}: bench concurrent's flag"
        );
    }
    assert!(
        !home.path().join("data").exists(),
        "completions opened the data directory"
    );
}

#[test]
fn an_unknown_shell_is_refused_naming_the_choices() {
    let home = tempfile::tempdir().unwrap();
    let o = strata(home.path(), &["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    for shell in ["bash", "zsh", "fish", "powershell"] {
        assert!(err.contains(shell), "{err}");
    }
}

#[test]
fn the_man_page_names_every_subcommand() {
    let home = tempfile::tempdir().unwrap();
    let top = subcommands(&stdout(&strata(home.path(), &["--help"])));
    let page = stdout(&strata(home.path(), &["man"]));
    assert!(
        page.contains(".TH strata 1"),
        "not the strata(1) page: {page:.300}"
    );
    for name in &top {
        assert!(
            page.contains(&format!("strata\\-{}", name.replace('-', "\\-"))),
            "the man page does not name {name}"
        );
    }
    assert!(
        !home.path().join("data").exists(),
        "man opened the data directory"
    );
}

#[test]
fn man_dir_writes_a_page_per_subcommand() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("man1");
    stdout(&strata(
        home.path(),
        &["man", "--dir", dir.to_str().unwrap()],
    ));
    for page in [
        "strata.1",
        "strata-ingest.1",
        "strata-bench-store.1",
        "strata-completions.1",
    ] {
        let text =
            std::fs::read_to_string(dir.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
        assert!(text.contains(".TH"), "{page}: {text:.200}");
    }
    let recall = std::fs::read_to_string(dir.join("strata-recall.1")).unwrap();
    assert!(
        recall.contains("known\\-at"),
        "strata-recall.1 lacks --known-at"
    );
}
