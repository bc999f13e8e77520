//! A data directory on a read-only filesystem: every read works, the explorer opens and says
//! it is read-only, and a write fails with a clear error. The filesystem is a read-only bind
//! mount, which needs root; elsewhere the test says it is skipped.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

struct ReadOnlyMount {
    path: PathBuf,
}

impl ReadOnlyMount {
    fn new(source: &Path, target: &Path) -> Result<Self, String> {
        std::fs::create_dir_all(target).map_err(|e| e.to_string())?;
        let run = |args: &[&str]| -> Result<(), String> {
            let out = Command::new("mount")
                .args(args)
                .output()
                .map_err(|e| e.to_string())?;
            if out.status.success() {
                Ok(())
            } else {
                Err(String::from_utf8_lossy(&out.stderr).into_owned())
            }
        };
        let (s, t) = (source.to_str().unwrap(), target.to_str().unwrap());
        run(&["--bind", s, t])?;
        let mount = ReadOnlyMount {
            path: target.to_path_buf(),
        };
        run(&["-o", "remount,bind,ro", t])?;
        Ok(mount)
    }
}

impl Drop for ReadOnlyMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

#[test]
fn a_read_only_data_directory_reads_and_refuses_writes_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("data");
    assert!(strata(&source, &["demo"]).status.success());
    assert!(strata(&source, &["index"]).status.success());
    let ro = dir.path().join("ro");
    let _mount = match ReadOnlyMount::new(&source, &ro) {
        Ok(m) => m,
        Err(why) => {
            eprintln!(
                "skipping the read-only filesystem test: cannot make a read-only mount here ({why})"
            );
            return;
        }
    };
    assert!(
        std::fs::write(ro.join("probe"), b"x").is_err(),
        "the mount is read-only"
    );

    let timeline = strata(&ro, &["timeline", "--limit", "3"]);
    assert!(timeline.status.success(), "{}", stderr(&timeline));
    assert!(strata(&ro, &["check"]).status.success());
    let recall = strata(&ro, &["recall", "login loop on the SSO portal", "--json"]);
    assert!(recall.status.success(), "{}", stderr(&recall));
    let recall: serde_json::Value = serde_json::from_slice(&recall.stdout).unwrap();
    assert!(
        !recall["results"].as_array().unwrap().is_empty(),
        "{recall}"
    );

    let file = dir.path().join("one.ndjson");
    std::fs::write(&file, ndjson(&[record("INC-RO-1", "2026-11-01T00:00:00Z")])).unwrap();
    let ingest = strata(&ro, &["ingest", file.to_str().unwrap()]);
    assert!(!ingest.status.success());
    let text = stderr(&ingest);
    assert!(text.contains("read-only filesystem"), "{text}");

    let script = dir.path().join("ro.tape");
    std::fs::write(&script, "WaitIdle\nExpect \"read-only filesystem\"\n").unwrap();
    let out = strata(
        &ro,
        &[
            "headless",
            "--script",
            script.to_str().unwrap(),
            "--out",
            dir.path().join("frames").to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
}
