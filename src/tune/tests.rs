//! The tuner's choices on made-up candidates: frontier, goals, trade-off wording, fio commands.
use super::*;

fn cand(label: &str, iops: f64, p999: u64, cpu: f64) -> Candidate {
    Candidate {
        config: RunConfig::new("/x"),
        label: label.into(),
        iops,
        mb_s: iops * 4096.0 / 1e6,
        p999_ns: p999,
        p50_ns: p999 / 4,
        cpu_cores: cpu,
        spread: None,
        requests: 0,
    }
}

#[test]
fn pareto_keeps_only_undominated_points() {
    let pts = vec![
        cand("a", 100.0, 100, 1.0),
        cand("b", 200.0, 300, 1.0),
        cand("c", 150.0, 400, 1.5), // dominated by b
        cand("d", 90.0, 50, 0.5),
    ];
    let f: Vec<String> = pareto(&pts).into_iter().map(|c| c.label).collect();
    assert_eq!(f, ["b", "a", "d"]);
}

#[test]
fn goals_choose_differently() {
    let pts = vec![
        cand("fast", 1000.0, 900, 1.0),
        cand("near", 950.0, 400, 1.0),
        cand("calm", 600.0, 100, 0.5),
        cand("slow", 300.0, 50, 0.2),
    ];
    assert_eq!(choose(&pts, Goal::Throughput).unwrap().label, "fast");
    assert_eq!(choose(&pts, Goal::Balanced).unwrap().label, "near");
    assert_eq!(choose(&pts, Goal::Latency).unwrap().label, "calm");
    assert!(choose(&[], Goal::Latency).is_none());
}

#[test]
fn trade_offs_read_like_the_issue() {
    let a = cand("U16B2", 1000.0, 100, 1.0);
    let b = cand("U32B4", 1060.0, 200, 1.2);
    assert_eq!(
        trade_off(&a, &b),
        "psync U32B4: +6 % IOPS for 2.00× p99.9 and 1.20× CPU"
    );
}

#[test]
fn fio_command_carries_the_uring_features() {
    let mut c = RunConfig::new("/dev/x");
    c.engine = EngineKind::Uring;
    c.iodepth = 32;
    c.batch = 4;
    UringOptions::edit(&mut c.options, |o| {
        (o.fixed_bufs, o.fixed_files) = (true, true)
    });
    let f = fio_command(&c);
    for part in [
        "--ioengine=io_uring",
        "--iodepth=32",
        "--iodepth_batch_submit=4",
        "--fixedbufs=1",
        "--registerfiles=1",
        "--lat_percentiles=1",
    ] {
        assert!(f.contains(part), "{f}");
    }
}

/// The replay commands carry every option set, as the engine's table of options writes it: fio's
/// option where fio has one (pvsync2's RWF_NOWAIT too), readlab's flag always.
#[test]
fn commands_carry_every_option_of_the_table() {
    for (kind, d) in crate::engine::option::all() {
        let mut c = RunConfig::new("/dev/x");
        c.engine = kind;
        d.set(&mut c.options, 3);
        let fio = fio_command(&c);
        if let Some(arg) = d.fio_arg(&c.options) {
            assert!(fio.contains(&arg), "{} {arg}: {fio}", d.flag);
        }
        let readlab = readlab_command(&c);
        let arg = d.readlab_arg(&c.options).unwrap();
        assert!(readlab.contains(&arg), "{} {arg}: {readlab}", d.flag);
    }
}
