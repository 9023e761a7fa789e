//! Reading the inputs the user named: study directories, results.jsonl files, `readlab run --json`
//! documents and fio JSON, each turned into points (with a note for anything odd), then analysed.

use super::analysis::Report;
use super::fio;
use super::point::Point;
use crate::error::{Error, Result};
use crate::result::Document;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The schema of the report's JSON (`readlab report --format json`, written by
/// `crate::report::json`), which reports read back.
pub const REPORT_SCHEMA: &str = "readlab.report/1";

fn bad(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{}: {why}", path.display()))
}

/// Read one readlab input: a results directory, a results.jsonl, or a `--json` document (one run
/// or an array of runs). fio JSON given here is imported as if passed with `--fio`.
fn load_results(path: &Path, report: &mut Report, said: &mut Vec<Said>) -> Result<()> {
    let file = results_file(path, report)?;
    let origin = file.display().to_string();
    let bytes = crate::store::read_bounded(&file)?;
    let Ok(text) = String::from_utf8(bytes) else {
        return Err(bad(&file, "not a text file (expected readlab JSON)"));
    };
    if text.trim().is_empty() {
        report.notes.push(format!("{origin} is empty: no points"));
        return Ok(());
    }
    if !text.trim_start().starts_with(['{', '[']) {
        return Err(bad(
            &file,
            "not JSON (expected a study directory, a results.jsonl, a `readlab run --json` file, a report's JSON or fio JSON)",
        ));
    }
    // An array is read one element at a time (each checked before the next is read), never as
    // a whole, so that a large array of anything else costs nothing but its text.
    if text.trim_start().starts_with('[') {
        let docs = array_runs(&text, &file)?;
        if docs.is_empty() {
            return Err(bad(&file, "an empty JSON array: no runs"));
        }
        add_runs(&docs, &origin, report, said);
        return Ok(());
    }
    let docs: Vec<Document> = match serde_json::from_str::<serde_json::Value>(&text) {
        // One JSON value: a --json document, an array of them, fio's output, or a report's JSON.
        Ok(v) if v.get("fio version").is_some() || v.get("jobs").is_some() => {
            return load_fio_text(&text, &origin, report);
        }
        Ok(v) if schema_of(&v) == Some(REPORT_SCHEMA) => {
            return load_report_json(v, &file, report);
        }
        Ok(v) => {
            known_run(&v, &file, "")?;
            vec![
                serde_json::from_value(v)
                    .map_err(|e| bad(&file, format!("not a readlab result ({e})")))?,
            ]
        }
        // JSON nested beyond serde_json's recursion limit: not readlab's.
        Err(e) if e.to_string().contains("recursion limit") => {
            return Err(bad(&file, "not a readlab document (JSON nested too deep)"));
        }
        // Several values: results.jsonl, one run per line (a torn last line is said, left out).
        Err(_) => {
            let (docs, torn) = crate::store::load_noting(&file)?;
            report.notes.extend(torn);
            docs
        }
    };
    add_runs(&docs, &origin, report, said);
    Ok(())
}

/// The runs of a JSON array, read one element at a time: each is checked to be a run before the
/// next is read, so an array of anything else is refused at its first element, whatever its
/// length, and the array is never held whole as JSON values.
fn array_runs(text: &str, file: &Path) -> Result<Vec<Document>> {
    use serde::Deserializer as _;
    use serde::de::{Error as _, SeqAccess, Visitor};
    struct Runs<'a> {
        file: &'a Path,
        refused: &'a mut Option<Error>,
    }
    impl<'de> Visitor<'de> for Runs<'_> {
        type Value = Vec<Document>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array of readlab runs")
        }
        fn visit_seq<A: SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> std::result::Result<Self::Value, A::Error> {
            let mut docs = Vec::new();
            while let Some(v) = seq.next_element::<serde_json::Value>()? {
                let what = format!("element {} ", docs.len() + 1);
                let doc = known_run(&v, self.file, &what).and_then(|()| {
                    serde_json::from_value(v)
                        .map_err(|e| bad(self.file, format!("{what}is not a readlab result ({e})")))
                });
                match doc {
                    Ok(d) => docs.push(d),
                    Err(e) => {
                        *self.refused = Some(e);
                        return Err(A::Error::custom("refused"));
                    }
                }
            }
            Ok(docs)
        }
    }
    let mut refused = None;
    let mut de = serde_json::Deserializer::from_str(text);
    let read = de
        .deserialize_seq(Runs {
            file,
            refused: &mut refused,
        })
        .and_then(|docs| de.end().map(|()| docs));
    if let Some(e) = refused {
        return Err(e);
    }
    read.map_err(|e| {
        if e.to_string().contains("recursion limit") {
            bad(file, "not a readlab document (JSON nested too deep)")
        } else {
            bad(
                file,
                format!("not JSON: an array cut off or malformed ({e})"),
            )
        }
    })
}

/// The file a readlab input names: the input itself, or a directory's results.jsonl (and then
/// its tuner's report, when it has one, is read into `report`).
fn results_file(path: &Path, report: &mut Report) -> Result<PathBuf> {
    let meta = std::fs::metadata(path).map_err(|e| bad(path, format!("cannot read: {e}")))?;
    Ok(if meta.is_dir() {
        let f = path.join(crate::store::RESULTS);
        if !f.is_file() {
            return Err(bad(
                path,
                format!(
                    "no {} here; give a study's --out directory, a results.jsonl, or a `readlab run --json` file",
                    crate::store::RESULTS
                ),
            ));
        }
        // A tune directory's selected parameters.
        let tuned = path.join(crate::tune::REPORT_FILE);
        if tuned.is_file() {
            let text =
                crate::input::read_text(&tuned, crate::tune::MAX_PROFILE_BYTES, "tuner's report")?;
            match serde_json::from_str::<crate::tune::TuneReport>(&text) {
                Ok(t) => report.tuned.push(t),
                Err(e) => report.notes.push(format!(
                    "{}: not a tuner's report ({e}); the selected parameters come from its points",
                    tuned.display()
                )),
            }
        }
        f
    } else {
        path.to_path_buf()
    })
}

/// The runs of one input as points (a run that measured nothing as a note), each with what it
/// says of itself.
fn add_runs(docs: &[Document], origin: &str, report: &mut Report, said: &mut Vec<Said>) {
    if docs.is_empty() {
        report.notes.push(format!("{origin} holds no runs"));
    }
    report.runs_read += docs.len();
    for d in docs {
        // A run that measured nothing has no figure to draw (never 0 ns, never 0 IOPS).
        if d.result.requests == 0 {
            report.notes.push(format!(
                "{origin}: {} ({} {}): no request measured; left out",
                d.result.label,
                d.config.engine.name(),
                crate::units::format_bytes(d.config.bs as f64, crate::units::Style::Table)
            ));
            continue;
        }
        // The run's own point (a run on several targets: its aggregate) comes first; a
        // target's own warnings are in its run's, named.
        let first = report.points.len();
        let points = Point::from_run(d, origin);
        if let Some(p) = points.first() {
            said.push(Said {
                point: format!(
                    "{origin}: {} ({} {})",
                    p.label,
                    p.engine,
                    crate::units::format_bytes(p.bs as f64, crate::units::Style::Table)
                ),
                facts: super::point::run_facts(&d.result),
                warnings: d.result.warnings.clone(),
            });
        }
        report.points.extend(points);
        if let Some(f) = super::fleet::FleetRun::from_document(d, first) {
            report.fleet.push(f);
        }
    }
}

/// The `schema` a JSON document names.
fn schema_of(v: &serde_json::Value) -> Option<&str> {
    v.get("schema").and_then(|s| s.as_str())
}

/// Refuse a JSON value that is not a run this readlab reads: another readlab document (a study's,
/// a tune's, a comparison's), one of a newer schema, or no readlab document at all.
fn known_run(v: &serde_json::Value, file: &Path, what: &str) -> Result<()> {
    match schema_of(v) {
        Some(crate::result::SCHEMA) => Ok(()),
        Some(s) if s.starts_with("readlab.run/") || s.starts_with("readlab.report/") => Err(bad(
            file,
            format!(
                "{what}is a '{s}' document, which this readlab does not read (it reads {} and {REPORT_SCHEMA}); use the readlab that wrote it",
                crate::result::SCHEMA
            ),
        )),
        Some(s) if s.starts_with("readlab.") => Err(bad(
            file,
            format!(
                "{what}is a '{s}' document, not runs; give its study directory, a results.jsonl, a `readlab run --json` file or a report's JSON"
            ),
        )),
        Some(s) => Err(bad(
            file,
            format!("{what}is not a readlab document (its schema is '{s}')"),
        )),
        None if v.is_object() => Err(bad(
            file,
            format!("{what}is not a readlab document (it names no schema)"),
        )),
        None => Err(bad(
            file,
            format!("{what}is not a readlab document (a JSON {})", json_kind(v)),
        )),
    }
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// The points a report's JSON (`readlab report --format json`) carries.
fn load_report_json(v: serde_json::Value, file: &Path, report: &mut Report) -> Result<()> {
    let Some(points) = v.get("points") else {
        return Err(bad(
            file,
            "a report's JSON written before reports carried their points; write it again with `readlab report --format json`",
        ));
    };
    let points: Vec<Point> = serde_json::from_value(points.clone())
        .map_err(|e| bad(file, format!("not a readlab report's points ({e})")))?;
    if points.is_empty() {
        report
            .notes
            .push(format!("{} holds no points", file.display()));
    }
    report.runs_read += points.len();
    report.points.extend(points);
    Ok(())
}

fn load_fio_text(text: &str, origin: &str, report: &mut Report) -> Result<()> {
    let imported = fio::import(text, origin)?;
    report.runs_read += usize::from(!imported.points.is_empty() || !imported.notes.is_empty());
    if imported.points.is_empty() && imported.notes.is_empty() {
        report.notes.push(format!("{origin}: no fio jobs"));
    }
    report.notes.extend(imported.notes);
    if imported
        .points
        .iter()
        .any(|p| p.note.as_deref().is_some_and(|n| n.starts_with("fio clat")))
    {
        report.notes.push(format!(
            "{origin}: fio printed completion-latency (clat) percentiles only; readlab measures from submission (fio's lat): run fio with --lat_percentiles=1 to compare like with like"
        ));
    }
    report.points.extend(imported.points);
    Ok(())
}

fn load_fio(path: &Path, report: &mut Report) -> Result<()> {
    if path.is_dir() {
        return Err(bad(path, "a directory, not fio's JSON output"));
    }
    let bytes = crate::store::read_bounded(path)?;
    let origin = path.display().to_string();
    let Ok(text) = String::from_utf8(bytes) else {
        return Err(bad(path, "not a text file (expected fio JSON)"));
    };
    if text.trim().is_empty() {
        report
            .notes
            .push(format!("{origin} is empty: no fio points"));
        return Ok(());
    }
    load_fio_text(&text, &origin, report)
}

/// Read every input and work out sections, frontier and highlights.
pub fn load(results: &[PathBuf], fio_files: &[PathBuf]) -> Result<Report> {
    if results.is_empty() && fio_files.is_empty() {
        return Err(Error::invalid(
            "nothing to report on; give a results directory, a results.jsonl or a `readlab run --json` file, and/or --fio FILE.json",
        ));
    }
    let mut report = Report::default();
    let mut said = Vec::new();
    let mut seen = BTreeSet::new();
    for (path, is_fio) in results
        .iter()
        .map(|p| (p, false))
        .chain(fio_files.iter().map(|p| (p, true)))
    {
        // The same file named twice (a directory and its results.jsonl) is read once.
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let key = if key.is_dir() {
            key.join(crate::store::RESULTS)
        } else {
            key
        };
        report.inputs.push(path.display().to_string());
        if !seen.insert(key) {
            report
                .notes
                .push(format!("{} was given twice; read once", path.display()));
            continue;
        }
        if is_fio {
            load_fio(path, &mut report)?;
        } else {
            load_results(path, &mut report, &mut said)?;
        }
    }
    note_points(&mut report, said);
    report.analyse();
    Ok(report)
}

/// Refuse inputs that hold nothing at all (an empty study or results file): a report or
/// comparison of nothing is a mistake, said with the inputs and the first note saying why. Runs
/// that measured nothing are read (and left out, each with its note): the report says so.
pub fn require_points(report: &Report) -> Result<()> {
    if !report.points.is_empty() || report.runs_read > 0 {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "nothing to report: {} {} no runs{}",
        report.inputs.join(", "),
        if report.inputs.len() == 1 {
            "holds"
        } else {
            "hold"
        },
        match report.notes.first() {
            Some(n) => format!(" ({n})"),
            None => String::new(),
        }
    )))
}

/// What one run read into the report says about itself.
struct Said {
    /// How a note names it: `origin: label (engine block size)`.
    point: String,
    /// How it ended, its failures, its repetitions: always said with the point.
    facts: Vec<String>,
    /// Its warnings: said once as a banner when many points share them.
    warnings: Vec<String>,
}

/// The runs' warnings common to many points become the report's banners; each run's facts and
/// its other warnings become its note.
fn note_points(report: &mut Report, said: Vec<Said>) {
    let warnings: Vec<&[String]> = said.iter().map(|s| s.warnings.as_slice()).collect();
    let grouped = crate::warnings::group(&warnings);
    report.banners.extend(grouped.banners);
    for (s, rest) in said.into_iter().zip(grouped.rest) {
        let parts: Vec<String> = s.facts.into_iter().chain(rest).collect();
        if !parts.is_empty() {
            report
                .notes
                .push(format!("{}: {}", s.point, parts.join("; ")));
        }
    }
}
