//! A fleet run on the terminal: after the aggregate's usual lines, how together the ranks
//! started and measured, and one line per rank, so a slow rank stands out.

use crate::result::Document;
use crate::table::{Column, Table};
use crate::units::{Style, format_ns};
use std::fmt::Write;

/// The fleet's lines, or nothing for a single process's document.
pub fn fleet_report(d: &Document) -> String {
    let Some(f) = &d.fleet else {
        return String::new();
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "  fleet    {} ranks on {} host(s), target {}; started within {} of each other (clocks known to ±{}); measured together {:.3} s",
        f.ranks,
        f.hosts.len(),
        f.target,
        format_ns(f.start.skew_ns as f64, Style::Table),
        format_ns(f.start.clock_uncertainty_ns as f64, Style::Table),
        f.common_window_s
    );
    // Ranks that split the clients between them (the clients study) say their share.
    let mut shares: Vec<usize> = f.members.iter().filter_map(|m| m.threads).collect();
    shares.sort_unstable();
    shares.dedup();
    let split = shares.len() > 1;
    let mut cols = vec![
        Column::right("rank"),
        Column::left("host"),
        Column::left("target"),
    ];
    if split {
        cols.push(Column::right("clients"));
    }
    cols.extend([
        Column::right("IOPS"),
        Column::right("MiB/s"),
        Column::right("p50"),
        Column::right("p99"),
        Column::right("max"),
        Column::right("start"),
    ]);
    let mut t = Table::new(cols);
    for m in &f.members {
        let r = &m.result;
        let mut row = vec![m.rank.to_string(), m.host.clone(), m.target.clone()];
        if split {
            row.push(m.threads.map_or_else(|| "–".into(), |n| n.to_string()));
        }
        row.extend([
            format!("{:.0}", r.iops),
            format!("{:.1}", r.mib_s),
            format_ns(r.latency.p50_ns as f64, Style::Table),
            format_ns(r.latency.p99_ns as f64, Style::Table),
            format_ns(r.latency.max_ns as f64, Style::Table),
            format!("+{}", format_ns(m.start_ns as f64, Style::Table)),
        ]);
        t.push(row);
    }
    for line in t.text().lines() {
        let _ = writeln!(s, "    {line}");
    }
    if !f.idle.is_empty() {
        let idle: Vec<String> = f.idle.iter().map(|r| r.to_string()).collect();
        let _ = writeln!(
            s,
            "    rank{} {} had no client (fewer clients than ranks) and measured nothing",
            if idle.len() > 1 { "s" } else { "" },
            idle.join(", ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::fleet::{FleetRecord, FleetStart};
    use crate::result::sample_members;

    #[test]
    fn split_clients_show_each_ranks_share_and_the_idle_ranks() {
        let (docs, mut members) = sample_members();
        let mut d = docs[0].clone();
        let mut record = |members: Vec<crate::result::fleet::FleetMember>, idle: Vec<usize>| {
            d.fleet = Some(Box::new(FleetRecord {
                ranks: members.len(),
                hosts: vec!["a".into(), "b".into()],
                target: "nbd://127.0.0.1:1/".into(),
                start: FleetStart {
                    skew_ns: 1_000,
                    clock_uncertainty_ns: 0,
                    notice_ns: 20_000_000,
                },
                common_window_s: 1.0,
                aggregate: String::new(),
                members,
                idle,
            }));
            fleet_report(&d)
        };
        let same = record(members.clone(), Vec::new());
        assert!(
            !same.contains("clients") && !same.contains("no client"),
            "{same}"
        );
        for (m, n) in members.iter_mut().zip([2, 1, 1]) {
            m.threads = Some(n);
        }
        let split = record(members, vec![3, 4]);
        assert!(split.contains("clients"), "{split}");
        assert!(
            split.contains("ranks 3, 4 had no client (fewer clients than ranks)"),
            "{split}"
        );
    }
}
