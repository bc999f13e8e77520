//! One writer at a time per store, across processes: an advisory lock on a file beside the
//! data, which the kernel releases when its holder exits or is killed, so a dead writer
//! never blocks the next one. The holder writes who it is into the file, so a writer that
//! gives up can say whom it waited for.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long a writer waits for the one ahead of it unless `STRATA_WRITE_WAIT_MS` says.
const DEFAULT_WAIT: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(5);

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another Strata process is writing to {path}: {holder}; gave up after waiting {waited:.1?}. \
         Let it finish and try again, or stop it (an interrupted write leaves no trace)"
    )]
    Busy {
        path: PathBuf,
        holder: String,
        waited: Duration,
    },
    #[error("cannot use the writer lock {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Told of each lock this process had to wait for, and how long it waited.
pub type WaitObserver = Box<dyn Fn(&Path, Duration) + Send + Sync>;

static WAIT_OBSERVER: OnceLock<WaitObserver> = OnceLock::new();

/// Sets the observer of this process's lock waits; only the first call counts.
pub fn observe_waits(observer: WaitObserver) {
    let _ = WAIT_OBSERVER.set(observer);
}

pub struct WriterLock {
    path: PathBuf,
}

/// Held while writing; dropping it lets the next writer in.
pub struct WriterGuard {
    file: File,
}

impl Drop for WriterGuard {
    fn drop(&mut self) {
        // Nobody holds it any more: the holder's description goes before the lock does.
        let _ = self.file.set_len(0);
    }
}

impl WriterLock {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        WriterLock { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The configured bound on waiting for another writer.
    pub fn default_wait() -> Duration {
        std::env::var("STRATA_WRITE_WAIT_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(DEFAULT_WAIT, Duration::from_millis)
    }

    /// Waits up to `wait` for the lock.
    pub fn acquire(&self, wait: Duration) -> Result<WriterGuard, LockError> {
        let io = |source| LockError::Io {
            path: self.path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path)
            .map_err(io)?;
        let started = Instant::now();
        let mut waited = false;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if started.elapsed() < wait => {
                    waited = true;
                    std::thread::sleep(POLL);
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(LockError::Busy {
                        path: self.path.clone(),
                        holder: holder_of(&mut file),
                        waited: started.elapsed(),
                    });
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
        }
        // Who holds it is said for the writers that wait; a full disk may keep it from being
        // written, and the lock holds all the same.
        let described = file
            .set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(describe_self().as_bytes()));
        if let Err(e) = described {
            tracing::debug!(lock = %self.path.display(), error = %e, "cannot say who holds the lock");
        }
        if waited && let Some(observe) = WAIT_OBSERVER.get() {
            observe(&self.path, started.elapsed());
        }
        Ok(WriterGuard { file })
    }
}

fn holder_of(file: &mut File) -> String {
    let mut text = String::new();
    let read = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_string(&mut text));
    match read {
        Ok(_) if !text.trim().is_empty() => crate::redact::escape_terminal_unsafe(text.trim()),
        _ => "a process that has not said who it is yet".to_string(),
    }
}

/// `pid 1234 (strata ingest a.ndjson), writing since 2026-12-03T12:00:00Z`
fn describe_self() -> String {
    let command = std::fs::read("/proc/self/cmdline")
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|part| !part.is_empty())
                .map(|part| String::from_utf8_lossy(part).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    format!(
        "pid {} ({}), writing since {}",
        std::process::id(),
        command,
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_waits_its_bound_then_names_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let lock = WriterLock::new(dir.path().join("writer.lock"));
        let held = lock.acquire(Duration::ZERO).unwrap();
        let err = WriterLock::new(dir.path().join("writer.lock"))
            .acquire(Duration::from_millis(50))
            .err()
            .unwrap();
        let text = err.to_string();
        assert!(
            text.contains(&format!("pid {}", std::process::id())),
            "{text}"
        );
        assert!(text.contains("gave up after waiting"), "{text}");
        drop(held);
        lock.acquire(Duration::ZERO).unwrap();
    }
}
