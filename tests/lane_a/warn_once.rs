//! End-to-end: a warning every point says is said once. A study of a file in /dev/shm (tmpfs)
//! prints "you are measuring RAM" once on stderr and counts the points at the end; `report` over
//! it says it once, as a banner with "N points", at the top of the page; `info` and `tune` on
//! such a file say it first.

use crate::common;
use common::*;
use std::path::Path;

/// Lines of `text` that say the target is memory.
fn ram_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.contains("measuring RAM"))
        .collect()
}

/// A readlab-prepared file in /dev/shm, removed with its directory.
fn shm_file(size: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::Builder::new()
        .prefix("readlab-warn-")
        .tempdir_in("/dev/shm")
        .expect("a directory in /dev/shm");
    let f = prepare(d.path(), "f", size);
    (d, f)
}

fn points(out: &Path) -> usize {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .count()
}

#[test]
fn a_study_in_ram_says_so_once_and_its_report_once_at_the_top() {
    let (d, f) = shm_file("32M");
    let out = d.path().join("lat");
    let o = run(&[
        "study",
        "latency",
        "--quick",
        "--runtime",
        "300ms",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    let err = unwrapped(&stderr(&o));
    assert!(o.status.success(), "{err}");
    let n = points(&out);
    assert!(n >= 4, "{n} points");
    // Said once, not once per point, and counted at the end.
    assert_eq!(ram_lines(&err).len(), 1, "{err}");
    assert!(
        err.contains(&format!("target in RAM at {n} points")),
        "{err}"
    );

    // The report: once on stderr, as a banner with the count, and not again among the notes.
    let o = run(&["report", out.to_str().unwrap(), "--format", "md", "-o", "-"]);
    let err = unwrapped(&stderr(&o));
    assert!(o.status.success(), "{err}");
    let said = ram_lines(&err);
    assert_eq!(said.len(), 1, "{err}");
    assert!(said[0].ends_with(&format!("({n} points)")), "{err}");
    let md = stdout(&o);
    assert_eq!(ram_lines(&md).len(), 1, "{md}");
    // At the top: before the verdict and every table.
    let banner = md.find("measuring RAM").unwrap();
    let first_section = md.find("\n## ").unwrap_or(md.len());
    assert!(banner < first_section, "{md}");

    let o = run(&[
        "report",
        out.to_str().unwrap(),
        "--format",
        "json",
        "-o",
        "-",
    ]);
    let v = json(&o);
    let banners = v["banners"]
        .as_array()
        .expect("banners in the report's JSON");
    let ram: Vec<_> = banners
        .iter()
        .filter(|b| b["text"].as_str().unwrap().contains("measuring RAM"))
        .collect();
    assert_eq!(ram.len(), 1, "{banners:?}");
    assert_eq!(ram[0]["points"].as_u64(), Some(n as u64));
    assert!(
        !v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("measuring RAM")),
        "{}",
        v["notes"]
    );
}

#[test]
fn info_and_tune_of_a_file_in_ram_say_so_first() {
    let (d, f) = shm_file("16M");
    let o = run(&["info", f.to_str().unwrap()]);
    let text = unwrapped(&stdout(&o));
    assert!(o.status.success(), "{}", stderr(&o));
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("warning:") && first.contains("tmpfs") && first.contains("measuring RAM"),
        "{text}"
    );
    assert_eq!(ram_lines(&text).len(), 1, "{text}");
    let o = run(&["info", f.to_str().unwrap(), "--output", "json"]);
    assert!(
        json(&o)["memory"]
            .as_str()
            .is_some_and(|m| m.contains("measuring RAM")),
        "{}",
        stdout(&o)
    );

    let out = d.path().join("tune");
    let o = run(&[
        "tune",
        "--budget",
        "10s",
        "--engines",
        "psync",
        "--repeat",
        "1",
        "--out",
        out.to_str().unwrap(),
        f.to_str().unwrap(),
    ]);
    let text = unwrapped(&stdout(&o));
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let first = text.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("warning:")
            && first.contains("measuring RAM")
            && first.contains(" runs)"),
        "{text}"
    );
    assert_eq!(ram_lines(&text).len(), 1, "{text}");
    // Said once on stderr too, at the first run, however many runs said it.
    assert_eq!(ram_lines(&err).len(), 1, "{err}");
    // And kept with the selected parameters.
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("tune.json")).unwrap()).unwrap();
    assert!(
        saved["warnings"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("measuring RAM")),
        "{saved}"
    );
}
