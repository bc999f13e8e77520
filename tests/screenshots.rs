//! Every committed screenshot is what its tape produces today.

mod common;

use std::path::Path;
use std::process::Command;

#[test]
fn committed_screenshots_match_their_tapes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut tapes: Vec<_> = std::fs::read_dir(root.join("assets/tapes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tape"))
        .collect();
    tapes.sort();
    assert!(tapes.len() >= 6, "tapes: {tapes:?}");
    let mut compared = 0;
    let mut drifted = Vec::new();
    for tape in &tapes {
        let data = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let run = Command::new(env!("CARGO_BIN_EXE_strata"))
            .env("STRATA_EMBEDDER", "hash")
            .env_remove("NO_COLOR")
            .args(["--data"])
            .arg(data.path())
            .args([
                "--now",
                "2026-12-01T00:00:00Z",
                "headless",
                "--demo",
                "--mask",
                "--script",
            ])
            .arg(tape)
            .arg("--out")
            .arg(out.path())
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}: {}",
            tape.display(),
            String::from_utf8_lossy(&run.stderr)
        );
        for produced in std::fs::read_dir(out.path()).unwrap() {
            let produced = produced.unwrap().path();
            let name = produced.file_name().unwrap();
            let committed = root.join("screenshots").join(name);
            let fresh = std::fs::read(&produced).unwrap();
            match std::fs::read(&committed) {
                Ok(old) if old == fresh => compared += 1,
                Ok(_) => drifted.push(format!("{} (from {})", committed.display(), tape.display())),
                Err(_) => drifted.push(format!(
                    "{} is missing (from {})",
                    committed.display(),
                    tape.display()
                )),
            }
        }
    }
    assert!(
        drifted.is_empty(),
        "screenshots differ from their tapes; run scripts/screenshots and review:\n{}",
        drifted.join("\n")
    );
    assert!(compared >= 12, "only {compared} files compared");
}
