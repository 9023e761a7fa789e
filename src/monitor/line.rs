//! One line per sample for the terminal, dstat's way: groups of narrow columns (each device,
//! cpu, procs, memory, pressure, the process's threads, the busiest thread group), chosen by
//! priority to fit the terminal's width, with a two-line header naming groups and columns.

use super::threads::{Kind, State};
use super::{MonitorOptions, Sample};

type Cell = Box<dyn Fn(&Sample) -> String + Send + Sync>;

struct Col {
    group: String,
    head: &'static str,
    width: usize,
    /// 1 is shown first; the last columns go when the terminal is narrow.
    prio: u8,
    cell: Cell,
}

/// The columns chosen for one terminal width.
pub struct Layout {
    cols: Vec<Col>,
    /// Width of the free-text column at the end (the busiest thread group), 0 when none.
    top_width: usize,
    /// The terminal's width the layout fits.
    width: usize,
}

/// A number in at most `w` characters: `950`, `12.5`, `1234`, `45.6k`, `1.2M`.
pub fn compact(v: f64, w: usize) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let fits = |s: &String| s.len() <= w;
    for (scale, suffix) in [(1.0, ""), (1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T")] {
        let x = v / scale;
        for decimals in [1usize, 0] {
            if decimals == 1 && (x.abs() >= 100.0 || (scale == 1.0 && x.fract() == 0.0)) {
                continue;
            }
            let s = format!("{x:.decimals$}{suffix}");
            if fits(&s) {
                return s;
            }
        }
    }
    "#".repeat(w)
}

fn col(group: &str, head: &'static str, width: usize, prio: u8, cell: Cell) -> Col {
    Col {
        group: group.to_string(),
        head,
        width,
        prio,
        cell,
    }
}

fn dev(i: usize, f: fn(&super::DeviceSample) -> f64, w: usize) -> Cell {
    Box::new(move |s: &Sample| s.devices.get(i).map_or("-".into(), |d| compact(f(d), w)))
}

fn num(f: fn(&Sample) -> f64, w: usize) -> Cell {
    Box::new(move |s: &Sample| compact(f(s), w))
}

/// A percentage as a whole number.
fn pct(f: fn(&Sample) -> f64) -> Cell {
    Box::new(move |s: &Sample| format!("{:.0}", f(s)))
}

fn active(s: &Sample, k: Kind) -> f64 {
    s.kind(k).map_or(0.0, |c| c.running + c.disk)
}

/// The busiest active thread group as `kind state syscall wchan` (`iou-wrk D - folio_wait_bit`).
pub fn top_group(s: &Sample) -> String {
    s.threads
        .top
        .iter()
        .find(|g| matches!(g.state, State::Running | State::Disk))
        .map_or_else(String::new, |g| {
            format!(
                "{:.1} {} {} {} {}",
                g.avg_threads,
                g.comm.as_deref().unwrap_or(g.kind.as_str()),
                match g.state {
                    State::Running => "R",
                    State::Disk => "D",
                    _ => "S",
                },
                g.syscall,
                g.wchan
            )
        })
}

/// What a column head means, for the legend (none for the obvious ones).
fn meaning(head: &str) -> Option<&'static str> {
    Some(match head {
        "r/s" => "= device read requests completed per second",
        "MB/s" => "= device read MB/s",
        "KiB" => "= KiB per device read request (iostat rareq-sz)",
        "mrg" => "= reads merged per second (rrqm/s)",
        "qd" => "= requests in flight, sampled from /sys/block/*/inflight",
        "aqu-sz" => "= iostat's mean queue length (time-weighted, from diskstats)",
        "util" => "= % of the time with a request in flight (%util)",
        "r_await" => "= iostat's ms per read request, queued to completed",
        "wai" => "= CPU % in iowait",
        "blk" => "= tasks blocked on I/O",
        "cach" => "= page cache bytes",
        "wrk" => "= io_uring workers",
        "wrkD" => "= io_uring workers in disk wait",
        "sqp" => "= SQ poll threads active",
        "kern" => "= other kernel threads running or in disk wait",
        _ => return None,
    })
}

impl Layout {
    /// The columns for these options at this terminal width (at least the time and the first
    /// device's IOPS).
    pub fn new(opts: &MonitorOptions, width: usize) -> Layout {
        let mut all = vec![col(
            "time",
            "t",
            5,
            1,
            Box::new(|s: &Sample| format!("{:.0}", s.t_s)),
        )];
        for (i, name) in opts.devices.iter().enumerate() {
            all.push(col(name, "r/s", 6, 1, dev(i, |d| d.read_iops, 6)));
            all.push(col(name, "MB/s", 5, 1, dev(i, |d| d.read_mb_s, 5)));
            all.push(col(name, "KiB", 4, 3, dev(i, |d| d.read_kib_per_io, 4)));
            all.push(col(name, "mrg", 4, 4, dev(i, |d| d.read_merges_s, 4)));
            all.push(col(name, "qd", 4, 2, dev(i, |d| d.inflight, 4)));
            all.push(col(name, "aqu-sz", 6, 3, dev(i, |d| d.queue, 6)));
            all.push(col(name, "util", 4, 2, dev(i, |d| d.util_pct.round(), 4)));
            all.push(col(name, "r_await", 7, 3, dev(i, |d| d.read_await_ms, 7)));
        }
        all.push(col("cpu", "usr", 3, 1, pct(|s| s.machine.usr_pct)));
        all.push(col("cpu", "sys", 3, 1, pct(|s| s.machine.sys_pct)));
        all.push(col("cpu", "wai", 3, 3, pct(|s| s.machine.iowait_pct)));
        all.push(col("cpu", "idl", 3, 3, pct(|s| s.machine.idle_pct)));
        all.push(col("cpu", "stl", 3, 5, pct(|s| s.machine.steal_pct)));
        all.push(col(
            "procs",
            "run",
            3,
            2,
            num(|s| s.machine.running as f64, 3),
        ));
        all.push(col(
            "procs",
            "blk",
            3,
            2,
            num(|s| s.machine.blocked as f64, 3),
        ));
        all.push(col(
            "psi",
            "io",
            3,
            4,
            pct(|s| s.machine.psi_io_some_pct.unwrap_or(0.0)),
        ));
        all.push(col(
            "mem",
            "cach",
            5,
            2,
            num(|s| s.machine.page_cache_kib as f64 * 1024.0, 5),
        ));
        all.push(col(
            "mem",
            "free",
            5,
            4,
            num(|s| s.machine.free_kib as f64 * 1024.0, 5),
        ));
        all.push(col(
            "mem",
            "dirt",
            5,
            5,
            num(|s| s.machine.dirty_kib as f64 * 1024.0, 5),
        ));
        if opts.pid.is_some() {
            all.push(col(
                "threads",
                "app",
                4,
                3,
                num(|s| active(s, Kind::App), 4),
            ));
            all.push(col(
                "threads",
                "wrk",
                4,
                2,
                num(|s| s.kind(Kind::IouWrk).map_or(0.0, |k| k.threads), 4),
            ));
            all.push(col(
                "threads",
                "wrkD",
                4,
                3,
                num(|s| s.kind(Kind::IouWrk).map_or(0.0, |k| k.disk), 4),
            ));
            all.push(col(
                "threads",
                "sqp",
                4,
                5,
                num(|s| active(s, Kind::IouSqp), 4),
            ));
        }
        all.push(col(
            "threads",
            "kern",
            4,
            4,
            num(|s| active(s, Kind::Other), 4),
        ));
        all.push(col("mon", "cpu%", 4, 5, num(|s| s.sampler_cpu_pct, 4)));
        Layout::fit(all, width)
    }

    fn fit(all: Vec<Col>, width: usize) -> Layout {
        // Columns by priority, then in their order, while the line still fits.
        let mut order: Vec<usize> = (0..all.len()).collect();
        order.sort_by_key(|&i| (all[i].prio, i));
        let mut keep = vec![false; all.len()];
        let used = |keep: &[bool]| -> usize {
            let kept = all.iter().zip(keep).filter(|(_, k)| **k);
            kept.map(|(c, _)| c.width + 1)
                .sum::<usize>()
                .saturating_sub(1)
        };
        for (n, &i) in order.iter().enumerate() {
            keep[i] = true;
            if n > 1 && used(&keep) > width {
                keep[i] = false;
            }
        }
        let left = width.saturating_sub(used(&keep) + 2);
        let cols = all
            .into_iter()
            .zip(keep)
            .filter_map(|(c, k)| k.then_some(c))
            .collect();
        Layout {
            cols,
            // Room for its values and for its heading (` busiest thread group`) over them.
            top_width: if left >= 19 { left } else { 0 },
            width,
        }
    }

    fn render(&self, text: impl Fn(&Col) -> String, top: String) -> String {
        let mut s = String::new();
        let mut last: Option<&str> = None;
        for c in &self.cols {
            if let Some(g) = last {
                s.push(if g == c.group { ' ' } else { '|' });
            }
            let t = text(c);
            let t: String = t.chars().take(c.width).collect();
            s.push_str(&format!("{t:>w$}", w = c.width));
            last = Some(&c.group);
        }
        if self.top_width > 0 {
            s.push_str("| ");
            s.extend(top.chars().take(self.top_width));
        }
        s.trim_end().to_string()
    }

    /// The two header lines: group names over their columns, then column names.
    pub fn header(&self) -> String {
        let mut groups = String::new();
        let mut i = 0;
        while i < self.cols.len() {
            let g = &self.cols[i].group;
            let mut j = i;
            let mut w = 0;
            while j < self.cols.len() && &self.cols[j].group == g {
                w += self.cols[j].width + usize::from(j > i);
                j += 1;
            }
            if i > 0 {
                groups.push(' ');
            }
            let name: String = g.chars().take(w).collect();
            let pad = w - name.chars().count();
            groups.push_str(&"-".repeat(pad / 2));
            groups.push_str(&name);
            groups.push_str(&"-".repeat(pad - pad / 2));
            i = j;
        }
        if self.top_width > 0 {
            groups.push_str(" busiest thread group");
        }
        let heads = self.render(
            |c| c.head.to_string(),
            "avg kind state syscall wchan".into(),
        );
        format!("{groups}\n{heads}")
    }

    /// What the columns shown are, one `head: meaning` a column, for a line above the first
    /// header; the device's columns as iostat names them where it has them.
    pub fn legend(&self) -> String {
        let mut seen = Vec::new();
        for c in &self.cols {
            if let Some(m) = meaning(c.head)
                && !seen.iter().any(|(h, _)| *h == c.head)
            {
                seen.push((c.head, m));
            }
        }
        // Lines within the terminal's width, broken between columns.
        let mut out = String::new();
        let mut line = String::new();
        for (h, m) in seen {
            let item = format!("{h} {m}");
            if !line.is_empty() && line.chars().count() + 2 + item.chars().count() > self.width {
                out.push_str(&line);
                out.push_str(";\n");
                line.clear();
            } else if !line.is_empty() {
                line.push_str("; ");
            }
            line.push_str(&item);
        }
        out.push_str(&line);
        out
    }

    /// One sample's line.
    pub fn line(&self, s: &Sample) -> String {
        self.render(|c| (c.cell)(s), top_group(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::threads::{KindCount, ThreadGroup, ThreadsSample};

    #[test]
    fn numbers_fit_their_width() {
        assert_eq!(compact(950.0, 4), "950");
        assert_eq!(compact(12.5, 4), "12.5");
        assert_eq!(compact(3.0, 3), "3");
        assert_eq!(compact(123456.0, 6), "123456");
        assert_eq!(compact(1234567.0, 6), "1235k");
        assert_eq!(compact(123456.0, 5), "123k");
        assert_eq!(compact(1_234_567.0, 4), "1.2M");
        assert_eq!(compact(99.7, 3), "100");
        assert_eq!(compact(0.0, 3), "0");
    }

    fn sample() -> Sample {
        Sample {
            t_s: 3.0,
            interval_s: 1.0,
            devices: vec![crate::monitor::DeviceSample {
                name: "loop0".into(),
                read_iops: 104_321.0,
                read_mb_s: 427.3,
                util_pct: 99.0,
                inflight: 31.6,
                ..Default::default()
            }],
            machine: Default::default(),
            threads: ThreadsSample {
                thread_samples: 10,
                kinds: vec![KindCount {
                    kind: Some(Kind::IouWrk),
                    threads: 12.0,
                    disk: 7.5,
                    ..Default::default()
                }],
                top: vec![ThreadGroup {
                    kind: Kind::IouWrk,
                    state: State::Disk,
                    syscall: "[kernel]".into(),
                    wchan: "folio_wait_bit_common".into(),
                    comm: None,
                    samples: 75,
                    avg_threads: 7.5,
                }],
                ..Default::default()
            },
            process_ended: false,
            sampler_cpu_pct: 0.4,
        }
    }

    #[test]
    fn narrow_and_wide_lines_fit_and_keep_the_essentials() {
        let opts = MonitorOptions::new(vec!["loop0".into()], Some(1));
        for width in [40, 80, 160, 250] {
            let l = Layout::new(&opts, width);
            let line = l.line(&sample());
            assert!(line.chars().count() <= width, "{width}: {line}");
            for h in l.header().lines() {
                assert!(h.chars().count() <= width, "{width}: {h}");
            }
            assert!(line.contains("104321"), "{line}");
        }
        let wide = Layout::new(&opts, 250).line(&sample());
        assert!(
            wide.contains("iou-wrk D [kernel] folio_wait_bit_common"),
            "{wide}"
        );
        assert!(wide.contains("12"), "{wide}");
    }

    /// Every width, two devices and a process: no line or header is wider than the terminal
    /// (the busiest thread group's heading included).
    #[test]
    fn every_width_fits() {
        let opts = MonitorOptions::new(vec!["loop0".into(), "loop1".into()], Some(1));
        for width in 60..=260 {
            let l = Layout::new(&opts, width);
            for h in l.header().lines().chain([l.line(&sample()).as_str()]) {
                assert!(h.chars().count() <= width, "{width}: {h}");
            }
        }
    }

    /// The device's columns say what they are, and iostat's aqu-sz and r_await stand beside the
    /// monitor's own sampled qd.
    #[test]
    fn columns_say_what_they_are_beside_iostats() {
        let opts = MonitorOptions::new(vec!["loop0".into()], Some(1));
        let l = Layout::new(&opts, 250);
        let heads = l.header();
        for h in ["qd", "aqu-sz", "r_await"] {
            assert!(heads.split([' ', '|']).any(|w| w == h), "{h}: {heads}");
        }
        let legend = l.legend();
        assert!(
            legend.contains("qd = requests in flight, sampled"),
            "{legend}"
        );
        let narrow = Layout::new(&opts, 100).legend();
        assert!(narrow.lines().all(|l| l.chars().count() <= 100), "{narrow}");
        assert!(
            legend.contains("aqu-sz = iostat's mean queue length"),
            "{legend}"
        );
        assert!(
            legend.contains("r_await = iostat's ms per read request"),
            "{legend}"
        );
        let mut s = sample();
        s.devices[0].queue = 27.4;
        s.devices[0].read_await_ms = 0.31;
        let line = l.line(&s);
        assert!(line.contains("27.4") && line.contains("0.3"), "{line}");
    }
}
