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
                (o.fixed_files, "fixed files"),
                (o.fixed_bufs, "fixed buffers"),
                (o.sqpoll, "SQ poll"),
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
                format_ns(c.p999_ns as f64, Style::Table),
                format!("{:.2}", c.cpu_cores),
                c.label.clone(),
            ]);
        }
        t
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
    match &rec.pick {
        Some(p) => {
            let _ = writeln!(s, "\nRecommended: {} ({} goal)", p.label, rec.goal.name());
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
