//! readlab under MPI (built with `--features mpi`): three ranks started by `mpirun`, each reading
//! its own loop device through `{rank}` in the target name, measured as one — the document names
//! every rank, the merged histogram holds every rank's reads, the aggregate IOPS is their sum,
//! the ranks start together; a rank with a missing target fails the whole job with its message,
//! and a rank killed mid-run ends the job, both within a bounded time; a study under mpirun keeps
//! one results store, which resumes; the clients study against one `readlab serve` spreads each
//! point's clients over the ranks, and the report draws its curve. Without the feature, readlab
//! refuses to run under a launcher.
//! Needs root (loop devices, mpirun --allow-run-as-root) and Open MPI (scripts/test-deps).

mod common;
#[cfg(feature = "mpi")]
mod nbd_common;

#[cfg(feature = "mpi")]
mod mpi {
    use super::common::{LoopDev, is_root, one_at_a_time, stderr, stdout, unwrapped, wait_within};
    use std::path::{Path, PathBuf};
    use std::process::{Command, Output, Stdio};
    use std::time::{Duration, Instant};

    // The MPI tests run one at a time (`one_at_a_time`): three ranks already crowd two cores.

    /// Three loop devices and a directory where `dev{rank}` names rank N's.
    struct Devices {
        dir: tempfile::TempDir,
        _devs: Vec<LoopDev>,
    }

    impl Devices {
        fn three() -> Devices {
            assert!(
                is_root(),
                "the MPI tests need root (loop devices); CI runs as root"
            );
            let dir = tempfile::tempdir().unwrap();
            let devs: Vec<LoopDev> = (0..3).map(|_| LoopDev::prepared("32M")).collect();
            for (r, d) in devs.iter().enumerate() {
                std::os::unix::fs::symlink(&d.dev, dir.path().join(format!("dev{r}"))).unwrap();
            }
            Devices { dir, _devs: devs }
        }

        fn template(&self) -> String {
            self.dir.path().join("dev{rank}").display().to_string()
        }

        fn path(&self, name: &str) -> PathBuf {
            self.dir.path().join(name)
        }
    }

    fn mpirun(n: usize, args: &[&str]) -> Command {
        let mpirun = Command::new("mpirun").arg("--version").output();
        assert!(
            mpirun.is_ok_and(|o| o.status.success()),
            "mpirun not found: install openmpi-bin (scripts/test-deps)"
        );
        let mut c = Command::new("mpirun");
        c.args([
            "--allow-run-as-root",
            "--oversubscribe",
            "-n",
            &n.to_string(),
        ])
        .arg(env!("CARGO_BIN_EXE_readlab"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        c
    }

    fn run_within(n: usize, args: &[&str], limit: Duration) -> Output {
        let child = mpirun(n, args).spawn().expect("start mpirun");
        wait_within(
            child,
            limit,
            &format!("mpirun -n {n} readlab {}", args.join(" ")),
        )
        .0
    }

    fn histogram_len(b64: &str) -> u64 {
        readlab::stats::decode_histogram(b64)
            .expect("a readable HDR histogram")
            .len()
    }

    /// The fleet's aggregate in `doc` is its members' reads: latency counts summed and found in
    /// the merged histogram, IOPS summed. Returns the reads counted.
    fn aggregate_is_the_members_sum(doc: &serde_json::Value, members: &[serde_json::Value]) -> u64 {
        let counts: u64 = members
            .iter()
            .map(|m| m["result"]["latency"]["count"].as_u64().unwrap())
            .sum();
        assert_eq!(doc["result"]["latency"]["count"].as_u64().unwrap(), counts);
        assert_eq!(
            histogram_len(doc["result"]["histogram"].as_str().unwrap()),
            counts
        );
        let iops: f64 = members
            .iter()
            .map(|m| m["result"]["iops"].as_f64().unwrap())
            .sum();
        let agg = doc["result"]["iops"].as_f64().unwrap();
        assert!((agg - iops).abs() <= 1e-6 * iops, "{agg} vs {iops}");
        counts
    }

    #[test]
    fn three_ranks_on_three_loop_devices_measure_as_one() {
        let _one = one_at_a_time();
        let d = Devices::three();
        let out = d.path("fleet.json");
        let o = run_within(
            3,
            &[
                "run",
                "--runtime",
                "2s",
                "--verify",
                "--json",
                out.to_str().unwrap(),
                &d.template(),
            ],
            Duration::from_secs(90),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        // Rank 0 alone prints: one table, one fleet section.
        let text = stdout(&o);
        assert_eq!(text.matches("fleet    3 ranks").count(), 1, "{text}");
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let doc = doc.as_array().map_or(&doc, |a| &a[0]);
        let fleet = &doc["fleet"];
        let members = fleet["members"].as_array().unwrap();
        assert_eq!(fleet["ranks"], 3);
        assert_eq!(members.len(), 3);
        for (r, m) in members.iter().enumerate() {
            assert_eq!(m["rank"], r);
            let target = d.path(&format!("dev{r}")).display().to_string();
            assert_eq!(m["target"], target.as_str());
            assert!(
                m["result"]["ios"].as_u64().unwrap() > 0,
                "rank {r} read nothing"
            );
            assert_eq!(m["result"]["verify"]["mismatches"], 0);
        }
        assert_eq!(fleet["target"], d.template().as_str());
        // The aggregate: every rank's reads in one exactly merged histogram, IOPS summed.
        let result = &doc["result"];
        let counts = aggregate_is_the_members_sum(doc, members);
        let per_rank: u64 = members
            .iter()
            .map(|m| histogram_len(m["result"]["histogram"].as_str().unwrap()))
            .sum();
        assert_eq!(per_rank, counts);
        let ios: u64 = members
            .iter()
            .map(|m| m["result"]["ios"].as_u64().unwrap())
            .sum();
        assert_eq!(result["ios"].as_u64().unwrap(), ios);
        let min = members
            .iter()
            .map(|m| m["result"]["latency"]["min_ns"].as_u64().unwrap())
            .min();
        assert_eq!(result["latency"]["min_ns"].as_u64(), min);
        // Together: one window, a start skew measured, clock offsets on one host found ~0.
        let skew = fleet["start"]["skew_ns"].as_u64().unwrap();
        let window = fleet["common_window_s"].as_f64().unwrap();
        eprintln!("start skew across 3 ranks: {skew} ns; common window {window:.6} s");
        assert!(window > 1.5 && window <= 2.0, "{window}");
        assert!(skew < 100_000_000, "{skew} ns");
        let starts: Vec<u64> = members
            .iter()
            .map(|m| m["start_ns"].as_u64().unwrap())
            .collect();
        assert_eq!(starts.iter().min(), Some(&0));
        assert_eq!(starts.iter().max(), Some(&skew));
        for m in &members[1..] {
            let est = m["exchange_offset_ns"].as_i64().unwrap();
            let bound = m["exchange_uncertainty_ns"].as_u64().unwrap();
            // One machine, one clock: the ping-pong estimate must find (about) no offset.
            assert!(
                est.unsigned_abs() <= bound + 50_000,
                "rank {}: estimated clock offset {est} ns ± {bound} on one host",
                m["rank"]
            );
            assert_eq!(m["clock_offset_ns"], 0, "same host: rank 0's own clock");
        }
    }

    /// Three ranks, each one NBD client, reading one `readlab serve` on 127.0.0.1: the networked
    /// document's clients on separate hosts, measured as one.
    #[test]
    fn three_ranks_read_one_readlab_serve_as_one_fleet() {
        let _one = one_at_a_time();
        let dir = super::common::disk_dir();
        let f = super::common::prepare(dir.path(), "served.dat", "32M");
        let server = super::nbd_common::readlab_serve(&[f.to_str().unwrap(), "--buffered"]);
        let out = dir.path().join("fleet.json");
        let o = run_within(
            3,
            &[
                "run",
                "--engine",
                "nbd",
                "--runtime",
                "1s",
                "--verify",
                "--json",
                out.to_str().unwrap(),
                &server.url,
            ],
            Duration::from_secs(90),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let doc = doc.as_array().map_or(&doc, |a| &a[0]);
        let members = doc["fleet"]["members"].as_array().unwrap();
        assert_eq!(members.len(), 3);
        for m in members {
            assert!(m["result"]["ios"].as_u64().unwrap() > 0, "{m}");
            assert_eq!(m["result"]["verify"]["mismatches"], 0);
            assert_eq!(m["target"], server.url.as_str());
        }
        aggregate_is_the_members_sum(doc, members);
        assert_eq!(server.terminate(), Some(0), "the server stops cleanly");
    }

    /// The clients study against one `readlab serve` given by URL, under mpirun: each point's
    /// clients spread over the three ranks (rank r runs N/3, one more when r < N mod 3; a rank
    /// with none sits the point out), one point per client count in rank 0's store, and the
    /// report draws the IOPS-against-clients curve.
    #[test]
    fn the_clients_study_spreads_clients_over_ranks_against_one_server() {
        let _one = one_at_a_time();
        let dir = super::common::disk_dir();
        let f = super::common::prepare(dir.path(), "served.dat", "32M");
        let server = super::nbd_common::readlab_serve(&[f.to_str().unwrap(), "--buffered"]);
        let out = dir.path().join("clients");
        let args = [
            "study",
            "clients",
            "--quick",
            "--runtime",
            "250ms",
            "--out",
            out.to_str().unwrap(),
            &server.url,
        ];
        let start = Instant::now();
        let o = run_within(3, &args, Duration::from_secs(60));
        assert!(o.status.success(), "{}", stderr(&o));
        eprintln!("the clients study over 3 ranks took {:?}", start.elapsed());
        assert!(
            unwrapped(&stderr(&o)).contains("no server CPU is measured"),
            "{}",
            stderr(&o)
        );
        let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
        let docs: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        // The quick study: 1, 4 and 16 clients at each of its block sizes.
        let mut seen: Vec<(u64, u64)> = Vec::new();
        for doc in &docs {
            let n = doc["config"]["threads"].as_u64().unwrap();
            let bs = doc["config"]["bs"].as_u64().unwrap();
            seen.push((bs, n));
            let net = &doc["study"]["net"];
            assert_eq!(doc["study"]["study"], "clients");
            assert_eq!(net["side"], "remote", "{net}");
            assert_eq!(net["network"], "loopback", "{net}");
            assert_eq!(net["backend"], "export", "{net}");
            assert_eq!(net["ranks"], 3, "{net}");
            assert!(net.get("server").is_none(), "no server CPU: {net}");
            assert_eq!(doc["config"]["target"], server.url.as_str());
            let fleet = &doc["fleet"];
            let members = fleet["members"].as_array().unwrap();
            let shares: Vec<u64> = members
                .iter()
                .map(|m| m["threads"].as_u64().unwrap())
                .collect();
            let want: Vec<u64> = (0..3)
                .map(|r| n / 3 + u64::from(r < n % 3))
                .filter(|&s| s > 0)
                .collect();
            assert_eq!(shares, want, "N = {n}: {fleet}");
            assert_eq!(shares.iter().sum::<u64>(), n);
            assert_eq!(fleet["ranks"].as_u64().unwrap(), want.len() as u64);
            let idle: Vec<u64> = fleet["idle"]
                .as_array()
                .map(|a| a.iter().map(|r| r.as_u64().unwrap()).collect())
                .unwrap_or_default();
            let ranks: Vec<u64> = members
                .iter()
                .map(|m| m["rank"].as_u64().unwrap())
                .collect();
            assert_eq!(ranks.len() + idle.len(), 3, "every rank named: {fleet}");
            // The aggregate: the ranks' reads in one merged histogram, IOPS summed.
            assert!(aggregate_is_the_members_sum(doc, members) > 0);
            for m in members {
                assert_eq!(m["result"]["verify"]["mismatches"], 0, "{m}");
            }
        }
        seen.sort();
        let want: Vec<(u64, u64)> = [1024, 4096, 65536]
            .iter()
            .flat_map(|&bs| [1, 4, 16].map(|n| (bs, n)))
            .collect();
        assert_eq!(seen, want, "a point per block size and client count");
        // Resumed, nothing is measured again.
        let mut resumed: Vec<&str> = args.to_vec();
        resumed.insert(3, "--resume");
        let o = run_within(3, &resumed, Duration::from_secs(30));
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("0 points measured by 3 ranks, 9 already done"),
            "{}",
            stderr(&o)
        );
        assert_eq!(
            std::fs::read_to_string(out.join("results.jsonl")).unwrap(),
            text
        );
        assert_eq!(server.terminate(), Some(0), "the server stops cleanly");
        // The report draws the curve, saying how the clients ran.
        let html = dir.path().join("report.html");
        let o = super::common::bin()
            .args([
                "report",
                out.to_str().unwrap(),
                "-o",
                html.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let page = std::fs::read_to_string(&html).unwrap();
        assert!(page.contains("id=\"sec-clients\""), "no clients section");
        assert!(page.contains("id=\"fig-clients-iops\""), "no IOPS curve");
        assert!(
            page.contains("IOPS against clients over NBD, the clients spread over 3 MPI ranks"),
            "the curve does not say how the clients ran"
        );
        assert!(
            page.contains("the ranks ran unequal shares of the clients, so IOPS are per client"),
            "the fleet table compares ranks of unequal shares per client"
        );
    }

    #[test]
    fn a_rank_with_a_missing_target_fails_the_job_with_its_message() {
        let _one = one_at_a_time();
        let d = Devices::three();
        std::fs::remove_file(d.path("dev2")).unwrap();
        let start = Instant::now();
        let o = run_within(
            3,
            &["run", "--runtime", "30s", &d.template()],
            Duration::from_secs(60),
        );
        let took = start.elapsed();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        let missing = d.path("dev2").display().to_string();
        assert!(
            err.contains("1 of 3 ranks failed: rank 2 (") && err.contains(&missing),
            "{err}"
        );
        assert_eq!(
            err.matches("ranks failed").count(),
            1,
            "only rank 0 says it: {err}"
        );
        // Never measured: the 30 s run did not start on the other ranks.
        assert!(took < Duration::from_secs(25), "took {took:?}");
    }

    #[test]
    fn a_rank_killed_mid_run_ends_the_job_within_seconds() {
        let _one = one_at_a_time();
        let d = Devices::three();
        let child = mpirun(3, &["run", "--runtime", "60s", "-q", &d.template()])
            .spawn()
            .expect("start mpirun");
        // Wait until the ranks measure, then kill one of them outright.
        let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_readlab")).unwrap();
        let ranks = |exe: &Path| -> Vec<u32> {
            let mut pids = Vec::new();
            for e in std::fs::read_dir("/proc").unwrap().flatten() {
                let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                    continue;
                };
                if std::fs::read_link(e.path().join("exe")).is_ok_and(|p| p == exe) {
                    pids.push(pid);
                }
            }
            pids
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        let pids = loop {
            let p = ranks(&exe);
            if p.len() == 3 {
                break p;
            }
            assert!(Instant::now() < deadline, "3 ranks never appeared: {p:?}");
            std::thread::sleep(Duration::from_millis(100));
        };
        std::thread::sleep(Duration::from_secs(3));
        let victim = pids[1];
        Command::new("kill")
            .args(["-9", &victim.to_string()])
            .status()
            .unwrap();
        let (o, after) = wait_within(child, Duration::from_secs(30), "the job after a kill");
        assert!(!o.status.success(), "{}", stderr(&o));
        eprintln!("the job ended {after:?} after rank pid {victim} was killed");
        assert!(after < Duration::from_secs(15), "{after:?}");
        assert!(ranks(&exe).is_empty(), "ranks left behind");
    }

    #[test]
    fn a_study_under_mpirun_keeps_one_store_on_rank_0_and_resumes() {
        let _one = one_at_a_time();
        let d = Devices::three();
        let out = d.path("study");
        let args = [
            "study",
            "latency",
            "--quick",
            "--out",
            out.to_str().unwrap(),
            &d.template(),
        ];
        let o = run_within(3, &args, Duration::from_secs(180));
        assert!(o.status.success(), "{}", stderr(&o));
        let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
        let docs: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(docs.len() >= 4, "{} points", docs.len());
        for doc in &docs {
            assert_eq!(doc["study"]["study"], "latency");
            assert_eq!(doc["fleet"]["ranks"], 3);
        }
        // Rank 0 alone says where the summary is.
        assert_eq!(stdout(&o).matches("Summary tables:").count(), 1);
        let mut resumed: Vec<&str> = args.to_vec();
        resumed.insert(3, "--resume");
        let o = run_within(3, &resumed, Duration::from_secs(60));
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "0 points measured by 3 ranks, {} already done",
                docs.len()
            )),
            "{}",
            stderr(&o)
        );
        assert_eq!(
            std::fs::read_to_string(out.join("results.jsonl")).unwrap(),
            text
        );
    }
}

/// Built without MPI, readlab started by a launcher as one of several ranks refuses to run
/// (each rank would measure alone and write the same files) and says how to build it.
#[cfg(not(feature = "mpi"))]
#[test]
fn without_the_mpi_feature_a_launched_rank_refuses_to_run() {
    let dir = common::disk_dir();
    let f = common::prepare(dir.path(), "t.dat", "8M");
    let o = common::bin()
        .args(["run", "--runtime", "1s", f.to_str().unwrap()])
        .env("OMPI_COMM_WORLD_RANK", "0")
        .env("OMPI_COMM_WORLD_SIZE", "3")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    let err = common::stderr(&o);
    assert!(
        err.contains("one of 3 ranks") && err.contains("--features mpi"),
        "{err}"
    );
}

/// Under a launcher of several ranks, the commands that cannot work across ranks refuse at once
/// (with or without the `mpi` feature), before touching anything, and name the ones that can.
#[test]
fn commands_without_mpi_support_refuse_to_run_as_one_of_several_ranks() {
    let dir = common::disk_dir();
    let f = dir.path().join("t.dat");
    let f = f.to_str().unwrap();
    for args in [
        vec!["tune", f],
        vec!["prepare", f, "--size", "8M"],
        vec!["quick", "--dir", dir.path().to_str().unwrap()],
        vec!["report", f],
        vec![],
    ] {
        let o = common::bin()
            .args(&args)
            .env("OMPI_COMM_WORLD_RANK", "0")
            .env("OMPI_COMM_WORLD_SIZE", "2")
            .output()
            .unwrap();
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("does not run across MPI ranks") && err.contains("`readlab run`"),
            "{args:?}: {err}"
        );
        assert!(
            !dir.path().join("t.dat").exists(),
            "{args:?} wrote its file"
        );
    }
}
