//! `readlab info`: probe a target and print its capability table (or JSON); for an NBD URL,
//! what the server advertised.

use crate::args::JsonOut;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// File or block device to probe (one small read per interface).
    pub target: PathBuf,
    #[command(flatten)]
    pub out_json: JsonOut,
}

pub fn run(a: &InfoArgs) -> anyhow::Result<ExitCode> {
    if let Some(url) = a
        .target
        .to_str()
        .filter(|s| readlab::nbd::NbdUrl::is_url(s))
    {
        crate::progress::catch_signals();
        let (adv, prepared_id) = readlab::source::nbd::describe(url)?;
        let mut j = serde_json::to_value(&adv)?;
        j["prepared_id"] = serde_json::json!(prepared_id);
        a.out_json.emit(&j)?;
        if !a.out_json.is_json() {
            outp!(
                "{}",
                crate::out().fit(&readlab::source::nbd::render(url, &adv, prepared_id))
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    a.out_json.check(&[&a.target])?;
    let report = readlab::probe::probe(&a.target)?;
    a.out_json.emit(&serde_json::to_value(&report)?)?;
    if !a.out_json.is_json() {
        let term = crate::out();
        outp!("{}", term.fit(&readlab::probe::render(&report, term.width)));
    }
    Ok(ExitCode::SUCCESS)
}
