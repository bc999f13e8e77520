use std::path::PathBuf;

use color_eyre::eyre::{Result, eyre};
use tracing_appender::non_blocking::WorkerGuard;

use strata::model::Timestamp;
use strata::store::embedded::EmbeddedStore;

/// What every command shares: where the data lives and what time it is.
pub struct Context {
    pub data_dir: PathBuf,
    pub now: Timestamp,
}

impl Context {
    pub fn new(data: Option<PathBuf>, now: Option<Timestamp>) -> Result<Self> {
        let data_dir = match data {
            Some(d) => d,
            None => directories::ProjectDirs::from("", "", "strata")
                .map(|p| p.data_dir().to_path_buf())
                .ok_or_else(|| eyre!("no home directory to put the data in; pass --data DIR"))?,
        };
        Ok(Context {
            data_dir,
            now: now.unwrap_or_else(Timestamp::now),
        })
    }

    pub fn open_store(&self) -> Result<EmbeddedStore> {
        Ok(EmbeddedStore::open(&self.data_dir)?)
    }

    /// Logs go to `strata.log` in the data directory, never to the terminal.
    pub fn init_logging(&self) -> Option<WorkerGuard> {
        std::fs::create_dir_all(&self.data_dir).ok()?;
        let appender = tracing_appender::rolling::never(&self.data_dir, "strata.log");
        let (writer, guard) = tracing_appender::non_blocking(appender);
        let filter = tracing_subscriber::EnvFilter::try_from_env("STRATA_LOG")
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(writer)
            .with_ansi(false)
            .try_init()
            .ok()?;
        Some(guard)
    }
}
