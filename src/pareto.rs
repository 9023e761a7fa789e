//! Pareto frontiers, once for everyone: the points no other point beats on every objective at
//! once. The tuner ranks its candidates on IOPS, p99.9 and CPU; the report draws the frontier of
//! throughput against p99.9 and enlarges the few best points of each block size.

use std::collections::BTreeMap;

/// Which way an objective is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    /// `a` is at least as good as `b`, and strictly better.
    fn at_least(self, a: f64, b: f64) -> bool {
        match self {
            Better::Higher => a >= b,
            Better::Lower => a <= b,
        }
    }

    fn strictly(self, a: f64, b: f64) -> bool {
        match self {
            Better::Higher => a > b,
            Better::Lower => a < b,
        }
    }
}

/// `a` is at least as good as `b` on every objective and better on one.
pub fn dominates<const N: usize>(a: &[f64; N], b: &[f64; N], better: &[Better; N]) -> bool {
    let all = (0..N).all(|k| better[k].at_least(a[k], b[k]));
    all && (0..N).any(|k| better[k].strictly(a[k], b[k]))
}

/// Indices of the points no other point dominates, in input order. Points with a non-finite value
/// never count: they are neither on the frontier nor beat anything. Identical points are all kept
/// (none dominates the other); see [`first_of_equals`].
pub fn frontier<const N: usize>(points: &[[f64; N]], better: &[Better; N]) -> Vec<usize> {
    let usable: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].iter().all(|v| v.is_finite()))
        .collect();
    usable
        .iter()
        .copied()
        .filter(|&i| {
            !usable
                .iter()
                .any(|&j| dominates(&points[j], &points[i], better))
        })
        .collect()
}

/// `idx` with every point identical to an earlier one left out.
pub fn first_of_equals<const N: usize>(points: &[[f64; N]], idx: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    for &i in idx {
        if !out.iter().any(|&j| points[j] == points[i]) {
            out.push(i);
        }
    }
    out
}

const THROUGHPUT_LATENCY: [Better; 2] = [Better::Higher, Better::Lower];

/// The report's frontier of `xy` = (throughput, latency): indices of the undominated points by
/// increasing throughput (and so increasing latency). Negative values are never on it; of
/// identical points only the first is.
pub fn throughput_latency(xy: &[(f64, f64)]) -> Vec<usize> {
    let pts: Vec<[f64; 2]> = xy
        .iter()
        .map(|&(x, y)| {
            if x >= 0.0 && y >= 0.0 {
                [x, y]
            } else {
                [f64::NAN, f64::NAN]
            }
        })
        .collect();
    let mut out = first_of_equals(&pts, &frontier(&pts, &THROUGHPUT_LATENCY));
    out.sort_by(|&a, &b| pts[a][0].total_cmp(&pts[b][0]));
    out
}

/// The best points of each group (block size): its own throughput/latency frontier, cut to
/// `per_group` points spread along it (lowest latency, highest throughput, and between). Sorted
/// by index.
pub fn highlights(xy: &[(f64, f64)], groups: &[u64], per_group: usize) -> Vec<usize> {
    let mut by_group: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, g) in groups.iter().enumerate().take(xy.len()) {
        by_group.entry(*g).or_default().push(i);
    }
    let mut out = Vec::new();
    for members in by_group.values() {
        let sub: Vec<(f64, f64)> = members.iter().map(|&i| xy[i]).collect();
        let front: Vec<usize> = throughput_latency(&sub)
            .into_iter()
            .map(|k| members[k])
            .collect();
        if front.len() <= per_group {
            out.extend(front);
        } else if per_group == 1 {
            out.extend(front.last());
        } else if per_group > 1 {
            let n = front.len();
            let mut pick: Vec<usize> = (0..per_group)
                .map(|k| front[k * (n - 1) / (per_group - 1)])
                .collect();
            pick.dedup();
            out.extend(pick);
        }
    }
    out.sort_unstable();
    out
}

/// The point a goal picks from (throughput, latency) pairs: among the points within `floor` of
/// the best throughput (0.99: the fastest, 0.9: balanced, 0.5: latency), the lowest latency, then
/// the higher throughput, then the first. None when there are no points with a throughput.
pub fn pick(xy: &[(f64, f64)], floor: f64) -> Option<usize> {
    let best = xy
        .iter()
        .map(|p| p.0)
        .filter(|x| x.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    if !best.is_finite() {
        return None;
    }
    (0..xy.len())
        .filter(|&i| xy[i].0.is_finite() && xy[i].0 >= floor * best)
        .min_by(|&a, &b| {
            xy[a]
                .1
                .total_cmp(&xy[b].1)
                .then(xy[b].0.total_cmp(&xy[a].0))
                .then(a.cmp(&b))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_pick_within_their_floor() {
        let xy = [
            (1000.0, 900.0),
            (995.0, 400.0),
            (950.0, 300.0),
            (600.0, 100.0),
        ];
        assert_eq!(pick(&xy, 0.99), Some(1));
        assert_eq!(pick(&xy, 0.9), Some(2));
        assert_eq!(pick(&xy, 0.5), Some(3));
        assert_eq!(pick(&[], 0.5), None);
        assert_eq!(pick(&[(f64::NAN, 1.0)], 0.5), None);
    }

    #[test]
    fn dominated_points_are_left_out() {
        // (MB/s, p99.9 ns)
        let xy = [
            (100.0, 500.0), // on: fastest
            (50.0, 100.0),  // on: lowest latency
            (60.0, 200.0),  // on: between
            (55.0, 300.0),  // off: (60, 200) beats it on both
            (100.0, 600.0), // off: same throughput as the first, worse latency
            (40.0, 100.0),  // off: same latency as (50, 100), less throughput
        ];
        assert_eq!(throughput_latency(&xy), [1, 2, 0]);
    }

    #[test]
    fn edge_cases() {
        assert!(throughput_latency(&[]).is_empty());
        assert_eq!(throughput_latency(&[(1.0, 1.0)]), [0]);
        // Identical points: the first only.
        assert_eq!(throughput_latency(&[(1.0, 1.0), (1.0, 1.0)]), [0]);
        // NaN, infinite and negative values never make it.
        assert_eq!(
            throughput_latency(&[
                (f64::NAN, 1.0),
                (2.0, f64::INFINITY),
                (-1.0, 0.5),
                (1.0, 2.0)
            ]),
            [3]
        );
        // A chain where every point is on the frontier.
        let chain: Vec<(f64, f64)> = (1..=5).map(|i| (i as f64, i as f64)).collect();
        assert_eq!(throughput_latency(&chain), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn three_objectives_keep_equals() {
        use Better::*;
        let goals = [Higher, Lower, Lower];
        let pts = [
            [100.0, 100.0, 1.0],
            [200.0, 300.0, 1.0],
            [150.0, 400.0, 1.5], // dominated by the second
            [90.0, 50.0, 0.5],
            [90.0, 50.0, 0.5], // equal to the one before: kept
        ];
        assert_eq!(frontier(&pts, &goals), [0, 1, 3, 4]);
        assert_eq!(first_of_equals(&pts, &[0, 1, 3, 4]), [0, 1, 3]);
        assert!(dominates(&pts[1], &pts[2], &goals));
        assert!(!dominates(&pts[3], &pts[4], &goals));
    }

    #[test]
    fn highlights_take_the_best_of_each_block_size() {
        let xy = [
            (10.0, 10.0),
            (20.0, 20.0),
            (30.0, 30.0),
            (40.0, 40.0),
            (5.0, 50.0), // dominated within its group
            (1.0, 1.0),  // another block size: on its own frontier
        ];
        let groups = [4096, 4096, 4096, 4096, 4096, 1 << 20];
        assert_eq!(highlights(&xy, &groups, 3), [0, 1, 3, 5]);
        assert_eq!(highlights(&xy, &groups, 1), [3, 5]);
        assert!(highlights(&xy, &groups, 0).is_empty());
        assert!(highlights(&[], &[], 3).is_empty());
    }
}
