//! The achieved queue depth: requests in flight, integrated over the measured window by the worker
//! that issues them, so a result says how deep the queue really was, not only how deep it was asked
//! to be (by Little's law the same figure fio's IOPS × mean latency gives).

use crate::clock::Tick;

/// Time-weighted count of one worker's requests in flight inside the measured window.
#[derive(Debug)]
pub(super) struct DepthMeter {
    start: Tick,
    end: Tick,
    last: Tick,
    count: usize,
    /// Requests × nanoseconds in flight inside the window, in integers: the hot path never
    /// converts a 128-bit count to floating point (that conversion is a library call).
    area: u128,
}

impl DepthMeter {
    /// A meter for the window `[start, end)`, with nothing in flight at `t0`.
    pub(super) fn new(t0: Tick, start: Tick, end: Tick) -> DepthMeter {
        DepthMeter {
            start,
            end,
            last: t0,
            count: 0,
            area: 0,
        }
    }

    /// Account the time since the last change at the old count.
    fn advance(&mut self, t: Tick) {
        let a = self.last.max(self.start);
        let b = t.min(self.end);
        if b > a && self.count > 0 {
            self.area += self.count as u128 * b.ns_since(a) as u128;
        }
        self.last = self.last.max(t);
    }

    /// `n` more requests in flight from `t`.
    pub(super) fn started(&mut self, t: Tick, n: usize) {
        self.advance(t);
        self.count += n;
    }

    /// `n` requests finished at `t`.
    pub(super) fn finished(&mut self, t: Tick, n: usize) {
        self.advance(t);
        self.count = self.count.saturating_sub(n);
    }

    /// Requests × nanoseconds in flight inside the window.
    pub(super) fn area(mut self, t: Tick) -> f64 {
        self.advance(t);
        self.area as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(t0: Tick, us: u64) -> Tick {
        t0.plus(Duration::from_micros(us))
    }

    #[test]
    fn counts_only_the_window_weighted_by_time() {
        let t0 = Tick::now();
        let mut m = DepthMeter::new(t0, at(t0, 100), at(t0, 1100));
        m.started(t0, 4); // 4 in flight from 0, the window opens at 100
        m.finished(at(t0, 600), 2); // 4 for 500 µs inside the window
        m.started(at(t0, 800), 1); // 2 for 200 µs, then 3
        let area = m.area(at(t0, 2000)); // 3 for 300 µs until the window ends at 1100
        let mean = area / 1000e3;
        assert!((mean - (4.0 * 500.0 + 2.0 * 200.0 + 3.0 * 300.0) / 1000.0).abs() < 1e-9);
    }
}
