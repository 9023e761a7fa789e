//! The reference document's figures that need more than one chart per study: aio and io_uring per
//! block size × threads (Figures 46–51), queue-size latency with every percentile layer per thread
//! count (76–80) and the latency-against-IOPS curve per engine with queue depths marked (the
//! "hockey stick"), batch 1 … queue size per thread count (68–72, 81–85), io_uring features per
//! block size with CPU stacked (application threads + SQ poll thread, 89–105), the schedulers'
//! CPU, buffered against direct sequential reading (13) and the scan's bandwidth against offset.

use super::studies;
use super::*;

/// Points of one engine, in order.
fn of_engine<'a>(pts: &[&'a Point], engine: &str) -> Vec<&'a Point> {
    pts.iter().copied().filter(|p| p.engine == engine).collect()
}

/// The engines among the points, in order of first appearance.
fn engines(pts: &[&Point]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for p in pts {
        if !v.contains(&p.engine) {
            v.push(p.engine.clone());
        }
    }
    v
}

/// Thread counts among the points, ascending.
fn thread_counts(pts: &[&Point]) -> Vec<usize> {
    pts.iter()
        .map(|p| p.threads)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn threads_word(t: usize) -> String {
    if t == 1 {
        "one thread".into()
    } else {
        format!("{t} threads")
    }
}

/// Figures 46–51: per engine, throughput and CPU per block size with a bar per thread count;
/// per thread count, latency per block size with every percentile layer.
pub fn async_sizes(c: &Ctx) -> Vec<Chart> {
    let (pts, namer) = (&c.pts, &c.namer);
    let mut out = Vec::new();
    for e in engines(pts) {
        let mine = of_engine(pts, &e);
        let series = |p: &Point| namer.name(p, &format!("T{}", p.threads));
        for (key, title, m) in [
            ("throughput", "throughput", Measure::one(mb_axis(), MB_S)),
            ("cpu", "CPU", Measure::one(cpu_axis(), CPU)),
        ] {
            let b = bars(&mine, "block size", |p| p.bs, bs_name, series, m);
            out.push(chart(
                c.id(&format!("{key}-{e}")),
                format!(
                    "{e}: {title} per block size from 1, 2 and 3 threads (queue size {})",
                    mine[0].iodepth
                ),
                &mine,
                Kind::Bars(b),
            ));
        }
    }
    out.extend(latency_per_thread_count(
        c,
        "block size",
        |p| p.bs,
        bs_name,
        |t| format!("Asynchronous reading latency per block size, {t}"),
    ));
    out
}

/// Per thread count, one chart of latency bars (every percentile layer) per category `cat`,
/// a series per engine; `title` gets the thread count in words.
fn latency_per_thread_count<K: Ord + Clone>(
    c: &Ctx,
    x_desc: &str,
    cat: impl Fn(&Point) -> K + Copy,
    cat_name: impl Fn(&K) -> String + Copy,
    title: impl Fn(&str) -> String,
) -> Vec<Chart> {
    thread_counts(&c.pts)
        .into_iter()
        .map(|t| {
            let mine: Vec<&Point> = c.pts.iter().copied().filter(|p| p.threads == t).collect();
            let b = bars(
                &mine,
                x_desc,
                cat,
                cat_name,
                |p| c.namer.name(p, &p.engine),
                Measure::latency(),
            );
            chart(
                c.id(&format!("latency-T{t}")),
                title(&threads_word(t)),
                &mine,
                Kind::Bars(b),
            )
        })
        .collect()
}

/// The queue study: its bars, then latency per queue size with every layer for each thread count
/// (Figures 76–80), then latency against IOPS per engine and thread count, each point marked with
/// its queue depth: where latency turns up while throughput stops growing.
pub fn queue(c: &Ctx) -> Vec<Chart> {
    let mut out = studies::queue_batch(c);
    out.extend(latency_per_thread_count(
        c,
        "queue size (I/Os in flight per thread)",
        |p| p.iodepth,
        |k| k.to_string(),
        |t| format!("Latency per queue size, {t}: min, avg, p99, p99.9, max"),
    ));
    out.push(hockey_stick(c, &c.pts));
    out
}

/// Latency (p99, log scale) against IOPS, one line per engine and thread count through its queue
/// sizes, each point labelled with its queue depth.
fn hockey_stick(c: &Ctx, pts: &[&Point]) -> Chart {
    let mut groups: Vec<(String, Vec<&Point>)> = Vec::new();
    for p in pts {
        let name = c.namer.name(p, &format!("{} T{}", p.engine, p.threads));
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some(g) => g.1.push(p),
            None => groups.push((name, vec![p])),
        }
    }
    let series = groups
        .into_iter()
        .enumerate()
        .map(|(k, (name, mut g))| {
            g.sort_by_key(|p| p.iodepth);
            LineSeries {
                name,
                points: g.iter().map(|p| (p.iops, shown(p, 99.0))).collect(),
                color: k,
                dashed: g[0].is_fio(),
                marker: Some(SHAPES[k % SHAPES.len()]),
                fio: g[0].is_fio(),
                step: false,
                labels: g.iter().map(|p| format!("QD{}", p.iodepth)).collect(),
                marks: g.iter().map(|p| mark(p, Some(IOPS), P99)).collect(),
            }
        })
        .collect();
    let mut x = Axis::linear("IOPS", Unit::Count);
    x.from_zero = true;
    let title = title_with_point_knees(
        "Latency against IOPS as the queue deepens (p99; each point marked with its queue depth)",
        pts,
        |p| c.namer.name(p, &format!("{} T{}", p.engine, p.threads)),
        |p| p.iodepth,
        "IOPS",
        &|x| format!("QD {}", crate::units::sig(x)),
    );
    let mut ch = chart(
        c.id("hockey-stick"),
        title,
        pts,
        Kind::Lines(Lines {
            x: XAxis::Numeric(x),
            y: Axis::log("p99 latency (log scale)", Unit::Ns),
            series,
        }),
    );
    ch.height = 460;
    ch
}

/// The batch study (Figures 68–72, 81–85): per engine, throughput and CPU per batch size with a
/// bar per queue size and thread count, and latency per batch size with every layer for each
/// thread count, one bar per queue size.
pub fn batch(c: &Ctx) -> Vec<Chart> {
    let (pts, namer) = (&c.pts, &c.namer);
    let mut out = Vec::new();
    let x = "batch size (I/Os per submit)";
    for e in engines(pts) {
        let mine = of_engine(pts, &e);
        let series = |p: &Point| namer.name(p, &format!("QS{} T{}", p.iodepth, p.threads));
        for (key, title, m) in [
            ("throughput", "throughput", Measure::one(mb_axis(), MB_S)),
            ("cpu", "CPU", Measure::one(cpu_axis(), CPU)),
        ] {
            let b = bars(&mine, x, |p| p.batch, |k| k.to_string(), series, m);
            out.push(chart(
                c.id(&format!("{key}-{e}")),
                format!("{e}: {title} per batch size, each queue size and thread count"),
                &mine,
                Kind::Bars(b),
            ));
        }
        for t in thread_counts(&mine) {
            let these: Vec<&Point> = mine.iter().copied().filter(|p| p.threads == t).collect();
            let b = bars(
                &these,
                x,
                |p| p.batch,
                |k| k.to_string(),
                |p| namer.name(p, &format!("QS{}", p.iodepth)),
                Measure::latency(),
            );
            out.push(chart(
                c.id(&format!("latency-{e}-T{t}")),
                format!("{e}: latency per batch size, {}", threads_word(t)),
                &these,
                Kind::Bars(b),
            ));
        }
    }
    out
}

/// An io_uring point's features in words, from the engine's table of options: `plain`, `fixed
/// files`, `fixed buffers + fixed files`, …
fn uring_variant(p: &Point) -> String {
    let v = crate::engine::option::words(crate::engine::EngineKind::Uring, &p.options);
    if v.is_empty() {
        "plain".into()
    } else {
        v.join(" + ")
    }
}

/// io_uring features per block size (Figures 89–105): throughput, CPU as a stacked bar
/// (application threads below, the SQ poll thread on top: the bar's height is their sum), and
/// latency with every layer, one bar per feature set.
pub fn uring_features(c: &Ctx) -> Vec<Chart> {
    let (pts, namer) = (&c.pts, &c.namer);
    let series = |p: &Point| namer.name(p, &uring_variant(p));
    let mut out = vec![
        chart(
            c.id("throughput"),
            "io_uring features per block size: throughput".into(),
            pts,
            Kind::Bars(bars(
                pts,
                "block size",
                |p| p.bs,
                bs_name,
                series,
                Measure::one(mb_axis(), MB_S),
            )),
        ),
        chart(
            c.id("cpu"),
            "io_uring features per block size: CPU, stacked — application threads (dark) and the SQ poll thread on top (light); the bar is their sum".into(),
            pts,
            Kind::Bars(bars(
                pts,
                "block size",
                |p| p.bs,
                bs_name,
                series,
                Measure {
                    y: cpu_axis(),
                    layers: &["application threads", "+ SQ poll thread"],
                    figs: vec![
                        Fig::plain("application threads' CPU", Reads::Pct, |p| {
                            (p.cpu_pct - p.sqpoll_cpu_pct).max(0.0)
                        }),
                        CPU,
                    ],
                },
            )),
        ),
        chart(
            c.id("latency"),
            "io_uring features per block size: latency (min, avg, p99, p99.9, max)".into(),
            pts,
            Kind::Bars(bars(
                pts,
                "block size",
                |p| p.bs,
                bs_name,
                series,
                Measure::latency(),
            )),
        ),
    ];
    for c in &mut out {
        c.height = 440;
    }
    out
}

/// The scheduler study's charts, and its CPU against threads under each scheduler.
pub fn scheduler(c: &Ctx) -> Vec<Chart> {
    let mut out = studies::scheduler(c);
    out.push(studies::scheduler_panels(
        c,
        "cpu",
        "CPU against threads under each I/O scheduler",
        cpu_axis(),
        CPU,
    ));
    out
}

/// The tuner's search: every configuration it measured as a point, IOPS against the tail latency
/// (never joined: the order it tried them says nothing), its shape and outline the block size's,
/// its fill the CPU; the tuner's picks for each goal enlarged and labelled with their goals.
pub fn tune_search(c: &Ctx) -> Vec<Chart> {
    let pts = &c.pts;
    let tail = crate::verdict::Tail::of(pts);
    let tail_fig = match tail {
        crate::verdict::Tail::P999 => P999,
        crate::verdict::Tail::P99 => P99,
    };
    let picks = crate::report::selected::selected(c.report);
    let goals_of = |p: &Point| -> Vec<&str> {
        picks
            .iter()
            .filter(|r| r.name == p.name && r.bs == p.bs && r.label == p.label)
            .map(|r| r.goal.name())
            .collect()
    };
    let sizes: Vec<u64> = pts
        .iter()
        .map(|p| p.bs)
        .collect::<BTreeSet<u64>>()
        .into_iter()
        .collect();
    let several = sizes.len() > 1;
    let mut marked: BTreeSet<(String, u64, String)> = BTreeSet::new();
    let dots = pts
        .iter()
        .map(|p| {
            let goals = goals_of(p);
            // A configuration measured twice is marked once.
            let big = !goals.is_empty() && marked.insert((p.name.clone(), p.bs, p.label.clone()));
            Dot {
                x: p.iops,
                y: tail.ns(p),
                bs: p.bs,
                cpu: p.cpu_pct,
                big,
                label: if several {
                    format!("{} {}: {}", p.label, format_size(p.bs), goals.join(", "))
                } else {
                    format!("{}: {}", p.label, goals.join(", "))
                },
                fio: false,
                mark: mark(p, Some(IOPS), tail_fig),
            }
        })
        .collect();
    let cpu_max = pts
        .iter()
        .map(|p| p.cpu_pct)
        .fold(100.0_f64, |a, b| if b.is_finite() { a.max(b) } else { a });
    let mut x = Axis::linear("IOPS", Unit::Count);
    x.from_zero = true;
    let mut ch = chart(
        c.id("search"),
        format!(
            "What the tuner measured: IOPS against {} latency of every configuration it tried (shape: block size, colour: CPU); enlarged and labelled: its pick for each goal (the table gives their re-measured medians)",
            tail.name()
        ),
        pts,
        Kind::Scatter(Scatter {
            x,
            y: Axis::log(&format!("{} latency (log scale)", tail.name()), Unit::Ns),
            sizes,
            big_means: "the tuner's pick".into(),
            dots,
            frontier: Vec::new(),
            cpu_max,
            target: String::new(),
        }),
    );
    ch.height = 500;
    vec![ch]
}

/// The stream study: sequential and random per block size (its sequential and random points,
/// direct), then Figure 13: buffered against direct sequential reading, throughput against the
/// offset read, one line per block size and mode.
pub fn stream(c: &Ctx) -> Vec<Chart> {
    let (pts, namer) = (&c.pts, &c.namer);
    // Every point, each in its summary column (access, direct or buffered).
    let mut out = studies::stream(c);
    // Block sizes read both ways, sequentially.
    let both: BTreeSet<u64> = pts
        .iter()
        .filter(|p| !p.direct && p.rw == "read")
        .map(|p| p.bs)
        .filter(|bs| {
            pts.iter()
                .any(|q| q.direct && q.rw == "read" && q.bs == *bs)
        })
        .collect();
    if both.is_empty() {
        return out;
    }
    let mine: Vec<&Point> = pts
        .iter()
        .copied()
        .filter(|p| p.rw == "read" && both.contains(&p.bs))
        .collect();
    let mut series: Vec<LineSeries> = mine
        .iter()
        .enumerate()
        .map(|(k, p)| LineSeries {
            name: namer.name(
                p,
                &format!(
                    "{} {}",
                    format_size(p.bs),
                    if p.direct { "direct" } else { "buffered" }
                ),
            ),
            points: thin(&studies::bandwidth_by_offset(p), MAX_LINE_POINTS),
            color: k,
            dashed: !p.direct,
            marker: None,
            fio: p.is_fio(),
            step: false,
            labels: Vec::new(),
            marks: Vec::new(),
        })
        .collect();
    // Direct before buffered of each block size, so the direct line is the solid one.
    let sizes: Vec<u64> = mine.iter().map(|p| p.bs).collect();
    style_by_block_size(&mut series, &sizes);
    for (s, p) in series.iter_mut().zip(&mine) {
        s.dashed = !p.direct;
    }
    out.push(chart(
        c.id("buffered-direct"),
        "Buffered (readahead, dashed) against direct (solid) sequential reading from the start of the target (after the warm-up): throughput against the offset read"
            .into(),
        &mine,
        Kind::Lines(Lines {
            x: XAxis::Numeric(Axis::linear("offset (bytes)", Unit::Bytes)),
            y: mb_axis(),
            series,
        }),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::UringOptions;
    use crate::points::tests::point;

    fn ctx<'a>(pts: &[&'a Point], study: &'static str) -> Ctx<'a> {
        let report = Report::from_points(pts.iter().map(|p| (*p).clone()).collect());
        Ctx {
            pts: pts.to_vec(),
            namer: Namer::new(pts),
            study,
            report: Box::leak(Box::new(report)),
        }
    }

    /// The stream study's summary.md and its HTML throughput figure, from the same stored
    /// results: buffered and direct sequential reading each in their own column and line, with the
    /// same figures (the summary put the buffered 4K point in the "sequential" column).
    #[test]
    fn stream_summary_and_figure_keep_buffered_and_direct_apart() {
        let docs: Vec<crate::result::Document> =
            crate::fixture::documents::<crate::result::Document>()
                .into_iter()
                .filter(|d| d.study.as_ref().is_some_and(|t| t.study.name() == "stream"))
                .collect();
        let mut docs = docs;
        let mut buffered = docs
            .iter()
            .find(|d| d.config.rw == crate::config::Rw::Read)
            .unwrap()
            .clone();
        buffered.config.direct = false;
        buffered.result.mb_s = 430.9;
        docs.push(buffered);
        let name = crate::study::StudyName::parse("stream").unwrap();
        let md = crate::study::summarize(&[name], &docs);
        let header = md.lines().find(|l| l.starts_with("| |")).unwrap();
        let row = md.lines().find(|l| l.starts_with("| 4K |")).unwrap();
        let cell = |col: &str| -> String {
            let h: Vec<&str> = header.split('|').map(str::trim).collect();
            let k = h
                .iter()
                .position(|c| *c == format!("{col} MB/s"))
                .unwrap_or_else(|| panic!("no column {col}: {header}"));
            row.split('|').map(str::trim).nth(k).unwrap().to_string()
        };
        let points: Vec<Point> = docs
            .iter()
            .map(|d| Point::from_document(d, "s/results.jsonl"))
            .collect();
        let refs: Vec<&Point> = points.iter().collect();
        let charts = stream(&ctx(&refs, "stream"));
        let Kind::Lines(l) = &charts[0].kind else {
            panic!("{:?}", charts[0].kind)
        };
        let mut names: Vec<&str> = l.series.iter().map(|s| s.name.as_str()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            ["random direct", "sequential buffered", "sequential direct"]
        );
        for s in &l.series {
            assert_eq!(s.points.len(), 1, "{s:?}");
            assert_eq!(cell(&s.name), format!("{:.1}", s.points[0].1), "{}", s.name);
        }
        assert_eq!(cell("sequential buffered"), "430.9");
        assert_eq!(cell("sequential direct"), "67.8");
    }

    #[test]
    fn the_sq_poll_thread_is_stacked_on_the_application() {
        let mut a = point("U32B1S", 4096, 100.0, 50.0);
        a.engine = "uring".into();
        UringOptions::edit(&mut a.options, |o| o.sqpoll = true);
        a.cpu_pct = 130.0;
        a.sqpoll_cpu_pct = 100.0;
        let mut b = a.clone();
        UringOptions::edit(&mut b.options, |o| o.sqpoll = false);
        b.sqpoll_cpu_pct = 0.0;
        b.cpu_pct = 60.0;
        let pts = [&a, &b];
        let charts = uring_features(&ctx(&pts, "uring-features"));
        let Kind::Bars(cpu) = &charts[1].kind else {
            panic!()
        };
        assert_eq!(cpu.layers, ["application threads", "+ SQ poll thread"]);
        let sq = cpu.series.iter().find(|s| s.name == "SQ poll").unwrap();
        assert_eq!(sq.values, [Some(vec![30.0, 130.0])], "the bar is the sum");
        let plain = cpu.series.iter().find(|s| s.name == "plain").unwrap();
        assert_eq!(plain.values, [Some(vec![60.0, 60.0])]);
    }

    #[test]
    fn the_hockey_stick_marks_queue_depths() {
        let mut pts = Vec::new();
        for (qd, iops, p99) in [
            (1, 10_000.0, 100.0),
            (4, 35_000.0, 150.0),
            (16, 40_000.0, 900.0),
        ] {
            let mut p = point("U", 4096, iops * 4096.0 / 1e6, p99);
            p.engine = "uring".into();
            p.iodepth = qd;
            p.iops = iops;
            pts.push(p);
        }
        let refs: Vec<&Point> = pts.iter().collect();
        let h = hockey_stick(&ctx(&refs, "queue"), &refs);
        let Kind::Lines(l) = &h.kind else { panic!() };
        assert_eq!(l.series[0].labels, ["QD1", "QD4", "QD16"]);
        assert_eq!(l.series[0].points[2].0, 40_000.0);
    }
}
