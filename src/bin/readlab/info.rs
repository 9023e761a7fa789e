//! `readlab info`: probe a target and print its capability table (or JSON).

use crate::args::{InfoArgs, OutputArg};
use std::process::ExitCode;

pub fn run(a: &InfoArgs) -> anyhow::Result<ExitCode> {
    let report = readlab::probe::probe(&a.target)?;
    match a.output {
        OutputArg::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        OutputArg::Table => print!("{}", readlab::probe::render(&report)),
    }
    Ok(ExitCode::SUCCESS)
}
