//! End-to-end: `readlab run --job FILE.fio` runs each job section of a fio job file, in file
//! order, and ends with the verdict over them; a file asking for what readlab cannot do is
//! refused with every problem by section and line, exit 2, before anything runs. The job files
//! readlab writes (`run --write-job`, `tune`'s `job-<bs>.fio`) are accepted by fio itself
//! (`fio --parse-only`) and by `readlab run --job`.

use crate::common;
use common::*;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// fio itself accepts the job file (fio is installed by scripts/test-deps).
fn fio_accepts(job: &Path) {
    let o = Command::new("fio")
        .args(["--parse-only", s(job)])
        .output()
        .expect("fio is installed (scripts/test-deps)");
    assert!(
        o.status.success(),
        "fio --parse-only refused {}: {}{}\n{}",
        job.display(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
        std::fs::read_to_string(job).unwrap()
    );
}

#[test]
fn two_read_sections_run_in_order_and_end_with_a_verdict() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    let job = d.path().join("two.fio");
    std::fs::write(
        &job,
        format!(
            "; two reads, as a team's job file has them\n\
             [global]\n\
             filename={}\n\
             ioengine=io_uring\n\
             bs=4k\n\
             direct=1\n\
             runtime=300ms\n\
             time_based\n\
             group_reporting\n\
             \n\
             [qd1]\n\
             rw=randread\n\
             iodepth=1\n\
             \n\
             # the deeper queue, after the first\n\
             [qd16]\n\
             stonewall\n\
             rw=randread\n\
             iodepth=16\n",
            s(&f)
        ),
    )
    .unwrap();
    fio_accepts(&job);
    let o = run(&["run", "--job", s(&job), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let row = |l: &str| out.lines().position(|x| x.starts_with(l)).unwrap();
    let (a, b) = (row("U1B1 "), row("U16B1 "));
    assert!(a < b, "not in file order:\n{out}");
    assert!(out.contains("Verdict"), "no verdict:\n{out}");
    let err = unwrapped(&stderr(&o));
    assert!(
        err.contains("time_based: ignored: readlab always runs for the whole runtime")
            && err.contains("group_reporting: ignored"),
        "{err}"
    );
    // The same as JSON: two documents, the job file's settings in each.
    let o = run(&["run", "--job", s(&job), "-q", "--output", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let docs = json(&o);
    let docs = docs.as_array().unwrap();
    assert_eq!(docs.len(), 2);
    for d in docs {
        assert_eq!(d["config"]["engine"], "uring");
        assert_eq!(d["config"]["runtime"], 0.3);
        assert_eq!(d["config"]["target"], s(&f));
    }
}

#[test]
fn a_job_file_readlab_cannot_honour_is_refused_with_every_line_before_anything_runs() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let before = std::fs::read(&f).unwrap();
    let job = d.path().join("bad.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\n\
             filename={}\n\
             runtime=30s\n\
             [reads]\n\
             rw=randread\n\
             [writes]\n\
             rw=randwrite\n\
             verify=crc32c\n\
             [two-files]\n\
             filename=/a::/b\n\
             ioengine=psync\n\
             bsrange=4k-8k\n\
             norandommap\n\
             ioscheduler=none\n\
             frobnicate=1\n",
            s(&f)
        ),
    )
    .unwrap();
    let t = Instant::now();
    let o = run(&["run", "--job", s(&job)]);
    assert!(t.elapsed() < Duration::from_secs(10), "it ran something");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    for (line, section, what) in [
        (7, "writes", "readlab only reads"),
        (8, "writes", "verify=crc32c"),
        (10, "two-files", "an empty file name"),
        (12, "two-files", "draws sizes at random"),
        (14, "two-files", "I/O scheduler"),
        (15, "two-files", "'frobnicate'"),
    ] {
        let want = format!("{}: line {line} [{section}]: ", s(&job));
        let hit = err.lines().find(|l| l.contains(&want));
        assert!(
            hit.is_some_and(|l| l.contains(what)),
            "no '{want}…{what}' in:\n{err}"
        );
    }
    assert!(
        err.contains("6 things readlab cannot honour; nothing ran"),
        "{err}"
    );
    assert!(std::fs::read(&f).unwrap() == before, "the target changed");
}

#[test]
fn a_missing_or_odd_job_file_is_one_line() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    for (job, want) in [
        (d.path().join("missing.fio"), "cannot read the job file"),
        (d.path().to_path_buf(), "not a regular file"),
    ] {
        let o = run(&["run", "--job", s(&job)]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }
    // No filename=: TARGET stands in for it; without one, the job's line says so.
    let job = d.path().join("nofile.fio");
    std::fs::write(&job, "[a]\nrw=read\nruntime=100ms\n").unwrap();
    let o = run(&["run", "--job", s(&job), "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("line 1 [a]: no filename="),
        "{}",
        stderr(&o)
    );
    let o = run(&["run", "--job", s(&job), s(&f), "-q", "--output", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["config"]["rw"], "read");
}

#[test]
fn run_writes_the_job_file_of_its_configuration_for_fio_and_for_readlab() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    let job = d.path().join("pick.fio");
    let o = run(&[
        "run",
        "--engine=uring",
        "--iodepth=8",
        "--batch=2",
        "--complete-min=2",
        "--fixed-files",
        "--fixed-bufs",
        "--numjobs=2",
        "--ramp=100ms",
        "--runtime=300ms",
        "--write-job",
        s(&job),
        s(&f),
        "-q",
        "--output=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["result"]["label"], "U8B2MFT2");
    fio_accepts(&job);
    let o = run(&["run", "--job", s(&job), "-q", "--output=json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = json(&o);
    assert_eq!(doc["result"]["label"], "U8B2MFT2");
    assert_eq!(doc["config"]["ramp"], 0.1);
    assert_eq!(doc["config"]["complete_min"], 2);
    // Several configurations are no one job file; the file is not written over test data.
    let o = run(&["run", "--engine=psync,uring", "--write-job", s(&job), s(&f)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = run(&["run", "--write-job", s(&f), s(&f), "--runtime=100ms"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn tune_writes_a_job_file_beside_each_profile_that_fio_and_readlab_replay() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    let out = d.path().join("tune");
    let o = run(&[
        "tune",
        "--budget=10s",
        "--engines=uring",
        "--repeat=1",
        "--out",
        s(&out),
        s(&f),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let profile: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("profile-4k.json")).unwrap()).unwrap();
    let job = out.join("job-4k.fio");
    assert!(
        unwrapped(&stdout(&o)).contains(&format!("fio job: {}", s(&job))),
        "{}",
        stdout(&o)
    );
    fio_accepts(&job);
    let o = run(&[
        "run",
        "--job",
        s(&job),
        "--runtime=300ms",
        "-q",
        "--output=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["result"]["label"], profile["label"]);
    // The profile's replay can write it too.
    let again = d.path().join("again.fio");
    let o = run(&[
        "run",
        "--profile",
        s(&out.join("profile-4k.json")),
        "--runtime=1s",
        "--write-job",
        s(&again),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    fio_accepts(&again);
}

/// The corpus of job files as people write them (tests/fixtures/fio-corpus: logging and clock
/// options, a synchronous engine given a depth, skewed access, mixed block sizes, a rate, a file
/// size, one-size ranges, think time and loops, one job over two files): readlab
/// runs every job, exit 0, with one note per option it ignored or read its own way (not one per
/// job); fio runs the same files.
#[test]
fn job_files_as_people_write_them_run_with_one_note_per_option() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    // files.fio's second file (its TARGET2).
    prepare(d.path(), "f2", "16M");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fio-corpus");
    for (name, jobs, notes) in [
        (
            "logging.fio",
            1,
            &[
                "time_based",
                "group_reporting",
                "thread",
                "write_lat_log",
                "write_bw_log",
                "write_iops_log",
                "log_avg_msec",
                "per_job_logs",
                "clocksource",
                "percentile_list",
                "disk_util",
            ][..],
        ),
        ("psync16.fio", 2, &["time_based", "iodepth"][..]),
        (
            "skewed.fio",
            3,
            &["time_based", "norandommap", "randrepeat"][..],
        ),
        ("mixed.fio", 2, &["time_based", "norandommap"][..]),
        ("think.fio", 2, &["time_based"][..]),
        ("files.fio", 2, &["time_based"][..]),
        (
            "rate.fio",
            3,
            &[
                "time_based",
                "latency_target",
                "latency_window",
                "latency_percentile",
                "rate_iops",
            ][..],
        ),
    ] {
        let text = std::fs::read_to_string(corpus.join(name))
            .unwrap()
            .replace("TARGET", s(&f));
        let job = d.path().join(name);
        std::fs::write(&job, text).unwrap();
        let o = run(&["run", "--job", s(&job), "-q", "--output", "json"]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let docs = json(&o);
        let ran = docs.as_array().map_or(1, Vec::len);
        assert_eq!(ran, jobs, "{name}");
        let err = stderr(&o);
        let said: Vec<&str> = err
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("readlab: note: {}: ", job.display())))
            .map(|l| l.split(':').next().unwrap())
            .collect();
        assert_eq!(said, notes, "{name}: {err}");
        // fio runs the same file (its logs land in the temporary directory).
        let o = Command::new("fio")
            .args(["--output-format=json", s(&job)])
            .current_dir(d.path())
            .output()
            .expect("fio is installed (scripts/test-deps)");
        assert!(
            o.status.success(),
            "fio {name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        // fio prints its own notes before the document (psync at depth 16 is one).
        let out = String::from_utf8_lossy(&o.stdout);
        let fio: serde_json::Value =
            serde_json::from_str(&out[out.find("\n{").map_or(0, |i| i + 1)..])
                .unwrap_or_else(|e| panic!("fio {name}: {e}: {out}"));
        assert_eq!(
            fio["jobs"].as_array().map(Vec::len),
            Some(jobs + (name == "psync16.fio") as usize),
            "{name}"
        );
    }
}

/// fio's think time and loops in a job file: the pauses as asked (one per `thinktime_blocks`
/// reads, counted, not timed), a size-based `loops=3` reading its range three times and ending
/// there, and `loops` beside `time_based` moot with a note, as in fio. The job file `run
/// --write-job` writes says them back in fio's words (no time_based beside loops), and fio takes it.
#[test]
fn think_time_and_loops_in_a_job_file_and_back() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let job = d.path().join("think.fio");
    let text = format!(
        "[global]\nfilename={}\nbs=4k\n[think]\nrw=randread\nio_size=160k\nthinktime=1ms\nthinktime_blocks=8\n[scan]\nstonewall\nrw=read\nbs=64k\nsize=2m\nloops=3\n[moot]\nstonewall\nloops=3\ntime_based\nruntime=100ms\n",
        s(&f)
    );
    std::fs::write(&job, text).unwrap();
    let o = run(&["run", "--job", s(&job), "-q", "--output=json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let docs = json(&o);
    let (think, scan, moot) = (&docs[0]["result"], &docs[1]["result"], &docs[2]);
    assert_eq!(think["ios"], 40);
    assert_eq!(think["think"]["pauses"], 5, "{think:#}");
    assert_eq!(think["think"]["asked"]["think_us"], 1000);
    // Three passes over 2 MiB, in 64 KiB reads, and not a read more.
    assert_eq!(scan["bytes"], 3 * (2 << 20));
    assert_eq!(scan["ended_by"], "io-limit");
    assert_eq!(docs[1]["config"]["loops"], 3);
    assert!(moot["config"].get("loops").is_none(), "{moot:#}");
    assert!(
        unwrapped(&stderr(&o)).contains("loops=3 beside time_based: the runtime ends the job"),
        "{}",
        stderr(&o)
    );

    let back = d.path().join("back.fio");
    let o = run(&[
        "run",
        "--thinktime",
        "2ms",
        "--thinktime-blocks",
        "4",
        "--thinktime-spin",
        "500us",
        "--loops",
        "2",
        "--size",
        "1m",
        "--rw",
        "read",
        "--write-job",
        s(&back),
        s(&f),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let written = std::fs::read_to_string(&back).unwrap();
    for line in [
        "thinktime=2000\n",
        "thinktime_spin=500\n",
        "thinktime_blocks=4\n",
        "loops=2\n",
    ] {
        assert!(written.contains(line), "{line}: {written}");
    }
    assert!(!written.contains("time_based"), "{written}");
    fio_accepts(&back);
    let o = run(&["run", "--job", s(&back), "-q", "--output=json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = &json(&o)["result"];
    assert_eq!(r["bytes"], 2 * (1 << 20));
    assert_eq!(r["think"]["pauses"], 2 * 256 / 4);
}

/// Reads per file in an offsets log: readlab's `--log-offsets` (`FILE OFFSET` per read of a job
/// over several files) or fio's `--write_iolog` (`FILE read OFFSET LEN` per read, in its iolog
/// version 2, or 3 with a time first) offset checked to fall in its file.
fn reads_per_file(log: &str, files: &[(&Path, u64)]) -> Vec<u64> {
    let mut n = vec![0; files.len()];
    for l in log.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        let (file, offset) = match w.as_slice() {
            [f, o] => (*f, *o),
            [f, "read", o, _] | [_, f, "read", o, _] => (*f, *o),
            _ => continue,
        };
        let i = files
            .iter()
            .position(|(p, _)| s(p) == file)
            .unwrap_or_else(|| panic!("a read of {file}, not a file of the job: {l}"));
        let offset: u64 = offset.parse().unwrap();
        assert!(offset + 4096 <= files[i].1, "{l}: past the end of its file");
        n[i] += 1;
    }
    n
}

/// fio's iolog of `job` (it reads the same files), as text.
fn fio_iolog(dir: &Path, job: &Path) -> String {
    let log = dir.join("fio.iolog");
    let _ = std::fs::remove_file(&log);
    let o = Command::new("fio")
        .args([s(job), "--output-format=json"])
        .arg(format!("--write_iolog={}", s(&log)))
        .current_dir(dir)
        .output()
        .expect("fio is installed (scripts/test-deps)");
    assert!(
        o.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read_to_string(&log).unwrap()
}

/// One job over two files of different sizes (`filename=A:B`, and fio's `directory=` with
/// `nrfiles=2`): readlab reads both, every byte verified, each read at an offset within its own
/// file, and splits the reads between them as fio does — round robin half each (not in
/// proportion to the files' sizes, which a job reading the two as one would do), random about
/// half each — fio's own iolog of the same job says the same. Each run asks for 2000 reads
/// (io_size), not a time.
#[test]
fn a_job_over_two_files_splits_its_reads_as_fio_does() {
    let d = disk_dir();
    let (a, b) = (prepare(d.path(), "a", "8M"), prepare(d.path(), "b", "32M"));
    let dir_files = [
        prepare(d.path(), "two.0.0", "8M"),
        prepare(d.path(), "two.0.1", "32M"),
    ];
    let sizes = [8 << 20, 32 << 20];
    for (k, (service, job_text, files)) in [
        (
            "roundrobin",
            format!("filename={}:{}\n", s(&a), s(&b)),
            [&a, &b],
        ),
        (
            "random",
            format!("filename={}:{}\nfile_service_type=random\n", s(&a), s(&b)),
            [&a, &b],
        ),
        (
            "roundrobin",
            format!("directory={}\nnrfiles=2\n", s(d.path())),
            [&dir_files[0], &dir_files[1]],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let job = d.path().join("two.fio");
        std::fs::write(
            &job,
            format!(
                "[two]\n{job_text}ioengine=libaio\niodepth=4\ndirect=1\nrw=randread\nbs=4k\n\
                 io_size=8000k\nruntime=60s\n"
            ),
        )
        .unwrap();
        let files: Vec<(&Path, u64)> = files.iter().map(|f| f.as_path()).zip(sizes).collect();
        let log = d.path().join(format!("offsets-{k}.txt"));
        let o = run(&[
            "run",
            "--job",
            s(&job),
            "--verify",
            "--log-offsets",
            s(&log),
            "--output",
            "json",
            "-q",
        ]);
        assert!(o.status.success(), "{service} {job_text}: {}", stderr(&o));
        let doc = json(&o);
        let r = &doc["result"];
        assert_eq!(r["verify"]["mismatches"], 0, "{r}");
        assert_eq!(r["verify"]["checked_ios"], 2000, "{r}");
        let ours = reads_per_file(&std::fs::read_to_string(&log).unwrap(), &files);
        let fio = reads_per_file(&fio_iolog(d.path(), &job), &files);
        assert_eq!(
            (ours.iter().sum::<u64>(), fio.iter().sum::<u64>()),
            (2000, 2000)
        );
        let share = |n: &[u64]| n[0] as f64 / 2000.0;
        if service == "roundrobin" {
            assert_eq!(ours, [1000, 1000], "{job_text}");
        }
        assert!(
            (share(&ours) - 0.5).abs() < 0.05 && (share(&ours) - share(&fio)).abs() < 0.06,
            "{service}: readlab {ours:?}, fio {fio:?}"
        );
    }
}
