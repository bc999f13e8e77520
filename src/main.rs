//! The `strata` binary: the command line and (soon) the explorer.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    restore_default_sigpipe();
    if let Err(e) = color_eyre::install() {
        eprintln!("warning: cannot install error hooks: {e}");
    }
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(report) => {
            let shown = report.to_string();
            eprintln!("error: {}", strata::redact::redact(&shown));
            for cause in report.chain().skip(1) {
                let cause = cause.to_string();
                eprintln!("  caused by: {}", strata::redact::redact(&cause));
            }
            ExitCode::FAILURE
        }
    }
}

/// `strata timeline | head` should end quietly, as other Unix tools do, not panic.
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists; SIG_DFL is always valid.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
