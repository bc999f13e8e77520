use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use color_eyre::eyre::{Result, eyre};
use tracing_appender::non_blocking::WorkerGuard;

use super::args::EmbedderArgs;
use strata::config::{self, Config};
use strata::embed::{self, Embedder, EmbedderConfig, EmbedderKind};
use strata::index::VectorLocation;
use strata::model::Timestamp;
use strata::recall::{RecallEngine, RecallMode, RecallStack, StackOptions};
use strata::store::{KnowledgeTime, MemoryStore, StoreLocation};
use strata::telemetry::otlp::{OtlpError, OtlpExport};
use strata::telemetry::{self, CounterReader, Counters, Recorder, WarmSignal};

/// What every command shares: where the data lives, what time it is, which embedder.
pub struct Context {
    pub data_dir: PathBuf,
    pub now: Timestamp,
    /// No `--now` was given: the clock is the wall clock.
    live_clock: bool,
    pub config: Config,
    pub embedder: EmbedderConfig,
    pub store: StoreLocation,
    pub vectors: VectorLocation,
    /// `--allow-future-now`: see [`Self::knowledge_time`].
    pub allow_future_now: bool,
    /// `--by`: who the explorer's corrections are by.
    pub by: Option<String>,
    /// Neither `--data` nor `STRATA_DATA` was given: the data lives in the platform's data dir.
    pub default_data_dir: bool,
    /// `--recall-mode` / `STRATA_RECALL_MODE` > `[recall] mode` > active.
    pub recall_mode: RecallMode,
}

/// How far ahead of the wall clock a write's knowledge time may be.
const FUTURE_SLACK_MS: i64 = 5 * 60 * 1000;

impl Context {
    pub fn new(
        data: Option<PathBuf>,
        now: Option<Timestamp>,
        config_path: Option<PathBuf>,
        args: EmbedderArgs,
        locations: (Option<String>, Option<String>),
    ) -> Result<Self> {
        let data_dir = match data {
            Some(d) => d,
            None => directories::ProjectDirs::from("", "", "strata")
                .map(|p| p.data_dir().to_path_buf())
                .ok_or_else(|| eyre!("no home directory to put the data in; pass --data DIR"))?,
        };
        let config = match (&config_path, config::default_path()) {
            (Some(p), _) => Config::load(p, true)?,
            (None, Some(p)) => Config::load(&p, false)?,
            (None, None) => Config::default(),
        };
        let e = &config.embedder;
        let embedder = EmbedderConfig {
            kind: args.embedder.or(e.kind).unwrap_or(EmbedderKind::Minilm),
            minilm_dir: args
                .minilm_dir
                .or_else(|| e.minilm_dir.clone())
                .unwrap_or_else(|| embed::minilm_dir(Some(&data_dir))),
            minilm_runtime: args.minilm_runtime.or(e.minilm_runtime).unwrap_or_default(),
            openai_url: args
                .openai_url
                .or_else(|| e.openai_url.clone())
                .unwrap_or_else(|| "http://127.0.0.1:11434".into()),
            openai_model: args
                .openai_model
                .or_else(|| e.openai_model.clone())
                .unwrap_or_else(|| "bge-m3".into()),
            openai_dimension: args.openai_dimension.or(e.openai_dimension).unwrap_or(1024),
            openai_api_key: std::env::var("STRATA_OPENAI_API_KEY")
                .ok()
                .or_else(|| e.openai_api_key.clone()),
        };
        let (store_url, vectors_url) = locations;
        let store = StoreLocation::parse(
            store_url.or_else(|| config.store.url.clone()).as_deref(),
            &data_dir,
        )?;
        let mut vectors = VectorLocation::parse(
            vectors_url
                .or_else(|| config.store.vectors.clone())
                .as_deref(),
            &store,
        )?;
        if let VectorLocation::Qdrant(target) = &mut vectors {
            target.layout = config.qdrant;
        }
        let recall_mode = config.recall.mode.unwrap_or_default();
        Ok(Context {
            recall_mode,
            store,
            vectors,
            data_dir,
            live_clock: now.is_none(),
            now: now.unwrap_or_else(Timestamp::now),
            config,
            embedder,
            allow_future_now: false,
            by: None,
            default_data_dir: false,
        })
    }

    /// The knowledge time a write records: the clock when the write commits (inside the
    /// writer's turn), or the `--now` given. Knowledge time only moves forward, so one write
    /// stamped in the future would make every writer with a true clock fail until then: a
    /// `--now` more than 5 minutes ahead of this machine's clock is refused unless
    /// `--allow-future-now` says it is meant (tests, replays).
    pub fn knowledge_time(&self) -> Result<KnowledgeTime> {
        if self.live_clock {
            return Ok(KnowledgeTime::AtCommit);
        }
        let wall = Timestamp::now();
        if self.now.millis() > wall.millis() + FUTURE_SLACK_MS && !self.allow_future_now {
            return Err(eyre!(
                "refusing to write with knowledge time {}: it is {} ahead of this machine's \
                 clock ({}), and knowledge time only moves forward, so every later write with a \
                 true clock would be refused until then. Check --now / STRATA_NOW and the clock, \
                 or pass --allow-future-now for a test or a replay",
                self.now.to_rfc3339(),
                humanize_ms(self.now.millis() - wall.millis()),
                wall.to_rfc3339()
            ));
        }
        Ok(KnowledgeTime::At(self.now))
    }

    /// Who corrections made here are by: `--by` / `STRATA_BY`, else the login name.
    pub fn reviewer(&self) -> Option<String> {
        let login = || {
            ["USER", "LOGNAME", "USERNAME"]
                .into_iter()
                .find_map(|v| std::env::var(v).ok())
        };
        self.by
            .clone()
            .or_else(login)
            .map(|b| b.trim().to_string())
            .filter(|b| !b.is_empty())
    }

    pub fn now_is_live(&self) -> bool {
        self.live_clock
    }

    /// Opens the store; a server that would lose what it acknowledges gets a warning on
    /// stderr, once. A writer that waits for another's turn from now on is counted.
    pub fn open_store(&self) -> Result<Arc<dyn MemoryStore>> {
        telemetry::count_writer_waits(self.telemetry_dir());
        let store = self.store.open()?;
        static WARNED: std::sync::Once = std::sync::Once::new();
        if let Some(warning) = store.durability_warning() {
            WARNED.call_once(|| crate::cli::output::say!("warning: {warning}"));
        }
        Ok(store)
    }

    /// The explorer seeds the demo memory unasked only here: the first launch on the default
    /// data directory, before any store exists in it. Anywhere else an empty store (a typo
    /// of a graph name, a freshly restarted server) stays empty and says how to fill it.
    pub fn first_launch(&self) -> bool {
        let StoreLocation::Embedded(dir) = &self.store else {
            return false;
        };
        self.default_data_dir
            && !dir.join(strata::store::embedded::STORE_DIR).exists()
            && !dir.join(strata::store::embedded::LEGACY_FILE).exists()
    }

    pub fn index_dir(&self) -> PathBuf {
        self.store.index_dir(&self.data_dir)
    }

    pub fn build_embedder(&self) -> Result<Arc<dyn Embedder>, embed::EmbedError> {
        embed::build(&self.embedder).map(Arc::from)
    }

    /// Where this store's recall counters live.
    pub fn telemetry_dir(&self) -> PathBuf {
        self.store.telemetry_dir(&self.data_dir)
    }

    /// Counts every recall of this process from now on; `None` (said in the log) where the
    /// counters cannot be written, e.g. a read-only data directory: recall answers anyway.
    pub fn recorder(&self) -> Option<Arc<Recorder>> {
        let started = Counters::open(&self.telemetry_dir())
            .map_err(|e| e.to_string())
            .and_then(|c| Recorder::start(c).map_err(|e| e.to_string()));
        match started {
            Ok(recorder) => Some(recorder),
            Err(e) => {
                tracing::warn!(error = %e, "recalls are not counted");
                None
            }
        }
    }

    /// This store's counters and warm signal, read as configured (`[recall] warm_window`,
    /// `warm_ready`).
    pub fn counter_reader(&self) -> CounterReader {
        CounterReader {
            dir: self.telemetry_dir(),
            window: self
                .config
                .recall
                .warm_window
                .unwrap_or(telemetry::DEFAULT_WINDOW),
            ready_at: self
                .config
                .recall
                .warm_ready
                .unwrap_or(telemetry::DEFAULT_READY_AT),
        }
    }

    /// Every recall counter and the warm signal; zeros when nothing was recorded yet.
    pub fn recall_counters(&self) -> Result<(telemetry::Snapshot, WarmSignal)> {
        Ok(self.counter_reader().read()?)
    }

    /// Opens recall over `store`, catching the indexes up with progress on stderr, and
    /// printing what the user should know.
    pub fn open_recall(&self, store: Arc<dyn MemoryStore>) -> RecallStack {
        let mut progress = progress_printer("indexing");
        let stack = RecallStack::open(
            store,
            self.build_embedder(),
            &StackOptions {
                index_dir: self.index_dir(),
                sync: true,
                vectors: self.vectors.clone(),
                runtime: None,
            },
            &mut progress,
        );
        for notice in &stack.notices {
            super::output::say!("note: {notice}");
        }
        let mut stack = stack;
        self.configure_recall(&mut stack.engine);
        stack
    }

    /// The config's `[recall]` settings (timeout, leg limit, weights, stale policy, brief
    /// length) and the recall mode on an engine.
    pub fn configure_recall(&self, engine: &mut RecallEngine) {
        engine.mode = self.recall_mode;
        if let Some(ms) = self.config.recall.timeout_ms {
            engine.timeout = std::time::Duration::from_millis(ms);
        }
        if let Some(n) = self.config.recall.leg_limit {
            engine.leg_limit = n;
        }
        if let Some(w) = self.config.recall.weights {
            engine.weights = w;
        }
        if let Some(stale) = self.config.recall.stale {
            engine.stale = stale;
        }
        if let Some(n) = self.config.recall.brief_chars {
            engine.brief_chars = n;
        }
    }

    /// Logs go to `strata.log` in the data directory, never to the terminal; spans also go to
    /// an OTLP collector when `STRATA_OTLP_ENDPOINT` or `[telemetry] otlp_endpoint` names one.
    pub fn init_logging(&self) -> Result<LogGuards, OtlpError> {
        use tracing_subscriber::Layer as _;
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;

        let endpoint = std::env::var("STRATA_OTLP_ENDPOINT")
            .ok()
            .filter(|e| !e.trim().is_empty())
            .or_else(|| self.config.telemetry.otlp_endpoint.clone());
        let (otlp_layer, otlp) = match endpoint {
            Some(endpoint) => {
                let (layer, export) = strata::telemetry::otlp::layer(&endpoint)?;
                (Some(layer), Some(export))
            }
            None => (None, None),
        };
        let (file_layer, file) = match self.log_writer() {
            Some((writer, guard)) => {
                let layer = tracing_subscriber::fmt::layer()
                    .with_writer(writer)
                    .with_ansi(false)
                    .with_filter(log_filter());
                (Some(layer), Some(guard))
            }
            None => (None, None),
        };
        // Another subscriber already set (a test harness) keeps its own.
        let _ = tracing_subscriber::registry()
            .with(file_layer)
            .with(otlp_layer)
            .try_init();
        Ok(LogGuards {
            _file: file,
            _otlp: otlp,
        })
    }

    /// `DATA/strata.log`, appended to; none on a data directory that cannot be written.
    fn log_writer(&self) -> Option<(tracing_appender::non_blocking::NonBlocking, WorkerGuard)> {
        std::fs::create_dir_all(&self.data_dir).ok()?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.data_dir.join("strata.log"))
            .ok()?;
        Some(tracing_appender::non_blocking(file))
    }
}

/// What the log keeps: `STRATA_LOG` (an env-filter), `info` when unset.
fn log_filter() -> tracing_subscriber::EnvFilter {
    let asked = std::env::var("STRATA_LOG").unwrap_or_default();
    let mut filter = tracing_subscriber::EnvFilter::try_new(&asked)
        .ok()
        .filter(|_| !asked.trim().is_empty())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new("info"));
    // The MCP SDK logs whole requests and answers (queries, summaries) at debug: held at
    // info unless STRATA_LOG names it, so bodies never reach the log by accident.
    if !asked.contains("rmcp")
        && let Ok(directive) = "rmcp=info".parse()
    {
        filter = filter.add_directive(directive);
    }
    filter
}

/// Kept for the life of the process: dropping them writes the last log lines and sends the
/// last spans.
#[derive(Debug)]
pub struct LogGuards {
    _file: Option<WorkerGuard>,
    _otlp: Option<OtlpExport>,
}

/// `label: done/total` on stderr: rewritten in place on a terminal, every 10% otherwise.
pub fn progress_printer(label: &'static str) -> impl FnMut(u64, u64) {
    let tty = std::io::stderr().is_terminal();
    let mut last_decile = None;
    move |done: u64, total: u64| {
        if tty {
            eprint!("\r{label}: {done}/{total}");
            if done >= total {
                eprintln!();
            }
        } else {
            let decile = (done * 10).checked_div(total).unwrap_or(10);
            if last_decile != Some(decile) {
                eprintln!("{label}: {done}/{total}");
                last_decile = Some(decile);
            }
        }
    }
}

fn humanize_ms(ms: i64) -> String {
    let minutes = ms / 60_000;
    match minutes {
        m if m < 120 => format!("{m} minutes"),
        m if m < 48 * 60 => format!("{} hours", m / 60),
        m => format!("{} days", m / (24 * 60)),
    }
}
