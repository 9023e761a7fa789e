//! `readlab compare A B`: two sets of measurements configuration by configuration, on the terminal
//! (or as JSON), optionally written as an HTML page, Markdown or JSON.

use crate::args::JsonOut;
use clap::Args;
use readlab::compare::{self, render};
use readlab::error::Error;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The first (older, reference) measurements: a `readlab run --json` document (one run or an
    /// array), a study or tune directory, a results.jsonl, a report's JSON (`report --format
    /// json`) or fio JSON (--output-format=json or json+).
    pub a: PathBuf,
    /// The second measurements, compared with the first (the same kinds as A).
    pub b: PathBuf,
    /// Also write the comparison to this file (html, md or json by --format).
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// The format of --out: html (with bars of both sides), md or json.
    #[arg(long, default_value = "html")]
    pub format: String,
    #[command(flatten)]
    pub out_json: JsonOut,
}

pub fn run(a: &CompareArgs) -> anyhow::Result<ExitCode> {
    let format = a.format.trim().to_ascii_lowercase();
    if !["html", "md", "markdown", "json"].contains(&format.as_str()) {
        return Err(Error::InvalidArgument(format!(
            "unknown compare format '{}'; use html, md or json",
            a.format
        ))
        .into());
    }
    let inputs = [a.a.as_path(), a.b.as_path()];
    for p in a.out.iter().chain(&a.out_json.json) {
        readlab::outpath::check_file(p, &inputs, a.out_json.force)?;
    }
    let side = |p: &std::path::Path| -> anyhow::Result<Vec<readlab::report::Point>> {
        let r = readlab::report::load(&[p.to_path_buf()], &[])?;
        readlab::report::require_points(&r)?;
        for b in &r.banners {
            crate::progress::warn(&format!("{}: {}", p.display(), b.line()));
        }
        crate::term::notes(
            &r.notes,
            "`readlab report` of the same input lists them all",
        );
        Ok(r.points)
    };
    let c = compare::compare(&side(&a.a)?, &side(&a.b)?);
    let json = || {
        serde_json::to_string_pretty(&render::json(&c)).map(|mut s| {
            s.push('\n');
            s
        })
    };
    if let Some(out) = &a.out {
        let text = match format.as_str() {
            "html" => render::html(&c)?,
            "json" => json()?,
            _ => render::markdown(&c),
        };
        readlab::fsio::write_file(out, &text)?;
        errln!("readlab: wrote {}", out.display());
    }
    a.out_json.emit(&render::json(&c))?;
    if !a.out_json.is_json() {
        let term = crate::out();
        outp!("{}", term.fit(&render::text_within(&c, term.width)));
    }
    Ok(ExitCode::SUCCESS)
}
