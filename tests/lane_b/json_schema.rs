//! The JSON reference: `docs/schema/*.json` are what the code generates now (a type changed
//! without regenerating them fails here; `READLAB_BLESS=1 cargo test --test lane_b json_schema::`
//! regenerates them), docs/json.md lists every one, and the documents the real binary writes
//! (prepare, run, study with its results.jsonl, tune.json and its profile, report, compare,
//! monitor) validate against them — while a document with a field removed or of the wrong type
//! does not.

use crate::common;

use common::{disk_dir, prepare, run, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema")
}

fn schema(file: &str) -> Value {
    let doc = readlab::schema::documents()
        .into_iter()
        .find(|d| d.file == file)
        .unwrap_or_else(|| panic!("no document {file}"));
    serde_json::from_str(&doc.text()).unwrap()
}

/// The errors of `instance` against the shipped schema `file` (none: valid).
fn errors(file: &str, instance: &Value) -> Vec<String> {
    let shipped: Value =
        serde_json::from_str(&std::fs::read_to_string(docs_dir().join(file)).unwrap()).unwrap();
    let v = jsonschema::validator_for(&shipped).unwrap_or_else(|e| panic!("{file}: {e}"));
    v.iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .take(5)
        .collect()
}

#[track_caller]
fn assert_valid(file: &str, instance: &Value, what: &str) {
    let e = errors(file, instance);
    assert!(e.is_empty(), "{what} does not match {file}: {e:#?}");
}

#[test]
fn shipped_schemas_are_what_the_code_generates() {
    let dir = docs_dir();
    let bless = std::env::var_os("READLAB_BLESS").is_some();
    let index = std::fs::read_to_string(dir.parent().unwrap().join("json.md")).unwrap_or_default();
    let mut stale = Vec::new();
    for d in readlab::schema::documents() {
        let path = dir.join(d.file);
        let now = d.text();
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &now).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(now.as_str()) {
            stale.push(d.file);
        }
        assert!(
            index.contains(&format!("schema/{}", d.file)) && index.contains(d.schema_name),
            "docs/json.md does not list schema/{} ({})",
            d.file,
            d.schema_name
        );
        // Every schema is a valid JSON Schema.
        jsonschema::validator_for(&serde_json::from_str(&now).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", d.file));
    }
    assert!(
        stale.is_empty(),
        "docs/schema/{{{}}} differ from the types that write them: regenerate with \
         READLAB_BLESS=1 cargo test --release --test lane_b json_schema::",
        stale.join(",")
    );
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[track_caller]
fn ok(args: &[&str]) {
    let o = run(args);
    assert!(o.status.success(), "readlab {args:?}: {}", stderr(&o));
}

#[test]
fn the_documents_readlab_writes_match_the_reference() {
    let d = disk_dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_string();
    let f = prepare(d.path(), "f", "64M");
    let f = f.to_str().unwrap();

    // prepare --json
    let g = p("g");
    ok(&["prepare", &g, "--size", "4M", "--json", &p("prepare.json")]);
    assert_valid(
        "prepare.json",
        &read(&d.path().join("prepare.json")),
        "prepare --json",
    );

    // run --json, plain and with the monitor's samples.
    for (name, extra) in [("run1.json", &[][..]), ("run2.json", &["--monitor"][..])] {
        let mut args = vec!["run", "--runtime", "300ms", "--json"];
        let out = p(name);
        args.push(&out);
        args.extend(extra);
        args.push(f);
        ok(&args);
        assert_valid("run.json", &read(Path::new(&out)), name);
    }
    // Several configurations: an array of runs.
    let many = p("many.json");
    ok(&[
        "run",
        "--runtime",
        "200ms",
        "--engine",
        "psync,pvsync2",
        "--json",
        &many,
        f,
    ]);
    match read(Path::new(&many)) {
        Value::Array(runs) => runs
            .iter()
            .for_each(|r| assert_valid("run.json", r, "a run of several")),
        one => assert_valid("run.json", &one, "run --engine psync,pvsync2"),
    }

    // study --json, and every line of its results.jsonl.
    let st = p("study");
    ok(&[
        "study",
        "latency",
        "--quick",
        "--runtime",
        "100ms",
        "--out",
        &st,
        "--json",
        &p("study.json"),
        f,
    ]);
    assert_valid(
        "study.json",
        &read(&d.path().join("study.json")),
        "study --json",
    );
    let lines = std::fs::read_to_string(d.path().join("study/results.jsonl")).unwrap();
    assert!(lines.lines().count() >= 2);
    for l in lines.lines() {
        assert_valid(
            "run.json",
            &serde_json::from_str(l).unwrap(),
            "a results.jsonl line",
        );
    }

    // tune.json and the profile it wrote.
    let tu = p("tune");
    ok(&[
        "tune",
        "--budget",
        "10s",
        "--engines",
        "psync",
        "--bs",
        "4k",
        "--repeat",
        "1",
        "--out",
        &tu,
        f,
    ]);
    let tune = read(&d.path().join("tune/tune.json"));
    assert_valid("tune.json", &tune, "tune.json");
    let profiles = tune["profiles"].as_array().unwrap();
    assert!(!profiles.is_empty(), "{tune}");
    for pr in profiles {
        assert_valid(
            "profile.json",
            &read(Path::new(pr.as_str().unwrap())),
            "a profile",
        );
    }

    // report --format json, over a study, a tune directory and runs.
    let rep = p("report.json");
    ok(&[
        "report",
        &st,
        &tu,
        &p("run1.json"),
        "--format",
        "json",
        "-o",
        &rep,
    ]);
    assert_valid(
        "report.json",
        &read(Path::new(&rep)),
        "report --format json",
    );

    // compare --json.
    let cmp = p("compare.json");
    ok(&["compare", &p("run1.json"), &p("run2.json"), "--json", &cmp]);
    assert_valid("compare.json", &read(Path::new(&cmp)), "compare --json");
    let cmp2 = p("compare2.json");
    ok(&["compare", &st, &rep, "--format", "json", "-o", &cmp2]);
    assert_valid("compare.json", &read(Path::new(&cmp2)), "compare -o");

    // A fleet's run (as rank 0 writes it): two real runs as its ranks, read into the library's
    // own types, their aggregate made by the fleet's merge, and written back by those types.
    let runs = [
        read(&d.path().join("run1.json")),
        read(&d.path().join("run2.json")),
    ];
    let members: Vec<Value> = runs
        .iter()
        .enumerate()
        .map(|(rank, r)| {
            serde_json::json!({
                "rank": rank, "host": format!("node-{rank}"), "local_rank": 0,
                "target": f, "clock_offset_ns": 0, "clock_uncertainty_ns": 0, "start_ns": 0,
                "late_ns": 0, "environment": r["environment"], "result": r["result"],
            })
        })
        .collect();
    let mut fleet = runs[0].clone();
    fleet["fleet"] = serde_json::json!({
        "ranks": 2, "hosts": ["node-0", "node-1"], "target": f,
        "start": {"skew_ns": 1500, "clock_uncertainty_ns": 0, "notice_ns": 20000000},
        "common_window_s": 0.3, "aggregate": "", "members": members,
    });
    let mut fleet: readlab::result::Document = serde_json::from_value(fleet).unwrap();
    let record = fleet.fleet.as_ref().unwrap();
    fleet.result = readlab::fleet::aggregate(&record.members).unwrap();
    let fleet = serde_json::to_value(&fleet).unwrap();
    assert!(fleet["fleet"]["members"][1]["result"].is_object());
    assert_valid("run.json", &fleet, "a fleet's run");

    // A report over the fixtures (a study's points, fio's JSON of both kinds, a baseline).
    let fx = |n: &str| format!("{}/tests/fixtures/{n}", env!("CARGO_MANIFEST_DIR"));
    let rep2 = p("report2.json");
    ok(&[
        "report",
        &fx("results-small.jsonl"),
        "--fio",
        &fx("fio-jsonplus.json"),
        "--fio",
        &fx("fio-normal.json"),
        "--baseline",
        &fx("results-small.jsonl"),
        "--format",
        "json",
        "-o",
        &rep2,
    ]);
    assert_valid(
        "report.json",
        &read(Path::new(&rep2)),
        "a report over the fixtures",
    );

    // monitor --json.
    let mon = p("monitor.json");
    ok(&[
        "monitor",
        "--count",
        "2",
        "--interval",
        "200ms",
        "--json",
        &mon,
        f,
    ]);
    assert_valid("monitor.json", &read(Path::new(&mon)), "monitor --json");
}

#[test]
fn a_document_with_a_field_removed_or_of_the_wrong_type_is_rejected() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "8M");
    let out = d.path().join("run.json");
    ok(&[
        "run",
        "--runtime",
        "200ms",
        "--json",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    let good = read(&out);
    assert_valid("run.json", &good, "the run");

    let mut no_result = good.clone();
    no_result.as_object_mut().unwrap().remove("result");
    let e = errors("run.json", &no_result);
    assert!(e.iter().any(|e| e.contains("result")), "{e:?}");

    let mut wrong_type = good.clone();
    wrong_type["config"]["iodepth"] = "deep".into();
    assert!(!errors("run.json", &wrong_type).is_empty());

    let mut bad_engine = good.clone();
    bad_engine["config"]["engine"] = "io-uring-ish".into();
    assert!(!errors("run.json", &bad_engine).is_empty());

    let mut negative = good.clone();
    negative["result"]["requests"] = (-1).into();
    assert!(!errors("run.json", &negative).is_empty());

    // The schemas generated now agree with the shipped ones on this.
    assert!(
        jsonschema::validator_for(&schema("run.json"))
            .unwrap()
            .is_valid(&good)
    );
}
