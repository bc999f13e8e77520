//! `strata completions SHELL` and `strata man`: shell integration generated from the clap
//! definitions in `args.rs` (clap_complete, clap_mangen), so it names exactly the commands
//! and flags `--help` does.

use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;
use color_eyre::eyre::{Result, WrapErr};

use crate::cli::args::{Cli, ShellCommand};

pub fn run(command: &ShellCommand) -> Result<ExitCode> {
    let mut cli = Cli::command();
    match command {
        ShellCommand::Completions { shell } => {
            let mut out = std::io::stdout().lock();
            clap_complete::generate(*shell, &mut cli, "strata", &mut out);
            out.flush()?;
        }
        ShellCommand::Man { dir: None } => {
            let mut out = std::io::stdout().lock();
            clap_mangen::Man::new(cli).render(&mut out)?;
            out.flush()?;
        }
        ShellCommand::Man { dir: Some(dir) } => {
            std::fs::create_dir_all(dir)
                .wrap_err_with(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cli, dir)
                .wrap_err_with(|| format!("cannot write the man pages into {}", dir.display()))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
