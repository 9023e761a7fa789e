//! End-to-end (issue 23 item 7): garbage given to `report` and `compare` — documents of a schema
//! this readlab does not know, JSON arrays, JSON nested past any sane depth, inputs that hold no
//! point, inputs too large to read, text and binary garbage — each refused with exit 2 and one
//! line naming the file and what it is not, and no report written. A results file whose last
//! line lacks its newline is read whole; a baseline with nothing in common is said; many points'
//! notes do not fill the screen.

use crate::common;
use common::*;
use std::path::PathBuf;

const FIXTURE: &str = "tests/fixtures/results-small.jsonl";

fn fixture_lines() -> Vec<String> {
    std::fs::read_to_string(FIXTURE)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// One run of the fixture with its schema replaced.
fn with_schema(schema: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(&fixture_lines()[0]).unwrap();
    v["schema"] = schema.into();
    v.to_string()
}

#[test]
fn garbage_is_refused_naming_the_file() {
    let d = disk_dir();
    let p = |n: &str| d.path().join(n);
    let write = |n: &str, text: &str| {
        std::fs::write(p(n), text).unwrap();
        p(n)
    };
    let deep_array = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_object = format!("{}1{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    let empty_study = p("empty-study");
    std::fs::create_dir(&empty_study).unwrap();
    std::fs::write(empty_study.join("results.jsonl"), "").unwrap();
    let huge = p("huge.bin");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            write("future-run.json", &with_schema("readlab.run/9")),
            "readlab.run/9",
        ),
        (
            write(
                "future-report.json",
                "{\"schema\": \"readlab.report/7\", \"points\": []}",
            ),
            "readlab.report/7",
        ),
        (
            write("study-doc.json", &with_schema("readlab.zzz/1")),
            "readlab.zzz/1",
        ),
        (
            write("foreign.json", "{\"schema\": \"other/1\"}"),
            "not a readlab document",
        ),
        (
            write("noschema.json", "{\"a\": 1}"),
            "not a readlab document",
        ),
        (write("empty-array.json", "[]"), "empty JSON array"),
        (write("numbers.json", "[1, 2, 3]"), "element 1"),
        (
            write(
                "future-array.json",
                &format!("[{}]", with_schema("readlab.run/2")),
            ),
            "readlab.run/2",
        ),
        (write("deep-array.json", &deep_array), "nested too deep"),
        (write("deep-object.json", &deep_object), "nested too deep"),
        (
            write(
                "future.jsonl",
                &format!("{}\n{}\n", fixture_lines()[0], with_schema("readlab.run/3")),
            ),
            "readlab.run/3",
        ),
        (empty_study.clone(), "no runs"),
        (huge.clone(), "more than"),
        (write("text.txt", &"garbage ".repeat(100_000)), "not JSON"),
        (write("binary.bin", "\u{0}\u{1}\u{2}"), "not JSON"),
    ];
    let out = p("r.html");
    let good = FIXTURE;
    for (input, says) in &cases {
        let name = input.file_name().unwrap().to_str().unwrap();
        for args in [
            vec!["report", s(input), "-o", s(&out)],
            vec!["compare", good, s(input), "-o", s(&out)],
        ] {
            let o = run(&args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert!(!err.contains("panicked"), "{err}");
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
            assert!(err.contains(name), "{args:?} names the file: {err}");
            assert!(err.contains(says), "{args:?} says {says:?}: {err}");
            assert!(!out.exists(), "{args:?} wrote a report");
        }
    }
}

/// A results file whose last line has no newline (or whose runs follow one another on one line)
/// is read whole, not as "holds no runs".
#[test]
fn a_last_line_without_its_newline_is_read() {
    let d = disk_dir();
    let lines = fixture_lines();
    let n = lines.len();
    for (name, text) in [
        ("no-final-newline.jsonl", lines.join("\n")),
        ("one-line.jsonl", lines.join("")),
        ("single.jsonl", lines[0].clone()),
    ] {
        let dir = d.path().join(name.trim_end_matches(".jsonl"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("results.jsonl"), &text).unwrap();
        let expect = if name == "single.jsonl" { 1 } else { n };
        for input in [dir.clone(), dir.join("results.jsonl")] {
            let o = run(&["report", s(&input), "--format", "json", "-o", "-"]);
            assert!(o.status.success(), "{name}: {}", stderr(&o));
            let points = json(&o)["points"].as_array().unwrap().len();
            assert!(
                points >= expect,
                "{name}: {points} points of {expect} runs: {}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn a_baseline_with_nothing_in_common_is_said() {
    let d = disk_dir();
    let lines = fixture_lines();
    // The same runs as another engine's: no configuration in common.
    let other: Vec<String> = lines
        .iter()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["config"]["bs"] = (1u64 << 30).into();
            v.to_string()
        })
        .collect();
    let base = d.path().join("base.jsonl");
    std::fs::write(&base, other.join("\n") + "\n").unwrap();
    let out = d.path().join("r.html");
    let o = run(&["report", FIXTURE, "--baseline", s(&base), "-o", s(&out)]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("nothing to compare with the baseline"),
        "{err}"
    );
    assert!(!out.exists());
    // With something in common it works.
    let o = run(&["report", FIXTURE, "--baseline", FIXTURE, "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Many points each with a note of its own: stderr stays a few lines.
#[test]
fn many_notes_do_not_fill_the_screen() {
    let d = disk_dir();
    let lines = fixture_lines();
    // Every run but one measured nothing: a note each ("no request measured; left out").
    let mut text = lines[0].clone() + "\n";
    for i in 0..300 {
        let mut v: serde_json::Value = serde_json::from_str(&lines[i % lines.len()]).unwrap();
        v["result"]["requests"] = 0.into();
        v["result"]["label"] = format!("X{i}").into();
        text.push_str(&(v.to_string() + "\n"));
    }
    let input = d.path().join("results.jsonl");
    std::fs::write(&input, text).unwrap();
    let out = d.path().join("r.html");
    for args in [
        vec!["report", s(&input), "-o", s(&out)],
        vec!["compare", s(&input), FIXTURE],
    ] {
        let o = run(&args);
        let err = stderr(&o);
        assert!(o.status.success(), "{args:?}: {err}");
        let n = err.lines().count();
        assert!(n <= 25, "{args:?}: {n} lines of stderr:\n{err}");
        assert!(err.contains("more notes"), "{args:?}: {err}");
    }
}
