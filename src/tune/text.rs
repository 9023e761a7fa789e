//! What `readlab tune` prints for each block size: a heading, the best point per goal as a
//! Markdown table (through [`crate::table`]), then the pick with its readlab and fio command
//! lines, or the closest points when nothing met the constraints.

use super::{Recommendation, TuneOptions, fio_command, readlab_command};
use crate::table::{Column, Table};
use crate::terminal::Terminal;
use crate::units::{Style, format_bytes, format_ns};
use std::fmt::Write;

impl Recommendation {
    /// The best point of every goal, one row each (the recommended goal marked), for a target
    /// shown as `target_name`.
    pub fn table(&self, target_name: &str) -> Table {
        // On a narrow terminal the target (the same in every row) goes first, the figures last.
        let mut t = Table::new(vec![
            Column::left("goal").floor(usize::MAX),
            Column::left("target"),
            Column::left("engine").priority(1),
            Column::right("threads").priority(2),
            Column::right("queue size").priority(2),
            Column::right("batch").priority(1),
            Column::left("features").priority(1),
            Column::right("MB/s").priority(2),
            Column::right("IOPS").priority(3),
            Column::right("p99.9").priority(3),
            Column::right("CPU (cores)").priority(2),
            Column::left("label").keep(),
        ]);
        for (g, c) in &self.per_goal {
            let cfg = &c.config;
            let feats = crate::engine::option::words(cfg.engine, &cfg.options);
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

/// `command` after `prefix`, broken at spaces outside quotes into lines of at most `width`
/// columns that end in ` \` (so it still pastes into a shell), each continuation indented.
pub fn command_lines(prefix: &str, command: &str, width: usize) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in command.chars() {
        match (c, quote) {
            (' ', None) => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
                continue;
            }
            ('\'' | '"', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            _ => {}
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    let indent = " ".repeat(prefix.chars().count() + 1);
    let mut out = String::new();
    let mut line = prefix.to_string();
    let mut fresh = true;
    for w in words {
        let len = line.chars().count();
        if !fresh && len + 1 + w.chars().count() + 2 > width {
            out.push_str(&line);
            out.push_str(" \\\n");
            line = indent.clone();
            fresh = true;
        }
        if !fresh {
            line.push(' ');
        }
        line.push_str(&w);
        fresh = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The text printed for one block size: heading, table (fitted to the terminal), and the
/// pick (with its trade-offs and command lines) or the closest points and why they fail.
/// `term` colours the pick as the answer.
pub fn recommendation_text(rec: &Recommendation, opts: &TuneOptions, term: &Terminal) -> String {
    let width = term.width;
    let mut s = String::new();
    let _ = write!(
        s,
        "\n## {} — block size {}, goal {}, {} points measured\n\n",
        crate::nbd::shown(&opts.target.display().to_string()),
        format_bytes(rec.bs as f64, Style::Table),
        rec.goal.name(),
        rec.points_measured
    );
    s.push_str(
        &rec.table(&crate::outdir::target_name(&opts.target))
            .text_within(width),
    );
    // Every label in the table, in words.
    let key = crate::label::key_lines(rec.per_goal.iter().map(|(_, c)| c.label.as_str()));
    if !key.is_empty() {
        let _ = write!(s, "\n{key}");
    }
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
            let pick = format!("Recommended: {} ({} goal)", p.label, rec.goal.name());
            let _ = writeln!(s, "\n{}", term.answer(&pick));
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
            s.push('\n');
            s.push_str(&command_lines(
                "  readlab: ",
                &readlab_command(&p.config),
                width,
            ));
            s.push_str(&command_lines(
                "  fio:     ",
                &fio_command(&p.config),
                width,
            ));
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
    use crate::engine::{EngineKind, UringOptions};
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

    fn wide() -> Terminal {
        Terminal {
            width: 400,
            color: false,
        }
    }

    fn setup() -> (Recommendation, TuneOptions) {
        let mut fast = cand(EngineKind::Uring, 1, 32, "U32B4MF");
        fast.config.batch = 4;
        UringOptions::edit(&mut fast.config.options, |o| {
            (o.fixed_files, o.fixed_bufs) = (true, true)
        });
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

    /// On a wide terminal: the table aligned (not Markdown), the commands on one line each.
    #[test]
    fn the_recommendation_prints_aligned() {
        let (rec, opts) = setup();
        let pick = rec.pick.as_ref().unwrap();
        let table = rec.table("loop0").text();
        let want = format!(
            "\n## /dev/loop0 — block size 4K, goal balanced, 7 points measured\n\n{table}\
             \nkey: U32B4MF  io_uring, queue depth 32, batch 4, fixed buffers, fixed files\n     \
             PT2      pread, 2 threads\n\
             \nRecommended: PT2 (balanced goal)\n  \
             trade-off: uring U32B4: +400 % IOPS for 12.20× p99.9 and 0.48× CPU\n\
             \n  readlab: {}\n  fio:     {}\n",
            readlab_command(&pick.config),
            fio_command(&pick.config)
        );
        assert_eq!(recommendation_text(&rec, &opts, &wide()), want);
        assert!(table.starts_with("goal "), "{table}");
        assert!(!want.contains("|---"), "{want}");
    }

    /// On a 100-column terminal every line fits: columns left out and named, the commands
    /// broken into shell lines ending in ` \`.
    #[test]
    fn the_recommendation_fits_100_columns() {
        let (rec, opts) = setup();
        let text = recommendation_text(&rec, &opts, &Terminal::default());
        for l in text.lines() {
            assert!(l.chars().count() <= 100, "{l:?}\n{text}");
        }
        let fio = fio_command(&rec.pick.as_ref().unwrap().config);
        assert!(fio.len() > 100);
        let joined = text.replace(" \\\n", " ");
        let words = |s: &str| {
            s.split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert!(words(&joined).contains(&words(&fio)), "{text}");
        assert!(command_lines("  x: ", "a 'b c' d", 12).contains("'b c'"));
        assert_eq!(command_lines("  x: ", "a b", 80), "  x: a b\n");
        let colour = Terminal {
            color: true,
            ..Terminal::default()
        };
        let text = recommendation_text(&rec, &opts, &colour);
        assert!(
            text.contains("\x1b[1;32mRecommended: PT2 (balanced goal)\x1b[0m"),
            "{text}"
        );
    }

    /// A p99.9 from too few requests is marked, with the reason under the table.
    #[test]
    fn a_tail_from_too_few_samples_is_marked() {
        let (mut rec, opts) = setup();
        rec.per_goal[0].1.requests = 500;
        rec.per_goal[1].1.requests = 1_000_000;
        let text = recommendation_text(&rec, &opts, &wide());
        assert!(text.contains(" ~1.22ms "), "{text}");
        assert!(text.contains(" 100.0us "), "{text}");
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
        let text = recommendation_text(&rec, &opts, &wide());
        assert!(
            text.ends_with(
                "CPU (cores) label\n\
                 \nNo configuration met the constraints p99.9 ≤ 1.0us CPU ≤ 2 cores. Closest points:\n  \
                 PT2            24414 IOPS, p99.9 100.0us, CPU 2.00 cores: p99.9 100.0us > 1.0us\n"
            ),
            "{text}"
        );
    }
}
