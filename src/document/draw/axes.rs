//! Axes: the range an axis spans for its data (log10 in drawing space for log axes), round tick
//! values, and tick labels in units (`crate::units`, chart style); category axes for bar charts.

use super::style::{TICK, text_width};
use crate::document::chart::{Axis, Scale, Unit};
use crate::units::{Style, format_bytes, format_count, format_ns, format_pct, format_seconds, sig};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Round tick values from `lo` to `hi`, about `n` of them (steps of 1, 2 or 5 × 10^k).
pub(super) fn linear_ticks(lo: f64, hi: f64, n: f64) -> Vec<f64> {
    let span = hi - lo;
    if span <= 0.0 || !span.is_finite() {
        return vec![lo];
    }
    let raw = span / n;
    let p = 10f64.powf(raw.log10().floor());
    let m = raw / p;
    let step = p * if m <= 1.0 {
        1.0
    } else if m <= 2.0 {
        2.0
    } else if m <= 5.0 {
        5.0
    } else {
        10.0
    };
    let mut t = Vec::new();
    let mut k = (lo / step).ceil();
    while k * step <= hi + step * 1e-9 && t.len() < 60 {
        let x = k * step;
        t.push(if x.abs() < step * 1e-9 { 0.0 } else { x });
        k += 1.0;
    }
    t
}

/// One axis: its scale in drawing space (log10 for log axes) and how its ticks read.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct AxisMap {
    pub(super) scale: Scale,
    pub(super) unit: Unit,
    pub(super) lo: f64,
    pub(super) hi: f64,
}

impl AxisMap {
    pub(super) fn new(axis: &Axis, values: impl Iterator<Item = f64>) -> AxisMap {
        let vals: Vec<f64> = values
            .filter(|v| v.is_finite() && (axis.scale == Scale::Linear || *v > 0.0))
            .collect();
        let (min, max) = vals
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        let (lo, hi) = if vals.is_empty() {
            match axis.scale {
                Scale::Log => (0.0, 1.0),
                Scale::Linear => (0.0, 1.0),
            }
        } else if axis.scale == Scale::Log {
            let (a, b) = (min.log10(), max.log10());
            let pad = ((b - a) * 0.06).max(0.08);
            let (mut lo, mut hi) = (a - pad, b + pad);
            if hi - lo < 0.6 {
                let mid = (a + b) / 2.0;
                lo = mid - 0.3;
                hi = mid + 0.3;
            }
            (lo, hi)
        } else if axis.unit == Unit::Tail {
            (0.0, max.ceil().clamp(1.0, 7.0))
        } else if axis.from_zero {
            let lo = min.min(0.0);
            let hi = if max > 0.0 { max * 1.08 } else { 1.0 };
            (lo, hi)
        } else if max > min {
            let pad = (max - min) * 0.04;
            (min - pad, max + pad)
        } else {
            let d = if min == 0.0 { 1.0 } else { min.abs() * 0.1 };
            (min - d, max + d)
        };
        AxisMap {
            scale: axis.scale,
            unit: axis.unit,
            lo,
            hi,
        }
    }

    /// A value in drawing space, or None when it cannot be drawn (≤ 0 on a log axis).
    pub(super) fn t(&self, v: f64) -> Option<f64> {
        match self.scale {
            _ if !v.is_finite() => None,
            Scale::Log if v <= 0.0 => None,
            Scale::Log => Some(v.log10()),
            Scale::Linear => Some(v),
        }
    }

    pub(super) fn ticks(&self) -> Vec<f64> {
        let (lo, hi) = (self.lo, self.hi);
        if self.unit == Unit::Tail {
            let mut t: Vec<f64> = (0..=(hi.floor() as i64)).map(|k| k as f64).collect();
            t.insert(1.min(t.len()), 2f64.log10());
            return t;
        }
        match self.scale {
            Scale::Log if hi - lo < 1.0 => {
                // Less than a decade: round values, evenly spaced in value.
                linear_ticks(10f64.powf(lo), 10f64.powf(hi), 5.0)
                    .into_iter()
                    .filter(|v| *v > 0.0)
                    .map(f64::log10)
                    .collect()
            }
            Scale::Log => {
                let (d0, d1) = (lo.floor() as i64, hi.ceil() as i64);
                let decades = (d1 - d0).max(1);
                let mults: &[f64] = if decades > 6 {
                    &[1.0]
                } else if decades > 2 {
                    &[1.0, 3.0]
                } else {
                    &[1.0, 2.0, 5.0]
                };
                let mut t: Vec<f64> = (d0..=d1)
                    .flat_map(|d| {
                        mults
                            .iter()
                            .map(move |m| (m * 10f64.powi(d as i32)).log10())
                    })
                    .filter(|x| *x >= lo - 1e-9 && *x <= hi + 1e-9)
                    .collect();
                if t.len() < 3 {
                    t = (d0..=d1)
                        .flat_map(|d| {
                            (1..10).map(move |m| (m as f64 * 10f64.powi(d as i32)).log10())
                        })
                        .filter(|x| *x >= lo - 1e-9 && *x <= hi + 1e-9)
                        .collect();
                }
                t
            }
            Scale::Linear if self.unit == Unit::Bytes => {
                // Steps of whole binary units (MiB, GiB).
                let m = lo.abs().max(hi.abs()).max(1.0);
                let unit = 1024f64.powi((m.log2() / 10.0).floor().max(0.0) as i32);
                linear_ticks(lo / unit, hi / unit, 6.0)
                    .into_iter()
                    .map(|t| t * unit)
                    .collect()
            }
            Scale::Linear if self.unit == Unit::Whole => {
                // Whole numbers only: no rank 1.5.
                let t: Vec<f64> = linear_ticks(lo, hi, 6.0)
                    .into_iter()
                    .filter(|v| v.fract() == 0.0)
                    .collect();
                if t.len() >= 2 {
                    t
                } else {
                    (lo.ceil() as i64..=hi.floor() as i64)
                        .map(|v| v as f64)
                        .collect()
                }
            }
            Scale::Linear => linear_ticks(lo, hi, 6.0),
        }
    }

    /// The tick label of a drawing-space value, with its unit.
    pub(super) fn label(&self, t: f64) -> String {
        let v = match self.scale {
            Scale::Log => 10f64.powf(t),
            Scale::Linear => t,
        };
        match self.unit {
            Unit::Ns => format_ns(v, Style::Chart),
            Unit::Number | Unit::Whole => sig(v),
            Unit::Count => format_count(v),
            Unit::Pct => format_pct(v),
            Unit::Bytes => format_bytes(v, Style::Chart),
            Unit::Seconds => format_seconds(v),
            Unit::Tail => {
                let pct = 100.0 * (1.0 - 10f64.powf(-t));
                let decimals = (t.round() as i64 - 2).max(0) as usize;
                format!("{pct:.decimals$}%")
            }
        }
    }
}

/// Category x axis: positions 0 … n−1; labels turned when they would not fit side by side.
pub(super) fn category_axis<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    names: &[String],
) -> (f64, f64, Vec<f64>, bool) {
    let n = names.len().max(1);
    let (w, _) = area.dim_in_pixel();
    let room = (w.saturating_sub(110)) as f64 / n as f64;
    let widest = names
        .iter()
        .map(|s| text_width(area, s, TICK))
        .max()
        .unwrap_or(0) as f64;
    (
        -0.5,
        n as f64 - 0.5,
        (0..n).map(|i| i as f64).collect(),
        widest > room * 0.9,
    )
}

pub(super) fn category_name(names: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() > 1e-6 || i < 0.0 {
        return String::new();
    }
    names.get(i as usize).cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt_ns(ns: f64) -> String {
        format_ns(ns, Style::Chart)
    }

    fn fmt_bytes(b: f64) -> String {
        format_bytes(b, Style::Chart)
    }

    #[test]
    fn tick_labels_carry_units() {
        assert_eq!(fmt_ns(250_000.0), "250µs");
        assert_eq!(fmt_ns(1_500_000.0), "1.5ms");
        assert_eq!(fmt_ns(12.0), "12ns");
        assert_eq!(fmt_bytes(64.0 * 1_048_576.0), "64 MiB");
        assert_eq!(sig(-0.0001), "0");
        assert_eq!(sig(0.0), "0");
        let a = AxisMap::new(&Axis::log("x", Unit::Ns), [1e3, 1e6].into_iter());
        let t = a.ticks();
        assert!(
            t.len() >= 4 && t.iter().all(|x| *x >= a.lo && *x <= a.hi),
            "{t:?}"
        );
        assert_eq!(a.label(3.0), "1µs");
        let tail = AxisMap::new(&Axis::linear("y", Unit::Tail), [0.5, 3.2].into_iter());
        assert_eq!(tail.hi, 4.0);
        let labels: Vec<String> = tail.ticks().iter().map(|t| tail.label(*t)).collect();
        assert_eq!(labels, ["0%", "50%", "90%", "99%", "99.9%", "99.99%"]);
    }

    #[test]
    fn empty_and_odd_values_make_sane_axes() {
        for axis in [Axis::log("x", Unit::Ns), Axis::linear("x", Unit::Number)] {
            for vals in [vec![], vec![0.0], vec![f64::NAN, -1.0], vec![5.0, 5.0]] {
                let a = AxisMap::new(&axis, vals.into_iter());
                assert!(a.hi > a.lo && a.lo.is_finite() && a.hi.is_finite(), "{a:?}");
                assert!(!a.ticks().is_empty() || a.scale == Scale::Log);
            }
        }
        assert_eq!(
            AxisMap::new(&Axis::log("x", Unit::Ns), [].into_iter()).t(0.0),
            None
        );
    }
}
