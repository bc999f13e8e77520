//! A data directory this process cannot write: on a read-only filesystem (a read-only bind
//! mount, which needs root; elsewhere the test says it is skipped), and a store whose files
//! its reader may not write (another user's, or `chmod -R a-w`). Every read works, recall
//! included, the explorer opens and says it is read-only, and a write fails saying why.

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
            skip(
                "a_read_only_data_directory_reads_and_refuses_writes_clearly",
                &format!("cannot make a read-only mount here ({why})"),
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
    assert!(text.contains("is read-only to this process"), "{text}");

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

/// Sets the mode of everything under `dir` (directories get the search bit too).
fn chmod_all(dir: &Path, file_mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            chmod_all(&path, file_mode);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(file_mode | 0o111))
                .unwrap();
        } else {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(file_mode)).unwrap();
        }
    }
}

/// As root, the store is read by another user (nobody), to whom its files are read-only;
/// otherwise by this user after `chmod -R a-w`. No lock file needs writing to read.
#[test]
fn a_store_its_reader_may_not_write_reads_and_refuses_writes_clearly() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let data = dir.path().join("data");
    assert!(
        strata(&data, &["--now", "2026-12-01T00:00:00Z", "demo"])
            .status
            .success()
    );
    let indexed = strata(&data, &["--now", "2026-12-01T00:00:00Z", "index"]);
    assert!(indexed.status.success(), "{}", stderr(&indexed));
    let file = dir.path().join("one.ndjson");
    std::fs::write(&file, ndjson(&[record("INC-RO-2", "2026-11-01T00:00:00Z")])).unwrap();
    let root = is_root();
    chmod_all(&data, if root { 0o644 } else { 0o444 });
    std::fs::set_permissions(
        &data,
        std::fs::Permissions::from_mode(if root { 0o755 } else { 0o555 }),
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = |args: &[&str]| {
        let mut command = strata_command(&data, args);
        command.env_remove("STRATA_STORE");
        if root {
            // nobody:nogroup
            command.uid(65534).gid(65534);
        }
        command.output().unwrap()
    };

    let timeline = run(&["timeline", "--limit", "3"]);
    assert!(timeline.status.success(), "{}", stderr(&timeline));
    let check = run(&["check"]);
    assert!(
        check.status.success(),
        "{}{}",
        stdout(&check),
        stderr(&check)
    );
    let recall = run(&["recall", "login loop on the SSO portal", "--json"]);
    assert!(recall.status.success(), "{}", stderr(&recall));
    let answer: serde_json::Value = serde_json::from_slice(&recall.stdout).unwrap();
    assert!(
        !answer["results"].as_array().unwrap().is_empty(),
        "{answer}"
    );
    for leg in ["semantic", "bm25", "graph"] {
        assert_eq!(answer["legs"][leg]["status"], "ok", "{leg}: {answer}");
    }
    let ingest = run(&["ingest", file.to_str().unwrap()]);
    assert!(!ingest.status.success());
    let text = stderr(&ingest);
    assert!(text.contains("is read-only to this process"), "{text}");

    chmod_all(&data, 0o644);
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
}
