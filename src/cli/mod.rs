//! The command line: argument parsing, one file per command, text and JSON output.

mod args;
mod bench;
mod commands;
mod context;
mod explorer;
pub(crate) mod output;

use std::process::ExitCode;

use color_eyre::eyre::Result;

pub use args::Cli;
use args::Command;
use context::Context;

pub fn run(cli: Cli) -> Result<ExitCode> {
    if let Some(Command::Shell(shell)) = &cli.command {
        // Read from the clap definitions alone: no config, store or log is opened.
        return commands::shell::run(shell);
    }
    let default_data_dir = cli.data.is_none();
    let mut ctx = Context::new(
        cli.data,
        cli.now,
        cli.config,
        cli.embedder,
        (cli.store, cli.vectors),
    )?;
    ctx.allow_future_now = cli.allow_future_now;
    ctx.by = cli.by;
    if let Some(mode) = cli.recall_mode {
        ctx.recall_mode = mode;
    }
    ctx.default_data_dir = default_data_dir;
    let extra: Vec<(String, String)> = ctx
        .config
        .redact
        .extra
        .iter()
        .map(|p| (p.name.clone(), p.pattern.clone()))
        .collect();
    strata::redact::configure(&extra)
        .map_err(|e| color_eyre::eyre::eyre!("config [redact]: {e}"))?;
    let _log_guards = ctx.init_logging().map_err(|e| {
        color_eyre::eyre::eyre!("[telemetry] otlp_endpoint / STRATA_OTLP_ENDPOINT: {e}")
    })?;
    match cli.command {
        None => commands::launch::run(&ctx, cli.demo),
        Some(Command::Ingest(a)) => commands::ingest::run(&ctx, &a),
        Some(Command::Import(c)) => commands::import::run(&ctx, &c),
        Some(Command::Demo(a)) => commands::demo::run(&ctx, a.json),
        Some(Command::Timeline(a)) => commands::timeline::run(&ctx, &a),
        Some(Command::Facts(a)) => commands::facts::run(&ctx, &a),
        Some(Command::Lineage(a)) => commands::lineage::run(&ctx, &a),
        Some(Command::Correct(a)) => commands::correct::run(&ctx, &a),
        Some(Command::Review(a)) => commands::review::run(&ctx, &a),
        Some(Command::Changes(a)) => commands::changes::run(&ctx, &a),
        Some(Command::Lesson(a)) => commands::lesson::run(&ctx, &a),
        Some(Command::Skill(c)) => commands::skills::add(&ctx, &c),
        Some(Command::Code(a)) => commands::code::run(&ctx, &a),
        Some(Command::Skills(a)) => commands::skills::list(&ctx, &a),
        Some(Command::Stats(a)) => commands::stats::run(&ctx, a.json),
        Some(Command::Check(a)) => commands::check::run(&ctx, a.json),
        Some(Command::Warm(a)) => commands::warm::run(&ctx, a.json),
        Some(Command::Metrics) => commands::metrics::run(&ctx),
        Some(Command::Export(a)) => commands::transfer::export(&ctx, &a),
        Some(Command::Restore(a)) => commands::transfer::restore(&ctx, &a),
        Some(Command::Backup(a)) => commands::transfer::backup(&ctx, &a),
        Some(Command::Recall(a)) => commands::recall::run(&ctx, &a),
        Some(Command::Eval(a)) => commands::eval::run(&ctx, &a),
        Some(Command::Index(a)) => commands::index::run(&ctx, a.json),
        Some(Command::Bench(b)) => bench::run(&ctx, &b),
        Some(Command::Headless(a)) => commands::headless::run(&ctx, &a),
        Some(Command::Mcp(a)) => commands::mcp::run(&ctx, &a),
        Some(Command::Synthesize { episodes, start }) => commands::synthesize::run(start, episodes),
        Some(Command::Shell(shell)) => commands::shell::run(&shell),
    }
}
