//! Where `readlab run` puts its result: `--output table|json` (readlab's table or its JSON
//! document on stdout), or fio's words for fio's JSON, `--output-format json` (on stdout, as fio
//! prints it) with `--output FILE` (the file instead, as fio's `--output`). One place decides
//! what the pair means, so `--output` never says two things at once. Then the printing itself:
//! one run's report, several runs' table and verdict, and the failures a run had.

use clap::ValueEnum;
use readlab::error::Error;
use readlab::export::{self, Exporter, JsonExporter, TableExporter};
use readlab::result::Document;
use std::path::{Path, PathBuf};

/// fio's `--output-format` values readlab writes.
#[derive(Copy, Clone, Debug, ValueEnum, PartialEq, Eq)]
pub enum FioFormat {
    /// fio's JSON document (as `fio --output-format=json`): one fio job per run.
    Json,
}

/// What the run's result goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shown {
    /// readlab's table on stdout.
    Table,
    /// readlab's JSON document alone on stdout.
    Json,
    /// fio's JSON document: on stdout, or in the file named.
    Fio(Option<PathBuf>),
}

impl Shown {
    /// `--output` and `--output-format` as one choice: without `--output-format`, `--output` is
    /// `table` or `json`; with it, `--output` names fio's file (`table` and `json` are refused
    /// there, as likely meant for readlab's own output).
    pub fn of(output: Option<&Path>, format: Option<FioFormat>) -> Result<Shown, Error> {
        let word = output.and_then(|p| p.to_str());
        match (format, word) {
            (None, None | Some("table")) => Ok(Shown::Table),
            (None, Some("json")) => Ok(Shown::Json),
            (None, _) => Err(Error::InvalidArgument(format!(
                "--output {}: give table or json (or --output-format json --output FILE to \
                 write fio's JSON to FILE)",
                output.unwrap_or(Path::new("")).display()
            ))),
            (Some(FioFormat::Json), Some(w @ ("table" | "json"))) => {
                Err(Error::InvalidArgument(format!(
                    "--output {w} with --output-format json: here --output names the file for \
                 fio's JSON (as in fio); leave --output out to print it on stdout"
                )))
            }
            (Some(FioFormat::Json), _) => Ok(Shown::Fio(output.map(Path::to_path_buf))),
        }
    }

    /// Whether stdout carries a document (so no progress is drawn over it).
    pub fn document_on_stdout(&self) -> bool {
        matches!(self, Shown::Json | Shown::Fio(None))
    }

    /// The file this output writes, if any (checked against the run's inputs before it starts).
    pub fn file(&self) -> Option<&Path> {
        match self {
            Shown::Fio(Some(p)) => Some(p),
            _ => None,
        }
    }
}

/// Print (or write) the run's documents as `shown` says, and readlab's JSON to `json`.
pub fn print_docs(json: Option<&Path>, shown: &Shown, docs: &[Document]) -> anyhow::Result<()> {
    if let Some(path) = json {
        readlab::fsio::write_file(path, &JsonExporter.render(docs)?)?;
    }
    match shown {
        Shown::Json => outp!("{}", JsonExporter.render(docs)?),
        Shown::Fio(None) => outp!("{}", export::FioJsonExporter.render(docs)?),
        Shown::Fio(Some(path)) => {
            readlab::fsio::write_file(path, &export::FioJsonExporter.render(docs)?)?;
            errln!("readlab: wrote fio's JSON to {}", path.display());
        }
        Shown::Table if docs.len() == 1 => print_one(&docs[0]),
        Shown::Table => {
            // The answer first, then the figures it rests on.
            crate::progress::print_answer(&readlab::verdict::answer_text_for(docs));
            outp!("{}", runs_table(docs)?);
            let verdict = readlab::verdict::text_for_within(docs, crate::out().width);
            if !verdict.is_empty() {
                outln!("\n{}", crate::out().fit(&verdict));
            }
        }
    }
    Ok(())
}

/// One run's table: per target when it read several, then what the monitor saw.
fn print_one(doc: &Document) {
    let term = crate::out();
    if doc.targets.is_empty() {
        outp!("{}", term.fit(&export::run_report(doc)));
    } else {
        outp!("{}", term.fit(&export::targets_report(doc, term.width)));
    }
    outp!("{}", term.fit(&export::monitor_summary(doc)));
}

/// Print a run's failures (each failed target, then the run's totals and first offsets); true
/// when there were any.
pub fn report_failures(doc: &Document) -> bool {
    let mut failed = false;
    for t in doc.targets.iter().filter(|t| t.failed()) {
        failed = true;
        let why = t.error.clone().unwrap_or_else(|| {
            t.result
                .as_ref()
                .and_then(|r| r.failure_summary())
                .map(|l| l.join("; "))
                .unwrap_or_default()
        });
        errln!("readlab: target {} failed: {why}", t.name);
    }
    if let Some(lines) = doc.result.failure_summary() {
        for l in lines {
            errln!("readlab: {l}");
        }
        failed = true;
    }
    failed
}

/// The table of several runs, readlab's measurements of itself (engines that read nothing, such
/// as `null`) apart below the reads, so they are never read as a ranking; fitted to stdout.
pub fn runs_table(docs: &[readlab::result::Document]) -> anyhow::Result<String> {
    let (reads, own): (Vec<_>, Vec<_>) = docs
        .iter()
        .cloned()
        .partition(|d| d.config.engine.capabilities().does_io);
    let mut s = if reads.is_empty() {
        String::new()
    } else {
        TableExporter::table(&reads).text_within(crate::out().width)
    };
    if !own.is_empty() {
        s.push_str(
            "
readlab measuring itself (no I/O; its own cost per I/O, not ranked):
",
        );
        s.push_str(&TableExporter::table(&own).text_within(crate::out().width));
    }
    s.push_str(&crate::out().fit(&TableExporter::notes(docs)));
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_and_output_format_make_one_choice() {
        let of = |o: Option<&str>, f| Shown::of(o.map(Path::new), f);
        assert_eq!(of(None, None).unwrap(), Shown::Table);
        assert_eq!(of(Some("table"), None).unwrap(), Shown::Table);
        assert_eq!(of(Some("json"), None).unwrap(), Shown::Json);
        assert!(of(Some("x.json"), None).is_err());
        let fio = Some(FioFormat::Json);
        assert_eq!(of(None, fio).unwrap(), Shown::Fio(None));
        assert_eq!(
            of(Some("x.json"), fio).unwrap(),
            Shown::Fio(Some("x.json".into()))
        );
        assert!(of(Some("json"), fio).is_err());
        assert!(of(None, fio).unwrap().document_on_stdout());
        assert!(!of(Some("f"), fio).unwrap().document_on_stdout());
    }
}
