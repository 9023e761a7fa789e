//! fio's vocabulary in readlab: its engine and pattern names, the options readlab has under
//! another name, those it refuses (and what to use instead), and fio job files — the read subset,
//! parsed into readlab's run configurations with every problem listed by section and line, and
//! written back from a configuration so that a pick of `readlab tune` replays in fio too.

mod check;
mod include;
mod option;
mod parse;
mod section;
mod vocabulary;
mod words;
mod write;

pub use check::complete_min_problem;
pub use include::MAX_JOB_FILE;
pub use parse::{MAX_JOBS, MAX_OPTIONS, parse};
pub use vocabulary::{
    Foreign, OPTIONS, Row, Treatment, foreign, markdown as options_markdown, row,
};
pub use words::*;
pub use write::{beside, fio_time, workload_options, write};

use crate::config::RunConfig;
use std::path::Path;

/// Read the job file at `path` (a regular file of at most [`MAX_JOB_FILE`], a leading byte-order
/// mark dropped; its includes read beside it); `default` gives what a job does not say (its
/// target when it has no filename=, the runtime when it has no runtime=, the seed, verify).
pub fn load(path: &Path, default: &RunConfig) -> Result<JobFile, JobError> {
    let text = crate::input::read_text(path, MAX_JOB_FILE, "job file")?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    parse::parse_in(&text, dir, default).map_err(|problems| JobError::Refused {
        path: path.into(),
        problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Rw;
    use crate::engine::{EngineKind, UringOptions};
    use std::path::PathBuf;
    use std::time::Duration;

    fn default() -> RunConfig {
        RunConfig::new("")
    }

    fn lines_of(p: &[Problem]) -> Vec<usize> {
        p.iter().map(|p| p.line).collect()
    }

    #[test]
    fn fio_engine_names_are_readlab_engines() {
        assert_eq!(engine("io_uring").unwrap(), EngineKind::Uring);
        assert_eq!(engine("uring").unwrap(), EngineKind::Uring);
        assert_eq!(engine("sync").unwrap(), EngineKind::Psync);
        assert_eq!(engine("psync").unwrap(), EngineKind::Psync);
        assert_eq!(engine("libaio").unwrap(), EngineKind::Libaio);
        assert_eq!(engine("pvsync2").unwrap(), EngineKind::Pvsync2);
        assert_eq!(engine("posixaio").unwrap(), EngineKind::Posixaio);
        assert_eq!(engine("null").unwrap(), EngineKind::Null);
        assert_eq!(engine("nbd").unwrap().name(), "nbd");
        let e = engine("mmap").unwrap_err().to_string();
        assert!(
            e.contains("unknown engine 'mmap'") && e.contains("io_uring"),
            "{e}"
        );
    }

    #[test]
    fn writing_patterns_are_refused_as_writes() {
        assert_eq!(rw("read").unwrap(), Rw::Read);
        for w in ["write", "randwrite", "rw", "randrw", "trim", "randtrim"] {
            let e = rw(w).unwrap_err().to_string();
            assert!(e.contains("readlab only reads"), "{w}: {e}");
        }
    }

    #[test]
    fn a_file_with_global_and_two_jobs() {
        let text = "; a comment\n# another\n[global]\nioengine=io_uring\nbs=4k\ndirect=1\nruntime=10\nfilename=/tmp/x\ntime_based\n\n[qd1]\niodepth=1\n\n[qd16]\nstonewall\niodepth=16\niodepth_batch_submit=4\niodepth_batch_complete_min=2\nregisterfiles\nfixedbufs=1\nnumjobs=2\nsize=1g\nramp_time=500ms\n";
        let f = parse(text, &default()).unwrap();
        assert_eq!(f.jobs.len(), 2);
        let (a, b) = (&f.jobs[0], &f.jobs[1]);
        assert_eq!((a.name.as_str(), a.line), ("qd1", 11));
        assert_eq!(a.config.label(), "U1B1");
        assert_eq!(a.config.runtime, Duration::from_secs(10));
        assert_eq!(a.config.target, PathBuf::from("/tmp/x"));
        assert_eq!(b.config.label(), "U16B4MFT2");
        assert_eq!(b.config.complete_min, 2);
        assert_eq!(b.config.size, Some(1 << 30));
        assert_eq!(b.config.ramp, Duration::from_millis(500));
        assert!(b.waits && f.concurrent_in_fio().is_empty());
        assert_eq!(f.notes.len(), 1);
        assert_eq!(f.notes[0].option, "time_based");
    }

    #[test]
    fn every_problem_is_listed_with_its_section_and_line() {
        let text = "[global]\nfilename=/tmp/x\n[r]\nrw=randread\n[w]\nrw=randwrite\nverify=crc32c\nbogus_option=3\n[p]\nioengine=psync\nbsrange=4k-8k\n";
        let p = parse(text, &default()).unwrap_err();
        assert_eq!(lines_of(&p), vec![6, 7, 8, 11], "{p:?}");
        assert_eq!(p[0].section.as_deref(), Some("w"));
        assert!(p[0].text.contains("readlab only reads"), "{}", p[0]);
        assert!(p[1].text.contains("--verify"), "{}", p[1]);
        assert!(p[2].text.contains("'bogus_option'"), "{}", p[2]);
        assert!(p[3].text.contains("bssplit="), "{}", p[3]);
        assert!(
            p[0].to_string()
                .starts_with("line 6 [w]: readlab only reads")
        );
    }

    #[test]
    fn think_time_and_loops_are_read_in_fios_units_and_refused_where_readlab_cannot() {
        let f = parse(
            "[global]\nfilename=/x\n[a]\nthinktime=250\nthinktime_spin=50\nthinktime_blocks=4\nthinktime_blocks_type=complete\nloops=2\n[b]\nthinktime_iotime=9\nthinktime=1ms\n",
            &default(),
        )
        .unwrap();
        let (a, b) = (&f.jobs[0].config, &f.jobs[1].config);
        let t = a.thinktime.unwrap();
        assert_eq!((t.think_us, t.spin_us, t.blocks), (250, 50, Some(4)));
        assert_eq!(a.loops, Some(2));
        let t = b.thinktime.unwrap();
        assert_eq!(
            (t.think_us, t.blocks, t.iotime_us),
            (1000, None, Some(9_000_000))
        );
        let p = parse(
            "[a]\nfilename=/x\nthinktime_blocks_type=issue\n[b]\nfilename=/x\nrate_iops=100\nthinktime=10\n[c]\nfilename=/x\nthinktime_spin=10\n",
            &default(),
        )
        .unwrap_err();
        assert_eq!(lines_of(&p), vec![3, 7, 10], "{p:?}");
        assert!(p[0].text.contains("completed I/Os"), "{}", p[0]);
        assert!(p[1].text.contains("one or the other"), "{}", p[1]);
        assert!(p[2].text.contains("add thinktime=TIME"), "{}", p[2]);
    }

    #[test]
    fn a_mix_of_sizes_is_read_and_takes_precedence_over_bs() {
        let f = parse(
            "[global]\nbs=8k\n[a]\nfilename=/x\nbssplit=4k/60:64k/40\nbs=16k\n",
            &default(),
        )
        .unwrap();
        let c = &f.jobs[0].config;
        assert_eq!(c.bssplit.to_string(), "4k/60:64k/40");
        assert_eq!(c.bs, 4096, "a mix's bs is its smallest size");
        assert!(f.notes.is_empty(), "{:?}", f.notes);
    }

    #[test]
    fn an_option_outside_sections_and_a_foreign_engine_option() {
        let text = "bs=4k\n[a]\nfilename=/a:/b\n[b]\nfilename=/c\\:d\nioengine=libaio\nfixedbufs\n";
        let p = parse(text, &default()).unwrap_err();
        assert_eq!(lines_of(&p), vec![1, 7], "{p:?}");
        assert!(p[1].text.contains("io_uring"), "{}", p[1]);
        let ok = parse("[b]\nfilename=/c\\:d\n", &default()).unwrap();
        assert_eq!(ok.jobs[0].config.target, PathBuf::from("/c:d"));
        assert!(ok.jobs[0].config.files.is_empty());
    }

    #[test]
    fn several_files_are_one_job_s_files() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("x"), b"").unwrap();
        let text = format!(
            "[a]\nfilename=/a:/c\\:d\nfile_service_type=random\n[b]\nfilename=x\ndirectory={}\n",
            d.path().display()
        );
        let f = parse(&text, &default()).unwrap();
        let a = &f.jobs[0].config;
        assert_eq!(a.target, PathBuf::from("/a"));
        assert_eq!(a.files, [PathBuf::from("/c:d")]);
        assert_eq!(a.file_service, crate::fileset::FileService::Random);
        assert_eq!(f.jobs[1].config.target, d.path().join("x"));
        for (bad, line) in [
            ("filename=/a::/b\n", 2),
            ("filename=/a\nfile_service_type=zipf:1.1\n", 3),
            ("filename=/a:/b\nnrfiles=3\n", 3),
            ("directory=/nonexistent-readlab\nnrfiles=2\n", 3),
            ("directory=/tmp\nnrfiles=2\nnumjobs=2\n", 3),
            ("filename=/a\nfilename_format=f.$filenum\n", 3),
        ] {
            let p = parse(&format!("[j]\n{bad}"), &default()).unwrap_err();
            assert_eq!(lines_of(&p), vec![line], "{bad}: {p:?}");
        }
        let p = parse(
            "[j]\ndirectory=/nonexistent-readlab\nnrfiles=2\n",
            &default(),
        );
        let text = &p.unwrap_err()[0].text;
        assert!(
            text.contains("/nonexistent-readlab/j.0.0") && text.contains("readlab prepare"),
            "{text}"
        );
        // The file cap is fileset's one rule, in the words of the option that named them.
        for (nrfiles, says) in [
            (
                "4097",
                "nrfiles=4097: 4097 files in one job; readlab reads at most 4096",
            ),
            ("0", "nrfiles=0: give a whole number of files"),
        ] {
            let p = parse(&format!("[j]\nnrfiles={nrfiles}\n"), &default()).unwrap_err();
            assert!(p.iter().any(|q| q.text.contains(says)), "{p:?}");
        }
        // A written job names its files as fio does, and reads back as the same job.
        let mut c = RunConfig::new("/a");
        c.files = vec!["/b:c".into()];
        c.file_service = crate::fileset::FileService::Sequential;
        let text = write(&c, "P", "").unwrap();
        assert!(text.contains("\nfilename=/a:/b\\:c\n"), "{text}");
        assert!(text.contains("\nfile_service_type=sequential\n"), "{text}");
        assert_eq!(parse(&text, &default()).unwrap().jobs[0].config, c);
    }

    #[test]
    fn no_filename_takes_the_default_target_or_says_so() {
        let p = parse("[a]\nrw=read\n", &default()).unwrap_err();
        assert!(p[0].text.contains("no filename="), "{}", p[0]);
        let f = parse("[a]\nrw=read\n", &RunConfig::new("/t")).unwrap();
        assert_eq!(f.jobs[0].config.target, PathBuf::from("/t"));
        assert_eq!(f.jobs[0].config.rw, Rw::Read);
        assert_eq!(f.concurrent_in_fio(), Vec::<&str>::new());
        let two = parse("[a]\n[b]\n", &RunConfig::new("/t")).unwrap();
        assert_eq!(two.concurrent_in_fio(), vec!["b"]);
    }

    #[test]
    fn complete_min_above_batch_is_refused() {
        let p = parse(
            "[a]\nfilename=/x\nioengine=libaio\niodepth=8\niodepth_batch_complete_min=4\n",
            &default(),
        )
        .unwrap_err();
        assert_eq!(lines_of(&p), vec![5]);
    }

    #[test]
    fn a_written_job_reads_back_as_the_same_configuration() {
        let mut c = RunConfig::new("/dev/x");
        c.engine = EngineKind::Uring;
        c.iodepth = 32;
        c.batch = 8;
        c.complete_min = 4;
        c.threads = 2;
        UringOptions::edit(&mut c.options, |o| (o.fixed_files, o.sqpoll) = (true, true));
        c.runtime = Duration::from_millis(1500);
        c.ramp = Duration::from_secs(1);
        c.seed = 7;
        c.random_distribution = "zipf:1.2".parse().unwrap();
        let text = write(&c, "U32B8FST2", "written by a test").unwrap();
        assert!(text.contains("\nrandom_distribution=zipf:1.2\n"), "{text}");
        let back = parse(&text, &default()).unwrap();
        assert_eq!(back.jobs[0].config, c, "{text}");
        let mut pool = c.clone();
        pool.engine = EngineKind::Pool;
        assert!(write(&pool, "x", "").is_err());
    }

    #[test]
    fn a_target_name_fio_would_read_as_another_is_not_written() {
        use std::os::unix::ffi::OsStrExt;
        for name in [&b"a\nb"[..], b" x", b"x ", b"\xff", b"${HOME}/x"] {
            let c = RunConfig::new(std::ffi::OsStr::from_bytes(name));
            let e = write(&c, "x", "").unwrap_err().to_string();
            assert!(e.contains("cannot be written into a job file"), "{e}");
        }
        assert!(write(&RunConfig::new("/data/a b:c"), "x", "").is_ok());
    }

    #[test]
    fn global_is_shared_and_jobs_and_options_are_capped() {
        // A later [global] reaches only the jobs after it.
        let text = "[global]\nfilename=/x\n[a]\n[global]\nbs=8k\n[b]\n";
        let f = parse(text, &default()).unwrap();
        assert_eq!((f.jobs[0].config.bs, f.jobs[1].config.bs), (4096, 8192));
        let many = format!("[global]\nfilename=/x\n{}", "[j]\n".repeat(MAX_JOBS + 5));
        let p = parse(&many, &default()).unwrap_err();
        assert!(
            p.iter().any(|p| p.text.contains("more than 1024 jobs")),
            "{p:?}"
        );
        let long = format!("[a]\nfilename=/x\n{}", "bs=4k\n".repeat(MAX_OPTIONS));
        let p = parse(&long, &default()).unwrap_err();
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].line, MAX_OPTIONS + 2, "{p:?}");
    }

    #[test]
    fn options_as_people_write_them_are_noted_once_each() {
        let text = "[global]\nfilename=/x\ngtod_reduce=1\nwrite_lat_log=lat\nlog_avg_msec=1000\nper_job_logs=0\nthreads\nlatency_target=2ms\n[a]\nwrite_bw_log=bw\n[b]\nwrite_lat_log=lat2\n";
        let f = parse(text, &default()).unwrap();
        let options: Vec<&str> = f.notes.iter().map(|n| n.option.as_str()).collect();
        assert_eq!(
            options,
            [
                "gtod_reduce",
                "write_lat_log",
                "log_avg_msec",
                "per_job_logs",
                "threads",
                "latency_target",
                "write_bw_log"
            ]
        );
        assert!(f.notes[1].text.contains("timeline"), "{}", f.notes[1]);
        assert!(f.notes[5].text.contains("tune"), "{}", f.notes[5]);
    }

    #[test]
    fn a_synchronous_engine_deeper_than_one_runs_at_one_as_in_fio() {
        let text = "[a]\nfilename=/x\nioengine=psync\niodepth=16\n[b]\nfilename=/x\nioengine=sync\niodepth=4\nnumjobs=2\n";
        let f = parse(text, &default()).unwrap();
        assert_eq!(f.jobs[0].config.iodepth, 1);
        assert_eq!(f.jobs[1].config.label(), "PT2");
        assert_eq!(f.notes.len(), 1, "{:?}", f.notes);
        assert!(f.notes[0].text.contains("iodepth=1"), "{}", f.notes[0]);
    }

    #[test]
    fn filesize_rate_and_one_size_ranges() {
        let text = "[a]\nfilename=/x\nfilesize=1g\nrate_iops=500\nnumjobs=4\nrate_process=poisson\nbsrange=8k-8k\n[b]\nfilename=/x\nfilesize=1g\nsize=2g\nrate=4m,1m\nbssplit=16k/100\n";
        let f = parse(text, &default()).unwrap();
        let (a, b) = (&f.jobs[0].config, &f.jobs[1].config);
        assert_eq!((a.size, a.bs), (Some(1 << 30), 8192));
        let r = a.rate.unwrap();
        assert_eq!(
            (r.iops, r.arrivals),
            (2000.0, crate::config::Arrivals::Poisson)
        );
        assert_eq!((b.size, b.bs), (Some(2 << 30), 16384));
        assert_eq!(b.rate.unwrap().iops, 256.0, "4 MiB/s of 16 KiB reads");
        assert_eq!(f.notes.len(), 2, "{:?}", f.notes);
        for mixed in ["bsrange=4k-64k", "bssplit=4k/50:64k/60", "filesize=1g-2g"] {
            let p = parse(&format!("[a]\nfilename=/x\n{mixed}\n"), &default()).unwrap_err();
            assert_eq!(lines_of(&p), vec![3], "{mixed}: {p:?}");
        }
    }

    #[test]
    fn every_option_the_table_reads_is_read() {
        for row in OPTIONS {
            let Treatment::Read(_) = row.treatment else {
                continue;
            };
            for name in row.names {
                let value = match *name {
                    "ioengine" => "libaio",
                    "rw" | "readwrite" => "randread",
                    "bs" | "blocksize" | "bsrange" | "blocksize_range" => "4k",
                    "bssplit" => "4k/100",
                    "filename" | "uri" => "/x",
                    "runtime" | "ramp_time" => "1s",
                    "rate_process" => "linear",
                    "fadvise_hint" => "1",
                    _ => "1",
                };
                let text =
                    format!("[a]\nfilename=/x\nioengine=libaio\niodepth=4\n{name}={value}\n");
                if let Err(p) = parse(&text, &default()) {
                    assert!(
                        p.iter().all(|p| !p.text.contains("not a fio option")),
                        "{name}: {p:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_job_file_beside_a_profile() {
        assert_eq!(
            beside(Path::new("/o/profile-4k.json")),
            PathBuf::from("/o/job-4k.fio")
        );
    }
}
