//! `readlab report`: load results and fio output, write the page (or tables) and optional PNGs.

use crate::args::JsonOut;
use clap::Args;
use readlab::report::{self, ReportFormat};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// What to report on: study or tune directories (their --out), results.jsonl files, `readlab
    /// run --json` documents (one run or an array), reports' JSON (`report --format json`) and fio
    /// JSON (--output-format=json or json+, as with --fio).
    pub inputs: Vec<PathBuf>,
    /// fio output (--output-format=json or json+) to put beside readlab's points; repeatable.
    #[arg(long)]
    pub fio: Vec<PathBuf>,
    /// Output file, or - for standard output (default: report.<format>).
    #[arg(short = 'o', long = "out")]
    pub out: Option<PathBuf>,
    /// html (self-contained page with charts), csv, md, json or text (the same document as text).
    #[arg(long, default_value = "html")]
    pub format: String,
    /// Also write every chart as PNG into this directory.
    #[arg(long)]
    pub png: Option<PathBuf>,
    /// Earlier measurements to hold the inputs against (repeatable): the report opens with the
    /// change of every configuration measured in both.
    #[arg(long)]
    pub baseline: Vec<PathBuf>,
    #[command(flatten)]
    pub out_json: JsonOut,
}

pub fn run(a: &ReportArgs) -> anyhow::Result<ExitCode> {
    let format = ReportFormat::parse(&a.format)?;
    let inputs: Vec<&std::path::Path> = a
        .inputs
        .iter()
        .chain(&a.fio)
        .chain(&a.baseline)
        .map(|p| p.as_path())
        .collect();
    match &a.out {
        Some(o) if o.as_os_str() == "-" => {}
        Some(o) => readlab::outpath::check_file(o, &inputs, a.out_json.force)?,
        None => readlab::outpath::check_default_file(
            &format.default_out(),
            &inputs,
            a.out_json.force,
            "name the report's file with -o, or pass --force to replace it",
        )?,
    }
    if let Some(dir) = &a.png {
        readlab::outpath::check_dir(dir, &inputs, &[], a.out_json.force)?;
        // The PNGs' directory is made, not its parents: a mistyped path is said, not created.
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        if !dir.is_dir() && !parent.is_dir() {
            return Err(
                readlab::Error::from(readlab::outpath::OutputError::NoParent {
                    out: dir.clone(),
                    parent: parent.into(),
                })
                .into(),
            );
        }
    }
    a.out_json.check(&inputs)?;
    let mut report = report::load(&a.inputs, &a.fio)?;
    report::require_points(&report)?;
    if !a.baseline.is_empty() {
        report::load_baseline(&mut report, &a.baseline)?;
    }
    if let Some(dir) = &a.png {
        // The charts' files, known once the report is read: none may replace a file readlab
        // did not write (a PNG of its own carries its name), checked before anything is written.
        let names = report::png_names(&report);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        readlab::outpath::check_dir(dir, &inputs, &names, a.out_json.force)?;
    }
    let to_stdout = a.out.as_ref().is_some_and(|o| o.as_os_str() == "-");
    if !to_stdout && !a.out_json.is_json() {
        // The answer first, as the document opens with it (the same computation as the
        // document's answers, without building the document's charts twice).
        let verdict = readlab::verdict::of_report(&report);
        let answers = readlab::verdict::answer::answers(&verdict, &report.points);
        crate::progress::print_answer(&readlab::verdict::answer::text(&answers));
    }
    for b in &report.banners {
        crate::progress::warn(&b.line());
    }
    crate::term::notes(&report.notes, "the report lists them all under Notes");
    let text = report::render(&report, format)?;
    let out = a.out.clone().unwrap_or_else(|| format.default_out());
    if out.as_os_str() == "-" {
        outp!("{text}");
    } else {
        readlab::fsio::write_file(&out, &text)?;
        errln!(
            "readlab: wrote {} ({} points, {} sections)",
            out.display(),
            report.points.len(),
            report.sections.len()
        );
    }
    if a.out_json.is_json() || a.out_json.json.is_some() {
        let text = report::render(&report, ReportFormat::Json)?;
        a.out_json.emit(&serde_json::from_str(&text)?)?;
    }
    if let Some(dir) = &a.png {
        let files = report::write_pngs(&report, dir)?;
        errln!(
            "readlab: wrote {} PNG charts to {}",
            files.len(),
            dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
