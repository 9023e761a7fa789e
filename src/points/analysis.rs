//! What the report makes of its points: one section per study (with the fio points that fit it),
//! the throughput/p99.9 Pareto frontier and its highlights, labels that tell points apart, and
//! which points the timeline and latency-distribution charts show.

use super::point::{Point, origin_name};
use crate::study::StudyName;
use std::collections::BTreeSet;

/// A section of the report: one study and the points shown in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub study: StudyName,
    /// Indices into [`Report::points`]: the study's own points, then fio points of the same shape.
    pub points: Vec<usize>,
}

/// Everything a report shows, ready for any output format.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub points: Vec<Point>,
    /// The inputs read, as given.
    pub inputs: Vec<String>,
    /// Warnings common to many points (a target in memory, other load), each said once with
    /// how many points said it: what every output puts at its top.
    pub banners: Vec<crate::warnings::Banner>,
    /// Things the reader should know (skipped fio jobs, empty inputs, unknown studies), and each
    /// point's facts and warnings not in a banner.
    pub notes: Vec<String>,
    /// One section per study that has data, in the report's order.
    pub sections: Vec<Section>,
    /// Points on the throughput/p99.9 Pareto frontier of their target (each target its own),
    /// target by target, each by increasing throughput.
    pub frontier: Vec<usize>,
    /// The few best points of each block size (enlarged and labelled on the all-experiments chart).
    pub highlights: Vec<usize>,
    /// Runs measured by several MPI ranks at once (their aggregates are among `points`).
    pub fleet: Vec<super::fleet::FleetRun>,
    /// The points of `readlab report --baseline OLD`: compared with, never drawn as, the report's.
    pub baseline: Vec<Point>,
    /// The tuners' reports found beside their results (`tune.json`): the selected parameters.
    pub tuned: Vec<crate::tune::TuneReport>,
    /// Runs, fio files with jobs and report points read from the inputs, measured or not: none
    /// means the inputs hold nothing at all ([`super::require_points`]).
    pub runs_read: usize,
}

impl Report {
    /// Build a report from points already in memory (tests, other front ends).
    pub fn from_points(points: Vec<Point>) -> Report {
        let mut r = Report {
            points,
            ..Report::default()
        };
        r.analyse();
        r
    }

    /// fio names its targets by the disks it watched or the file it read; a fio point joins the
    /// readlab target that read the same file, else the one on the disk it names, else the only
    /// readlab target, so it is drawn beside the points it is meant to be compared with.
    fn join_fio_targets(&mut self) {
        let readlab: Vec<(String, String, String)> = self
            .points
            .iter()
            .filter(|p| !p.is_fio())
            .map(|p| (p.name.clone(), p.env.target.clone(), p.env.device.clone()))
            .collect();
        let names: BTreeSet<&str> = readlab.iter().map(|r| r.0.as_str()).collect();
        let only = (names.len() == 1).then(|| names.iter().next().map(|n| n.to_string()));
        for p in self.points.iter_mut().filter(|p| p.is_fio()) {
            let same_file = readlab.iter().find(|r| r.1 == p.env.target);
            let same_disk = readlab.iter().find(|r| {
                !p.name.is_empty()
                    && (r.0 == p.name
                        || r.2.split([' ', ',']).any(|w| w == p.name)
                        || r.0.split(' ').any(|w| w == p.name))
            });
            if let Some(r) = same_file.or(same_disk) {
                p.name = r.0.clone();
            } else if let Some(Some(n)) = &only {
                p.name = n.clone();
            }
        }
    }

    /// Sections, frontier and highlights from `points`.
    pub fn analyse(&mut self) {
        self.join_fio_targets();
        self.sections.clear();
        for spec in crate::study::registry() {
            let name = spec.study_name();
            let own: Vec<usize> = self
                .points
                .iter()
                .enumerate()
                .filter(|(_, p)| p.study.as_deref() == Some(name.name()))
                .map(|(i, _)| i)
                .collect();
            if own.is_empty() {
                continue;
            }
            let fio: Vec<usize> = self
                .points
                .iter()
                .enumerate()
                .filter(|(_, p)| p.is_fio() && p.plottable() && fio_fits(name, p))
                .map(|(i, _)| i)
                .collect();
            self.sections.push(Section {
                study: name,
                points: own.into_iter().chain(fio).collect(),
            });
        }
        let unknown: BTreeSet<&str> = self
            .points
            .iter()
            .filter_map(|p| p.study.as_deref())
            .filter(|s| StudyName::parse(s).is_err())
            .collect();
        for s in unknown {
            self.notes.push(format!(
                "study '{s}' has no section of its own; its points are in the all-experiments chart"
            ));
        }
        // Each target has its own frontier and highlights: one device's points are never
        // "dominated" by another device's.
        self.frontier.clear();
        self.highlights.clear();
        for name in self.targets() {
            // Only points whose p99.9 is shown (enough requests) stand on the frontier: a p99.9
            // the tables withhold places no point.
            let plottable: Vec<usize> = (0..self.points.len())
                .filter(|&i| {
                    let p = &self.points[i];
                    p.plottable() && p.name == name && p.latency.shown(99.9).is_some()
                })
                .collect();
            let xy: Vec<(f64, f64)> = plottable
                .iter()
                .map(|&i| (self.points[i].mb_s, self.points[i].latency.p999_ns as f64))
                .collect();
            let mut front: Vec<usize> = crate::pareto::throughput_latency(&xy)
                .into_iter()
                .map(|k| plottable[k])
                .collect();
            self.frontier.append(&mut front);
            let groups: Vec<u64> = plottable.iter().map(|&i| self.points[i].bs).collect();
            self.highlights.extend(
                crate::pareto::highlights(&xy, &groups, 3)
                    .into_iter()
                    .map(|k| plottable[k]),
            );
        }
        self.highlights.sort_unstable();
    }

    /// The targets' names, in order of first appearance.
    pub fn targets(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for p in &self.points {
            if !v.contains(&p.name) {
                v.push(p.name.clone());
            }
        }
        v
    }

    /// The frontier of one target, by increasing throughput.
    pub fn frontier_of(&self, name: &str) -> Vec<usize> {
        self.frontier
            .iter()
            .copied()
            .filter(|&i| self.points[i].name == name)
            .collect()
    }

    /// Whether point `i` is one target's share of a run on several targets (its aggregate is
    /// the run's point).
    pub fn is_target_part(&self, i: usize) -> bool {
        self.points[i]
            .multi
            .as_ref()
            .is_some_and(|m| m.name.is_some())
    }

    /// The plottable target shares of runs on several targets, by target name.
    pub fn target_parts(&self) -> Vec<(String, Vec<usize>)> {
        let mut by: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
        for i in 0..self.points.len() {
            if let Some(name) = self.points[i].multi.as_ref().and_then(|m| m.name.clone())
                && self.points[i].plottable()
            {
                by.entry(name).or_default().push(i);
            }
        }
        by.into_iter().collect()
    }

    /// The points of a section.
    pub fn section_points(&self, s: &Section) -> Vec<&Point> {
        s.points
            .iter()
            .filter_map(|&i| self.points.get(i))
            .collect()
    }

    /// Labels that tell points apart. The report's label names the configuration; points of the
    /// same block size and target that share it are told apart by what differs between them, in
    /// this order: engine, access, buffered, scheduler, study, input file; points alike in all of
    /// these (repetitions) are numbered `#2`, `#3`. fio points from several files name theirs.
    /// Within a report, (label, block size, target name) is unique.
    pub fn display_label(&self, i: usize) -> String {
        let Some(p) = self.points.get(i) else {
            return String::new();
        };
        let peers: Vec<&Point> = self
            .points
            .iter()
            .filter(|q| q.label == p.label && q.bs == p.bs && q.name == p.name)
            .collect();
        let qualifiers: [&dyn Fn(&Point) -> String; 6] = [
            &|q| q.engine.clone(),
            &|q| q.access().to_string(),
            &|q| {
                if q.direct {
                    String::new()
                } else {
                    "buffered".into()
                }
            },
            &|q| q.scheduler.clone().unwrap_or_default(),
            &|q| {
                q.study
                    .as_ref()
                    .map(|s| format!("({s})"))
                    .unwrap_or_default()
            },
            &|q| format!("({})", origin_name(&q.origin)),
        ];
        let mut l = p.label.clone();
        let mut alike = peers.clone();
        for f in qualifiers {
            let mine = f(p);
            if alike.iter().any(|q| f(q) != mine) {
                if !mine.is_empty() {
                    l.push(' ');
                    l.push_str(&mine);
                }
                alike.retain(|q| f(q) == mine);
            }
        }
        if alike.len() > 1 {
            let k = self.points[..i]
                .iter()
                .filter(|q| alike.iter().any(|a| std::ptr::eq(*a, *q)))
                .count();
            if k > 0 {
                l.push_str(&format!(" #{}", k + 1));
            }
        }
        if p.is_fio()
            && self.fio_origins() > 1
            && !l.contains(&format!("({})", origin_name(&p.origin)))
        {
            l.push_str(&format!(" ({})", origin_name(&p.origin)));
        }
        match &p.multi {
            Some(m) => match &m.name {
                Some(name) => format!("{name} {l}"),
                None => format!("all×{} {l}", m.targets),
            },
            None => l,
        }
    }

    /// How many fio files the points came from.
    pub fn fio_origins(&self) -> usize {
        self.points
            .iter()
            .filter(|p| p.is_fio())
            .map(|p| p.origin.as_str())
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// The run whose per-second timeline is shown: a plain run if there is one, else the longest
    /// measured point that is not a scan, else any point with a timeline.
    pub fn timeline_point(&self) -> Option<usize> {
        let with: Vec<usize> = (0..self.points.len())
            .filter(|&i| !self.points[i].timeline.is_empty() && self.points[i].ios > 0)
            .collect();
        let longest = |cands: Vec<usize>| {
            cands.into_iter().max_by(|&a, &b| {
                let (pa, pb) = (&self.points[a], &self.points[b]);
                pa.timeline
                    .len()
                    .cmp(&pb.timeline.len())
                    .then(pa.mb_s.total_cmp(&pb.mb_s))
                    // The first of equals wins.
                    .then(b.cmp(&a))
            })
        };
        let plain: Vec<usize> = with
            .iter()
            .copied()
            .filter(|&i| self.points[i].study.is_none())
            .collect();
        longest(plain)
            .or_else(|| {
                longest(
                    with.iter()
                        .copied()
                        .filter(|&i| self.points[i].study.as_deref() != Some("scan"))
                        .collect(),
                )
            })
            .or_else(|| longest(with))
    }

    /// Points whose latency distribution is drawn: the frontier (at most `max`, spread along it)
    /// and every fio point with a histogram (json+), then a plain run if nothing else has one.
    pub fn cdf_points(&self, max: usize) -> Vec<usize> {
        let frontier: Vec<usize> = self
            .frontier
            .iter()
            .copied()
            .filter(|&i| !self.points[i].bins.is_empty())
            .collect();
        let mut chosen = spread(&frontier, max);
        for (i, p) in self.points.iter().enumerate() {
            if p.is_fio() && !p.bins.is_empty() && !chosen.contains(&i) && chosen.len() < max + 3 {
                chosen.push(i);
            }
        }
        if chosen.is_empty()
            && let Some(i) = (0..self.points.len()).find(|&i| !self.points[i].bins.is_empty())
        {
            chosen.push(i);
        }
        chosen
    }
}

/// At most `max` items of `v`, evenly spread, first and last included.
fn spread(v: &[usize], max: usize) -> Vec<usize> {
    if v.len() <= max {
        return v.to_vec();
    }
    if max < 2 {
        return v.iter().copied().take(max).collect();
    }
    let mut out: Vec<usize> = (0..max).map(|k| v[k * (v.len() - 1) / (max - 1)]).collect();
    out.dedup();
    out
}

/// Whether an imported fio job has the shape of study `study`'s points, so its section draws it
/// beside them (the report's choice, keyed by the study's name; most studies draw none).
fn fio_fits(study: StudyName, p: &Point) -> bool {
    match study.name() {
        "latency" => p.rw == "randread" && p.threads == 1 && p.iodepth == 1,
        "queue" => p.rw == "randread" && matches!(p.engine.as_str(), "libaio" | "uring"),
        "threads" => p.rw == "randread" && p.iodepth == 1,
        "stream" => p.threads == 1 && p.iodepth == 1 && (p.rw == "read" || p.rw == "randread"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::caption::caption;
    use super::super::point::Source;
    use super::super::tests::point;
    use super::*;

    #[test]
    fn sections_follow_the_study_order_and_take_fitting_fio_points() {
        let mut a = point("PT2", 4096, 100.0, 300.0);
        a.study = Some("threads".into());
        a.threads = 2;
        let mut b = point("P", 4096, 50.0, 100.0);
        b.study = Some("latency".into());
        let mut f = point("fio:P", 4096, 60.0, 90.0);
        f.source = Source::Fio;
        let mut q = point("fio:U16B1", 4096, 60.0, 90.0);
        q.source = Source::Fio;
        q.engine = "uring".into();
        q.iodepth = 16;
        let r = Report::from_points(vec![a, b, f, q]);
        let names: Vec<&str> = r.sections.iter().map(|s| s.study.name()).collect();
        assert_eq!(names, ["latency", "threads"]);
        assert_eq!(r.sections[0].points, [1, 2]);
        assert_eq!(r.sections[1].points, [0, 2]);
        assert!(r.highlights.contains(&0));
    }

    #[test]
    fn odd_inputs_give_notes_not_panics() {
        let r = Report::from_points(Vec::new());
        assert!(r.sections.is_empty() && r.frontier.is_empty());
        assert_eq!(r.timeline_point(), None);
        assert!(r.cdf_points(5).is_empty());
        let mut z = point("P", 4096, 0.0, 0.0);
        z.ios = 0;
        let r = Report::from_points(vec![z]);
        assert!(r.frontier.is_empty());
        assert_eq!(caption(&[]), "No measured points.");
    }

    #[test]
    fn shared_labels_name_the_engine() {
        let a = point("P", 4096, 1.0, 1.0);
        let mut b = point("P", 4096, 1.0, 1.0);
        b.engine = "pvsync2".into();
        let r = Report::from_points(vec![a, b]);
        assert_eq!(r.display_label(0), "P psync");
        assert_eq!(r.display_label(1), "P pvsync2");
        assert_eq!(r.display_label(7), "");
    }

    /// Whatever the points, (label, block size, target) is unique in a report, and a label says
    /// only what sets a point apart.
    #[test]
    fn labels_are_unique_within_a_report() {
        let mut pts = Vec::new();
        let base = point("P", 4096, 1.0, 1.0);
        pts.push(base.clone());
        let mut seq = base.clone();
        seq.rw = "read".into();
        pts.push(seq.clone());
        let mut buffered = seq.clone();
        buffered.direct = false;
        pts.push(buffered);
        let mut other_study = base.clone();
        other_study.study = Some("latency".into());
        pts.push(other_study.clone());
        pts.push(other_study.clone());
        pts.push(other_study);
        let mut other_bs = base.clone();
        other_bs.bs = 65536;
        pts.push(other_bs);
        let mut other_target = base.clone();
        other_target.name = "loop0".into();
        pts.push(other_target);
        let r = Report::from_points(pts);
        let labels: Vec<String> = (0..r.points.len()).map(|i| r.display_label(i)).collect();
        assert_eq!(
            labels,
            [
                "P random",
                "P sequential",
                "P sequential buffered",
                "P random (latency)",
                "P random (latency) #2",
                "P random (latency) #3",
                "P",
                "P"
            ]
        );
        let keys: BTreeSet<(String, u64, String)> = (0..r.points.len())
            .map(|i| (labels[i].clone(), r.points[i].bs, r.points[i].name.clone()))
            .collect();
        assert_eq!(keys.len(), r.points.len());
    }

    #[test]
    fn spread_keeps_ends() {
        assert_eq!(spread(&[1, 2, 3], 5), [1, 2, 3]);
        assert_eq!(spread(&[0, 1, 2, 3, 4, 5, 6, 7, 8], 3), [0, 4, 8]);
        assert!(spread(&[], 3).is_empty());
    }
}
