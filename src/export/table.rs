//! The human view: a detailed report of one run, or one table row per run for surveys.

use super::Exporter;
use crate::config::Rw;
use crate::error::Result;
use crate::result::{Document, RunResult};
use crate::stats::percentile_cell;
use crate::table::{Column, Table};
use crate::units::{Style, format_bytes, format_ns};
use std::fmt::Write;

/// The columns of a run's headline figures, the same in every per-run table: IOPS, MiB/s, the
/// achieved queue depth, p50, p99, p99.9 and max.
pub fn figure_columns() -> [Column; 7] {
    [
        Column::right("IOPS").width(10).priority(3),
        Column::right("MiB/s").width(9).priority(2),
        Column::right("depth").width(6).priority(1),
        Column::right("p50").width(9).priority(1),
        Column::right("p99").width(9).priority(2),
        Column::right("p99.9").width(9).priority(2),
        Column::right("max").width(9),
    ]
}

/// The cells of [`figure_columns`] but max (the tables differ on a run without reads).
pub fn figure_cells(r: &RunResult) -> [String; 6] {
    let l = &r.latency;
    [
        format!("{:.0}", r.iops),
        format!("{:.1}", r.mib_s),
        r.achieved_depth
            .map_or_else(|| "–".into(), |d| format!("{d:.1}")),
        percentile_cell(l, 50.0, l.p50_ns),
        percentile_cell(l, 99.0, l.p99_ns),
        percentile_cell(l, 99.9, l.p999_ns),
    ]
}

/// One line per run: what ran and its headline figures.
pub struct TableExporter;

fn workload(d: &Document) -> String {
    let c = &d.config;
    format!(
        "{} {} {} {}",
        c.engine.name(),
        match c.rw {
            Rw::Read => "seq".to_string(),
            Rw::Randread if c.random_distribution.is_uniform() => "rand".to_string(),
            Rw::Randread => format!("rand {}", c.random_distribution),
        },
        if c.bssplit.is_single() {
            format_bytes(c.bs as f64, Style::Table)
        } else {
            c.bssplit.to_string()
        },
        if c.direct { "direct" } else { "buffered" }
    )
}

impl TableExporter {
    /// The table of `docs`, one row per run, to print whole ([`Table::text`]) or fitted to a
    /// terminal ([`Table::text_within`]).
    pub fn table(docs: &[Document]) -> Table {
        let mut columns = vec![
            Column::left("label").width(8).keep(),
            Column::left("workload").width(26).floor(20),
        ];
        columns.extend(figure_columns());
        columns.extend([
            Column::right("CPU%").width(7).priority(1),
            Column::right("us/IO").width(8).priority(1),
        ]);
        let mut t = Table::new(columns);
        for d in docs {
            let r = &d.result;
            let l = &r.latency;
            let mut cells = vec![r.label.clone(), workload(d)];
            cells.extend(figure_cells(r));
            cells.extend([
                if l.count == 0 {
                    "–".into()
                } else {
                    format_ns(l.max_ns as f64, Style::Table)
                },
                format!("{:.1}", r.cpu.threads_pct_of_core()),
                format!("{:.2}", r.cpu_us_per_io),
            ]);
            t.push(cells);
        }
        t
    }

    /// What follows the run table: every label shown in words, and an open-loop run's rate
    /// asked and achieved.
    pub fn notes(docs: &[Document]) -> String {
        let mut out = crate::label::key_lines(docs.iter().map(|d| d.result.label.as_str()));
        for d in docs {
            if let Some(o) = &d.result.open_loop {
                let _ = writeln!(out, "open loop {}: {}", d.result.label, o.words());
            }
        }
        out
    }
}

impl Exporter for TableExporter {
    fn render(&self, docs: &[Document]) -> Result<String> {
        Ok(TableExporter::table(docs).text() + &TableExporter::notes(docs))
    }
}

/// Everything about one run, for the terminal: what ran and its throughput, its latency, how it
/// ran, what it cost and what it checked.
pub fn run_report(d: &Document) -> String {
    let mut s = headline(d);
    latency_lines(&mut s, &d.result);
    precision_lines(&mut s, &d.result);
    shape_lines(&mut s, d);
    cost_lines(&mut s, &d.result);
    check_lines(&mut s, &d.result);
    s
}

/// What ran, on what, and its throughput.
fn headline(d: &Document) -> String {
    let c = &d.config;
    let r = &d.result;
    let e = &d.environment;
    let mut s = String::new();
    let dev = match (&e.device.name, &e.filesystem) {
        (Some(dev), Some(fs)) => format!("{fs} on {dev}"),
        (Some(dev), None) => dev.clone(),
        (None, Some(fs)) => fs.clone(),
        (None, None) => "?".into(),
    };
    let _ = writeln!(
        s,
        "{} [{}], {} thread(s), iodepth {}, on {} ({})",
        workload(d),
        r.label,
        c.threads,
        c.iodepth,
        crate::nbd::shown(&c.target_words()),
        dev
    );
    let _ = writeln!(
        s,
        "  {:.0} IOPS, {:.1} MiB/s ({:.1} MB/s) over {:.2} s, {} I/Os",
        r.iops, r.mib_s, r.mb_s, r.seconds, r.ios
    );
    if !c.random_distribution.is_uniform() {
        let len = c
            .size
            .unwrap_or_else(|| e.target.size.saturating_sub(c.offset));
        let hot = c.random_distribution.hot_set(len / c.bs.max(1));
        let _ = writeln!(s, "  access   {hot}");
    }
    for z in &r.by_size {
        let l = &z.latency;
        let _ = writeln!(
            s,
            "  size {:<5}{:.1} % (asked {} %)  {:.0} IOPS  {:.1} MiB/s  mean {}  p50 {}  p99 {}",
            format_bytes(z.bs as f64, Style::Table),
            z.share_pct,
            z.percent,
            z.iops,
            z.mib_s,
            format_ns(l.mean_ns, Style::Table),
            percentile_cell(l, 50.0, l.p50_ns),
            percentile_cell(l, 99.0, l.p99_ns),
        );
    }
    s
}

/// The latency line, the percentiles too few samples support, the split of a request's time
/// and the intervals of a repeated run.
fn latency_lines(s: &mut String, r: &RunResult) {
    let l = &r.latency;
    if l.count == 0 {
        let _ = writeln!(s, "  latency  – (no request measured)");
    } else {
        let _ = writeln!(
            s,
            "  latency  min {}  mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  p99.99 {}  max {}",
            format_ns(l.min_ns as f64, Style::Table),
            format_ns(l.mean_ns, Style::Table),
            percentile_cell(l, 50.0, l.p50_ns),
            percentile_cell(l, 90.0, l.p90_ns),
            percentile_cell(l, 99.0, l.p99_ns),
            percentile_cell(l, 99.9, l.p999_ns),
            percentile_cell(l, 99.99, l.p9999_ns),
            format_ns(l.max_ns as f64, Style::Table),
        );
    }
    let missing: Vec<String> = [50.0, 90.0, 99.0, 99.9, 99.99]
        .into_iter()
        .filter(|&q| !l.supports(q))
        .map(|q| format!("p{q} needs {}", crate::stats::min_samples(q)))
        .collect();
    if !missing.is_empty() && l.count > 0 {
        let _ = writeln!(
            s,
            "           (– too few samples: {} requests; {})",
            l.count,
            missing.join(", ")
        );
    }
    if let (Some(sv), Some(h)) = (&r.service_latency, &r.handoff_latency) {
        let _ = writeln!(
            s,
            "  split    read itself p50 {} p99 {}; hand-off p50 {} p99 {}",
            format_ns(sv.p50_ns as f64, Style::Table),
            format_ns(sv.p99_ns as f64, Style::Table),
            format_ns(h.p50_ns as f64, Style::Table),
            format_ns(h.p99_ns as f64, Style::Table)
        );
    }
    if let Some(rep) = &r.repeat {
        let ns = |i: &crate::interval::Interval| {
            format!(
                "{}–{}",
                format_ns(i.lo, Style::Table),
                format_ns(i.hi, Style::Table)
            )
        };
        let _ = writeln!(
            s,
            "  repeat   {} runs, the median one shown; {:.0} % intervals of the median: IOPS {:.0}–{:.0}, \
             p50 {}, p99 {}{}",
            rep.runs,
            100.0 * rep.confidence,
            rep.iops.lo,
            rep.iops.hi,
            ns(&rep.p50_ns),
            ns(&rep.p99_ns),
            if l.supports(99.9) {
                format!(", p99.9 {}", ns(&rep.p999_ns))
            } else {
                String::new()
            }
        );
    }
}

/// How well the run measured: IOPS and CPU per I/O with their intervals (± half the interval,
/// relative), then the percentiles' intervals; a percentile too few requests support shows
/// `–` as on the latency line, with whatever bound its interval has. Lines within 100 columns.
fn precision_lines(s: &mut String, r: &RunResult) {
    const HEAD: &str = "  interval ";
    if r.latency.count == 0 {
        return;
    }
    let Some(p) = &r.precision else {
        let _ = writeln!(
            s,
            "{HEAD}– (the measured window is too short for one: under {} batches of windows)",
            crate::estimate::MIN_BATCHES
        );
        return;
    };
    let pm = |e: &crate::estimate::Estimate| match e.relative_half_width() {
        h if h.is_finite() => format!("± {:.1} %", 100.0 * h),
        _ => "± ?".into(),
    };
    let _ = writeln!(
        s,
        "{HEAD}IOPS {} {} ({:.0} %; {} windows of {} s in {} batches)",
        crate::units::grouped(p.iops.value.round().max(0.0) as u64),
        pm(&p.iops),
        100.0 * p.confidence,
        p.windows,
        p.window_s,
        p.batches
    );
    let mut items = Vec::new();
    if let Some(c) = &p.cpu_us_per_io {
        items.push(format!("CPU {:.2} us per I/O {}", c.value, pm(c)));
    }
    let l = &r.latency;
    for (name, q, e) in [
        ("p50", 50.0, &p.p50_ns),
        ("p99", 99.0, &p.p99_ns),
        ("p99.9", 99.9, &p.p999_ns),
    ] {
        let value = percentile_cell(l, q, e.value as u64);
        items.push(format!("{name} {value} ({})", bounds(e)));
    }
    let indent = " ".repeat(HEAD.len());
    let mut line = indent.clone();
    for it in items {
        if line.len() > indent.len() && line.chars().count() + 2 + it.chars().count() > 100 {
            let _ = writeln!(s, "{line}");
            line = indent.clone();
        }
        if line.len() > indent.len() {
            line.push_str("  ");
        }
        line.push_str(&it);
    }
    let _ = writeln!(s, "{line}");
}

/// A percentile's interval in words: `lo–hi`, or the one bound there is and why not the other.
fn bounds(e: &crate::estimate::Estimate) -> String {
    let ns = |v: f64| format_ns(v, Style::Table);
    match (e.lo, e.hi) {
        (Some(lo), Some(hi)) => format!("{}–{}", ns(lo), ns(hi)),
        (Some(lo), None) => format!("≥ {}; too few requests for an upper bound", ns(lo)),
        (None, Some(hi)) => format!("≤ {}; too few requests for a lower bound", ns(hi)),
        (None, None) => "too few requests to bound it".into(),
    }
}

/// How the run ran: open loop, the depth it achieved, requests of several blocks, features,
/// completions.
fn shape_lines(s: &mut String, d: &Document) {
    let (c, r) = (&d.config, &d.result);
    if let Some(o) = &r.open_loop {
        let _ = writeln!(
            s,
            "  open loop {}; {:.1} % issued late, largest backlog {} requests, {} still due at \
             the end",
            o.words(),
            o.late_pct,
            crate::units::grouped(o.max_backlog.round().max(0.0) as u64),
            crate::units::grouped(o.final_backlog.round().max(0.0) as u64)
        );
    }
    if let Some(t) = &r.think {
        let _ = writeln!(s, "  think    {}", t.words());
    }
    if let Some(depth) = r.achieved_depth {
        let _ = writeln!(
            s,
            "  depth    {depth:.2} requests in flight on average per thread (asked {})",
            c.iodepth
        );
    }
    if r.requests != r.ios {
        let _ = writeln!(
            s,
            "  requests {} of {} blocks each, {:.0} requests/s (latency is per request)",
            r.requests, c.blocks_per_request, r.requests_per_s
        );
    }
    if !r.engine_features.is_empty() {
        let _ = writeln!(s, "  features {}", r.engine_features.join(" "));
    }
    if let Some(c) = &r.completions {
        let _ = writeln!(s, "  irq      {}", c.words());
    }
}

/// What the run cost: CPU, the timer, readlab's own loop.
fn cost_lines(s: &mut String, r: &RunResult) {
    let cpu = &r.cpu;
    let _ = write!(
        s,
        "  cpu      app {:.1}% of a core (user {:.2}s sys {:.2}s)",
        cpu.app.pct_of_core, cpu.app.user_s, cpu.app.sys_s
    );
    if cpu.sqpoll.threads > 0 {
        let _ = write!(s, ", sq-poll {:.1}%", cpu.sqpoll.pct_of_core);
    }
    if cpu.io_worker.threads > 0 {
        let _ = write!(
            s,
            ", io-workers {:.1}% ({} threads)",
            cpu.io_worker.pct_of_core, cpu.io_worker.threads
        );
    }
    let _ = writeln!(
        s,
        "; machine busy {:.1}% of a core ({} cores); {:.2} us CPU per I/O",
        cpu.machine_busy_pct_of_core, cpu.machine_cores, r.cpu_us_per_io
    );
    let _ = writeln!(
        s,
        "  timer    {:.0} ns per clock read{}, {:.0} ns per I/O",
        r.timer.ns_per_clock_read,
        match r.timer.clock.as_str() {
            "" => String::new(),
            c => format!(" ({c})"),
        },
        r.timer.overhead_ns_per_io
    );
    if let Some(own) = &r.runner_cost {
        let _ = writeln!(
            s,
            "  readlab  its own loop {:.2} us CPU per I/O ({} IOPS on the null engine, same \
             shape): {:.0} % of this run's {:.2} us",
            own.cpu_us_per_io,
            crate::units::grouped(own.iops.round().max(0.0) as u64),
            own.share_of_cpu * 100.0,
            r.cpu_us_per_io
        );
    }
}

/// What the run checked and how it ended: verification, errors, an early end.
fn check_lines(s: &mut String, r: &RunResult) {
    if let Some(v) = &r.verify {
        let _ = writeln!(
            s,
            "  verify   {} reads checked, {} mismatches",
            v.checked_ios, v.mismatches
        );
        for m in &v.first {
            let _ = writeln!(
                s,
                "    MISMATCH at offset {} (sector {}): expected {:#04x}, found {:#04x}",
                m.offset, m.sector, m.expected, m.found
            );
        }
    }
    if r.errors.count > 0 || r.errors.eagain > 0 {
        let _ = writeln!(
            s,
            "  errors   {} I/O errors, {} EAGAIN (nowait)",
            r.errors.count, r.errors.eagain
        );
        for er in &r.errors.first {
            let _ = writeln!(
                s,
                "    ERROR at offset {} ({} B): {}",
                er.offset, er.len, er.message
            );
        }
    }
    if r.ended_by != crate::result::EndedBy::Runtime {
        let _ = writeln!(s, "  ended    {}", r.ended_by);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documents of the small results fixture, one per line.
    fn fixture() -> Vec<Document> {
        crate::fixture::documents()
    }

    #[test]
    fn the_run_table_reads_as_fixed_width_columns() {
        let docs = fixture();
        // The widths the table has always had, as `format!` would pad them.
        let mut want = format!(
            "{:<8} {:<26} {:>10} {:>9} {:>6} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8}\n",
            "label",
            "workload",
            "IOPS",
            "MiB/s",
            "depth",
            "p50",
            "p99",
            "p99.9",
            "max",
            "CPU%",
            "us/IO"
        );
        for d in &docs {
            let (r, l) = (&d.result, &d.result.latency);
            let ns = |v: u64| format_ns(v as f64, Style::Table);
            // Results from before readlab measured the depth show none; too few samples for a
            // percentile show a dash.
            let cell = |least: u64, v: u64| {
                if l.count >= least {
                    ns(v)
                } else {
                    "–".into()
                }
            };
            want.push_str(&format!(
                "{:<8} {:<26} {:>10.0} {:>9.1} {:>6} {:>9} {:>9} {:>9} {:>9} {:>7.1} {:>8.2}\n",
                r.label,
                workload(d),
                r.iops,
                r.mib_s,
                "–",
                cell(20, l.p50_ns),
                cell(1_000, l.p99_ns),
                cell(10_000, l.p999_ns),
                ns(l.max_ns),
                r.cpu.threads_pct_of_core(),
                r.cpu_us_per_io,
            ));
        }
        assert!(docs.len() > 5);
        // Under the table, every label shown once, in words.
        let got = TableExporter.render(&docs).unwrap();
        let key = got
            .strip_prefix(want.as_str())
            .unwrap_or_else(|| panic!("{got}"));
        assert!(
            key.starts_with("key: P         pread\n     PT2       pread, 2 threads\n"),
            "{key}"
        );
        assert!(
            key.ends_with(
                "     U16B4MFS  io_uring, queue depth 16, batch 4, fixed buffers, fixed files, SQ poll\n"
            ),
            "{key}"
        );
        assert_eq!(key.lines().count(), 8, "{key}");
    }

    /// An open-loop run says the rate it was asked for and what it achieved, in its block and
    /// under the run table; the table's labels are expanded in words beneath it.
    #[test]
    fn open_loop_runs_say_their_rate_and_labels_their_words() {
        let mut d = fixture().remove(0);
        d.config.engine = crate::engine::EngineKind::Libaio;
        (d.config.iodepth, d.config.batch, d.config.threads) = (48, 8, 3);
        d.result.label = d.config.label();
        d.result.open_loop = Some(crate::result::OpenLoopSummary {
            target_iops: 5000.0,
            achieved_iops: 4998.2,
            issue_delay: d.result.latency.clone(),
            late: 3,
            late_pct: 0.1,
            max_backlog: 2.0,
            final_backlog: 0.0,
        });
        let block = run_report(&d);
        assert!(
            block.contains("open loop rate 5,000/s, achieved 4,998/s"),
            "{block}"
        );
        let table = TableExporter.render(std::slice::from_ref(&d)).unwrap();
        assert!(
            table.contains("key: A48B8T3  libaio, queue depth 48, batch 8, 3 threads\n"),
            "{table}"
        );
        assert!(
            table.contains("open loop A48B8T3: rate 5,000/s, achieved 4,998/s\n"),
            "{table}"
        );
    }

    /// A run's intervals: IOPS ± its relative half-width, CPU per I/O too, the percentiles'
    /// bounds (an unbounded side said as such), within 100 columns; a run too short for one
    /// says so.
    #[test]
    fn the_run_says_how_precise_its_figures_are() {
        use crate::estimate::Estimate;
        let mut d = fixture().remove(0);
        // Enough requests for p99, too few for p99.9.
        d.result.latency.count = 5_000;
        let l = d.result.latency.clone();
        assert!(run_report(&d).contains("  interval – (the measured window is too short"));
        let e = |value: f64, lo: Option<f64>, hi: Option<f64>| Estimate { value, lo, hi };
        d.result.precision = Some(crate::result::Precision {
            confidence: 0.95,
            window_s: 0.1,
            windows: 100,
            batches: 10,
            iops: e(123_456.0, Some(121_975.0), Some(124_937.0)),
            cpu_us_per_io: Some(e(1.5, Some(1.47), Some(1.53))),
            p50_ns: e(
                l.p50_ns as f64,
                Some(l.p50_ns as f64 - 100.0),
                Some(l.p50_ns as f64),
            ),
            p99_ns: e(l.p99_ns as f64, Some(900_000.0), Some(1_300_000.0)),
            p999_ns: e(l.p999_ns as f64, Some(1_800_000.0), None),
        });
        let block = run_report(&d);
        assert!(
            block.contains(
                "  interval IOPS 123,456 ± 1.2 % (95 %; 100 windows of 0.1 s in 10 batches)\n"
            ),
            "{block}"
        );
        assert!(block.contains("CPU 1.50 us per I/O ± 2.0 %"), "{block}");
        assert!(block.contains("p99 "), "{block}");
        assert!(block.contains("(900.0us–1.30ms)"), "{block}");
        assert!(
            block.contains("p99.9 – (≥ 1.80ms; too few requests for an upper bound)"),
            "{block}"
        );
        let start = block.find("  interval").unwrap();
        let lines: Vec<&str> = block[start..]
            .lines()
            .take_while(|l| l.starts_with("  interval") || l.starts_with("           "))
            .collect();
        assert!(lines.len() >= 2, "{block}");
        assert!(lines.iter().all(|l| l.chars().count() <= 100), "{lines:#?}");
    }

    #[test]
    fn the_run_says_what_of_its_cpu_is_readlabs_own_loop() {
        let mut d = fixture().remove(0);
        assert!(!run_report(&d).contains("its own loop"), "not measured");
        d.result.cpu_us_per_io = 1.4;
        d.result.runner_cost = crate::result::RunnerCost::new(0.0912, 7_123_456.4, 1.4);
        let block = run_report(&d);
        assert!(
            block.contains(
                "  readlab  its own loop 0.09 us CPU per I/O (7,123,456 IOPS on the null engine, \
                 same shape): 7 % of this run's 1.40 us\n"
            ),
            "{block}"
        );
    }
}
