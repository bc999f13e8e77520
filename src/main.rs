//! The `strata` binary: the command line and (soon) the explorer.

mod cli;

use std::process::ExitCode;

use clap::Parser as _;

/// glibc's allocator spends a fifth of an export freeing, on one thread, records another
/// thread allocated; mimalloc frees them to their own thread's heap.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    restore_default_sigpipe();
    // A damaged store or index file says so and exits, instead of ending by a signal.
    strata::lmdb::fatal::install();
    // Colours only where stderr is a terminal: a log or a pipe gets plain text.
    let hooks = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        color_eyre::config::HookBuilder::default()
    } else {
        color_eyre::config::HookBuilder::default().theme(color_eyre::config::Theme::new())
    };
    if let Err(e) = hooks.install() {
        eprintln!("warning: cannot install error hooks: {e}");
    }
    strata::caught::quiet_caught_panics();
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        // Help and version go to stdout as clap prints them.
        Err(e) if !e.use_stderr() => e.exit(),
        // A usage error quotes what was typed: through the terminal filter like any message.
        Err(e) => {
            eprint!("{}", cli::output::terminal(&e.render().to_string()));
            return ExitCode::from(2);
        }
    };
    match cli::run(args) {
        Ok(code) => code,
        Err(report) => {
            cli::output::say!("error: {report}");
            for cause in report.chain().skip(1) {
                cli::output::say!("  caused by: {cause}");
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
