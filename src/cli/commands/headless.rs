use std::process::ExitCode;
use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr, eyre};
use ratatui::layout::Rect;

use crate::cli::args::HeadlessArgs;
use crate::cli::context::Context;
use crate::cli::explorer::{Launch, build_app};
use strata::headless::{HeadlessError, Session, SessionOptions, parse};

pub fn run(ctx: &Context, args: &HeadlessArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.script)
        .wrap_err_with(|| format!("cannot read script {}", args.script.display()))?;
    let script = parse(&text).map_err(|e| eyre!("{}: {e}", args.script.display()))?;
    let (width, height) = args.size;
    let app = build_app(
        ctx,
        &Launch {
            seed_demo: args.demo,
            mask_volatile: args.mask,
            record_events: args.events.is_some(),
            leg_timeout: Some(Duration::from_millis(args.leg_timeout_ms)),
            follow: false,
        },
        Rect::new(0, 0, width, height),
    )?;
    let title = args
        .script
        .file_stem()
        .map(|s| format!("strata · {}", s.to_string_lossy()))
        .unwrap_or_else(|| "strata".into());
    let mut session = Session::new(
        app,
        width,
        height,
        SessionOptions {
            out_dir: args.out.clone(),
            events: args.events.clone(),
            title,
            idle_timeout: Duration::from_secs(args.idle_timeout),
        },
    )?;
    match session.run(&script) {
        Ok(()) => {
            for p in session.snapshots() {
                eprintln!("wrote {}", p.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ (HeadlessError::Missing { .. } | HeadlessError::Present { .. })) => {
            eprintln!("{}: {e}", args.script.display());
            Ok(ExitCode::FAILURE)
        }
        Err(e) => Err(eyre!("{}: {e}", args.script.display())),
    }
}
