use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use strata::model::{EntityKey, Timestamp};

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

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Ingest incident records (NDJSON or a JSON array); each file is one atomic batch
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
    /// The SUPERSEDES chain backwards and forwards
    Lineage(LineageArgs),
    /// Counts of episodes, entities, edges by type, invalidations and supersessions
    Stats(JsonFlag),
    /// Verify every index, reference and counter of the store
    Check(JsonFlag),
    /// Benchmarks with JSON output
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Write N synthetic incident records as NDJSON to stdout
    Synthesize {
        #[arg(long, default_value_t = 1000)]
        episodes: usize,
        #[arg(long, default_value_t = 0)]
        start: usize,
    },
}

#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct IngestArgs {
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
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
