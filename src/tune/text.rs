//! What `readlab tune` prints for each block size: a heading, the best point per goal as a
//! Markdown table (through [`crate::table`]), then the pick with its readlab and fio command
//! lines, or the closest points when nothing met the constraints.

use super::{Recommendation, TuneOptions, fio_command, readlab_command};
use crate::table::{Column, Table};
use crate::units::{Style, format_bytes, format_ns};
use std::fmt::Write;

impl Recommendation {
    /// The best point of every goal, one row each (the recommended goal marked), for a target
    /// shown as `target_name`.
    pub fn table(&self, target_name: &str) -> Table {
        let mut t = Table::new(
            ["goal", "target", "engine"]
                .map(Column::left)
                .into_iter()
                .chain(["threads", "queue size", "batch"].map(Column::right))
                .chain([Column::left("features")])
                .chain(["MB/s", "IOPS", "p99.9", "CPU (cores)"].map(Column::right))
                .chain([Column::left("label")])
                .collect(),
        );
        for (g, c) in &self.per_goal {
            let cfg = &c.config;
            let o = &cfg.options;
            let feats: Vec<&str> = [
                (o.uring.fixed_files, "fixed files"),
                (o.uring.fixed_bufs, "fixed buffers"),
                (o.uring.sqpoll, "SQ poll"),
            ]
            .into_iter()
            .filter_map(|(on, n)| on.then_some(n))
            .collect();
            t.push([
                format!(
                    "{}{}",
                    g.name(),
                    if *g == self.goal {
                        " (recommended)"
                    } else {
                        ""
                    }
                ),
                target_name.to_string(),
                cfg.engine.name().to_string(),
                cfg.threads.to_string(),
                cfg.iodepth.to_string(),
                cfg.batch.to_string(),
                if feats.is_empty() {
                    "-".into()
                } else {
                    feats.join(", ")
                },
                format!("{:.1}", c.mb_s),
                format!("{:.0}", c.iops),
                format!(
                    "{}{}",
                    if c.few_samples() { "~" } else { "" },
                    format_ns(c.p999_ns as f64, Style::Table)
                ),
                format!("{:.2}", c.cpu_cores),
                c.label.clone(),
            ]);
        }
        t
    }
}

impl super::Candidate {
    /// True when its p99.9 rests on fewer requests than the percentile needs (known counts only).
    pub fn few_samples(&self) -> bool {
        self.requests > 0 && !crate::stats::supported(self.requests, 99.9)
    }
}

impl TuneOptions {
    /// The constraints as the tuner's output names them: ` p99.9 ≤ 1.0us CPU ≤ 2 cores`
    /// (empty without any).
    pub fn constraints(&self) -> String {
        let mut s = String::new();
        if let Some(m) = self.p999_max {
            let _ = write!(
                s,
                " p99.9 ≤ {}",
                format_ns(m.as_nanos() as f64, Style::Table)
            );
        }
        if let Some(c) = self.cpu_max {
            let _ = write!(s, " CPU ≤ {c} cores");
        }
        s
    }
}

/// The text printed for one block size: heading, table, and the pick (with its trade-offs and
/// command lines) or the closest points and why they fail.
pub fn recommendation_text(rec: &Recommendation, opts: &TuneOptions) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "\n## {} — block size {}, goal {}, {} points measured\n\n",
        opts.target.display(),
        format_bytes(rec.bs as f64, Style::Table),
        rec.goal.name(),
        rec.points_measured
    );
    s.push_str(
        &rec.table(&crate::outdir::target_name(&opts.target))
            .markdown(),
    );
    if rec.per_goal.iter().any(|(_, c)| c.few_samples()) {
        let _ = writeln!(
            s,
            "\n~ p99.9 from fewer than {} requests: too few samples to trust it; give a larger \
             --budget for longer points",
            crate::stats::min_samples(99.9)
        );
    }
    match &rec.pick {
        Some(p) => {
            let _ = writeln!(s, "\nRecommended: {} ({} goal)", p.label, rec.goal.name());
            if let Some(sp) = &p.spread {
                let ns = |v: f64| format_ns(v, Style::Table);
                let _ = writeln!(
                    s,
                    "  medians of {} interleaved runs; {:.0} % intervals: IOPS {:.0}–{:.0}, p99.9 \
                     {}–{}, CPU {:.2}–{:.2} cores",
                    sp.runs,
                    sp.confidence * 100.0,
                    sp.iops.lo,
                    sp.iops.hi,
                    ns(sp.p999_ns.lo),
                    ns(sp.p999_ns.hi),
                    sp.cpu_cores.lo,
                    sp.cpu_cores.hi
                );
            }
            for t in &rec.trade_offs {
                let _ = writeln!(s, "  trade-off: {t}");
            }
            let _ = writeln!(s, "\n  readlab: {}", readlab_command(&p.config));
            let _ = writeln!(s, "  fio:     {}", fio_command(&p.config));
        }
        None => {
            let _ = writeln!(
                s,
                "\nNo configuration met the constraints{}. Closest points:",
                opts.constraints()
            );
            for (c, why) in &rec.closest {
                let _ = writeln!(
                    s,
                    "  {:<14} {:.0} IOPS, p99.9 {}, CPU {:.2} cores: {}",
                    c.label,
                    c.iops,
                    format_ns(c.p999_ns as f64, Style::Table),
                    c.cpu_cores,
                    why
                );
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RunConfig;
    use crate::engine::EngineKind;
    use crate::tune::{Candidate, Goal};
    use std::time::Duration;

    fn cand(engine: EngineKind, threads: usize, iodepth: usize, label: &str) -> Candidate {
        let mut config = RunConfig::new("/dev/loop0");
        config.engine = engine;
        config.threads = threads;
        config.iodepth = iodepth;
        Candidate {
            config,
            label: label.into(),
            iops: 0.0,
            mb_s: 0.0,
            p999_ns: 0,
            p50_ns: 0,
            cpu_cores: 0.0,
            spread: None,
            requests: 0,
        }
    }

    fn setup() -> (Recommendation, TuneOptions) {
        let mut fast = cand(EngineKind::Uring, 1, 32, "U32B4");
        fast.config.batch = 4;
        fast.config.options.uring.fixed_files = true;
        fast.config.options.uring.fixed_bufs = true;
        (fast.iops, fast.mb_s, fast.p999_ns, fast.cpu_cores) = (122070.3, 500.04, 1_220_000, 0.951);
        let mut calm = cand(EngineKind::Psync, 2, 1, "PT2");
        (calm.iops, calm.mb_s, calm.p999_ns, calm.cpu_cores) = (24414.0, 100.0, 100_000, 2.0);
        let rec = Recommendation {
            bs: 4096,
            goal: Goal::Balanced,
            pick: Some(calm.clone()),
            per_goal: vec![(Goal::Throughput, fast), (Goal::Balanced, calm)],
            frontier: Vec::new(),
            trade_offs: vec!["uring U32B4: +400 % IOPS for 12.20× p99.9 and 0.48× CPU".into()],
            closest: Vec::new(),
            points_measured: 7,
            finalists: Vec::new(),
        };
        let opts = TuneOptions {
            target: "/dev/loop0".into(),
            block_sizes: vec![4096],
            goal: Goal::Balanced,
            p999_max: None,
            cpu_max: None,
            engines: vec![EngineKind::Psync, EngineKind::Uring],
            budget: Duration::from_secs(60),
            out: "out".into(),
            verify: None,
            repeat: 3,
        };
        (rec, opts)
    }

    /// Byte for byte what `readlab tune` printed before the table went through `crate::table`.
    #[test]
    fn the_recommendation_prints_as_it_always_did() {
        let (rec, opts) = setup();
        let pick = rec.pick.as_ref().unwrap();
        let want = format!(
            "\n## /dev/loop0 — block size 4K, goal balanced, 7 points measured\n\n\
             | goal | target | engine | threads | queue size | batch | features | MB/s | IOPS | p99.9 | CPU (cores) | label |\n\
             |---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---|\n\
             | throughput | loop0 | uring | 1 | 32 | 4 | fixed files, fixed buffers | 500.0 | 122070 | 1.22ms | 0.95 | U32B4 |\n\
             | balanced (recommended) | loop0 | psync | 2 | 1 | 1 | - | 100.0 | 24414 | 100.0us | 2.00 | PT2 |\n\
             \nRecommended: PT2 (balanced goal)\n  \
             trade-off: uring U32B4: +400 % IOPS for 12.20× p99.9 and 0.48× CPU\n\
             \n  readlab: {}\n  fio:     {}\n",
            readlab_command(&pick.config),
            fio_command(&pick.config)
        );
        assert_eq!(recommendation_text(&rec, &opts), want);
    }

    /// A p99.9 from too few requests is marked, with the reason under the table.
    #[test]
    fn a_tail_from_too_few_samples_is_marked() {
        let (mut rec, opts) = setup();
        rec.per_goal[0].1.requests = 500;
        rec.per_goal[1].1.requests = 1_000_000;
        let text = recommendation_text(&rec, &opts);
        assert!(text.contains("| ~1.22ms |"), "{text}");
        assert!(text.contains("| 100.0us |"), "{text}");
        assert!(
            text.contains("~ p99.9 from fewer than 10000 requests: too few samples"),
            "{text}"
        );
    }

    #[test]
    fn without_a_pick_the_closest_points_are_named() {
        let (mut rec, mut opts) = setup();
        rec.closest = vec![(rec.pick.take().unwrap(), "p99.9 100.0us > 1.0us".into())];
        rec.per_goal.clear();
        opts.p999_max = Some(Duration::from_micros(1));
        opts.cpu_max = Some(2.0);
        assert_eq!(opts.constraints(), " p99.9 ≤ 1.0us CPU ≤ 2 cores");
        let text = recommendation_text(&rec, &opts);
        assert!(
            text.ends_with(
                "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---|\n\
                 \nNo configuration met the constraints p99.9 ≤ 1.0us CPU ≤ 2 cores. Closest points:\n  \
                 PT2            24414 IOPS, p99.9 100.0us, CPU 2.00 cores: p99.9 100.0us > 1.0us\n"
            ),
            "{text}"
        );
    }
}
