//! End-to-end: every run of a real engine carries readlab's own cost per I/O in its shape,
//! measured on the null engine (`result.runner_cost`): positive, below the run's own CPU per I/O,
//! its share the quotient of the two, and the terminal says the same figures as the JSON. Runs of
//! the null engine carry none (their own figures are it); a run on several targets carries it on
//! each target and on the aggregate; the report's verdict says the median.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A prepared file in /dev/shm (buffered reads of it are readlab's cost laid bare), removed on
/// drop.
struct ShmFile(PathBuf);

impl ShmFile {
    fn prepared(name: &str) -> ShmFile {
        let p = PathBuf::from(format!(
            "/dev/shm/readlab-selfcost-{}-{name}.dat",
            std::process::id()
        ));
        let o = run(&["prepare", p.to_str().unwrap(), "--size", "64M"]);
        assert!(o.status.success(), "prepare: {}", stderr(&o));
        ShmFile(p)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for ShmFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `readlab run ARGS --runtime 1s --buffered --json J`: the terminal text and the document.
fn run_doc(json: &Path, args: &[&str]) -> (String, Value) {
    let mut all = vec!["run", "--runtime", "1s", "--buffered", "--json"];
    all.push(json.to_str().unwrap());
    all.extend_from_slice(args);
    let o = run(&all);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    (unwrapped(&stdout(&o)), doc)
}

/// The runner cost of `r` checked against its own figures; its (cpu, share).
#[track_caller]
fn check_cost(r: &Value, what: &str) -> (f64, f64) {
    let own = &r["runner_cost"];
    assert!(own.is_object(), "{what}: no runner_cost in {r}");
    let cpu = own["cpu_us_per_io"].as_f64().unwrap();
    let share = own["share_of_cpu"].as_f64().unwrap();
    let iops = own["iops"].as_f64().unwrap();
    let run_cpu = r["cpu_us_per_io"].as_f64().unwrap();
    assert!(cpu > 0.0, "{what}: {own}");
    assert!(
        cpu < run_cpu,
        "{what}: readlab's loop alone ({cpu} us) costs no less than the run ({run_cpu} us)"
    );
    assert!(
        (share - cpu / run_cpu).abs() < 1e-9,
        "{what}: share {share} is not {cpu} / {run_cpu}"
    );
    // The null engine reads nothing: readlab's loop alone goes faster than any read of it.
    let run_iops = r["iops"].as_f64().unwrap();
    assert!(iops > run_iops, "{what}: null {iops} IOPS, run {run_iops}");
    (cpu, share)
}

/// The terminal's line says the JSON's figures, rounded as it rounds them.
#[track_caller]
fn check_line(text: &str, r: &Value, what: &str) {
    let own = &r["runner_cost"];
    let want = format!(
        "readlab  its own loop {:.2} us CPU per I/O ({} IOPS on the null engine, same shape): \
         {:.0} % of this run's {:.2} us",
        own["cpu_us_per_io"].as_f64().unwrap(),
        readlab::units::grouped(own["iops"].as_f64().unwrap().round() as u64),
        own["share_of_cpu"].as_f64().unwrap() * 100.0,
        r["cpu_us_per_io"].as_f64().unwrap(),
    );
    assert!(text.contains(&want), "{what}: no `{want}` in:\n{text}");
}

#[test]
fn psync_and_libaio_runs_carry_readlabs_own_cost_in_their_shape() {
    let f = ShmFile::prepared("one");
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[&str])] = &[
        ("psync", &["--engine", "psync"]),
        ("libaio QD8", &["--engine", "libaio", "--iodepth", "8"]),
    ];
    for (what, args) in cases {
        let json = dir.path().join("run.json");
        let mut a = args.to_vec();
        a.push(f.path());
        let (text, doc) = run_doc(&json, &a);
        let r = &doc["result"];
        check_cost(r, what);
        check_line(&text, r, what);
    }
}

#[test]
fn null_engine_runs_carry_none_their_figures_are_it() {
    let f = ShmFile::prepared("null");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("null.json");
    let (text, doc) = run_doc(&json, &["--engine", "null", f.path()]);
    assert!(
        doc["result"].get("runner_cost").is_none(),
        "{}",
        doc["result"]
    );
    assert!(!text.contains("own loop"), "{text}");
}

#[test]
fn several_targets_carry_it_on_each_and_on_the_aggregate() {
    let a = ShmFile::prepared("a");
    let b = ShmFile::prepared("b");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("two.json");
    let (text, doc) = run_doc(&json, &["--engine", "psync", a.path(), b.path()]);
    let (cpu, share) = check_cost(&doc["result"], "aggregate");
    let targets = doc["targets"].as_array().expect("targets");
    assert_eq!(targets.len(), 2);
    for t in targets {
        // One shape measured (one target's), held against each result's CPU per I/O (the
        // whole run's): the same figures.
        let r = &t["result"];
        assert_eq!(check_cost(r, "target"), (cpu, share), "{r}");
    }
    check_line(&text, &doc["result"], "aggregate");
}

#[test]
fn the_reports_verdict_says_the_median_over_the_points() {
    let f = ShmFile::prepared("report");
    let dir = tempfile::tempdir().unwrap();
    let mut costs = Vec::new();
    let mut shares = Vec::new();
    let mut inputs = Vec::new();
    for (i, args) in [
        &["--engine", "psync"][..],
        &["--engine", "libaio", "--iodepth", "4"],
        &["--engine", "libaio", "--iodepth", "16"],
    ]
    .iter()
    .enumerate()
    {
        let json = dir.path().join(format!("r{i}.json"));
        let mut a = args.to_vec();
        a.push(f.path());
        let (_, doc) = run_doc(&json, &a);
        let (cpu, share) = check_cost(&doc["result"], &format!("{args:?}"));
        costs.push(cpu);
        shares.push(share);
        inputs.push(json);
    }
    costs.sort_by(f64::total_cmp);
    shares.sort_by(f64::total_cmp);
    let mut args = vec!["report", "--format", "text", "-o", "-"];
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = unwrapped(&stdout(&o)).replace('\n', " ");
    let want = format!(
        "readlab's own loop {:.2} µs CPU per I/O on the null engine in the same shapes, {:.0} % of \
         their CPU per I/O (medians of 3 points)",
        costs[1],
        shares[1] * 100.0
    );
    assert!(text.contains(&want), "no `{want}` in:\n{text}");
}

#[test]
fn the_library_measures_an_asynchronous_shape_once_per_process() {
    use readlab::config::RunConfig;
    use readlab::engine::EngineKind;
    let mut cfg = RunConfig::new("/nowhere");
    cfg.engine = EngineKind::Uring;
    (cfg.iodepth, cfg.batch, cfg.complete_min, cfg.threads) = (8, 4, 2, 2);
    let t = std::time::Instant::now();
    let first = readlab::runner::null_cost(&cfg, 64 << 20).unwrap();
    let took = t.elapsed();
    assert!(
        first.cpu_us_per_io > 0.0 && first.iops > 10_000.0,
        "{first:?}"
    );
    assert!(
        took >= readlab::runner::SELF_COST_WINDOW && took < std::time::Duration::from_secs(5),
        "{took:?}"
    );
    // The same shape with another engine: from memory.
    cfg.engine = EngineKind::Libaio;
    let t = std::time::Instant::now();
    let again = readlab::runner::null_cost(&cfg, 64 << 20).unwrap();
    assert_eq!(again, first);
    assert!(
        t.elapsed() < readlab::runner::SELF_COST_WINDOW,
        "{:?}",
        t.elapsed()
    );
    // A shape no run could have is bad input, measured or not.
    cfg.bs = 1 << 30;
    assert!(
        readlab::runner::null_cost(&cfg, 64 << 20)
            .unwrap_err()
            .is_bad_input()
    );
}
