use std::io::IsTerminal;
use std::process::ExitCode;

use color_eyre::eyre::{Result, bail};
use ratatui::layout::Rect;

use crate::cli::context::Context;
use crate::cli::explorer::{Launch, build_app};

/// `strata` with no subcommand: the explorer. The demo memory is seeded into an empty store
/// only with `--demo` or on the very first launch on the default data directory.
pub fn run(ctx: &Context, demo: bool) -> Result<ExitCode> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        bail!(
            "the explorer needs a terminal; for scripts use a subcommand (strata --help) or strata headless --script FILE"
        );
    }
    let app = build_app(
        ctx,
        &Launch {
            seed_demo: demo || ctx.first_launch(),
            mask_volatile: false,
            record_events: false,
            leg_timeout: None,
            follow: true,
        },
        Rect::new(0, 0, 80, 24),
    )?;
    strata::explorer::terminal::run(app)?;
    Ok(ExitCode::SUCCESS)
}
