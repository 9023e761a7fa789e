//! End-to-end: `readlab run` understands fio's words — its engine names, `--ioengine`,
//! `--name=value` forms, `--direct=0|1`, `--filename=` and its option names — accepts the fio
//! options that ask for what readlab always does with a note, and refuses the rest by name with
//! what to use instead (exit 2, one line, nothing run). Also the run flags that used to mean
//! something else silently: `--tolerance 10`, `--complete-min` above `--batch`, two `--name`s for
//! one target, `--profile` or `--job` beside a workload flag, `--offset` on an NBD export. fio's
//! `--name=JOB` names a run's one target.

use crate::common;
use crate::nbd_common;
use common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Exit 2 within seconds, the error on one line naming `want`, nothing on stdout.
fn refused(args: &[&str], want: &str) {
    let t = Instant::now();
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(t.elapsed() < Duration::from_secs(10), "{args:?} took long");
    assert!(err.contains(want), "{args:?}: no '{want}' in: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
    assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
}

#[test]
fn the_fio_command_line_of_the_issue_runs_and_labels_u16b1() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    let o = run(&[
        "run",
        "--ioengine=io_uring",
        "--iodepth=16",
        "--bs=4k",
        "--rw=randread",
        "--direct=1",
        "--runtime=1",
        s(&f),
        "--output=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["result"]["label"], "U16B1");
    assert_eq!(doc["config"]["direct"], true);
    // A bare number of seconds, as fio writes runtime.
    let secs = doc["result"]["seconds"].as_f64().unwrap();
    assert!((0.9..1.5).contains(&secs), "ran {secs} s");
}

/// fio's `--name=JOB` names its one job: readlab names the run's one target with it, in the
/// terminal and the JSON alike; with two targets it asks which one.
#[test]
fn fio_s_job_name_names_the_one_target() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let g = prepare(d.path(), "g", "16M");
    let args = [
        "run",
        "--name=job",
        "--engine=null",
        "--runtime=200ms",
        s(&f),
    ];
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let row = stdout(&o)
        .lines()
        .find(|l| l.starts_with("job "))
        .map(str::to_string);
    assert!(row.is_some(), "no row named job: {}", stdout(&o));
    let o = run(&[&args[..], &["--output=json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["targets"][0]["name"], "job");
    refused(
        &["run", "--name=job", "--engine=null", s(&f), s(&g)],
        "TARGET=NAME",
    );
}

#[test]
fn fio_engine_names_each_run_their_readlab_engine() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let o = run(&[
        "run",
        "--ioengine=sync,psync,pvsync2,libaio,io_uring,posixaio,null",
        "--runtime=150ms",
        s(&f),
        "--output=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let docs = json(&o);
    let engines: Vec<&str> = docs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["config"]["engine"].as_str().unwrap())
        .collect();
    assert_eq!(
        engines,
        [
            "psync", "psync", "pvsync2", "libaio", "uring", "posixaio", "null"
        ]
    );
    refused(&["run", "--ioengine=mmap", s(&f)], "unknown engine 'mmap'");
}

#[test]
fn fio_option_names_set_readlab_s_options() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "32M");
    let o = run(&[
        "run",
        &format!("--filename={}", s(&f)),
        "--ioengine=io_uring",
        "--iodepth=8",
        "--iodepth_batch_submit=2",
        "--iodepth_batch_complete_min=2",
        "--iodepth_batch_complete_max=2",
        "--registerfiles",
        "--fixedbufs",
        "--numjobs=2",
        "--size=16m",
        "--ramp_time=100ms",
        "--randseed=7",
        "--runtime=300ms",
        "--output=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    let c = &doc["config"];
    assert_eq!(doc["result"]["label"], "U8B2MFT2");
    assert_eq!(c["complete_min"], 2);
    assert_eq!(c["size"], 16 << 20);
    assert_eq!(c["ramp"], 0.1);
    assert_eq!(c["seed"], 7);
    assert_eq!(c["target"], s(&f));
}

#[test]
fn direct_takes_fio_s_zero_or_one_and_stays_a_plain_flag() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let direct = |args: &[&str]| {
        let mut a = vec!["run", "--runtime=150ms", "--output=json", s(&f)];
        a.extend_from_slice(args);
        let o = run(&a);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        json(&o)["config"]["direct"].as_bool().unwrap()
    };
    assert!(direct(&["--direct=1"]));
    assert!(direct(&["--direct"]));
    assert!(!direct(&["--direct=0"]));
    assert!(!direct(&["--buffered"]));
    assert!(direct(&[]));
    refused(&["run", "--direct=1", "--buffered", s(&f)], "--buffered");
    refused(&["run", "--direct=2", s(&f)], "not 0 or 1");
    refused(
        &["run", &format!("--filename={}:{}", s(&f), s(&f))],
        "named twice",
    );
}

#[test]
fn options_that_ask_for_what_readlab_does_are_noted() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let o = run(&[
        "run",
        "--time_based",
        "--group_reporting",
        "--thread",
        "--norandommap",
        "--randrepeat=0",
        "--runtime=150ms",
        "-q",
        s(&f),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = unwrapped(&stderr(&o));
    for k in [
        "time_based",
        "group_reporting",
        "thread",
        "norandommap",
        "randrepeat",
    ] {
        assert!(
            err.contains(&format!("note: --{k}:")) && err.contains("ignored"),
            "no note for {k}: {err}"
        );
    }
}

#[test]
fn writing_patterns_and_fio_only_options_are_refused_by_name() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let before = std::fs::read(&f).unwrap();
    for rw in ["write", "randwrite", "rw", "randrw", "trim", "randtrim"] {
        let flag = format!("--rw={rw}");
        let o = run(&["run", &flag, s(&f)]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{rw}: {err}");
        assert!(err.contains("readlab only reads"), "{rw}: {err}");
        assert!(!err.contains("similar value"), "{rw}: {err}");
    }
    for (arg, want) in [
        ("--ioscheduler=none", "--ioscheduler is fio's"),
        ("--verify=crc32c", "readlab checks every byte"),
        ("--rwmixread=70", "readlab only reads"),
        ("--startdelay=1", "stonewall"),
        ("--rate_iops=100", "readlab run's is --rate"),
        ("--cpus_allowed=0", "taskset"),
        ("--bsrange=4k-8k", "use `bssplit=`"),
        ("--time_based=1", "--time_based"),
    ] {
        refused(&["run", arg, s(&f)], want);
    }
    assert!(std::fs::read(&f).unwrap() == before, "the target changed");
}

/// `--tolerance 10` was 1000 % (a check that could never fail): a bare number above 1 is refused.
#[test]
fn tolerance_without_percent_sign_is_refused() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    refused(&["run", "--tolerance", "10", s(&f)], "write 10%");
    refused(&["run", "--tolerance", "1.5", s(&f)], "150 %");
    // Well-formed values parse: what is missing then is only --check (the tolerance holds a
    // check's replay, and alone is refused).
    for ok in ["10%", "0.1", "1"] {
        let o = run(&["run", "--tolerance", ok, "--runtime=100ms", "-q", s(&f)]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "--tolerance {ok}: {err}");
        assert!(
            err.contains("not provided") && err.contains("--check"),
            "--tolerance {ok}: {err}"
        );
    }
}

#[test]
fn complete_min_above_batch_is_refused() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    refused(
        &[
            "run",
            "--engine=libaio",
            "--iodepth=8",
            "--batch=2",
            "--complete-min=4",
            s(&f),
        ],
        "--complete-min=4 is more than --batch=2",
    );
    refused(
        &[
            "run",
            "--engine=libaio",
            "--iodepth=8",
            "--batch=2",
            "--iodepth_batch_complete_max=4",
            s(&f),
        ],
        "iodepth_batch_complete_max",
    );
}

#[test]
fn two_names_for_one_target_are_refused() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let g = prepare(d.path(), "g", "16M");
    let a = format!("{}=one", s(&f));
    let b = format!("{}=two", s(&f));
    refused(
        &["run", s(&f), s(&g), "--name", &a, "--name", &b],
        "already named 'one'",
    );
}

#[test]
fn a_workload_flag_beside_a_profile_or_a_job_is_refused() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let p = d.path().join("profile.json");
    let j = d.path().join("job.fio");
    std::fs::write(&j, format!("[a]\nfilename={}\n", s(&f))).unwrap();
    for (flag, value) in [
        ("--bs", "8k"),
        ("--engine", "libaio"),
        ("--iodepth", "4"),
        ("--numjobs", "2"),
        ("--rw", "read"),
        ("--direct", "0"),
    ] {
        let arg = format!("{flag}={value}");
        refused(&["run", "--profile", s(&p), &arg], "cannot be used with");
        refused(&["run", "--job", s(&j), &arg], "cannot be used with");
    }
}

/// `--offset`/`--size` on an NBD export are honoured: the range outside them is never read (a
/// corrupted byte there goes unseen with --verify), the range inside is (it is found).
#[test]
fn offset_on_an_nbd_export_is_honoured() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    flip_byte(&f, 1000);
    let server = nbd_common::readlab_serve(&[s(&f)]);
    let read = |offset: &str| {
        run(&[
            "run",
            &server.url,
            "--engine=nbd",
            "--verify",
            &format!("--offset={offset}"),
            "--size=1m",
            "--runtime=400ms",
            "-q",
        ])
    };
    let outside = read("32m");
    assert!(outside.status.success(), "{}", stderr(&outside));
    let inside = read("0");
    assert_eq!(inside.status.code(), Some(1), "{}", stderr(&inside));
    assert_mismatch_reported(&inside, 1000);
    drop(server);
}

/// fio's `--filename=A:B` on the command line is one job over both files (its threads' reads
/// alternate between them, each verified, and its result names them), not two targets side by
/// side; `--file_service_type` picks among a job's files and is refused beside one file.
#[test]
fn filename_a_colon_b_is_one_job_over_two_files() {
    let d = disk_dir();
    let (a, b) = (prepare(d.path(), "a", "8M"), prepare(d.path(), "b", "16M"));
    let log = d.path().join("offsets.txt");
    let both = format!("--filename={}:{}", s(&a), s(&b));
    let o = run(&[
        "run",
        &both,
        "--io-limit",
        "400k",
        "--runtime",
        "30s",
        "--verify",
        "--log-offsets",
        s(&log),
        "--output",
        "json",
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["config"]["target"], s(&a));
    assert_eq!(doc["config"]["files"][0], s(&b));
    assert!(doc["targets"].as_array().is_none_or(Vec::is_empty), "{doc}");
    assert_eq!(doc["result"]["verify"]["checked_ios"], 100);
    let logged = std::fs::read_to_string(&log).unwrap();
    let of = |f: &Path| logged.lines().filter(|l| l.starts_with(s(f))).count();
    assert_eq!((of(&a), of(&b)), (50, 50), "{logged}");
    refused(
        &["run", "--file_service_type=random", s(&a)],
        "picks among a job's files",
    );
    refused(&["run", &both, "--file_service_type=zipf"], "roundrobin");
}
