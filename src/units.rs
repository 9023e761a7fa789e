//! How readlab writes quantities for people, in one place: latencies, byte amounts and block
//! sizes, counts, percentages and seconds. Tables and the terminal print fixed decimals and plain
//! ASCII (`12.3us`, `4K`); chart ticks print at most three significant digits (`250µs`, `64 MiB`).
//! Which of the two is an explicit [`Style`], so one function serves both.

/// Who reads the number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Tables, Markdown, the terminal: fixed decimals per unit (`950ns`, `12.3us`, `1.22ms`,
    /// `2.00s`), ASCII `us`; block sizes as fio names them (`4K`, `1M`, `1.5K`).
    Table,
    /// Chart tick labels: at most three significant digits, no trailing zeros (`250µs`,
    /// `1.5ms`); amounts in binary units with a space (`64 MiB`).
    Chart,
}

/// Three significant digits at most, no trailing zeros, never `-0`.
pub fn sig(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" { "0".into() } else { s }
}

/// A latency or duration given in nanoseconds, with the largest unit (ns, µs, ms, s) it reaches.
pub fn format_ns(ns: f64, style: Style) -> String {
    const UNITS: [(f64, &str, usize); 4] = [
        (1.0, "ns", 0),
        (1e3, "us", 1),
        (1e6, "ms", 2),
        (1e9, "s", 2),
    ];
    let a = match style {
        Style::Table => ns,
        Style::Chart => ns.abs(),
    };
    let k = if a < 1e3 {
        0
    } else if a < 1e6 {
        1
    } else if a < 1e9 {
        2
    } else {
        3
    };
    let (scale, unit, decimals) = UNITS[k];
    let v = ns / scale;
    match style {
        Style::Table => format!("{v:.decimals$}{unit}"),
        Style::Chart => {
            let unit = if unit == "us" { "µs" } else { unit };
            format!("{}{unit}", sig(v))
        }
    }
}

/// A number of bytes. [`Style::Table`] names block sizes as fio does: the largest binary unit
/// that divides them exactly (`4K`, `256K`, `1M`), one decimal of K otherwise, plain bytes below
/// 1 KiB (the value is rounded to whole bytes). [`Style::Chart`] gives the amount in the largest
/// binary unit it reaches (`64 MiB`, `1.5 KiB`, `512 B`).
pub fn format_bytes(bytes: f64, style: Style) -> String {
    match style {
        Style::Table => {
            const UNITS: [&str; 5] = ["", "K", "M", "G", "T"];
            let bytes = bytes.max(0.0).round() as u64;
            let mut v = bytes;
            let mut i = 0;
            while v >= 1024 && v.is_multiple_of(1024) && i < UNITS.len() - 1 {
                v /= 1024;
                i += 1;
            }
            if i == 0 && bytes >= 1024 {
                return format!("{:.1}K", bytes as f64 / 1024.0);
            }
            format!("{v}{}", UNITS[i])
        }
        Style::Chart => {
            const UNITS: [(&str, f64); 4] = [
                ("TiB", 1_099_511_627_776.0),
                ("GiB", 1_073_741_824.0),
                ("MiB", 1_048_576.0),
                ("KiB", 1024.0),
            ];
            for (u, s) in UNITS {
                if bytes.abs() >= s {
                    return format!("{} {u}", sig(bytes / s));
                }
            }
            format!("{} B", sig(bytes))
        }
    }
}

/// A count on a chart axis: `950`, `12k`, `1.5M`.
pub fn format_count(v: f64) -> String {
    if v.abs() >= 1e6 {
        format!("{}M", sig(v / 1e6))
    } else if v.abs() >= 1e4 {
        format!("{}k", sig(v / 1e3))
    } else {
        sig(v)
    }
}

/// A percentage on a chart: `45%`, `2.5%`.
pub fn format_pct(v: f64) -> String {
    format!("{}%", sig(v))
}

/// Seconds on a chart: `30s`, `0.5s`.
pub fn format_seconds(v: f64) -> String {
    format!("{}s", sig(v))
}

/// A count with its thousands apart (`6,912`, `1,234,567`).
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_style() {
        assert_eq!(format_ns(950.0, Style::Table), "950ns");
        assert_eq!(format_ns(1500.0, Style::Table), "1.5us");
        assert_eq!(format_ns(100_000.0, Style::Table), "100.0us");
        assert_eq!(format_ns(1_220_000.0, Style::Table), "1.22ms");
        assert_eq!(format_ns(2e9, Style::Table), "2.00s");
        assert_eq!(format_bytes(4096.0, Style::Table), "4K");
        assert_eq!(format_bytes((1 << 20) as f64, Style::Table), "1M");
        assert_eq!(format_bytes(512.0, Style::Table), "512");
        assert_eq!(format_bytes(1536.0, Style::Table), "1.5K");
    }

    #[test]
    fn chart_style() {
        assert_eq!(format_ns(250_000.0, Style::Chart), "250µs");
        assert_eq!(format_ns(1_500_000.0, Style::Chart), "1.5ms");
        assert_eq!(format_ns(12.0, Style::Chart), "12ns");
        assert_eq!(format_ns(1e3, Style::Chart), "1µs");
        assert_eq!(format_bytes(64.0 * 1_048_576.0, Style::Chart), "64 MiB");
        assert_eq!(format_bytes(100.0, Style::Chart), "100 B");
        assert_eq!(format_count(12_000.0), "12k");
        assert_eq!(format_count(1_500_000.0), "1.5M");
        assert_eq!(format_count(950.0), "950");
        assert_eq!(format_pct(2.5), "2.5%");
        assert_eq!(format_seconds(30.0), "30s");
        assert_eq!(sig(-0.0001), "0");
        assert_eq!(sig(0.0), "0");
        assert_eq!(sig(1234.4), "1234");
    }
}
