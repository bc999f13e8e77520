//! The query history file of one store: one JSON string per line, oldest first. Every
//! explorer on the store appends a line per query it runs (one `write` of a whole line,
//! so lines from two processes never interleave); a read that finds the file past twice
//! the limit rewrites it with the newest entries, through a rename, so a reader never
//! sees half a file. A line that does not parse is skipped and logged.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::explorer::history::{HISTORY_LIMIT, kept_form};

#[derive(Debug, thiserror::Error)]
#[error("query history {path}: {source}")]
pub struct HistoryError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

#[derive(Clone, Debug)]
pub struct HistoryFile {
    path: PathBuf,
}

impl HistoryFile {
    pub fn new(path: PathBuf) -> HistoryFile {
        HistoryFile { path }
    }

    fn error(&self, source: std::io::Error) -> HistoryError {
        HistoryError {
            path: self.path.clone(),
            source,
        }
    }

    /// The entries, oldest first, each once; none when there is no file yet.
    pub fn read(&self) -> Result<Vec<String>, HistoryError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.error(e)),
        };
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let mut entries: Vec<String> = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            match serde_json::from_str::<String>(line) {
                Ok(entry) => entries.extend(kept_form(&entry)),
                Err(e) => tracing::warn!(
                    path = %self.path.display(),
                    line = i + 1,
                    error = %e,
                    "query history: skipped a line that is not a JSON string"
                ),
            }
        }
        let mut seen = std::collections::HashSet::new();
        let mut kept: Vec<String> = entries
            .into_iter()
            .rev()
            .filter(|e| seen.insert(e.clone()))
            .take(HISTORY_LIMIT)
            .collect();
        kept.reverse();
        if lines.len() > 2 * HISTORY_LIMIT
            && let Err(e) = self.rewrite(&kept)
        {
            tracing::warn!(error = %e, "query history: could not compact");
        }
        Ok(kept)
    }

    /// Appends one entry.
    pub fn append(&self, entry: &str) -> Result<(), HistoryError> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| self.error(e))?;
        }
        let mut line =
            serde_json::to_string(entry).map_err(|e| self.error(std::io::Error::other(e)))?;
        line.push('\n');
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .map_err(|e| self.error(e))
    }

    fn rewrite(&self, entries: &[String]) -> Result<(), HistoryError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| self.error(e))?;
        for entry in entries {
            let line =
                serde_json::to_string(entry).map_err(|e| self.error(std::io::Error::other(e)))?;
            writeln!(tmp, "{line}").map_err(|e| self.error(e))?;
        }
        tmp.persist(&self.path).map_err(|e| self.error(e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_reads_back_each_once_and_compacts() {
        let dir = tempfile::tempdir().unwrap();
        let file = HistoryFile::new(dir.path().join("history").join("queries"));
        assert!(file.read().unwrap().is_empty(), "no file yet");
        for q in ["disk full", "quote \" and\nnewline", "disk full"] {
            file.append(q).unwrap();
        }
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join("history/queries"))
            .unwrap()
            .write_all(b"not json\n")
            .unwrap();
        assert_eq!(
            file.read().unwrap(),
            ["quote \" and newline", "disk full"],
            "a bad line is skipped; a query run again counts where it ran last"
        );
        for i in 0..2 * HISTORY_LIMIT + 5 {
            file.append(&format!("q{i}")).unwrap();
        }
        let read = file.read().unwrap();
        assert_eq!(read.len(), HISTORY_LIMIT);
        assert_eq!(read.last().unwrap(), &format!("q{}", 2 * HISTORY_LIMIT + 4));
        let lines = std::fs::read_to_string(dir.path().join("history/queries"))
            .unwrap()
            .lines()
            .count();
        assert_eq!(lines, HISTORY_LIMIT, "compacted to the newest");
    }
}
