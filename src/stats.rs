//! Latency statistics the way a storage engineer wants them: exact min, max and mean, HDR-histogram
//! percentiles clamped to [min, max], histograms that can be stored and merged again later.

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

/// Largest latency the histograms hold exactly: one hour, well past fio's 17 s limit.
pub const HIST_MAX_NS: u64 = 3_600_000_000_000;

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_NS, 3).expect("valid histogram bounds")
}

/// Latencies of one thread or interval: a histogram plus exact extremes and sum.
#[derive(Clone)]
pub struct Recorder {
    pub hist: Histogram<u64>,
    pub min: u64,
    pub max: u64,
    pub sum: u128,
    pub count: u64,
    pub bytes: u64,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            hist: new_histogram(),
            min: u64::MAX,
            max: 0,
            sum: 0,
            count: 0,
            bytes: 0,
        }
    }
}

impl Recorder {
    #[inline]
    pub fn record(&mut self, ns: u64, bytes: u64) {
        let ns = ns.max(1);
        self.hist.saturating_record(ns);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += ns as u128;
        self.count += 1;
        self.bytes += bytes;
    }

    pub fn merge(&mut self, other: &Recorder) {
        if other.count == 0 {
            return;
        }
        self.hist.add(&other.hist).expect("same histogram bounds");
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.count += other.count;
        self.bytes += other.bytes;
    }

    pub fn reset(&mut self) {
        self.hist.reset();
        self.min = u64::MAX;
        self.max = 0;
        self.sum = 0;
        self.count = 0;
        self.bytes = 0;
    }

    /// A percentile, never outside [min, max].
    pub fn percentile(&self, pct: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        self.hist
            .value_at_quantile(pct / 100.0)
            .clamp(self.min, self.max)
    }

    pub fn summary(&self) -> LatencySummary {
        if self.count == 0 {
            return LatencySummary::default();
        }
        LatencySummary {
            count: self.count,
            min_ns: self.min,
            mean_ns: self.sum as f64 / self.count as f64,
            stdev_ns: self.hist.stdev(),
            p50_ns: self.percentile(50.0),
            p90_ns: self.percentile(90.0),
            p99_ns: self.percentile(99.0),
            p999_ns: self.percentile(99.9),
            p9999_ns: self.percentile(99.99),
            max_ns: self.max,
        }
    }
}

/// Latency of every measured I/O, in nanoseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub p9999_ns: u64,
    pub max_ns: u64,
}

/// Samples beyond a percentile it takes to report it: with fewer, p99.9 is the largest of a handful
/// of values and says more about luck than about the device.
pub const TAIL_SAMPLES: f64 = 10.0;

/// Fewest samples that support percentile `pct` (p50: 20, p99: 1,000, p99.9: 10,000, p99.99:
/// 100,000).
pub fn min_samples(pct: f64) -> u64 {
    (TAIL_SAMPLES / (1.0 - pct / 100.0)).round() as u64
}

/// Whether `count` samples support percentile `pct`.
pub fn supported(count: u64, pct: f64) -> bool {
    count >= min_samples(pct)
}

impl LatencySummary {
    /// Whether this summary's sample count supports percentile `pct`.
    pub fn supports(&self, pct: f64) -> bool {
        supported(self.count, pct)
    }

    /// Percentile `pct` (50, 90, 99, 99.9 or 99.99) when its sample count supports it, else
    /// None: the one rule every output follows — a table prints `–` where this is None and a
    /// chart draws nothing there, so no figure shows a percentile another withholds.
    pub fn shown(&self, pct: f64) -> Option<u64> {
        let v = match pct {
            50.0 => self.p50_ns,
            90.0 => self.p90_ns,
            99.0 => self.p99_ns,
            99.9 => self.p999_ns,
            99.99 => self.p9999_ns,
            _ => return None,
        };
        self.supports(pct).then_some(v)
    }
}

/// Percentile `q` of `l` for people (`ns`, the value of that percentile, in table style), or `–`
/// when too few samples support it: the table cell of [`LatencySummary::shown`]'s rule.
pub fn percentile_cell(l: &LatencySummary, q: f64, ns: u64) -> String {
    if l.supports(q) {
        crate::units::format_ns(ns as f64, crate::units::Style::Table)
    } else {
        "–".into()
    }
}

/// One second (or the last partial second) of the measured window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimelinePoint {
    /// End of the interval, seconds since the measured window began.
    pub t_s: f64,
    pub ios: u64,
    pub iops: f64,
    pub mib_s: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

/// Throughput over one stretch of the target (`--sample-every`): where it starts, what was read
/// there and how fast.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OffsetSample {
    /// First byte of the stretch.
    pub offset: u64,
    pub bytes: u64,
    /// When its last read completed, seconds since the measured window began.
    pub t_s: f64,
    /// 10^6 bytes per second, from the time since the previous stretch's last read.
    pub mb_s: f64,
}

/// Encode a histogram in HdrHistogram's compressed V2 format, base64: the form other HDR tools read
/// and that `decode_histogram` turns back into something mergeable.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut bytes)
        .expect("serialising into memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub fn decode_histogram(s: &str) -> Option<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(s).ok()?;
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::{min_samples, supported};

    #[test]
    fn tail_percentiles_need_ten_samples_beyond_them() {
        assert_eq!(min_samples(50.0), 20);
        assert_eq!(min_samples(99.0), 1_000);
        assert_eq!(min_samples(99.9), 10_000);
        assert_eq!(min_samples(99.99), 100_000);
        assert!(!supported(272, 99.9) && supported(272, 90.0));
    }

    use super::*;

    #[test]
    fn percentiles_stay_within_exact_extremes() {
        let mut r = Recorder::default();
        for v in [1_001u64, 1_003, 1_007, 123_457, 17_000_000_001] {
            r.record(v, 4096);
        }
        let s = r.summary();
        assert_eq!(s.min_ns, 1_001);
        assert_eq!(s.max_ns, 17_000_000_001);
        assert!(s.min_ns <= s.p50_ns && s.p50_ns <= s.p99_ns);
        assert!(s.p99_ns <= s.p999_ns && s.p999_ns <= s.p9999_ns && s.p9999_ns <= s.max_ns);
        assert_eq!(s.p9999_ns, s.max_ns);
        assert!(
            (s.mean_ns - (1_001.0 + 1_003.0 + 1_007.0 + 123_457.0 + 17_000_000_001.0) / 5.0).abs()
                < 1e-3
        );
    }

    #[test]
    fn single_value_has_every_percentile_equal() {
        let mut r = Recorder::default();
        r.record(123_456_789, 1);
        let s = r.summary();
        assert_eq!((s.p50_ns, s.p9999_ns), (123_456_789, 123_456_789));
    }

    #[test]
    fn merge_and_roundtrip() {
        let (mut a, mut b) = (Recorder::default(), Recorder::default());
        (1..=1000).for_each(|v| a.record(v * 1000, 1));
        (1001..=2000).for_each(|v| b.record(v * 1000, 1));
        a.merge(&b);
        assert_eq!(a.count, 2000);
        assert_eq!((a.min, a.max), (1000, 2_000_000));
        let p50 = a.percentile(50.0);
        assert!((990_000..=1_010_000).contains(&p50), "{p50}");
        let back = decode_histogram(&encode_histogram(&a.hist)).unwrap();
        assert_eq!(back.len(), 2000);
        assert_eq!(back.value_at_quantile(0.5), a.hist.value_at_quantile(0.5));
    }

    #[test]
    fn reset_clears() {
        let mut r = Recorder::default();
        r.record(5, 1);
        r.reset();
        assert_eq!(r.count, 0);
        assert_eq!(r.hist.len(), 0);
        assert_eq!(r.summary(), LatencySummary::default());
    }
}
