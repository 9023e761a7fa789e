//! A job file's text read into its sections (`[global]`'s options shared by the jobs after it), each
//! section then read into a job; every problem kept with its section and line.

use super::check;
use super::section::{Opt, Section};
use super::words::{Job, JobFile, Note, Problem};
use crate::config::RunConfig;

/// The most job sections one file may have (fio's own limit is 4096 jobs).
pub const MAX_JOBS: usize = 1024;
/// The most options one job may have, `[global]`'s before it included (fio has some 400).
pub const MAX_OPTIONS: usize = 1000;

/// Parse a job file's text (see [`load`]); every problem found, in file order. An `include FILE`
/// is read relative to the current directory.
pub fn parse(text: &str, default: &RunConfig) -> Result<JobFile, Vec<Problem>> {
    parse_in(text, None, default)
}

/// A job section being gathered: its name, the line of its `[name]`, how many `[global]`
/// options apply to it (those given before it: a prefix of them, shared, never copied) and its
/// own options.
struct Gathered {
    name: String,
    line: usize,
    globals: usize,
    opts: Vec<Opt>,
}

/// What a `[...]` line began.
enum Header {
    Global,
    /// A job, gathered last into the sections.
    Job,
    /// A malformed header, said as a problem: the line is skipped.
    Skipped,
    /// One job too many, said: nothing more is read.
    Full,
}

/// Read the header line `l` (`rest` after its `[`) on `line`: a new job takes the global options
/// given so far (`globals`; fio applies a later [global] to the jobs after it only).
fn header(
    l: &str,
    rest: &str,
    line: usize,
    sections: &mut Vec<Gathered>,
    globals: usize,
    problems: &mut Vec<Problem>,
) -> Header {
    let Some(name) = rest.strip_suffix(']').map(str::trim) else {
        problems.push(Problem {
            section: None,
            line,
            text: format!("'{l}' is not a section header; write [name]"),
        });
        return Header::Skipped;
    };
    if name.is_empty() {
        problems.push(Problem {
            section: None,
            line,
            text: "a section needs a name: [name]".into(),
        });
        return Header::Skipped;
    }
    if name == "global" {
        return Header::Global;
    }
    if sections.len() == MAX_JOBS {
        problems.push(Problem {
            section: Some(name.into()),
            line,
            text: format!(
                "more than {MAX_JOBS} jobs in one file; readlab reads at most {MAX_JOBS}: split the file"
            ),
        });
        return Header::Full;
    }
    if sections.iter().any(|g| g.name == name) {
        problems.push(Problem {
            section: Some(name.into()),
            line,
            text: format!("a second job named [{name}]; give each job its own name"),
        });
    }
    sections.push(Gathered {
        name: name.to_string(),
        line,
        globals,
        opts: Vec::new(),
    });
    Header::Job
}

/// [`parse`], an `include FILE` read relative to `dir` when it is not found as given (fio's
/// rule).
pub(super) fn parse_in(
    text: &str,
    dir: Option<&std::path::Path>,
    default: &RunConfig,
) -> Result<JobFile, Vec<Problem>> {
    let mut problems = Vec::new();
    let lines = super::include::expand(text, dir, &mut problems);
    let mut global: Vec<Opt> = Vec::new();
    let mut sections: Vec<Gathered> = Vec::new();
    let mut current: Option<usize> = None; // None: before any section; Some(usize::MAX): global
    for (line, l) in lines {
        if let Some(rest) = l.strip_prefix('[') {
            match header(&l, rest, line, &mut sections, global.len(), &mut problems) {
                Header::Global => current = Some(usize::MAX),
                Header::Job => current = Some(sections.len() - 1),
                Header::Skipped => {}
                Header::Full => break,
            }
            continue;
        }
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (l.as_str(), None),
        };
        let opt = Opt {
            key: key.to_string(),
            value,
            line,
        };
        let (name, count) = match current {
            None => {
                problems.push(Problem {
                    section: None,
                    line,
                    text: format!(
                        "'{key}' comes before any section; put it under [global] or a job's [name]"
                    ),
                });
                continue;
            }
            Some(usize::MAX) => ("global", global.len()),
            Some(k) => (
                sections[k].name.as_str(),
                sections[k].globals + sections[k].opts.len(),
            ),
        };
        if count == MAX_OPTIONS {
            problems.push(Problem {
                section: Some(name.into()),
                line,
                text: format!(
                    "more than {MAX_OPTIONS} options for one job ([global]'s included); readlab reads at most {MAX_OPTIONS}"
                ),
            });
            break;
        }
        match current {
            Some(usize::MAX) => global.push(opt),
            Some(k) => sections[k].opts.push(opt),
            None => unreachable!("refused above"),
        }
    }
    if sections.is_empty() && problems.is_empty() {
        problems.push(Problem {
            section: None,
            line: text.lines().count().max(1),
            text: "no job section ([name] with its options); [global] alone runs nothing".into(),
        });
    }
    let mut notes: Vec<Note> = Vec::new();
    let mut jobs = Vec::new();
    for g in &sections {
        let opts = global[..g.globals].iter().chain(&g.opts).collect();
        match job(&g.name, g.line, opts, default, &mut notes) {
            Ok(j) => jobs.push(j),
            Err(mut p) => problems.append(&mut p),
        }
    }
    if !problems.is_empty() {
        problems.sort_by_key(|p| p.line);
        problems.dedup();
        return Err(problems);
    }
    Ok(JobFile { jobs, notes })
}

/// One job section (its `[name]` on `line`, its options with the global ones before them) as a
/// readlab configuration: each option read in turn, the engine's options and the fadvise hint
/// once the engine is known, then the checks that need the whole section.
fn job<'a>(
    name: &'a str,
    line: usize,
    opts: Vec<&'a Opt>,
    default: &RunConfig,
    notes: &mut Vec<Note>,
) -> Result<Job, Vec<Problem>> {
    let mut s = Section::new(name, default);
    for o in opts {
        if let Err(text) = s.apply(o, notes) {
            s.problem(o.line, text);
        }
    }
    s.engine_options(default);
    s.fadvise();
    check::settle(&mut s, notes);
    if let Err(text) = check::think(&mut s, notes) {
        let l = if s.lines.think == 0 {
            line
        } else {
            s.lines.think
        };
        s.problem(l, text);
    }
    check::section(&mut s, line);
    if !s.problems.is_empty() {
        return Err(s.problems);
    }
    Ok(Job {
        name: name.into(),
        line,
        config: s.cfg,
        waits: s.waits,
    })
}
