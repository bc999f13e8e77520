//! Runs the real explorer loop from a script against an off-screen terminal.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use super::frame;
use super::script::{Command, Line};
use crate::explorer::{App, Explorer};

#[derive(Debug, thiserror::Error)]
pub enum HeadlessError {
    #[error("line {line}: the screen does not contain {text:?}\n{screen}")]
    Missing {
        line: usize,
        text: String,
        screen: String,
    },
    #[error("line {line}: the screen contains {text:?}\n{screen}")]
    Present {
        line: usize,
        text: String,
        screen: String,
    },
    #[error("line {line}: {message}")]
    Stalled { line: usize, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub struct SessionOptions {
    /// Where snapshots go.
    pub out_dir: PathBuf,
    /// A JSON-lines log of actions, replies and frame hashes.
    pub events: Option<PathBuf>,
    /// The title on the SVG window.
    pub title: String,
    /// How long `WaitIdle` waits for the background before failing the run.
    pub idle_timeout: Duration,
}

pub struct Session {
    explorer: Explorer,
    terminal: Terminal<TestBackend>,
    options: SessionOptions,
    events: Option<BufWriter<File>>,
    snapshots: Vec<PathBuf>,
}

impl Session {
    pub fn new(
        mut explorer: Explorer,
        width: u16,
        height: u16,
        options: SessionOptions,
    ) -> Result<Session, HeadlessError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| HeadlessError::Io { path, source }
        };
        std::fs::create_dir_all(&options.out_dir).map_err(io(&options.out_dir))?;
        let events = match &options.events {
            Some(p) => Some(BufWriter::new(File::create(p).map_err(io(p))?)),
            None => None,
        };
        explorer.on_resize(width, height);
        let terminal =
            Terminal::new(TestBackend::new(width, height)).map_err(|e| HeadlessError::Io {
                path: PathBuf::from("<terminal>"),
                source: std::io::Error::other(e.to_string()),
            })?;
        Ok(Session {
            explorer,
            terminal,
            options,
            events,
            snapshots: Vec::new(),
        })
    }

    pub fn app(&self) -> &App {
        self.explorer.app()
    }

    /// The explorer, to drive it beyond what scripts can say (a click at a cell).
    pub fn explorer_mut(&mut self) -> &mut Explorer {
        &mut self.explorer
    }

    pub fn snapshots(&self) -> &[PathBuf] {
        &self.snapshots
    }

    pub fn run(&mut self, script: &[Line]) -> Result<(), HeadlessError> {
        for line in script {
            self.step(line)?;
        }
        self.flush_events(0)
    }

    pub fn step(&mut self, line: &Line) -> Result<(), HeadlessError> {
        match &line.command {
            Command::Type(text) => {
                for c in text.chars() {
                    self.explorer
                        .on_key(crate::explorer::key::KeyChord::char(c));
                }
            }
            Command::Key(key, count) => {
                for _ in 0..*count {
                    self.explorer.on_key(*key);
                }
            }
            Command::Action(action) => self.explorer.dispatch(action.clone()),
            Command::Resize(w, h) => {
                self.terminal.backend_mut().resize(*w, *h);
                self.explorer.on_resize(*w, *h);
            }
            Command::WaitIdle => self.wait_idle(line.number)?,
            Command::Snapshot(name) => {
                let buffer = self.draw()?;
                let text = frame::to_text(&buffer);
                let svg = frame::to_svg(&buffer, &self.options.title);
                for (ext, body) in [("txt", text), ("svg", svg)] {
                    let path = self.options.out_dir.join(format!("{name}.{ext}"));
                    std::fs::write(&path, body).map_err(|source| HeadlessError::Io {
                        path: path.clone(),
                        source,
                    })?;
                    self.snapshots.push(path);
                }
            }
            Command::Expect(text) => {
                let screen = frame::to_text(&self.draw()?);
                if !screen.contains(text.as_str()) {
                    return Err(HeadlessError::Missing {
                        line: line.number,
                        text: text.clone(),
                        screen,
                    });
                }
            }
            Command::ExpectNot(text) => {
                let screen = frame::to_text(&self.draw()?);
                if screen.contains(text.as_str()) {
                    return Err(HeadlessError::Present {
                        line: line.number,
                        text: text.clone(),
                        screen,
                    });
                }
            }
        }
        // A recording hashes the frame after every line; snapshots and checks drew one.
        if self.events.is_some()
            && !matches!(
                line.command,
                Command::Snapshot(_) | Command::Expect(_) | Command::ExpectNot(_)
            )
        {
            self.draw()?;
        }
        self.flush_events(line.number)
    }

    /// Applies background replies until nothing is pending, then asks once whether another
    /// process wrote to the store and applies that too. Replies and changes are applied only
    /// here, so what a script sees never depends on timing.
    pub fn wait_idle(&mut self, line: usize) -> Result<(), HeadlessError> {
        self.drain(line)?;
        if self.explorer.check_for_changes() {
            self.drain(line)?;
        }
        Ok(())
    }

    fn drain(&mut self, line: usize) -> Result<(), HeadlessError> {
        while !self.explorer.is_idle() {
            if !self.explorer.wait(self.options.idle_timeout) {
                return Err(HeadlessError::Stalled {
                    line,
                    message: format!(
                        "WaitIdle: still {} requests pending after {:?}",
                        self.explorer.pending(),
                        self.options.idle_timeout
                    ),
                });
            }
        }
        Ok(())
    }

    /// Draws the current state and returns the screen.
    pub fn draw(&mut self) -> Result<ratatui::buffer::Buffer, HeadlessError> {
        let explorer = &self.explorer;
        let completed =
            self.terminal
                .draw(|f| explorer.render(f))
                .map_err(|e| HeadlessError::Io {
                    path: PathBuf::from("<terminal>"),
                    source: std::io::Error::other(e.to_string()),
                })?;
        let buffer = completed.buffer.clone();
        self.explorer.record_frame(&frame::hash(&buffer));
        Ok(buffer)
    }

    pub fn text(&mut self) -> Result<String, HeadlessError> {
        Ok(frame::to_text(&self.draw()?))
    }

    fn flush_events(&mut self, line: usize) -> Result<(), HeadlessError> {
        let events = self.explorer.take_events();
        let Some(out) = &mut self.events else {
            return Ok(());
        };
        let path = self.options.events.clone().unwrap_or_default();
        for mut e in events {
            if let Some(obj) = e.as_object_mut() {
                obj.insert("line".into(), json!(line));
            }
            writeln!(out, "{e}").map_err(|source| HeadlessError::Io {
                path: path.clone(),
                source,
            })?;
        }
        out.flush()
            .map_err(|source| HeadlessError::Io { path, source })
    }
}
