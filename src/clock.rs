//! The cost of readlab's own clock: every I/O is timed with two monotonic clock reads, and users
//! comparing tools need to know what that costs here.

use std::hint::black_box;
use std::time::Instant;

/// Nanoseconds one `Instant::now()` (CLOCK_MONOTONIC through the vDSO) takes on this machine.
pub fn timer_cost_ns() -> f64 {
    for _ in 0..1_000 {
        black_box(Instant::now());
    }
    let n = 200_000u32;
    let t = Instant::now();
    for _ in 0..n {
        black_box(Instant::now());
    }
    t.elapsed().as_nanos() as f64 / n as f64
}

#[cfg(test)]
mod tests {
    #[test]
    fn timer_cost_is_positive_and_small() {
        let c = super::timer_cost_ns();
        assert!(c > 0.0 && c < 100_000.0, "{c}");
    }
}
