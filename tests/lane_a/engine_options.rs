//! End-to-end, every option row of every engine's table (`readlab::engine::option::all()`, so a
//! row added to an engine is walked here without a line in this file) through the real binary:
//! on `run`'s command line it is accepted with its engine and refused with every other engine
//! (exit 2, naming the engine it needs) unless fio's name makes it one of that engine's rows
//! (`--hipri` is io_uring's `--iopoll`); beside `--profile` and beside `--job` it is refused
//! (exit 2, one line) rather than silently overridden by what the profile or the job says; a job
//! file gives it under fio's name where fio has one; `serve` takes it for the engines the server
//! reads through. A row the command line's derivation leaves out fails here.

use crate::common;
use crate::nbd_common;

use common::*;
use readlab::engine::EngineKind;
use readlab::engine::option::{self, EngineOption, Value};
use std::process::Output;

/// The row with flag `flag`.
fn row(flag: &str) -> &'static EngineOption {
    option::all().find(|(_, d)| d.flag == flag).unwrap().1
}

/// The value the walk gives a row: a switch on, a count of 2, a CPU number 0, 300 of a unit.
fn value(d: &EngineOption) -> u64 {
    match d.value {
        Value::Switch => 1,
        Value::Count => 2,
        Value::Setting { unit: "", .. } => 0,
        Value::Setting { .. } => 300,
    }
}

/// Row `d` on the command line with its walk's value (`--fixed-files`, `--pool-threads=2`).
fn flag(d: &EngineOption) -> String {
    match d.value {
        Value::Switch => format!("--{}", d.flag),
        Value::Setting { unit, .. } => format!("--{}={}{unit}", d.flag, value(d)),
        Value::Count => format!("--{}={}", d.flag, value(d)),
    }
}

/// What the result's configuration holds for row `d` set to `n`.
fn stored(d: &EngineOption, n: u64) -> serde_json::Value {
    match d.value {
        Value::Switch => true.into(),
        _ => n.into(),
    }
}

/// One result document of `o`'s JSON (the first, when there are several).
fn document(o: &Output) -> Option<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).ok()?;
    Some(match v {
        serde_json::Value::Array(mut docs) if !docs.is_empty() => docs.remove(0),
        v => v,
    })
}

/// The row of `kind` another row `d` of it says it needs (`--sqpoll-cpu needs --sqpoll`).
fn needs(kind: EngineKind, d: &EngineOption, o: &Output) -> Option<&'static EngineOption> {
    let err = unwrapped(&stderr(o));
    kind.spec()
        .options
        .iter()
        .find(|e| err.contains(&format!("--{} needs --{}", d.flag, e.flag)))
}

/// `readlab run TARGET --engine KIND FLAGS…` for a moment, as JSON.
fn run_with(target: &str, kind: EngineKind, flags: &[String]) -> Output {
    let mut args = vec![
        "run",
        target,
        "--engine",
        kind.name(),
        "--runtime",
        "100ms",
        "-q",
        "--output",
        "json",
    ];
    args.extend(flags.iter().map(String::as_str));
    run(&args)
}

/// Accepted: the run has row `d` as `n` in its configuration, or the target refused the feature
/// by its flag (a device without poll queues refuses `--iopoll`), never the command line (an
/// unknown flag, a conflict) or the configuration (an option of another engine).
fn assert_accepted(o: &Output, d: &EngineOption, n: u64, what: &str) {
    let err = unwrapped(&stderr(o));
    match document(o) {
        Some(doc) => assert_eq!(
            doc["config"]["options"][d.column],
            stored(d, n),
            "{what}: {err}"
        ),
        None => assert!(
            err.contains(&format!("--{}", d.flag))
                && err.contains("device")
                && ![
                    "needs --engine",
                    "unexpected argument",
                    "cannot be used with"
                ]
                .iter()
                .any(|w| err.contains(w)),
            "{what}: neither a result nor the target refusing --{}: {err}",
            d.flag,
        ),
    }
}

/// Refused as bad input: exit 2 and one line on stderr saying `needle`.
fn assert_refused(o: &Output, needle: &str, what: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: not one line: {err}");
    assert!(err.contains(needle), "{what}: no '{needle}' in: {err}");
}

/// The rows `first` (a flag standing for row `d` of `kind`) runs with: `d`, and each row of its
/// engine it says it needs (`--sqpoll-cpu needs --sqpoll`); with the last run's output.
fn with_needs(
    target: &str,
    kind: EngineKind,
    first: &str,
    d: &'static EngineOption,
) -> (Vec<&'static EngineOption>, Output) {
    let mut rows = vec![d];
    loop {
        let flags: Vec<String> = std::iter::once(first.to_string())
            .chain(rows[1..].iter().map(|e| flag(e)))
            .collect();
        let o = run_with(target, kind, &flags);
        match rows.iter().find_map(|e| needs(kind, e, &o)) {
            Some(e) if !rows.iter().any(|r| r.flag == e.flag) => rows.push(e),
            _ => return (rows, o),
        }
    }
}

#[test]
fn every_option_is_its_engines_flag_and_refused_with_another_engine() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let server = nbd_common::readlab_serve(&[s(&f)]);
    let target = |k: EngineKind| {
        if k.name() == "nbd" {
            server.url.clone()
        } else {
            s(&f).to_string()
        }
    };
    let mut walked = 0;
    for (kind, d) in option::all() {
        walked += 1;
        let (rows, o) = with_needs(&target(kind), kind, &flag(d), d);
        let what = format!(
            "{:?} --engine {}",
            rows.iter().map(|e| e.flag).collect::<Vec<_>>(),
            kind.name()
        );
        assert_accepted(&o, d, value(d), &what);
        for other in EngineKind::all().filter(|&o| o != kind) {
            let what = format!("{} --engine {}", flag(d), other.name());
            match option::on_command_line(other, d) {
                // fio's name for one of the other engine's rows: that row (with what it needs).
                Some(e) => {
                    let (_, o) = with_needs(&target(other), other, &flag(d), e);
                    assert_accepted(&o, e, 1, &what);
                }
                None => {
                    let o = run_with(&target(other), other, &[flag(d)]);
                    let needle = format!("--{} needs --engine {}", d.flag, kind.name());
                    assert_refused(&o, &needle, &what);
                }
            }
        }
    }
    assert!(walked >= 10, "only {walked} option rows");
}

#[test]
fn beside_a_profile_or_a_job_every_option_is_refused() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let p = d.path().join("profile.json");
    profile(&p, &f, |c| c["engine"] = "psync".into());
    let j = d.path().join("job.fio");
    std::fs::write(&j, format!("[a]\nfilename={}\nruntime=100ms\n", s(&f))).unwrap();
    // Alone, the profile and the job run.
    for replay in [["--profile", s(&p)], ["--job", s(&j)]] {
        let mut args = vec!["run", "--runtime", "100ms", "-q"];
        args.extend(replay);
        let o = run(&args);
        assert!(o.status.success(), "{replay:?}: {}", stderr(&o));
    }
    for (kind, d) in option::all() {
        for replay in [["--profile", s(&p)], ["--job", s(&j)]] {
            let given = flag(d);
            let mut args = vec!["run", "--runtime", "100ms", "-q"];
            args.extend(replay);
            args.push(&given);
            let o = run(&args);
            let what = format!("{} (of {}) beside {}", given, kind.name(), replay[0]);
            assert_refused(&o, "cannot be used with", &what);
            assert!(
                stderr(&o).contains(&format!("--{}", d.flag)),
                "{what}: {}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn a_job_file_gives_each_option_under_fios_name() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let mut walked = 0;
    for (kind, d_row) in option::all() {
        let Some(fio) = d_row.fio else { continue };
        walked += 1;
        let mut lines = format!(
            "[a]\nfilename={}\nioengine={}\nruntime=100ms\n",
            s(&f),
            kind.fio_name()
        );
        for e in with_needs(s(&f), kind, &flag(d_row), d_row).0 {
            let name = e
                .fio
                .unwrap_or_else(|| panic!("{fio} needs --{}, which fio has no name for", e.flag));
            lines.push_str(&format!("{name}={}\n", value(e)));
        }
        let j = d.path().join(format!("{}.fio", d_row.flag));
        std::fs::write(&j, &lines).unwrap();
        let o = run(&["run", "--job", s(&j), "-q", "--output", "json"]);
        assert_accepted(&o, d_row, value(d_row), &format!("{fio}= in:\n{lines}"));
    }
    assert!(walked >= 7, "only {walked} rows with fio's names");
    // fio's hipri is io_uring's polled completions (a row of its own under that name).
    assert_eq!(row("iopoll").fio, Some("hipri"));
}

#[test]
fn serve_takes_the_options_of_the_engines_it_reads_through() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let serve = |kind: EngineKind, given: &[String]| {
        let mut args = vec![
            "serve",
            s(&f),
            "--listen",
            "127.0.0.1:0",
            "--runtime",
            "100ms",
            "-q",
            "--engine",
            kind.name(),
        ];
        args.extend(given.iter().map(String::as_str));
        run(&args)
    };
    // The server reads local storage: the nbd client's options are not its own.
    for (kind, d) in option::all().filter(|(k, _)| k.name() != "nbd") {
        let rows = with_needs(s(&f), kind, &flag(d), d).0;
        let mut flags: Vec<String> = rows.iter().map(|e| flag(e)).collect();
        let what = format!("serve {flags:?} --engine {}", kind.name());
        let o = serve(kind, &flags);
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        flags.truncate(1);
        let o = serve(EngineKind::Psync, &flags);
        assert_refused(
            &o,
            &format!("--engine {}", kind.name()),
            &format!("{flags:?} --engine psync"),
        );
    }
}
