use std::io::{BufWriter, Write};
use std::process::ExitCode;

use color_eyre::eyre::Result;

pub fn run(start: usize, episodes: usize) -> Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for i in start..start + episodes {
        serde_json::to_writer(&mut out, &strata::synthetic::record(i))?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
