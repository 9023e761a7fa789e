//! The JSON reference: the schema of every document readlab writes, generated from the Rust types
//! that write them (schemars), so the shipped `docs/schema/*.json` cannot drift from the code
//! (tests/lane_b/json_schema.rs compares them and validates the documents the tests write). The
//! documents the binary used to build by hand (`study --json`, `prepare --json`, `tune.json`)
//! are typed here.

use crate::result::Document;
use schemars::JsonSchema;
use serde::Serialize;
use std::path::PathBuf;

/// `readlab study --json`: what the study did, its verdict and every run of its results.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct StudyJson {
    /// `readlab.study/1`.
    pub schema: String,
    /// The studies run, in order.
    pub studies: Vec<String>,
    /// The study's directory.
    pub out: PathBuf,
    /// Its results.jsonl.
    pub results: PathBuf,
    /// Its summary.md.
    pub summary_path: PathBuf,
    /// Points measured now.
    pub measured: usize,
    /// Points already in the results (resumed).
    pub skipped: usize,
    /// True when the study was interrupted (resume it with --resume).
    pub interrupted: bool,
    pub verdict: crate::verdict::render::VerdictJson,
    /// Every run of the results.
    pub runs: Vec<Document>,
}

/// The schema name of `study --json`.
pub const STUDY_SCHEMA: &str = "readlab.study/1";

/// `readlab prepare --json`: what was written.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PrepareJson {
    /// `readlab.prepare/1`.
    pub schema: String,
    pub path: PathBuf,
    /// Bytes written.
    pub size: u64,
    /// The file id the data is made from, 16 hexadecimal digits.
    pub file_id: String,
    /// True when written with O_DIRECT.
    pub direct: bool,
    pub seconds: f64,
}

/// The schema name of `prepare --json`.
pub const PREPARE_SCHEMA: &str = "readlab.prepare/1";

impl PrepareJson {
    pub fn of(p: &crate::prepare::Prepared) -> PrepareJson {
        PrepareJson {
            schema: PREPARE_SCHEMA.into(),
            path: p.path.clone(),
            size: p.size,
            file_id: format!("{:016x}", p.file_id),
            direct: p.direct,
            seconds: p.seconds,
        }
    }
}

/// `tune.json` (and `tune --json`): the tuning session's report, with the profiles written.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TuneJson {
    /// `readlab.tune/1`.
    pub schema: String,
    #[serde(flatten)]
    pub report: crate::tune::TuneReport,
    /// The profiles written, one per selected configuration (replay with `run --profile`).
    pub profiles: Vec<PathBuf>,
}

/// The schema name of `tune.json`.
pub const TUNE_SCHEMA: &str = "readlab.tune/1";

/// Every document readlab writes: its file name in `docs/schema/`, its `schema` name (the
/// family's, for documents without one) and where readlab writes it.
pub struct Doc {
    pub file: &'static str,
    pub schema_name: &'static str,
    pub written_by: &'static str,
    schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
}

impl Doc {
    /// The document's JSON Schema (draft 2020-12), as it is serialised.
    pub fn schema(&self) -> serde_json::Value {
        let mut generator = schemars::generate::SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator();
        let mut schema = (self.schema)(&mut generator).to_value();
        nullable_numbers(&mut schema);
        if let Some(m) = schema.as_object_mut() {
            m.insert("title".into(), self.schema_name.into());
            m.insert("description".into(), self.written_by.into());
        }
        schema
    }

    /// The schema as shipped: pretty JSON with a final newline.
    pub fn text(&self) -> String {
        let mut s = serde_json::to_string_pretty(&self.schema()).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// serde_json writes a float that is not finite (a rate over no time, a change from zero) as
/// null: every number may be null.
fn nullable_numbers(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            match m.get_mut("type") {
                Some(t) if t == "number" => *t = serde_json::json!(["number", "null"]),
                Some(Value::Array(ts))
                    if ts.iter().any(|t| t == "number") && !ts.iter().any(|t| t == "null") =>
                {
                    ts.push("null".into())
                }
                _ => {}
            }
            m.values_mut().for_each(nullable_numbers);
        }
        Value::Array(a) => a.iter_mut().for_each(nullable_numbers),
        _ => {}
    }
}

fn root<T: JsonSchema>(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    g.root_schema_for::<T>()
}

/// The documents, in the order of docs/json.md.
pub fn documents() -> Vec<Doc> {
    vec![
        Doc {
            file: "run.json",
            schema_name: crate::result::SCHEMA,
            written_by: "One run: `readlab run --json FILE` (several configurations: an array of them), each line of a study's or tune's results.jsonl (with `study`), a fleet's run under MPI (with `fleet`).",
            schema: root::<Document>,
        },
        Doc {
            file: "study.json",
            schema_name: STUDY_SCHEMA,
            written_by: "`readlab study --json FILE`: what the study did, its verdict and every run of its results.",
            schema: root::<StudyJson>,
        },
        Doc {
            file: "tune.json",
            schema_name: TUNE_SCHEMA,
            written_by: "`tune.json` in a tune directory (and `readlab tune --json FILE`): the tuning session, its recommendations and the profiles written.",
            schema: root::<TuneJson>,
        },
        Doc {
            file: "profile.json",
            schema_name: crate::tune::PROFILE_SCHEMA,
            written_by: "A profile written by `readlab tune` (profile-*.json), replayed by `readlab run --profile`.",
            schema: root::<crate::tune::Profile>,
        },
        Doc {
            file: "report.json",
            schema_name: crate::report::json::REPORT_SCHEMA,
            written_by: "`readlab report --format json`: the report's document, verdict, selection, tables and every point.",
            schema: root::<crate::report::json::ReportJson>,
        },
        Doc {
            file: "compare.json",
            schema_name: crate::compare::render::COMPARE_SCHEMA,
            written_by: "`readlab compare A B --json FILE` (or `--format json -o FILE`): every configuration measured on both sides.",
            schema: root::<crate::compare::render::CompareJson>,
        },
        Doc {
            file: "monitor.json",
            schema_name: "readlab monitor",
            written_by: "`readlab monitor --json FILE`: what was watched and every sample (also a run's `monitor` with --monitor).",
            schema: root::<crate::monitor::MonitorRecord>,
        },
        Doc {
            file: "prepare.json",
            schema_name: PREPARE_SCHEMA,
            written_by: "`readlab prepare --json FILE`: what was written.",
            schema: root::<PrepareJson>,
        },
        Doc {
            file: "info.json",
            schema_name: "readlab info",
            written_by: "`readlab info FILE --json OUT`: what the target is and which read interfaces and io_uring features work on it (an NBD URL's info is its server's advertisement instead).",
            schema: root::<crate::probe::Report>,
        },
        Doc {
            file: "serve.json",
            schema_name: "readlab serve",
            written_by: "`readlab serve --json FILE`: the server's summary at exit, with every second's figures.",
            schema: root::<crate::serve::ServeSummary>,
        },
    ]
}
