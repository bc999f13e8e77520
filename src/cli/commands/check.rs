use std::io::Read;
use std::process::{Command, ExitCode, Stdio};

use color_eyre::eyre::Result;

use crate::cli::context::Context;
use crate::cli::output::{print_json, say};
use strata::store::{IntegrityReport, StoreLocation};

/// Set in the child that walks the store.
const WALKER: &str = "STRATA_CHECK_WALKER";

/// On the embedded store the walk runs in a child process: LMDB reads its pages through a map
/// and trusts them, so a page garbled in just the wrong place can end the reading process
/// however carefully each value is checked. The child walks; this process reports what it
/// found, or how it ended.
pub fn run(ctx: &Context, json: bool) -> Result<ExitCode> {
    let report = match &ctx.store {
        StoreLocation::Embedded(_) if std::env::var_os(WALKER).is_none() => walk_in_child()?,
        _ => ctx.open_store()?.check()?,
    };
    print(&report, json)?;
    Ok(if report.is_consistent() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn print(report: &IntegrityReport, json: bool) -> Result<()> {
    if json {
        print_json(report)?;
    } else {
        println!(
            "checked {} episodes, {} facts, {} supersessions: {}",
            report.checked_episodes,
            report.checked_facts,
            report.checked_supersessions,
            if report.is_consistent() {
                "consistent"
            } else {
                "PROBLEMS FOUND"
            }
        );
        for p in &report.problems {
            println!("  {}", crate::cli::output::safe(p));
        }
    }
    Ok(())
}

/// Runs this same command in a child that walks the store and prints its report as JSON;
/// a child that cannot finish is a problem of the report, in its own words.
fn walk_in_child() -> Result<IntegrityReport> {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if !args.iter().any(|a| a == "--json") {
        args.push("--json".into());
    }
    let mut child = Command::new(std::env::current_exe()?)
        .args(&args)
        .env(WALKER, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stderr_text = String::new();
    let stderr = child.stderr.take();
    let reading = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut e) = stderr {
            let _ = e.read_to_string(&mut text);
        }
        text
    });
    let mut out = Vec::new();
    if let Some(mut o) = child.stdout.take() {
        o.read_to_end(&mut out)?;
    }
    let status = child.wait()?;
    if let Ok(text) = reading.join() {
        stderr_text = text;
    }
    if let Ok(report) = serde_json::from_slice::<IntegrityReport>(&out) {
        return Ok(report);
    }
    // The walk ended without a report: what it said is why.
    let said: Vec<&str> = stderr_text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let ended = match std::os::unix::process::ExitStatusExt::signal(&status) {
        Some(signal) => format!("was ended by signal {signal}"),
        None => format!("stopped with status {}", status.code().unwrap_or(-1)),
    };
    let why = if said.is_empty() {
        "it said nothing".to_string()
    } else {
        said.join(" ")
    };
    if status.code() == Some(2) {
        // A usage error: it is the user's, not the store's.
        say!("{why}");
        std::process::exit(2);
    }
    let opened = why.contains("cannot open the store") || why.contains("store file");
    Ok(IntegrityReport {
        problems: vec![if opened {
            why
        } else {
            format!(
                "the walk of the store {ended} before it could report: {why}. The store's file \
                 is damaged where the walk went; restore it from a backup"
            )
        }],
        ..IntegrityReport::default()
    })
}
