//! Warnings said once, where they matter: a warning many points share ("you are measuring RAM" at
//! every point of a study on tmpfs) becomes one banner with how many points said it, instead of
//! one line per point; the rest stay with their points. The runner's own warnings are grouped by
//! kind (the words that begin or mark them, defined here and used where they are produced), so a
//! figure, a target's name or a rank's prefix in the text does not keep copies apart.

use serde::{Deserialize, Serialize};

/// A warning common to many points, said once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Banner {
    pub text: String,
    /// How many points it concerns (0: the whole document).
    pub points: usize,
}

impl Banner {
    /// `text (N points)`, or `text` alone when it concerns no counted points.
    pub fn line(&self) -> String {
        match self.points {
            0 => self.text.clone(),
            1 => format!("{} (1 point)", self.text),
            n => format!("{} ({n} points)", self.text),
        }
    }
}

/// The words every "the target is memory" warning carries (tmpfs, a RAM disk, a loop device over
/// a file in memory).
pub const MEASURING_RAM: &str = "you are measuring RAM";
/// The words of the warning about a buffered range found in the page cache.
pub const IN_PAGE_CACHE: &str = "of the range read was in the page cache";
/// The words that begin the warning about an empty measured window.
pub const NOTHING_MEASURED: &str = "nothing was measured";
/// The words that begin the warning about a window too short for CPU figures.
pub const SHORT_WINDOW: &str = "the measured window was only";
/// The words that begin the warning about other load on the machine.
pub const OTHER_LOAD: &str = "other processes used";
/// The words of the warning about time the hypervisor took.
pub const STEAL: &str = "(steal time)";
/// The words that begin the warning about the CPU's clock changing during a run.
pub const CLOCK_CHANGED: &str = "the CPU clock changed";
/// The words of the warning about too few requests for the tail percentiles.
pub const FEW_SAMPLES: &str = "too few samples for the tail percentiles";
/// The words that begin the warning about a run whose every read failed.
pub const EVERY_READ_FAILED: &str = "every read failed";
/// The words of the warning about a run that asked for polled completions and got interrupts.
pub const NOT_POLLED: &str = "the kernel did not poll";

/// What a warning is about, as far as grouping goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The target is memory (tmpfs, a RAM disk, a loop device over a file in memory): every
    /// figure is RAM's. Said as a banner even at one point.
    Memory,
    EveryReadFailed,
    NothingMeasured,
    PageCache,
    OtherLoad,
    Steal,
    ClockChanged,
    ShortWindow,
    FewSamples,
    /// Anything else: grouped by its text, figures aside.
    Other,
}

impl Kind {
    /// The kind of a warning, by the words its producer put in it (anywhere: a multi-target
    /// run prefixes its targets' names, a fleet its ranks).
    pub fn of(w: &str) -> Kind {
        let kinds = [
            (MEASURING_RAM, Kind::Memory),
            (EVERY_READ_FAILED, Kind::EveryReadFailed),
            (NOTHING_MEASURED, Kind::NothingMeasured),
            (IN_PAGE_CACHE, Kind::PageCache),
            (OTHER_LOAD, Kind::OtherLoad),
            (STEAL, Kind::Steal),
            (CLOCK_CHANGED, Kind::ClockChanged),
            (SHORT_WINDOW, Kind::ShortWindow),
            (FEW_SAMPLES, Kind::FewSamples),
        ];
        kinds
            .into_iter()
            .find(|(words, _)| w.contains(words))
            .map_or(Kind::Other, |(_, k)| k)
    }

    /// What a banner says when the points' texts differ (in a figure, a target's name).
    fn generic(self) -> Option<&'static str> {
        Some(match self {
            Kind::Memory => {
                "the target is in memory (tmpfs, a RAM disk, or a loop device over a file in \
                 memory): you are measuring RAM, not a device"
            }
            Kind::EveryReadFailed => "every read failed: nothing was measured",
            Kind::NothingMeasured => {
                "nothing was measured: no request completed in the measured window; every figure \
                 is empty; give a longer --runtime"
            }
            Kind::PageCache => {
                "most of the range read was in the page cache: buffered reads measured RAM, not \
                 the device (read with O_DIRECT, or a range larger than memory)"
            }
            Kind::OtherLoad => {
                "other processes used a good share of a core during the run: the figures may be \
                 disturbed; measure on a quiet machine, or compare runs with --repeat"
            }
            Kind::Steal => {
                "the hypervisor took CPU time from this machine during the run (steal time): the \
                 figures may be disturbed"
            }
            Kind::ClockChanged => {
                "the CPU clock changed during the run (frequency scaling or power limits): the \
                 figures may not be comparable; fix the frequency (e.g. the performance governor) \
                 or compare runs with --repeat"
            }
            Kind::ShortWindow => {
                "the measured window was too short for CPU figures (the kernel counts CPU in 10 ms \
                 ticks) and to tell other load on the machine; run at least 1 s for those"
            }
            Kind::FewSamples => {
                "too few samples for the tail percentiles: the tail is not shown; run longer for \
                 the tail"
            }
            Kind::Other => return None,
        })
    }

    /// Where the figure a banner gives as a range (`40–162 %`) follows, for kinds that have one:
    /// the words just before it.
    fn figure_after(self) -> Option<&'static str> {
        match self {
            Kind::OtherLoad => Some(OTHER_LOAD),
            Kind::Steal => Some("the hypervisor took"),
            Kind::FewSamples => Some("only"),
            _ => None,
        }
    }

    /// What a banner says when the points' texts differ but their figures span `lo`–`hi`.
    fn ranged(self, range: &str) -> Option<String> {
        Some(match self {
            Kind::OtherLoad => format!(
                "{OTHER_LOAD} {range} % of a core during the runs: the figures may be disturbed; \
                 measure on a quiet machine, or compare runs with --repeat"
            ),
            Kind::Steal => format!(
                "the hypervisor took {range} % of a core from this machine during the runs \
                 {STEAL}: the figures may be disturbed"
            ),
            Kind::FewSamples => format!(
                "only {range} requests measured: {FEW_SAMPLES}; the tail is not shown; run \
                 longer for the tail"
            ),
            _ => return None,
        })
    }

    /// The figure of `w` a banner gives as a range, if its kind has one.
    fn figure(self, w: &str) -> Option<f64> {
        let after = self.figure_after()?;
        let rest = &w[w.find(after)? + after.len()..];
        let start = rest.find(|c: char| c.is_ascii_digit())?;
        let end = rest[start..]
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .map_or(rest.len(), |e| start + e);
        rest[start..end].parse().ok()
    }

    /// A few words for a count at the end of a command.
    fn short(self) -> Option<&'static str> {
        Some(match self {
            Kind::Memory => "target in RAM",
            Kind::EveryReadFailed => "every read failed",
            Kind::NothingMeasured => "nothing measured",
            Kind::PageCache => "range in the page cache",
            Kind::OtherLoad => "other load on the machine",
            Kind::Steal => "steal time",
            Kind::ClockChanged => "CPU clock changed",
            Kind::ShortWindow => "window too short for CPU figures",
            Kind::FewSamples => "too few samples for the tail",
            Kind::Other => return None,
        })
    }
}

/// The key warnings are grouped by: their kind for the runner's own, else the text with its
/// figures taken out (`rank 1: … 12 ms …` and `rank 1: … 14 ms …` are one warning).
pub fn key(w: &str) -> String {
    match Kind::of(w) {
        Kind::Other => {
            let mut k = String::with_capacity(w.len());
            let mut chars = w.trim().chars().peekable();
            while let Some(c) = chars.next() {
                if !c.is_ascii_digit() {
                    k.push(c);
                    continue;
                }
                // A figure (`12`, `1.5`, `1,024`) is one `#`.
                loop {
                    match chars.peek() {
                        Some(d) if d.is_ascii_digit() => {
                            chars.next();
                        }
                        Some('.' | ',') => {
                            let mut ahead = chars.clone();
                            ahead.next();
                            if !ahead.peek().is_some_and(char::is_ascii_digit) {
                                break;
                            }
                            chars.next();
                        }
                        _ => break,
                    }
                }
                k.push('#');
            }
            format!("other:{k}")
        }
        kind => format!("{kind:?}"),
    }
}

/// One warning as said by some points.
#[derive(Debug, Clone)]
struct Group {
    key: String,
    kind: Kind,
    /// The text as the first point said it.
    first: String,
    /// Every point said exactly `first`.
    same: bool,
    /// Points that said it.
    points: usize,
    /// The last point counted (a point saying it twice counts once).
    last: usize,
    /// The smallest and largest of the texts' figures, for kinds that have one.
    span: Option<(f64, f64)>,
}

impl Group {
    /// What a banner says: the text itself when every point said the same; else the kind's
    /// words with the range of the figures the texts differ in, or without figures.
    fn text(&self) -> String {
        if self.same {
            return self.first.clone();
        }
        let ranged = self.span.and_then(|(lo, hi)| {
            let (lo, hi) = (format!("{lo:.0}"), format!("{hi:.0}"));
            self.kind
                .ranged(&if lo == hi { lo } else { format!("{lo}–{hi}") })
        });
        match (ranged, self.kind.generic()) {
            (Some(r), _) => r,
            (None, Some(g)) => g.to_string(),
            (None, None) => format!("{} (the figures differ from point to point)", self.first),
        }
    }

    fn banner(&self) -> Banner {
        Banner {
            text: self.text(),
            points: self.points,
        }
    }

    /// A few words naming the warning, for a count.
    fn short(&self) -> String {
        match self.kind.short() {
            Some(s) => s.to_string(),
            None => {
                let mut s: String = self.first.chars().take(48).collect();
                if s.len() < self.first.len() {
                    s.push('…');
                }
                s
            }
        }
    }
}

/// Warnings counted point by point as they come (a study's progress, the tuner's runs): which
/// are said for the first time, and at the end how many points said each.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    groups: Vec<Group>,
    /// Points counted so far.
    points: usize,
}

impl Tally {
    pub fn new() -> Tally {
        Tally::default()
    }

    /// Count one point's warnings; returns those not said before by any point (to say now).
    pub fn point<S: AsRef<str>>(&mut self, warnings: &[S]) -> Vec<String> {
        let me = self.points;
        self.points += 1;
        let mut new = Vec::new();
        for w in warnings {
            let w = w.as_ref();
            let k = key(w);
            match self.groups.iter_mut().find(|g| g.key == k) {
                Some(g) => {
                    g.same &= g.first == w;
                    g.span = match (g.span, g.kind.figure(w)) {
                        (Some((lo, hi)), Some(f)) => Some((lo.min(f), hi.max(f))),
                        // A text without the figure: no range can be told.
                        _ => None,
                    };
                    if g.last != me {
                        g.last = me;
                        g.points += 1;
                    }
                }
                None => {
                    self.groups.push(Group {
                        key: k,
                        kind: Kind::of(w),
                        first: w.to_string(),
                        same: true,
                        points: 1,
                        last: me,
                        span: Kind::of(w).figure(w).map(|f| (f, f)),
                    });
                    new.push(w.to_string());
                }
            }
        }
        new
    }

    /// How many points were counted.
    pub fn points(&self) -> usize {
        self.points
    }

    /// Every warning said, once, with how many points said it: memory first, then the runner's
    /// kinds in order, then the rest as they came.
    pub fn banners(&self) -> Vec<Banner> {
        self.sorted().into_iter().map(Group::banner).collect()
    }

    /// One line counting the warnings more than one point said (each was said once, when first
    /// seen): `target in RAM at 153 points; too few samples for the tail at 12 points`; None
    /// when no warning repeated.
    pub fn repeated(&self) -> Option<String> {
        let parts: Vec<String> = self
            .sorted()
            .into_iter()
            .filter(|g| g.points > 1)
            .map(|g| format!("{} at {} points", g.short(), g.points))
            .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    fn sorted(&self) -> Vec<&Group> {
        let mut v: Vec<&Group> = self.groups.iter().collect();
        v.sort_by_key(|g| g.kind); // stable: the rest stay in the order they came
        v
    }
}

/// A warning said by at least this many points is said once, as a banner.
pub const MANY: usize = 3;

/// Warnings of many points said once: the banners, and each point's warnings left to say with
/// it (in the order given).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grouped {
    pub banners: Vec<Banner>,
    /// One entry per point given, its warnings not in a banner.
    pub rest: Vec<Vec<String>>,
}

/// Turn per-point warnings into banners: a warning (of one kind, whatever its figures or names)
/// said by [`MANY`] points or more, or by every point of two or more, becomes one banner with
/// how many points said it; a target in memory is a banner even at one point (it puts every
/// figure in doubt). The rest stay with their points.
pub fn group<P: AsRef<[S]>, S: AsRef<str>>(points: &[P]) -> Grouped {
    let mut tally = Tally::new();
    for p in points {
        tally.point(p.as_ref());
    }
    let n = points.len();
    let common =
        |g: &Group| g.kind == Kind::Memory || g.points >= MANY || (n >= 2 && g.points == n);
    let keys: Vec<&str> = tally
        .groups
        .iter()
        .filter(|g| common(g))
        .map(|g| g.key.as_str())
        .collect();
    let rest = points
        .iter()
        .map(|p| {
            p.as_ref()
                .iter()
                .map(|w| w.as_ref())
                .filter(|w| !keys.contains(&key(w).as_str()))
                .map(str::to_string)
                .collect()
        })
        .collect();
    Grouped {
        banners: tally
            .sorted()
            .into_iter()
            .filter(|g| common(g))
            .map(Group::banner)
            .collect(),
        rest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RAM: &str = "loop6 is a loop device over /dev/shm/img, which is on tmpfs: you are \
                       measuring RAM through the block layer, not a device";

    fn few(n: u64) -> String {
        format!("only {n} requests measured: {FEW_SAMPLES} (p99.9 needs 1000); run longer")
    }

    #[test]
    fn copies_at_many_points_become_one_banner_and_distinct_ones_stay() {
        let mut points: Vec<Vec<String>> = (0..153).map(|_| vec![RAM.to_string()]).collect();
        points[7].push("RWF_HIPRI is ignored: loop6 has no poll queues".into());
        points[9].push(few(326));
        let g = group(&points);
        assert_eq!(
            g.banners,
            [Banner {
                text: RAM.into(),
                points: 153
            }]
        );
        assert_eq!(g.banners[0].line(), format!("{RAM} (153 points)"));
        assert_eq!(g.rest.len(), 153);
        assert_eq!(
            g.rest[7],
            ["RWF_HIPRI is ignored: loop6 has no poll queues"]
        );
        assert_eq!(g.rest[9], [few(326)]);
        assert!(g.rest[0].is_empty() && g.rest[152].is_empty());
    }

    #[test]
    fn figures_and_prefixes_do_not_keep_one_kind_apart() {
        let points = vec![
            vec![few(326)],
            vec![few(7261)],
            vec![format!("loop7: {}", few(12))],
            vec!["other".to_string()],
        ];
        let g = group(&points);
        assert_eq!(g.banners.len(), 1, "{:?}", g.banners);
        assert_eq!(g.banners[0].points, 3);
        // The figures the copies differ in, as a range.
        assert!(
            g.banners[0]
                .text
                .starts_with("only 12–7261 requests measured: too few samples"),
            "{:?}",
            g.banners
        );
        assert_eq!(g.rest[3], ["other"]);
        assert!(g.rest[..3].iter().all(Vec::is_empty));
    }

    #[test]
    fn a_banner_gives_the_range_of_the_figures_it_stands_for() {
        let load = |pct: u32| {
            format!(
                "{OTHER_LOAD} {pct} % of a core during the run (readlab itself 39 %): the figures \
                 may be disturbed"
            )
        };
        let g = group(&[vec![load(40)], vec![load(162)], vec![load(75)]]);
        assert!(
            g.banners[0]
                .text
                .starts_with("other processes used 40–162 % of a core"),
            "{:?}",
            g.banners
        );
        let g = group(&[vec![load(40)], vec![load(40)], vec![load(40)]]);
        assert_eq!(g.banners[0].text, load(40));
    }

    #[test]
    fn other_warnings_group_by_text_without_their_figures() {
        assert_eq!(
            key("ranks started 12 ms apart"),
            key("ranks started 1.5 ms apart")
        );
        assert_ne!(
            key("ranks started 12 ms apart"),
            key("ranks ended 12 ms apart")
        );
        let points: Vec<Vec<String>> = [3, 4, 5]
            .iter()
            .map(|n| vec![format!("ranks started {n} ms apart")])
            .collect();
        let g = group(&points);
        assert_eq!(g.banners.len(), 1);
        assert!(g.banners[0].text.contains("differ"), "{:?}", g.banners);
    }

    #[test]
    fn a_target_in_memory_is_a_banner_at_one_point_and_rare_warnings_are_not() {
        let g = group(&[vec![RAM], vec![]]);
        assert_eq!(g.banners[0].line(), format!("{RAM} (1 point)"));
        let g = group(&[vec![few(3)], vec![], vec![]]);
        assert!(g.banners.is_empty());
        assert_eq!(g.rest[0], [few(3)]);
        // Every point of two is common.
        let g = group(&[vec![few(3)], vec![few(4)]]);
        assert_eq!(g.banners.len(), 1);
    }

    #[test]
    fn a_tally_says_each_warning_once_and_counts_the_repeats() {
        let mut t = Tally::new();
        assert_eq!(t.point(&[RAM]), [RAM]);
        for _ in 0..4 {
            assert!(t.point(&[RAM, RAM]).is_empty());
        }
        assert_eq!(t.point(&[few(10)]), [few(10)]);
        assert!(t.point(&[few(11)]).is_empty());
        assert_eq!(t.points(), 7);
        assert_eq!(
            t.repeated().as_deref(),
            Some("target in RAM at 5 points; too few samples for the tail at 2 points")
        );
        let b = t.banners();
        assert_eq!((b[0].points, b[1].points), (5, 2));
        assert!(!b[0].line().contains("\n"));
    }
}
