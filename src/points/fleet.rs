//! The fleet part of the report: runs measured by several MPI ranks at once (documents with a
//! fleet record), seen as the aggregate against the number of ranks, each host against the
//! others (is one slower, by how much, and by more than its own run-to-run spread?), and each
//! host's latency distribution from its ranks' histograms merged.

use crate::result::Document;
use crate::size::format_size;
use crate::stats::decode_histogram;
use crate::table::{Column, Table};
use std::fmt::Write as _;

/// The fleet section's opening, up to its figures.
pub const INTRO: &str = "Runs measured by several processes at once under MPI, \
each rank on its own target, all starting at one agreed instant: the aggregate against the number of ranks, each host's IOPS per rank \
(a host is called slow only when even its best repetition stays below the median host), and each host's latency distribution \
from its ranks' histograms merged.";

/// One fleet run in the report.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetRun {
    /// Its aggregate's index in `Report::points`.
    pub point: usize,
    /// The configuration apart from where and by how many it ran (label, pattern, block size).
    pub key: String,
    pub ranks: usize,
    pub iops: f64,
    pub mb_s: f64,
    pub skew_ns: u64,
    pub common_window_s: f64,
    pub members: Vec<RankView>,
    /// What the ranks are grouped by: `host`, or `rank` when they all ran on one host (each
    /// rank is then its own group, named `rank N`).
    pub per: &'static str,
    /// Each group with its ranks' latency histograms merged, as (ns, count) bins.
    pub host_bins: Vec<(String, Vec<(u64, u64)>)>,
    /// The ranks ran unequal shares of the clients (the clients study over MPI): each rank's
    /// IOPS (and interval) is then per client, so that ranks compare.
    pub per_client: bool,
    /// Ranks that had no share of the work.
    pub idle: Vec<usize>,
}

/// One rank of a fleet run.
#[derive(Debug, Clone, PartialEq)]
pub struct RankView {
    pub rank: usize,
    pub host: String,
    pub iops: f64,
    pub p99_ns: u64,
    /// Its run-to-run interval of IOPS over repetitions (`run --repeat`), when measured.
    pub band: Option<(f64, f64)>,
}

/// One host against the fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSpread {
    pub host: String,
    pub ranks: usize,
    /// Mean IOPS of its ranks.
    pub iops: f64,
    /// The run-to-run interval of that mean (its ranks' intervals averaged), when repeated.
    pub band: Option<(f64, f64)>,
    /// Its IOPS against the median host's, e.g. −0.25 for a quarter fewer.
    pub vs_median: f64,
    /// Slower than the median host beyond its own run-to-run spread (its best is still below
    /// the median host); None without repetitions to know the spread.
    pub slow: Option<bool>,
}

impl FleetRun {
    /// The fleet part of a document, if it has one; `point` is its aggregate's index.
    pub fn from_document(d: &Document, point: usize) -> Option<FleetRun> {
        let f = d.fleet.as_ref()?;
        let per = if f.hosts.len() == 1 && f.ranks > 1 {
            "rank"
        } else {
            "host"
        };
        let group = |m: &crate::result::fleet::FleetMember| match per {
            "rank" => format!("rank {}", m.rank),
            _ => m.host.clone(),
        };
        let mut groups: Vec<String> = Vec::new();
        for m in &f.members {
            if !groups.contains(&group(m)) {
                groups.push(group(m));
            }
        }
        let mut shares: Vec<usize> = f.members.iter().filter_map(|m| m.threads).collect();
        shares.sort_unstable();
        shares.dedup();
        let per_client = shares.len() > 1;
        let members = f
            .members
            .iter()
            .map(|m| {
                let per = if per_client {
                    m.threads.unwrap_or(1).max(1) as f64
                } else {
                    1.0
                };
                RankView {
                    rank: m.rank,
                    host: group(m),
                    iops: m.result.iops / per,
                    p99_ns: m.result.latency.p99_ns,
                    band: m
                        .result
                        .repeat
                        .as_ref()
                        .map(|r| (r.iops.lo / per, r.iops.hi / per)),
                }
            })
            .collect();
        let mut host_bins = Vec::new();
        for host in &groups {
            let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
            for m in f.members.iter().filter(|m| &group(m) == host) {
                let Some(h) = decode_histogram(&m.result.histogram) else {
                    continue;
                };
                match &mut merged {
                    Some(acc) => {
                        let _ = acc.add(&h);
                    }
                    None => merged = Some(h),
                }
            }
            let bins = merged
                .map(|h| {
                    h.iter_recorded()
                        .map(|v| (v.value_iterated_to(), v.count_at_value()))
                        .filter(|&(_, n)| n > 0)
                        .collect()
                })
                .unwrap_or_default();
            host_bins.push((host.clone(), bins));
        }
        Some(FleetRun {
            point,
            key: format!(
                "{} {} {}",
                d.result.label,
                match d.config.rw {
                    crate::config::Rw::Read => "seq",
                    crate::config::Rw::Randread => "rand",
                },
                format_size(d.config.bs)
            ),
            ranks: f.ranks,
            iops: d.result.iops,
            mb_s: d.result.mb_s,
            skew_ns: f.start.skew_ns,
            common_window_s: f.common_window_s,
            members,
            per,
            host_bins,
            per_client,
            idle: f.idle.clone(),
        })
    }

    /// Every host against the median host.
    pub fn hosts(&self) -> Vec<HostSpread> {
        let mut out: Vec<HostSpread> = Vec::new();
        for (host, _) in &self.host_bins {
            let mine: Vec<&RankView> = self.members.iter().filter(|m| &m.host == host).collect();
            let n = mine.len().max(1) as f64;
            let bands: Option<Vec<(f64, f64)>> = mine.iter().map(|m| m.band).collect();
            out.push(HostSpread {
                host: host.clone(),
                ranks: mine.len(),
                iops: mine.iter().map(|m| m.iops).sum::<f64>() / n,
                band: bands.filter(|b| !b.is_empty()).map(|b| {
                    (
                        b.iter().map(|x| x.0).sum::<f64>() / n,
                        b.iter().map(|x| x.1).sum::<f64>() / n,
                    )
                }),
                vs_median: 0.0,
                slow: None,
            });
        }
        let mut values: Vec<f64> = out.iter().map(|h| h.iops).collect();
        values.sort_by(f64::total_cmp);
        let median = match values.len() {
            0 => return out,
            n if n % 2 == 1 => values[n / 2],
            n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
        };
        for h in &mut out {
            h.vs_median = if median > 0.0 {
                h.iops / median - 1.0
            } else {
                0.0
            };
            h.slow = h.band.map(|(_, hi)| hi < median);
        }
        out
    }
}

/// The per-host table of the fleet run with the most ranks (the latest of them): each host's
/// IOPS per rank, its run-to-run interval, how it compares with the median host, and whether it
/// is slow beyond its own spread.
pub fn spread_table(runs: &[FleetRun]) -> Option<(String, Table)> {
    let run = runs.iter().max_by_key(|r| r.ranks)?;
    let mut t = Table::new(vec![
        Column::left(run.per),
        Column::right("ranks"),
        Column::right(if run.per_client {
            "IOPS per client"
        } else {
            "IOPS per rank"
        }),
        Column::right("run-to-run"),
        Column::right(format!("vs median {}", run.per)),
        Column::left("verdict"),
    ]);
    for h in run.hosts() {
        t.push([
            h.host.clone(),
            h.ranks.to_string(),
            format!("{:.0}", h.iops),
            h.band
                .map(|(lo, hi)| format!("{lo:.0}–{hi:.0}"))
                .unwrap_or_else(|| "–".into()),
            format!("{:+.1} %", 100.0 * h.vs_median),
            match h.slow {
                Some(true) => format!("slow: below the median {} in every run", run.per),
                Some(false) => "within its own spread".to_string(),
                None => "spread unknown (measure with --repeat 3)".to_string(),
            },
        ]);
    }
    let mut title = format!(
        "Each {} of the {}-rank run {} ({:.0} IOPS in all, ranks started within {})",
        run.per,
        run.ranks,
        run.key,
        run.iops,
        crate::units::format_ns(run.skew_ns as f64, crate::units::Style::Table)
    );
    if run.per_client {
        title.push_str("; the ranks ran unequal shares of the clients, so IOPS are per client");
    }
    if !run.idle.is_empty() {
        let idle: Vec<String> = run.idle.iter().map(|r| r.to_string()).collect();
        let _ = write!(
            title,
            "; rank{} {} had no client and measured nothing",
            if idle.len() > 1 { "s" } else { "" },
            idle.join(", ")
        );
    }
    Some((title, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(rank: usize, host: &str, iops: f64, band: Option<(f64, f64)>) -> RankView {
        RankView {
            rank,
            host: host.into(),
            iops,
            p99_ns: 1,
            band,
        }
    }

    fn run(members: Vec<RankView>) -> FleetRun {
        let mut hosts: Vec<String> = Vec::new();
        for m in &members {
            if !hosts.contains(&m.host) {
                hosts.push(m.host.clone());
            }
        }
        FleetRun {
            point: 0,
            key: "P rand 4K".into(),
            ranks: members.len(),
            iops: members.iter().map(|m| m.iops).sum(),
            mb_s: 0.0,
            skew_ns: 0,
            common_window_s: 1.0,
            members,
            per: "host",
            host_bins: hosts.into_iter().map(|h| (h, Vec::new())).collect(),
            per_client: false,
            idle: Vec::new(),
        }
    }

    #[test]
    fn a_host_is_slow_only_beyond_its_own_spread() {
        let r = run(vec![
            rank(0, "a", 1000.0, Some((950.0, 1050.0))),
            rank(1, "b", 1010.0, Some((990.0, 1030.0))),
            rank(2, "c", 700.0, Some((650.0, 760.0))),
            // Lower, but its spread reaches the median host: not called slow.
            rank(3, "d", 900.0, Some((700.0, 1100.0))),
        ]);
        let h = r.hosts();
        let by = |n: &str| h.iter().find(|x| x.host == n).unwrap();
        assert_eq!(by("c").slow, Some(true));
        assert!((by("c").vs_median - (700.0 / 950.0 - 1.0)).abs() < 1e-12);
        assert_eq!(by("d").slow, Some(false));
        assert_eq!(by("a").slow, Some(false));
        let (title, t) = spread_table(&[r]).unwrap();
        assert!(
            title.contains("host of the 4-rank run P rand 4K"),
            "{title}"
        );
        assert!(
            t.text().contains("slow: below the median host"),
            "{}",
            t.text()
        );
    }

    /// A fleet document of three ranks on two hosts, from real runs' results.
    fn document() -> Document {
        use crate::result::fleet::{FleetRecord, FleetStart};
        use crate::result::sample_members;
        let (docs, members) = sample_members();
        let mut d = docs[0].clone();
        d.study = None;
        d.fleet = Some(Box::new(FleetRecord {
            ranks: 3,
            hosts: vec!["a".into(), "b".into()],
            target: "/dev/t{rank}".into(),
            start: FleetStart {
                skew_ns: 1_500,
                clock_uncertainty_ns: 0,
                notice_ns: 20_000_000,
            },
            common_window_s: 1.0,
            aggregate: String::new(),
            members,
            idle: Vec::new(),
        }));
        d
    }

    #[test]
    fn a_fleet_document_is_seen_per_host_with_merged_histograms() {
        let d = document();
        let run = FleetRun::from_document(&d, 0).unwrap();
        assert_eq!(run.per, "host");
        assert_eq!(run.host_bins.len(), 2);
        let merged: u64 = run.host_bins[0].1.iter().map(|b| b.1).sum();
        let fleet = d.fleet.as_ref().unwrap();
        assert_eq!(
            merged,
            fleet.members[0].result.latency.count + fleet.members[1].result.latency.count
        );
        let hosts = run.hosts();
        assert_eq!(hosts.len(), 2);
        assert!(hosts.iter().all(|h| h.slow.is_none()));
    }

    #[test]
    fn without_repetitions_the_spread_is_unknown() {
        let r = run(vec![
            rank(0, "a", 1000.0, None),
            rank(1, "a", 1200.0, None),
            rank(2, "b", 500.0, None),
        ]);
        let h = r.hosts();
        assert_eq!(h[0].ranks, 2);
        assert_eq!(h[0].iops, 1100.0);
        assert!(h.iter().all(|x| x.slow.is_none()));
        assert!((h[1].vs_median - (500.0 / 800.0 - 1.0)).abs() < 1e-12);
    }

    #[test]
    fn unequal_shares_compare_per_client_and_idle_ranks_are_named() {
        let mut d = document();
        let f = d.fleet.as_mut().unwrap();
        for (m, n) in f.members.iter_mut().zip([2, 1, 1]) {
            m.threads = Some(n);
        }
        f.idle = vec![3];
        let run = FleetRun::from_document(&d, 0).unwrap();
        assert!(run.per_client);
        let f = d.fleet.as_ref().unwrap();
        assert_eq!(run.members[0].iops, f.members[0].result.iops / 2.0);
        assert_eq!(run.members[1].iops, f.members[1].result.iops);
        let (title, t) = spread_table(&[run]).unwrap();
        assert!(t.text().contains("IOPS per client"), "{}", t.text());
        assert!(title.contains("IOPS are per client"), "{title}");
        assert!(title.contains("rank 3 had no client"), "{title}");
        // Equal shares: per rank, as before.
        let run = FleetRun::from_document(&document(), 0).unwrap();
        assert!(!run.per_client);
        assert!(
            spread_table(&[run])
                .unwrap()
                .1
                .text()
                .contains("IOPS per rank")
        );
    }
}
