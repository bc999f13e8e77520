//! The real binary in a real terminal: a tmux server of its own, keys in, the screen out.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A tmux server on a socket of its own running one session, `strata`; killed on drop.
pub struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// Runs `command` in a 120×40 session; the socket lives in `dir`.
    pub fn start(dir: &Path, command: &str) -> Tmux {
        Tmux::start_sized(dir, command, 120, 40)
    }

    /// Runs `command` in a `width`×`height` session.
    pub fn start_sized(dir: &Path, command: &str, width: u16, height: u16) -> Tmux {
        let tmux = Tmux {
            socket: dir.join("tmux.sock"),
        };
        let (width, height) = (width.to_string(), height.to_string());
        let start = || {
            tmux.run(&[
                "new-session",
                "-d",
                "-s",
                "strata",
                "-x",
                &width,
                "-y",
                &height,
                command,
            ])
        };
        // A server killed on this socket just before may still be on its way out.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut started = start();
        while !started.status.success() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            started = start();
        }
        assert!(
            started.status.success(),
            "{}",
            String::from_utf8_lossy(&started.stderr)
        );
        tmux
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux is installed by scripts/test")
    }

    pub fn keys(&self, keys: &str) {
        self.run(&["send-keys", "-t", "strata", keys]);
    }

    /// Types `text` as it is (no key names).
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "strata", "-l", text]);
    }

    pub fn resize(&self, width: u16, height: u16) {
        let (width, height) = (width.to_string(), height.to_string());
        self.run(&["resize-window", "-t", "strata", "-x", &width, "-y", &height]);
    }

    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "strata"]).stdout)
            .into_owned()
    }

    pub fn is_running(&self) -> bool {
        self.run(&["has-session", "-t", "strata"]).status.success()
    }

    /// Presses `q` and waits up to 30 s for the explorer to exit.
    pub fn quit(&self) {
        self.keys("q");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while self.is_running() {
            assert!(
                std::time::Instant::now() < deadline,
                "q did not quit:\n{}",
                self.screen()
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// Polls the pane until `ready` holds; a real terminal has no idle signal to wait on.
pub fn wait_for(tmux: &Tmux, what: &str, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let s = tmux.screen();
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
