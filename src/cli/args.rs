use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use strata::embed::{EmbedderKind, MiniLmRuntime};
use strata::model::{EntityKey, Timestamp};
use strata::recall::{FusionPolicy, LegSet, LegWeights, RecallMode, StalePolicy};

#[derive(Debug, Parser)]
#[command(
    name = "strata",
    version,
    about = "Explore and manage the bi-temporal memory of an incident-response agent"
)]
pub struct Cli {
    /// Data directory of the embedded store [default: the platform data dir, e.g. ~/.local/share/strata]
    #[arg(long, global = true, env = "STRATA_DATA", value_name = "DIR")]
    pub data: Option<PathBuf>,

    /// Replace the clock for every command (ingest stamps ingested_at from it)
    #[arg(long, global = true, env = "STRATA_NOW", value_name = "RFC3339", value_parser = parse_time)]
    pub now: Option<Timestamp>,

    /// Let a write stamp a knowledge time more than 5 minutes ahead of this machine's clock
    /// (tests and replays); without it such a write is refused
    #[arg(long, global = true, env = "STRATA_ALLOW_FUTURE_NOW")]
    pub allow_future_now: bool,

    /// Config file [default: ~/.config/strata/config.toml]
    #[arg(long, global = true, env = "STRATA_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// The memory graph on a FalkorDB server, falkordb://[USER:PASSWORD@]HOST:PORT/GRAPH
    /// (falkordbs:// over TLS; the password may come from STRATA_FALKORDB_PASSWORD instead)
    /// [default: the embedded store in --data]
    #[arg(
        long,
        global = true,
        env = "STRATA_STORE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub store: Option<String>,

    /// Where the semantic leg's vectors live: qdrant://HOST:PORT (qdrants:// over TLS, the API
    /// key from STRATA_QDRANT_API_KEY), or falkordb for the graph's own vector index [default: a
    /// local index in --data]
    #[arg(long, global = true, env = "STRATA_VECTORS", value_name = "URL")]
    pub vectors: Option<String>,

    /// active hands recall's results back; shadow runs and records every recall (MCP and
    /// `strata recall`) but hands back only how many it withheld and each leg's status
    /// [default: the config's [recall] mode, else active]
    #[arg(long, global = true, env = "STRATA_RECALL_MODE", value_enum)]
    pub recall_mode: Option<RecallMode>,

    /// Who the explorer's corrections (retract, confirm, correct) are by
    /// [default: the login name, from USER]
    #[arg(long, global = true, env = "STRATA_BY", value_name = "NAME")]
    pub by: Option<String>,

    #[command(flatten)]
    pub embedder: EmbedderArgs,

    /// Open the explorer on the demo memory: seed it first if the store is empty (only the first
    /// launch on the default data directory does this unasked)
    #[arg(long)]
    pub demo: bool,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Which embedder recall and indexing use (flag > environment > config file > default).
#[derive(Debug, Args)]
pub struct EmbedderArgs {
    /// minilm (local all-MiniLM-L6-v2, the default), openai (any /v1/embeddings server) or hash (model-free, for tests)
    #[arg(long, global = true, env = "STRATA_EMBEDDER", value_enum)]
    pub embedder: Option<EmbedderKind>,
    /// Directory holding the MiniLM files [default: installed by scripts/install-model]
    #[arg(long, global = true, env = "STRATA_MINILM_DIR", value_name = "DIR")]
    pub minilm_dir: Option<PathBuf>,
    /// Which runtime runs MiniLM: auto (ONNX Runtime, int8, where installed; else candle), onnx or candle (fp32)
    #[arg(long, global = true, env = "STRATA_MINILM_RUNTIME", value_enum)]
    pub minilm_runtime: Option<MiniLmRuntime>,
    /// OpenAI-compatible server root, e.g. http://127.0.0.1:11434
    #[arg(long, global = true, env = "STRATA_OPENAI_URL", value_name = "URL")]
    pub openai_url: Option<String>,
    #[arg(long, global = true, env = "STRATA_OPENAI_MODEL", value_name = "MODEL")]
    pub openai_model: Option<String>,
    #[arg(long, global = true, env = "STRATA_OPENAI_DIMENSION", value_name = "N")]
    pub openai_dimension: Option<usize>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Ingest incident records (NDJSON or a JSON array); each file is one atomic batch (on FalkorDB, one over 10,000 records goes in chunks that running it again completes)
    Ingest(IngestArgs),
    /// Import records from another format
    #[command(subcommand)]
    Import(ImportCommand),
    /// Seed the deterministic demo memory (about 300 incidents over two years)
    Demo(JsonFlag),
    /// Episodes by concluded_at, newest first
    Timeline(TimelineArgs),
    /// An episode's fact edges known at K, each with its state at V
    Facts(FactsArgs),
    /// An episode's Reflexion lesson at (V, K): current, or superseded and by what
    Lesson(FactsArgs),
    /// Skills (runbooks): add new versions from a file
    #[command(subcommand)]
    Skill(SkillCommand),
    /// The newest version of each skill known at K, or every version
    Skills(SkillsArgs),
    /// The code↔graph join: a service's code units, the unit behind a point id, or the
    /// code units of the services an episode implicated
    Code(CodeArgs),
    /// The SUPERSEDES chain backwards and forwards
    Lineage(LineageArgs),
    /// Record corrections (NDJSON, one a line: retract or confirm a supersession, correct an
    /// episode's text or a fact's valid interval) as one atomic batch at the current knowledge time
    Correct(CorrectArgs),
    /// Supersessions in knowledge-time order with their evidence side by side and their verdict
    Review(ReviewArgs),
    /// What memory learned between two knowledge times: episodes, invalidations, supersessions,
    /// corrections and verdicts, in knowledge-time order
    Changes(ChangesArgs),
    /// Counts of episodes, entities, edges by type, invalidations and supersessions
    Stats(JsonFlag),
    /// Verify every index, reference and counter of the store
    Check(JsonFlag),
    /// Whether the memory looks ready to go from shadow to active: the warm signal in words,
    /// and how each leg has answered
    Warm(JsonFlag),
    /// The recall counters, the warm signal, episodes, index lag and writer-lock waits as
    /// Prometheus text, once (for a node-exporter textfile collector)
    Metrics,
    /// Write every record of the store, every time as stored, as versioned NDJSON (header,
    /// records, trailer with SHA-256); the same store exports the same bytes on either backend
    Export(ExportArgs),
    /// Restore an export into an empty store (either backend), keeping every time as exported;
    /// a cut, reordered, changed or newer file is refused naming the line, and writes nothing
    Restore(RestoreArgs),
    /// Copy the embedded store, compacted, into a new data directory while others read and
    /// write (one consistent snapshot), with a manifest
    Backup(BackupArgs),
    /// Recall related past incidents: three legs fused by RRF, with per-leg ranks
    Recall(RecallArgs),
    /// Replay labelled incidents through recall and report AC@1, AC@3, MRR, nDCG@10
    Eval(EvalArgs),
    /// Bring the BM25 and vector indexes up to date with the store
    Index(JsonFlag),
    /// Benchmarks with JSON output
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Run the explorer from a script without a terminal, writing text and SVG frames
    Headless(HeadlessArgs),
    /// Serve the memory to an agent over the Model Context Protocol (stdio, or HTTP on loopback)
    Mcp(McpArgs),
    /// Write N synthetic incident records as NDJSON to stdout
    Synthesize {
        #[arg(long, default_value_t = 1000)]
        episodes: usize,
        #[arg(long, default_value_t = 0)]
        start: usize,
    },
    #[command(flatten)]
    Shell(ShellCommand),
}

/// Shell integration, generated from these very definitions so that help, completions and
/// the man page never disagree.
#[derive(Debug, Subcommand)]
pub enum ShellCommand {
    /// Print a completion script for SHELL (the README says where to put it)
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the strata(1) man page, or write it and one page per subcommand into --dir
    Man {
        /// Write strata.1, strata-ingest.1, strata-bench-store.1… into DIR instead
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).multiple(false)))]
pub struct CodeArgs {
    /// Code units owned by the service (the ref of a service: entity)
    #[arg(long, value_name = "NAME", group = "what")]
    pub service: Option<String>,
    /// The code unit whose embedding_ref (vector point id) this is
    #[arg(long = "ref", value_name = "UUID", group = "what")]
    pub embedding_ref: Option<String>,
    /// Code units of the services the episode implicated, by facts valid at (V, K)
    #[arg(long, value_name = "FP", group = "what")]
    pub episode: Option<String>,
    /// Valid time V for --episode [default: now]
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub valid_at: Option<Timestamp>,
    /// Knowledge time K for --episode [default: now]
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub known_at: Option<Timestamp>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// Validate FILE (NDJSON or a JSON array of skills) and write each changed skill as its
    /// next version; a file with any error writes nothing
    Add {
        file: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Debug, Args)]
pub struct SkillsArgs {
    /// Only skills triggered by this entity (TYPE:REF)
    #[arg(long, value_name = "TYPE:REF")]
    pub entity: Option<EntityKey>,
    /// Every version, superseded ones included
    #[arg(long)]
    pub all: bool,
    /// Knowledge time K [default: now]
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub known_at: Option<Timestamp>,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Args)]
pub struct HeadlessArgs {
    /// The script: one command per line (see docs/explorer.md, "Headless mode")
    #[arg(long, value_name = "FILE")]
    pub script: PathBuf,
    /// Screen size
    #[arg(long, default_value = "120x40", value_name = "COLSxROWS", value_parser = parse_size)]
    pub size: (u16, u16),
    /// Where Snapshot writes NAME.txt and NAME.svg
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub out: PathBuf,
    /// Write a JSON-lines log of every action, background reply and frame hash
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// Show latencies as ~ms and hide the store path, so frames are identical between runs
    #[arg(long)]
    pub mask: bool,
    /// Seed the demo memory first if the store is empty
    #[arg(long)]
    pub demo: bool,
    /// Per-leg recall timeout; generous by default so a slow machine cannot change a frame
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    pub leg_timeout_ms: u64,
    /// How long WaitIdle waits for background work before failing
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    pub idle_timeout: u64,
}

fn parse_size(text: &str) -> Result<(u16, u16), String> {
    let bad = || format!("expected COLSxROWS such as 120x40, got {text:?}");
    let (c, r) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let c: u16 = c.trim().parse().map_err(|_| bad())?;
    let r: u16 = r.trim().parse().map_err(|_| bad())?;
    if !(20..=1000).contains(&c) || !(8..=1000).contains(&r) {
        return Err(format!("{text:?}: at least 20x8 and at most 1000x1000"));
    }
    Ok((c, r))
}

#[derive(Debug, Args)]
pub struct RecallArgs {
    /// The incident context: what is happening now
    pub text: String,
    /// An implicated entity (TYPE:REF); repeatable. They alone seed the graph leg; with none,
    /// the known entity refs the text names seed it
    #[arg(long = "entity", value_name = "TYPE:REF")]
    pub entities: Vec<EntityKey>,
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// Valid time V [default: now]
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub valid_at: Option<Timestamp>,
    /// Knowledge time K: answer as memory would have then [default: now]
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub known_at: Option<Timestamp>,
    /// Legs to run, comma-separated
    #[arg(long, default_value = "semantic,bm25,graph")]
    pub legs: LegSet,
    #[arg(long, value_enum, default_value_t = FusionPolicy::default())]
    pub fusion: FusionPolicy,
    /// Results a later episode superseded: keep (rank and say nothing), mark (rank and say what
    /// superseded them) or follow (mark, and place the fix that holds now right after)
    /// [default: the config's [recall] stale, else mark]
    #[arg(long, value_enum)]
    pub stale: Option<StalePolicy>,
    /// Print only the brief: the top results in a line each, for an agent or a chat
    #[arg(long, conflicts_with = "json")]
    pub brief: bool,
    /// Leg weights for --fusion weighted and adaptive (the default, which scales them by each leg's confidence), e.g. semantic=1,bm25=0.5,graph=1 [default: the config's [recall.weights], else those]
    #[arg(long, value_name = "LEG=W,...")]
    pub weights: Option<LegWeights>,
    /// Per-leg timeout
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// Candidates each leg returns
    #[arg(long, value_name = "N")]
    pub leg_limit: Option<usize>,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// A labelled set to replay against the current store (JSON array; see docs/recall.md).
    /// Without it: the demo set on a fresh demo memory, and the postmortem set.
    #[arg(long, value_name = "FILE", conflicts_with = "dataset")]
    pub labels: Option<PathBuf>,
    /// A labelled dataset directory (`records.ndjson` of ingest records, `labels.json`), replayed
    /// in a scratch store with each record known from its concluded_at; repeatable. Without it
    /// (and without --labels): the demo set and the postmortem set.
    #[arg(long, value_name = "DIR")]
    pub dataset: Vec<PathBuf>,
    /// The public postmortems for the second labelled set
    #[arg(long, value_name = "DIR", env = "STRATA_POSTMORTEMS")]
    pub postmortems: Option<PathBuf>,
    /// Replay the synthetic sanity case (beside any --dataset or --labels, instead of the demo and
    /// postmortem sets): N synthetic incidents (`strata synthesize`) and 40 queries, each a
    /// shuffled two-thirds of one incident's summary, expecting that incident
    #[arg(long, value_name = "N")]
    pub synthetic: Option<usize>,
    /// Per query, each leg's rank of the first expected episode, its confidence and the fused
    /// rank under each policy (with --json: each leg's whole list and scores too)
    #[arg(long)]
    pub legs_report: bool,
    /// Exit non-zero when any AC@1 falls more than 0.02 below this baseline (an earlier --json output)
    #[arg(long, value_name = "BASELINE.json")]
    pub gate: Option<PathBuf>,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (port 0 picks one); off
    /// loopback only with bearer tokens (--token-file or STRATA_MCP_TOKEN)
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// Require a bearer token on every HTTP request: one `TOKEN ro|rw NAME` a line (`ro`:
    /// read-only, no record_incident); refused when other users may read it
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,
    /// Serve HTTPS with this PEM certificate chain (leaf first)
    #[arg(long, value_name = "PEM", requires_all = ["http", "tls_key"])]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Write to this file (it appears whole or not at all) [default: stdout]
    #[arg(long, value_name = "FILE")]
    pub to: Option<PathBuf>,
    /// Memory as it stood at this knowledge time: nothing learned after it
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub known_at: Option<Timestamp>,
    /// Carry each episode's stored vector (local vector index), so that a restore with the
    /// same embedder does not embed again
    #[arg(long)]
    pub with_vectors: bool,
    /// Print a JSON summary (counts, SHA-256, bytes) on stdout; needs --to
    #[arg(long, requires = "to")]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Add to a store that is not empty: an identical record changes nothing, a conflicting
    /// one (or one known before the store's latest knowledge time) refuses the file
    #[arg(long)]
    pub merge: bool,
    /// Skip rebuilding the recall indexes (they catch up on the next recall or `strata index`)
    #[arg(long)]
    pub no_index: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// A new or empty directory; it becomes a data directory (`strata --data DIR`)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Args)]
pub struct IngestArgs {
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Skip updating the recall indexes (they catch up on the next recall or `strata index`)
    #[arg(long)]
    pub no_index: bool,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Structured public cloud postmortems (a directory of JSON files)
    Postmortems {
        dir: PathBuf,
        #[command(flatten)]
        out: JsonFlag,
    },
}

#[derive(Debug, Args)]
pub struct TimelineArgs {
    /// Only episodes with a fact about this entity (TYPE:REF)
    #[arg(long, value_name = "TYPE:REF")]
    pub entity: Option<EntityKey>,
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// Only episodes known at this knowledge time
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub known_at: Option<Timestamp>,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Args)]
pub struct FactsArgs {
    pub fingerprint: String,
    /// Valid time V [default: now]
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub valid_at: Option<Timestamp>,
    /// Knowledge time K [default: now]
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub known_at: Option<Timestamp>,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Args)]
pub struct CorrectArgs {
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Who is correcting: a person reviewing (human), an agent, or an import
    #[arg(long, value_enum, default_value_t = OriginArg::Human)]
    pub origin: OriginArg,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum OriginArg {
    Human,
    Agent,
    Import,
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// Only supersessions no reviewer has confirmed or retracted
    #[arg(long)]
    pub unreviewed: bool,
    /// Knowledge time K [default: now]
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub known_at: Option<Timestamp>,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Args)]
pub struct ChangesArgs {
    /// From this knowledge time (inclusive)
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub since: Timestamp,
    /// Up to this knowledge time (inclusive) [default: now]
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub until: Option<Timestamp>,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Args)]
pub struct LineageArgs {
    pub fingerprint: String,
    /// Knowledge time K [default: now]
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub known_at: Option<Timestamp>,
    #[command(flatten)]
    pub out: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// `recall` over the MCP server's stdio against the same recall in-process (JSON)
    Mcp {
        #[arg(long, default_value_t = 10_000)]
        episodes: usize,
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Load instead: this many clients, each an MCP session over streamable HTTP, recall in
        /// a loop against one `strata mcp --http` child on the memory --store/--vectors name
        #[arg(long, requires = "clients")]
        http: bool,
        /// With --http: concurrent clients
        #[arg(long, requires = "http")]
        clients: Option<usize>,
        /// With --http: how long the load runs
        #[arg(long, default_value_t = 60, value_name = "SECONDS")]
        seconds: u64,
        /// With --http: a shell command run half way through (e.g. one that kills a Qdrant peer)
        #[arg(long, value_name = "COMMAND", requires = "http")]
        halfway: Option<String>,
        /// Where to build the store and the indexes [default: a temporary directory]
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Per-leg and fused recall latency over generated memories (JSON)
    Recall {
        #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 100_000])]
        episodes: Vec<usize>,
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Legs to run, comma-separated (one leg alone shows its cost without the others')
        #[arg(long, default_value = "semantic,bm25,graph")]
        legs: LegSet,
        /// Then correct this percentage of the episodes (text and a fact's interval) and
        /// time the same recalls again
        #[arg(long, value_name = "PERCENT")]
        corrected: Option<u32>,
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Explorer frame render time and time to first frame over generated memories (JSON)
    Explorer {
        #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 100_000])]
        episodes: Vec<usize>,
        /// Frames to render at each size
        #[arg(long, default_value_t = 600)]
        frames: usize,
        #[arg(long, default_value = "200x60", value_parser = parse_size)]
        size: (u16, u16),
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// How soon an open explorer shows an episode another process ingests, and how soon its
    /// recall finds it (JSON). On the embedded store, or with --store falkordb://HOST:PORT/GRAPH
    /// in a scratch graph GRAPH_bench_N_PID, deleted afterwards
    Live {
        #[arg(long, value_delimiter = ',', default_values_t = [10_000usize])]
        episodes: Vec<usize>,
        /// Episodes written, one `strata ingest` process each
        #[arg(long, default_value_t = 20)]
        writes: usize,
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Embedder latency for one query and throughput for a batch (JSON)
    Embed {
        #[arg(long, default_value_t = 200)]
        queries: usize,
        #[arg(long, default_value_t = 512)]
        batch: usize,
    },
    /// FalkorDB against the embedded store on the same data: batched ingest throughput and
    /// per-leg and fused recall latency (JSON). Needs --store falkordb://HOST:PORT/GRAPH; writes
    /// into a scratch graph GRAPH_bench_N_PID and deletes it afterwards
    Server {
        /// Comma-separated store sizes
        #[arg(long, value_delimiter = ',', default_values_t = [10_000usize])]
        episodes: Vec<usize>,
        /// Recalls timed on each backend
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Records per batch (one write each)
        #[arg(long, default_value_t = 1000)]
        batch: usize,
        /// Where to build the embedded store and the indexes [default: a temporary directory]
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Skip FalkorDB's own vector index (filling it takes most of the run at 1M)
        #[arg(long)]
        no_graph_vectors: bool,
    },
    /// A `strata ingest` process writing while this one runs the explorer's reads and
    /// recalls on the same embedded store, each against its solo baseline, and the time from a
    /// commit to a live explorer seeing it (JSON)
    Concurrent {
        /// Comma-separated store sizes
        #[arg(long, value_delimiter = ',', default_values_t = [100_000usize])]
        episodes: Vec<usize>,
        /// Episodes the writer writes (in files of 1,000), alone and then beside the readers
        #[arg(long, default_value_t = 10_000)]
        writes: usize,
        /// A reader round (a selection's reads and a recall) starts at most this often;
        /// 0 runs them back to back
        #[arg(long, default_value_t = 50)]
        reader_interval_ms: u64,
        /// Where to build the store [default: a temporary directory]
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// One big NDJSON file (synthetic records) ingested by a `strata ingest` process: its
    /// time and peak RSS against the file's size (JSON)
    BigFile {
        /// Size of the file to write, in MiB
        #[arg(long, default_value_t = 1024)]
        mib: u64,
        /// Where to write the file and the store [default: a temporary directory]
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// `strata export`, `strata restore --no-index` into an empty store and `strata backup`
    /// of a synthetic store, each a process: throughput and peak RSS (JSON)
    Transfer {
        /// Comma-separated store sizes
        #[arg(long, value_delimiter = ',', default_values_t = [100_000usize])]
        episodes: Vec<usize>,
        /// Where to build the stores and the file [default: a temporary directory]
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Fills the embedded store of --data with synthetic episodes, as the other benches do
    /// (they run it as a child process, so their peak memory is their own)
    #[command(hide = true)]
    Fill {
        #[arg(long)]
        episodes: usize,
    },
    /// Ingest throughput and open time of the embedded store at each size (JSON)
    Store {
        /// Comma-separated store sizes
        #[arg(long, value_delimiter = ',', default_values_t = [10_000usize, 100_000])]
        episodes: Vec<usize>,
        /// Records per batch (one transaction each)
        #[arg(long, default_value_t = 10_000)]
        batch: usize,
        /// Where to build the stores [default: a temporary directory]
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

fn parse_time(s: &str) -> Result<Timestamp, String> {
    Timestamp::parse(s).map_err(|e| e.to_string())
}
