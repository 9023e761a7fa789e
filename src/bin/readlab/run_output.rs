//! Where `readlab run` puts its result: `--output table|json` (readlab's table or its JSON
//! document on stdout), or fio's words for fio's JSON, `--output-format json` (on stdout, as fio
//! prints it) with `--output FILE` (the file instead, as fio's `--output`). One place decides
//! what the pair means, so `--output` never says two things at once.

use clap::ValueEnum;
use readlab::error::Error;
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
