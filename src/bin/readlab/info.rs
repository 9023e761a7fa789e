//! `readlab info`: probe a target and print its capability table (or JSON).

use crate::args::InfoArgs;
use std::process::ExitCode;

pub fn run(a: &InfoArgs) -> anyhow::Result<ExitCode> {
    a.out_json.check(&[&a.target])?;
    let report = readlab::probe::probe(&a.target)?;
    a.out_json.emit(&serde_json::to_value(&report)?)?;
    if !a.out_json.is_json() {
        print!("{}", readlab::probe::render(&report));
    }
    Ok(ExitCode::SUCCESS)
}
