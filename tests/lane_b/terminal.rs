//! End-to-end: with `COLUMNS=100` every line readlab prints for people (stdout and stderr) fits in
//! 100 columns: run (one configuration and several), info, compare, tune and a quick study; and
//! colour appears only when asked (`--color always`), never in a pipe or under `NO_COLOR`.

use crate::common;
use common::*;
use std::process::Output;

/// Run readlab with `COLUMNS=100` (and `NO_COLOR` unset unless given in `env`).
fn run100(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = bin();
    c.args(args).env("COLUMNS", "100").env_remove("NO_COLOR");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("start readlab")
}

/// `s` without ANSI colour sequences.
fn plain(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\x1b' && it.peek() == Some(&'[') {
            for d in it.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Every line of the command's stdout and stderr is at most 100 characters (colour aside).
fn assert_fits(what: &str, o: &Output) {
    assert!(
        o.status.success(),
        "{what} failed: {}\n{}",
        stderr(o),
        stdout(o)
    );
    for (stream, text) in [("stdout", stdout(o)), ("stderr", stderr(o))] {
        for l in plain(&text).lines() {
            assert!(
                l.chars().count() <= 100,
                "{what}: a {}-column line on {stream}:\n{l}\n--- all of it:\n{text}",
                l.chars().count()
            );
        }
    }
}

fn has_ansi(o: &Output) -> bool {
    stdout(o).contains('\x1b') || stderr(o).contains('\x1b')
}

#[test]
fn run_info_and_compare_fit_100_columns() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "32M");
    let f = f.to_str().unwrap();
    let a = d.path().join("a.json");
    let b = d.path().join("b.json");

    let one = run100(&["run", f, "--runtime", "300ms", "-q"], &[]);
    assert_fits("run", &one);
    assert!(stdout(&one).contains("latency"), "{}", stdout(&one));

    let several = run100(
        &[
            "run",
            f,
            "--engine",
            "psync,uring",
            "--iodepth",
            "1,8",
            "--runtime",
            "300ms",
            "-q",
            "--json",
            a.to_str().unwrap(),
        ],
        &[],
    );
    assert_fits("run of several configurations", &several);
    let out = stdout(&several);
    assert!(out.contains("U8B1") && out.contains("Verdict"), "{out}");

    let info = run100(&["info", f], &[]);
    assert_fits("info", &info);
    let out = stdout(&info);
    // The reasons are said in full under the table, not cut.
    assert!(
        out.contains("interface") && out.contains("DEFER_TASKRUN (direct): SQPOLL cannot"),
        "{out}"
    );

    let other = run100(
        &[
            "run",
            f,
            "--runtime",
            "300ms",
            "-q",
            "--json",
            b.to_str().unwrap(),
        ],
        &[],
    );
    assert!(other.status.success(), "{}", stderr(&other));
    let cmp = run100(&["compare", a.to_str().unwrap(), b.to_str().unwrap()], &[]);
    assert_fits("compare", &cmp);
    assert!(stdout(&cmp).contains("configuration"), "{}", stdout(&cmp));
}

#[test]
fn tune_fits_100_columns_and_colours_its_answer_when_asked() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "32M");
    let out = d.path().join("tune");
    let o = run100(
        &[
            "tune",
            f.to_str().unwrap(),
            "--budget",
            "10s",
            "--repeat",
            "1",
            "--engines",
            "psync,uring",
            "--out",
            out.to_str().unwrap(),
            "--color",
            "always",
        ],
        &[],
    );
    assert_fits("tune", &o);
    let text = stdout(&o);
    assert!(text.contains("\x1b[1;32mRecommended:"), "{text}");
    // The fio command is broken into shell lines, not cut.
    assert!(plain(&text).contains("fio --name=readlab"), "{text}");
    assert!(
        !text.contains("|---"),
        "a Markdown table on the terminal:\n{text}"
    );
}

#[test]
fn a_quick_study_prints_its_verdict_and_where_the_summary_is() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "32M");
    let out = d.path().join("study");
    let o = run100(
        &[
            "study",
            "queue",
            f.to_str().unwrap(),
            "--quick",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_fits("study queue --quick", &o);
    let text = stdout(&o);
    assert!(text.contains("Verdict for"), "{text}");
    assert!(
        text.contains(&format!("{}", out.join("summary.md").display())),
        "{text}"
    );
    // The pivots stay in summary.md.
    assert!(!text.contains("|---"), "{text}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("|---"), "{summary}");
}

#[test]
fn colour_only_when_asked_never_in_a_pipe_or_under_no_color() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let f = f.to_str().unwrap();
    // A 100 ms run always warns (too few samples for the tail): the warning is coloured.
    let args = ["run", f, "--runtime", "100ms", "-q"];
    let with = |extra: &[&str], env: &[(&str, &str)]| {
        let all: Vec<&str> = args.iter().chain(extra).copied().collect();
        let o = run100(&all, env);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
        o
    };
    let always = with(&["--color", "always"], &[]);
    assert!(
        stderr(&always).contains("\x1b[1;33mreadlab: warning:"),
        "{}",
        stderr(&always)
    );
    assert!(
        has_ansi(&with(&["--color", "always"], &[("NO_COLOR", "1")])),
        "--color always wins over NO_COLOR"
    );
    assert!(!has_ansi(&with(&[], &[])), "a pipe gets no colour");
    assert!(!has_ansi(&with(&[], &[("NO_COLOR", "1")])));
    assert!(!has_ansi(&with(&["--color", "never"], &[])));
    // The flag is global: after the command too, and before it.
    let before = run100(&["--color", "always", "info", f], &[]);
    assert!(before.status.success(), "{}", stderr(&before));
}
