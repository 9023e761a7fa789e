//! `readlab info`: probe a target and print its capability table (or JSON); for an NBD URL,
//! what the server advertised.

use crate::args::{InfoArgs, OutputArg};
use std::process::ExitCode;

pub fn run(a: &InfoArgs) -> anyhow::Result<ExitCode> {
    if let Some(url) = a
        .target
        .to_str()
        .filter(|s| readlab::nbd::NbdUrl::is_url(s))
    {
        let adv = readlab::source::nbd::describe(url)?;
        match a.output {
            OutputArg::Json => println!("{}", serde_json::to_string_pretty(&adv)?),
            OutputArg::Table => print!("{}", readlab::source::nbd::render(url, &adv)),
        }
        return Ok(ExitCode::SUCCESS);
    }
    let report = readlab::probe::probe(&a.target)?;
    match a.output {
        OutputArg::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        OutputArg::Table => print!("{}", readlab::probe::render(&report)),
    }
    Ok(ExitCode::SUCCESS)
}
