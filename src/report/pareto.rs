//! The throughput/latency Pareto frontier: the points that no other point beats on both
//! throughput (higher is better) and p99.9 latency (lower is better); and the few best points of
//! each block size, which the all-experiments chart enlarges and labels.

use std::collections::BTreeMap;

fn usable(p: (f64, f64)) -> bool {
    p.0.is_finite() && p.1.is_finite() && p.0 >= 0.0 && p.1 >= 0.0
}

/// Indices of the points of `xy` = (throughput, latency) that no other point dominates, by
/// increasing throughput (and so increasing latency). A point is dominated when another has at
/// least its throughput and at most its latency, and is better in one of them. Points with a
/// non-finite or negative value are never on the frontier; of identical points only the first is.
pub fn frontier(xy: &[(f64, f64)]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..xy.len()).filter(|&i| usable(xy[i])).collect();
    // Best throughput first; among equal throughput the best latency; then input order.
    idx.sort_by(|&a, &b| {
        xy[b]
            .0
            .total_cmp(&xy[a].0)
            .then(xy[a].1.total_cmp(&xy[b].1))
            .then(a.cmp(&b))
    });
    let mut best_latency = f64::INFINITY;
    let mut out = Vec::new();
    for i in idx {
        if xy[i].1 < best_latency {
            best_latency = xy[i].1;
            out.push(i);
        }
    }
    out.reverse();
    out
}

/// The best points of each group (block size): its own frontier, cut to `per_group` points
/// spread along it (lowest latency, highest throughput, and between). Sorted by index.
pub fn highlights(xy: &[(f64, f64)], groups: &[u64], per_group: usize) -> Vec<usize> {
    let mut by_group: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, g) in groups.iter().enumerate().take(xy.len()) {
        by_group.entry(*g).or_default().push(i);
    }
    let mut out = Vec::new();
    for members in by_group.values() {
        let sub: Vec<(f64, f64)> = members.iter().map(|&i| xy[i]).collect();
        let front: Vec<usize> = frontier(&sub).into_iter().map(|k| members[k]).collect();
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(frontier(&xy), [1, 2, 0]);
    }

    #[test]
    fn edge_cases() {
        assert!(frontier(&[]).is_empty());
        assert_eq!(frontier(&[(1.0, 1.0)]), [0]);
        // Identical points: the first only.
        assert_eq!(frontier(&[(1.0, 1.0), (1.0, 1.0)]), [0]);
        // NaN, infinite and negative values never make it.
        assert_eq!(
            frontier(&[
                (f64::NAN, 1.0),
                (2.0, f64::INFINITY),
                (-1.0, 0.5),
                (1.0, 2.0)
            ]),
            [3]
        );
        // A chain where every point is on the frontier.
        let chain: Vec<(f64, f64)> = (1..=5).map(|i| (i as f64, i as f64)).collect();
        assert_eq!(frontier(&chain), [0, 1, 2, 3, 4]);
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
