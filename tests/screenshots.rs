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
            .env("STRATA_BY", "ana")
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

#[test]
fn committed_svgs_parse_and_carry_colour() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("screenshots");
    let mut checked = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "svg") {
            continue;
        }
        let svg = std::fs::read_to_string(&path).unwrap();
        let mut reader = quick_xml::Reader::from_str(&svg);
        let mut depth = 0i32;
        loop {
            match reader.read_event() {
                Ok(quick_xml::events::Event::Start(_)) => depth += 1,
                Ok(quick_xml::events::Event::End(_)) => depth -= 1,
                Ok(quick_xml::events::Event::Eof) => break,
                Ok(_) => {}
                Err(e) => panic!("{}: not well-formed: {e}", path.display()),
            }
        }
        assert_eq!(depth, 0, "{}", path.display());
        let colours: std::collections::BTreeSet<&str> = svg
            .match_indices("fill=\"#")
            .map(|(i, _)| &svg[i + 6..i + 13])
            .collect();
        assert!(colours.len() >= 4, "{}: only {colours:?}", path.display());
        checked += 1;
    }
    assert!(checked >= 12, "{checked} SVGs");
}
