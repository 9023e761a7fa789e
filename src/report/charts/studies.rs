//! Each study's charts, one function per study (section of the report), named by the study's
//! `StudySpec` (`crate::study`) and called by [`super::section_charts`].

use super::*;

/// The charts of Latency.
pub fn latency(c: &Ctx) -> Vec<Chart> {
    let (pts, namer) = (c.pts.clone(), &c.namer);
    let id = |what: &str| c.id(what);
    let mut out = Vec::new();
    let b = bars(
        &pts,
        "block size",
        |p| p.bs,
        bs_name,
        |p| namer.name(p, &p.engine),
        Measure::latency(),
    );
    out.push(chart(
        id("bars"),
        "Single-read latency per block size: min, avg, p99, p99.9, max".into(),
        &pts,
        Kind::Bars(b),
    ));
    out
}

/// Bandwidth against offset from a point's samples every N bytes (or, for results without them,
/// its per-second timeline): (offset in bytes, MB/s).
pub fn bandwidth_by_offset(p: &Point) -> Vec<(f64, f64)> {
    if !p.offset_samples.is_empty() {
        return p
            .offset_samples
            .iter()
            .map(|s| (s.offset as f64, s.mb_s))
            .collect();
    }
    let mut offset = p.offset as f64;
    p.timeline
        .iter()
        .map(|t| {
            offset += t.ios as f64 * p.bs as f64;
            (offset, t.mib_s * 1.048_576)
        })
        .collect()
}

/// The charts of Scan.
pub fn scan(c: &Ctx) -> Vec<Chart> {
    let (pts, namer) = (c.pts.clone(), &c.namer);
    let id = |what: &str| c.id(what);
    let mut out = Vec::new();
    let mut series = Vec::new();
    for p in &pts {
        let points = thin(&bandwidth_by_offset(p), MAX_LINE_POINTS);
        let n = series.len();
        series.push(LineSeries {
            name: namer.name(p, if p.direct { "direct" } else { "buffered" }),
            points,
            color: n,
            dashed: false,
            marker: None,
            fio: p.is_fio(),
            step: false,
            labels: Vec::new(),
            marks: Vec::new(),
        });
    }
    let lines = Lines {
        x: XAxis::Numeric(Axis::linear("offset (bytes)", Unit::Bytes)),
        y: mb_axis(),
        series,
    };
    out.push(chart(
        id("bandwidth"),
        format!(
            "Whole-target sequential read: bandwidth against offset (1 MiB blocks, {})",
            match pts
                .iter()
                .find_map(|p| p.offset_samples.get(1).map(|s| s.offset))
            {
                Some(every) => format!("every {}", format_size(every)),
                None => "per second".into(),
            }
        ),
        &pts,
        Kind::Lines(lines),
    ));
    out
}

/// The charts of Stream.
pub fn stream(c: &Ctx) -> Vec<Chart> {
    let (pts, namer) = (c.pts.clone(), &c.namer);
    let id = |what: &str| c.id(what);
    let mut out = Vec::new();
    // One series per column of the study's summary: buffered and direct never share a line.
    let series = |p: &Point| namer.name(p, &crate::study::stream_column(&p.access(), p.direct));
    let l = lines_over(
        &pts,
        "block size",
        |p| p.bs,
        bs_name,
        series,
        mb_axis(),
        MB_S,
        false,
    );
    out.push(chart(
        id("throughput"),
        "One thread: sequential and random throughput per block size, direct and buffered".into(),
        &pts,
        Kind::Lines(l),
    ));
    let b = bars(
        &pts,
        "block size",
        |p| p.bs,
        bs_name,
        series,
        Measure::latency(),
    );
    out.push(chart(
        id("latency"),
        "One thread: sequential and random read latency per block size, direct and buffered".into(),
        &pts,
        Kind::Bars(b),
    ));
    out
}

/// The charts of Threads.
pub fn threads(c: &Ctx) -> Vec<Chart> {
    let (pts, namer) = (c.pts.clone(), &c.namer);
    let id = |what: &str| c.id(what);
    let mut out = Vec::new();
    let thr = |p: &Point| p.threads;
    let tname = |t: &usize| t.to_string();
    let series = |p: &Point| namer.name(p, &format_size(p.bs));
    let throughput = lines_over(&pts, "threads", thr, tname, series, mb_axis(), MB_S, true);
    out.push(chart(
        id("throughput"),
        title_with_knees(
            "Throughput against threads, one line per block size",
            &throughput,
            "",
            &count_of("thread"),
        ),
        &pts,
        Kind::Lines(throughput),
    ));
    out.push(chart(
        id("cpu"),
        "CPU against threads, one line per block size".into(),
        &pts,
        Kind::Lines(lines_over(
            &pts,
            "threads",
            thr,
            tname,
            series,
            cpu_axis(),
            CPU,
            true,
        )),
    ));
    let sizes: BTreeSet<u64> = pts.iter().map(|p| p.bs).collect();
    for bs in sizes {
        let mine: Vec<&Point> = pts.iter().copied().filter(|p| p.bs == bs).collect();
        let b = bars(
            &mine,
            "threads",
            thr,
            tname,
            |p| namer.name(p, &p.engine),
            Measure::latency(),
        );
        out.push(chart(
            id(&format!("latency-{}", format_size(bs))),
            format!("Latency against threads, {} blocks", format_size(bs)),
            &mine,
            Kind::Bars(b),
        ));
    }
    out
}

/// The charts of Queue and Batch.
pub fn queue_batch(c: &Ctx) -> Vec<Chart> {
    let (pts, namer) = (c.pts.clone(), &c.namer);
    let id = |what: &str| c.id(what);
    let mut out = Vec::new();
    let queue = c.study == "queue";
    let (x_desc, what) = if queue {
        ("queue size (I/Os in flight per thread)", "queue size")
    } else {
        ("batch size (I/Os per submit)", "batch size")
    };
    let cat = |p: &Point| if queue { p.iodepth } else { p.batch };
    let series = |p: &Point| {
        if queue {
            namer.name(p, &format!("{} T{}", p.engine, p.threads))
        } else {
            namer.name(p, &format!("{} QS{}", p.engine, p.iodepth))
        }
    };
    let measures = [
        ("throughput", "Throughput", Measure::one(mb_axis(), MB_S)),
        ("cpu", "CPU", Measure::one(cpu_axis(), CPU)),
        ("p999", "p99.9 latency", Measure::one(p999_axis(), P999)),
    ];
    for (key, title, m) in measures {
        let b = bars(&pts, x_desc, cat, |k| k.to_string(), series, m);
        let mut title = format!("{title} per {what}, 4 KiB random reads");
        if key == "throughput" && queue {
            title = title_with_point_knees(&title, &pts, series, cat, "IOPS", &|x| {
                format!("queue size {}", crate::units::sig(x))
            });
        }
        out.push(chart(id(key), title, &pts, Kind::Bars(b)));
    }
    out
}

/// The charts of Multiblock.
pub fn multiblock(c: &Ctx) -> Vec<Chart> {
    let (pts, namer) = (c.pts.clone(), &c.namer);
    let id = |what: &str| c.id(what);
    let mut out = Vec::new();
    let mut series: Vec<LineSeries> = Vec::new();
    let engines: Vec<String> = {
        let mut e: Vec<String> = Vec::new();
        for p in &pts {
            let n = namer.name(p, &p.engine);
            if !e.contains(&n) {
                e.push(n);
            }
        }
        e
    };
    for (k, engine) in engines.iter().enumerate() {
        let mine: Vec<&&Point> = pts
            .iter()
            .filter(|p| namer.name(p, &p.engine) == *engine)
            .collect();
        for (stat, dashed, marker) in [
            ("avg", false, Shape::Circle),
            ("p99.9", true, Shape::Triangle),
        ] {
            let mut points: Vec<(f64, f64)> = mine
                .iter()
                .map(|p| {
                    let v = if dashed {
                        shown(p, 99.9)
                    } else {
                        p.latency.mean_ns
                    };
                    (p.blocks_per_request as f64, v)
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            points.dedup_by(|a, b| a.0 == b.0);
            series.push(LineSeries {
                name: format!("{engine} {stat}"),
                points,
                color: k,
                dashed,
                marker: Some(marker),
                fio: false,
                step: false,
                labels: Vec::new(),
                marks: Vec::new(),
            });
        }
    }
    let mut x = Axis::linear("random 4 KiB blocks per request", Unit::Whole);
    x.from_zero = true;
    let lines = Lines {
        x: XAxis::Numeric(x),
        y: Axis::linear("request latency (linear scale)", Unit::Ns),
        series,
    };
    out.push(chart(
        id("latency"),
        "Request latency against blocks per request (avg solid, p99.9 dashed)".into(),
        &pts,
        Kind::Lines(lines),
    ));
    out
}

/// The charts of UringFeatures.
pub fn uring_features(c: &Ctx) -> Vec<Chart> {
    let (pts, namer) = (c.pts.clone(), &c.namer);
    let id = |what: &str| c.id(what);
    let mut out = Vec::new();
    let label = |p: &Point| p.label.clone();
    let name = |l: &String| l.clone();
    let one = |p: &Point| namer.name(p, "");
    let single = |p: &Point| {
        let n = one(p);
        if n.is_empty() {
            "io_uring".to_string()
        } else {
            n
        }
    };
    out.push(chart(
        id("throughput"),
        "io_uring features: throughput (M fixed buffers, F fixed files, S SQ poll)".into(),
        &pts,
        Kind::Bars(bars(
            &pts,
            "configuration",
            label,
            name,
            single,
            Measure::one(mb_axis(), MB_S),
        )),
    ));
    let mut cpu = bars(
        &pts,
        "configuration",
        label,
        name,
        |p| namer.name(p, "process"),
        Measure::one(cpu_axis(), CPU),
    );
    let sq = bars(
        &pts,
        "configuration",
        label,
        name,
        |p| namer.name(p, "SQ poll thread"),
        Measure::one(
            cpu_axis(),
            Fig::plain("SQ poll thread CPU", Reads::Pct, |p| p.sqpoll_cpu_pct),
        ),
    );
    cpu.series.extend(sq.series);
    out.push(chart(
        id("cpu"),
        "io_uring features: CPU of the process and of its SQ poll thread".into(),
        &pts,
        Kind::Bars(cpu),
    ));
    out.push(chart(
        id("p999"),
        "io_uring features: p99.9 latency".into(),
        &pts,
        Kind::Bars(bars(
            &pts,
            "configuration",
            label,
            name,
            single,
            Measure::one(p999_axis(), P999),
        )),
    ));
    out
}

/// Per block size, one panel of lines against threads, one line per scheduler (each scheduler in
/// the same colour in every panel): block sizes far apart in magnitude each at their own scale.
pub(super) fn scheduler_panels(c: &Ctx, id: &str, title: &str, y: Axis, value: Fig) -> Chart {
    let (pts, namer) = (&c.pts, &c.namer);
    let mut schedulers: Vec<String> = Vec::new();
    for p in pts {
        let s = namer.name(p, p.scheduler.as_deref().unwrap_or("?"));
        if !schedulers.contains(&s) {
            schedulers.push(s);
        }
    }
    let sizes: BTreeSet<u64> = pts.iter().map(|p| p.bs).collect();
    let panels: Vec<Lines> = sizes
        .iter()
        .map(|&bs| {
            let mine: Vec<&Point> = pts.iter().copied().filter(|p| p.bs == bs).collect();
            let mut axis = y.clone();
            axis.desc = format!("{}: {}", format_size(bs), axis.desc);
            let mut l = lines_over(
                &mine,
                "threads",
                |p| p.threads,
                |t| t.to_string(),
                |p| namer.name(p, p.scheduler.as_deref().unwrap_or("?")),
                axis,
                value,
                false,
            );
            for s in &mut l.series {
                let k = schedulers.iter().position(|n| *n == s.name).unwrap_or(0);
                s.color = k;
                s.marker = Some(SHAPES[k % SHAPES.len()]);
            }
            l
        })
        .collect();
    let n = panels.len() as u32;
    let mut ch = chart(
        c.id(id),
        if n > 1 {
            format!("{title} (a panel per block size)")
        } else {
            title.to_string()
        },
        pts,
        Kind::Stack(panels),
    );
    ch.height = (H * 3 / 4 * n).max(H);
    ch
}

/// The charts of Scheduler.
pub fn scheduler(c: &Ctx) -> Vec<Chart> {
    vec![
        scheduler_panels(
            c,
            "throughput",
            "Throughput against threads under each I/O scheduler",
            mb_axis(),
            MB_S,
        ),
        scheduler_panels(
            c,
            "p999",
            "p99.9 latency against threads under each I/O scheduler",
            p999_axis(),
            P999,
        ),
    ]
}
