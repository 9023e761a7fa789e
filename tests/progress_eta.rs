//! End-to-end: a study says how long it has left, and that time is right. Run on a terminal (a
//! pseudo-terminal made by `script`), `study queue --quick` shows its points done / total, the
//! point in flight and an ETA on its bar; the ETA shown once a few points are done must end
//! within 20 % of when the study really ends. Without a terminal the same estimate is in one
//! plain line per point. (The estimator itself is tested with a scripted clock in `src/eta.rs`.)

mod common;
use common::*;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Text without its ANSI escape sequences.
fn plain(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut it = raw.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\u{1b}' {
            if it.peek() == Some(&'[') {
                it.next();
                for d in it.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// "45s", "1m20s", "2h05m" in seconds.
fn seconds(s: &str) -> Option<f64> {
    let (mut total, mut n) = (0.0, String::new());
    for c in s.chars() {
        match c {
            '0'..='9' => n.push(c),
            'h' | 'm' | 's' => {
                let v: f64 = n.parse().ok()?;
                total += v * match c {
                    'h' => 3600.0,
                    'm' => 60.0,
                    _ => 1.0,
                };
                n.clear();
            }
            _ => return None,
        }
    }
    n.is_empty().then_some(total)
}

/// The first "P/TOTAL points … eta X" (or "point P/TOTAL … eta X") in `text` with P at least
/// `from`: (P, X in seconds).
fn first_eta(text: &str, marker: &str, total: usize, from: usize) -> Option<(usize, f64)> {
    let needle = format!("/{total}{marker}");
    let mut at = 0;
    while let Some(i) = text[at..].find(&needle) {
        let i = at + i;
        at = i + needle.len();
        let digits: String = text[..i]
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let Ok(p) = digits.parse::<usize>() else {
            continue;
        };
        let rest = &text[at..text.len().min(at + 80)];
        let line = rest.split(['\n', '\r']).next().unwrap_or_default();
        let Some(e) = line.find("eta ") else { continue };
        let word: String = line[e + 4..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if p >= from
            && let Some(secs) = seconds(&word)
        {
            return Some((p, secs));
        }
    }
    None
}

/// When a watched command ended, the first ETA it said (when, at which point, in seconds), all it
/// wrote (without escapes) and its exit code.
struct Watched {
    ended: Instant,
    seen: Option<(Instant, usize, f64)>,
    text: String,
    code: Option<i32>,
}

/// Run `cmd` (a shell command), reading `stream` of it as it comes; returns when and what the
/// first ETA with point ≥ `from` said, and when the command ended.
fn watch(
    mut cmd: Command,
    marker: &'static str,
    total: usize,
    from: usize,
    limit: Duration,
) -> Watched {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start");
    let raw = Arc::new(Mutex::new(String::new()));
    let seen: Arc<Mutex<Option<(Instant, usize, f64)>>> = Arc::new(Mutex::new(None));
    let mut readers = Vec::new();
    for mut pipe in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let (raw, seen) = (raw.clone(), seen.clone());
        readers.push(std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let now = Instant::now();
                let mut r = raw.lock().unwrap();
                r.push_str(&String::from_utf8_lossy(&buf[..n]));
                let mut s = seen.lock().unwrap();
                if s.is_none()
                    && let Some((p, e)) = first_eta(&plain(&r), marker, total, from)
                {
                    *s = Some((now, p, e));
                }
            }
        }));
    }
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}: {}", raw.lock().unwrap());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let ended = Instant::now();
    for r in readers {
        r.join().unwrap();
    }
    let text = plain(&raw.lock().unwrap());
    let seen = *seen.lock().unwrap();
    Watched {
        ended,
        seen,
        text,
        code: status.code(),
    }
}

/// The ETA said at `said` (seconds) against the real time left from then to `ended`.
fn assert_within_a_fifth(said_at: Instant, eta: f64, ended: Instant, what: &str) {
    let real = ended.duration_since(said_at).as_secs_f64();
    eprintln!("{what}: said eta {eta:.0} s, really {real:.1} s");
    assert!(
        (eta - real).abs() <= 0.2 * real,
        "{what}: the ETA said {eta} s, the study ended {real:.1} s later"
    );
}

const STUDY: [&str; 5] = ["study", "queue", "--quick", "--runtime", "500ms"];

#[test]
fn a_study_on_a_terminal_shows_an_eta_that_ends_within_a_fifth_of_the_real_time() {
    let dir = disk_dir();
    let f = prepare(dir.path(), "t.dat", "64M");
    let out = dir.path().join("study");
    let readlab = env!("CARGO_BIN_EXE_readlab");
    let line = format!(
        "stty cols 200 rows 50; exec {readlab} {} --out {} {}",
        STUDY.join(" "),
        out.display(),
        f.display()
    );
    let mut script = Command::new("script");
    script.args(["-qfec", &line, "/dev/null"]);
    let Watched {
        ended,
        seen,
        text,
        code,
    } = watch(script, " points", 16, 5, Duration::from_secs(300));
    assert_eq!(code, Some(0), "{text}");
    let (at, p, eta) = seen.unwrap_or_else(|| panic!("no ETA on the bar: {text}"));
    assert!(text.contains("U"), "the point in flight is named: {text}");
    assert_within_a_fifth(at, eta, ended, &format!("terminal, point {p}/16"));
}

#[test]
fn without_a_terminal_each_point_is_a_plain_line_with_the_same_eta() {
    let dir = disk_dir();
    let f = prepare(dir.path(), "t.dat", "64M");
    let out = dir.path().join("study");
    let mut cmd = bin();
    cmd.args(STUDY)
        .args(["--out", out.to_str().unwrap(), f.to_str().unwrap()]);
    let Watched {
        ended,
        seen,
        text,
        code,
    } = watch(cmd, " ", 16, 5, Duration::from_secs(300));
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("readlab: point 1/16 A1B1 4K, eta "), "{text}");
    let (at, p, eta) = seen.unwrap_or_else(|| panic!("no ETA in the lines: {text}"));
    assert_within_a_fifth(at, eta, ended, &format!("plain lines, point {p}/16"));
}
