//! The shell examples in README.md and docs/*.md run as shown. Every ```console block is a
//! test (trycmd): each `$ strata …` line runs the real binary against the demo memory, and
//! what it prints (stdout, then stderr) must match the lines under it, where `[..]` stands
//! for what varies between runs (latencies, a store's identity) and `...` for lines left out.
//! The examples name their own `--now` and, where the ranking depends on it, `--embedder
//! hash`, so a reader gets the same output from their own demo memory.
//!
//! After changing an example's command, `TRYCMD=overwrite cargo test --test doc_examples`
//! writes the new output into the page; read the diff before committing it.

use std::path::Path;
use std::process::Command;

#[test]
fn shell_examples_in_readme_and_docs_run_as_shown() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let home = tempfile::tempdir().expect("a temporary directory");
    let data = home.path().join("data");
    // The developer's own ~/.config/strata (weights, keys) stays out of the examples.
    let config_home = home.path().join("config");
    let seeded = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["--embedder", "hash", "demo"])
        .env("STRATA_DATA", &data)
        .env("XDG_CONFIG_HOME", &config_home)
        .output()
        .expect("strata demo runs");
    assert!(
        seeded.status.success(),
        "seeding the demo memory failed: {}",
        String::from_utf8_lossy(&seeded.stderr)
    );
    trycmd::TestCases::new()
        .register_bin("strata", Path::new(env!("CARGO_BIN_EXE_strata")))
        .env("STRATA_DATA", data.display().to_string())
        .env("XDG_CONFIG_HOME", config_home.display().to_string())
        .env("NO_COLOR", "1")
        .case(root.join("README.md"))
        .case(root.join("docs/*.md"));
}
