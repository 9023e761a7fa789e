//! The caption under every chart and table: target, kernel, host, date and tool of the points on
//! it, readlab's and fio's said apart.

use super::point::Point;
use std::collections::BTreeSet;

/// The caption of a chart: target, kernel and date of the points on it.
pub fn caption(points: &[&Point]) -> String {
    let mut parts = Vec::new();
    let readlab: Vec<&&Point> = points.iter().filter(|p| !p.is_fio()).collect();
    let fio: Vec<&&Point> = points.iter().filter(|p| p.is_fio()).collect();
    if !readlab.is_empty() {
        parts.push(describe_env(&readlab, "readlab"));
    }
    if !fio.is_empty() {
        parts.push(describe_env(&fio, "fio"));
    }
    if parts.is_empty() {
        return "No measured points.".into();
    }
    parts.join(" ")
}

fn describe_env(points: &[&&Point], who: &str) -> String {
    let distinct = |f: &dyn Fn(&Point) -> String| -> Vec<String> {
        let set: BTreeSet<String> = points
            .iter()
            .map(|p| f(p))
            .filter(|s| !s.is_empty())
            .collect();
        set.into_iter().collect()
    };
    let targets = distinct(&|p| {
        if p.env.device.is_empty() {
            p.env.target.clone()
        } else {
            format!("{} ({})", p.env.target, p.env.device)
        }
    });
    let kernels = distinct(&|p| p.env.kernel.clone());
    let hosts = distinct(&|p| p.env.hostname.clone());
    let tools = distinct(&|p| p.env.tool.clone());
    let dates = distinct(&|p| short_date(&p.env.date));
    let mut s = format!(
        "{}: target {}",
        if who == "fio" {
            "fio points"
        } else {
            "Measured"
        },
        if targets.is_empty() {
            "unknown".to_string()
        } else {
            targets.join("; ")
        }
    );
    if kernels.is_empty() {
        s.push_str(", kernel not recorded");
    } else {
        s.push_str(&format!(", kernel {}", kernels.join(", ")));
    }
    if !hosts.is_empty() {
        s.push_str(&format!(", host {}", hosts.join(", ")));
    }
    match (dates.first(), dates.last()) {
        (Some(a), Some(b)) if a == b => s.push_str(&format!(", {a}")),
        (Some(a), Some(b)) => s.push_str(&format!(", {a} – {b}")),
        _ => s.push_str(", date not recorded"),
    }
    if !tools.is_empty() {
        s.push_str(&format!(" ({})", tools.join(", ")));
    }
    s.push('.');
    s
}

/// `2026-11-21T20:03:04Z` → `2026-11-21 20:03 UTC`; anything else as it is.
fn short_date(d: &str) -> String {
    match (d.get(0..10), d.get(11..16)) {
        (Some(day), Some(hm)) if d.as_bytes().get(10) == Some(&b'T') && d.ends_with('Z') => {
            format!("{day} {hm} UTC")
        }
        _ => d.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::point;
    use super::*;

    #[test]
    fn captions_name_target_kernel_and_date() {
        let a = point("P", 4096, 1.0, 1.0);
        let c = caption(&[&a]);
        assert!(
            c.contains("/dev/x") && c.contains("kernel 6.1") && c.contains("2026-01-02 03:04 UTC"),
            "{c}"
        );
    }
}
