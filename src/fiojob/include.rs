//! fio's `include FILE` (or `include=FILE`): the options of another file read in place of the
//! line, inside a section, as fio does. The job file's lines are gathered here, comments and
//! blanks dropped, each with the line of the job file it stands for (an included option: its
//! `include` line).

use super::words::Problem;
use std::path::{Path, PathBuf};

/// The largest job file (and included file) read.
pub const MAX_JOB_FILE: u64 = 1 << 20;
/// How deep includes may nest (a file including itself stops here).
const MAX_DEPTH: usize = 8;
/// The most lines a job file and its includes may give in all.
const MAX_LINES: usize = 100_000;

/// The file an `include` line names, if it is one: fio's `include` followed by one blank or `=`.
fn included(l: &str) -> Option<&str> {
    let rest = l.strip_prefix("include")?;
    let mut c = rest.chars();
    match c.next() {
        Some(ch) if ch == '=' || ch.is_whitespace() => Some(c.as_str().trim()),
        _ => None,
    }
}

/// The lines of `text` that say something (trimmed), each with its line number; the includes
/// inside sections replaced by the lines of the files they name. Each problem (an include that
/// cannot be read, a section in an included file) is added to `problems`.
pub(super) fn expand(
    text: &str,
    dir: Option<&Path>,
    problems: &mut Vec<Problem>,
) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_section = false;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        in_section |= l.starts_with('[');
        match included(l) {
            Some(file) if in_section => {
                if let Err(text) = include(file, dir, i + 1, 1, &mut out) {
                    problems.push(Problem {
                        section: None,
                        line: i + 1,
                        text,
                    });
                }
            }
            _ => out.push((i + 1, l.to_string())),
        }
        if out.len() > MAX_LINES {
            problems.push(Problem {
                section: None,
                line: i + 1,
                text: format!(
                    "more than {MAX_LINES} lines with its includes; readlab reads at most {MAX_LINES}"
                ),
            });
            out.clear();
            break;
        }
    }
    out
}

/// Where fio looks for an included file: as given, else beside the job file.
fn resolve(file: &str, dir: Option<&Path>) -> PathBuf {
    let given = PathBuf::from(file);
    match dir {
        Some(d) if given.is_relative() && !given.exists() => d.join(given),
        _ => given,
    }
}

/// Add the options of the included `file` (and of its own includes) to `out`, each standing for
/// line `line` of the job file.
fn include(
    file: &str,
    dir: Option<&Path>,
    line: usize,
    depth: usize,
    out: &mut Vec<(usize, String)>,
) -> Result<(), String> {
    if file.is_empty() {
        return Err("include names no file; write include FILE".into());
    }
    if depth > MAX_DEPTH {
        return Err(format!(
            "includes nested deeper than {MAX_DEPTH} (a file that includes itself?) at '{file}'"
        ));
    }
    let path = resolve(file, dir);
    let text = crate::input::read_text(&path, MAX_JOB_FILE, "included job file")
        .map_err(|e| format!("include: {e}"))?;
    for l in text.lines().map(str::trim) {
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if l.starts_with('[') {
            return Err(format!(
                "{}: an included file holds options only, not a section ('{l}'); fio refuses it too",
                path.display()
            ));
        }
        match included(l) {
            Some(inner) => include(inner, dir, line, depth + 1, out)?,
            None => out.push((line, l.to_string())),
        }
        if out.len() > MAX_LINES {
            return Ok(());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_lines_are_recognised_in_both_forms() {
        assert_eq!(included("include other.fio"), Some("other.fio"));
        assert_eq!(included("include=other.fio"), Some("other.fio"));
        assert_eq!(included("includes=x"), None);
        assert_eq!(included("iodepth=1"), None);
    }

    #[test]
    fn an_included_file_gives_its_options_at_the_include_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("inc.fio"), "; c\nbs=8k\n").unwrap();
        std::fs::write(dir.path().join("self.fio"), "include self.fio\n").unwrap();
        let mut p = Vec::new();
        let lines = expand("[a]\ninclude inc.fio\nrw=read\n", Some(dir.path()), &mut p);
        assert!(p.is_empty(), "{p:?}");
        let want = [(1, "[a]"), (2, "bs=8k"), (3, "rw=read")];
        assert_eq!(lines, want.map(|(n, s)| (n, s.to_string())));
        expand("[a]\ninclude self.fio\n", Some(dir.path()), &mut p);
        assert!(p[0].text.contains("nested deeper"), "{p:?}");
    }
}
