//! A job file's text read into its sections (`[global]` copied into the jobs after it), each
//! section then read into a job; every problem kept with its section and line.

use super::check;
use super::section::{Opt, Section};
use super::words::{Job, JobFile, Note, Problem};
use crate::config::RunConfig;

/// Parse a job file's text (see [`load`]); every problem found, in file order.
pub fn parse(text: &str, default: &RunConfig) -> Result<JobFile, Vec<Problem>> {
    let mut problems = Vec::new();
    let mut global: Vec<Opt> = Vec::new();
    // (name, line, options)
    let mut sections: Vec<(String, usize, Vec<Opt>)> = Vec::new();
    let mut current: Option<usize> = None; // None: before any section; Some(usize::MAX): global
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with(';') || l.starts_with('#') {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']').map(str::trim) else {
                problems.push(Problem {
                    section: None,
                    line,
                    text: format!("'{l}' is not a section header; write [name]"),
                });
                continue;
            };
            if name.is_empty() {
                problems.push(Problem {
                    section: None,
                    line,
                    text: "a section needs a name: [name]".into(),
                });
                continue;
            }
            if name == "global" {
                current = Some(usize::MAX);
            } else {
                if sections.iter().any(|(n, ..)| n == name) {
                    problems.push(Problem {
                        section: Some(name.into()),
                        line,
                        text: format!("a second job named [{name}]; give each job its own name"),
                    });
                }
                sections.push((name.to_string(), line, global.clone()));
                current = Some(sections.len() - 1);
            }
            continue;
        }
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (l, None),
        };
        let opt = Opt {
            key: key.to_string(),
            value,
            line,
        };
        match current {
            None => problems.push(Problem {
                section: None,
                line,
                text: format!(
                    "'{key}' comes before any section; put it under [global] or a job's [name]"
                ),
            }),
            Some(usize::MAX) => global.push(opt),
            Some(k) => sections[k].2.push(opt),
        }
    }
    // fio applies a later [global] to the jobs after it only; so does this: each job copied the
    // global options when its section began.
    if sections.is_empty() && problems.is_empty() {
        problems.push(Problem {
            section: None,
            line: text.lines().count().max(1),
            text: "no job section ([name] with its options); [global] alone runs nothing".into(),
        });
    }
    let mut notes: Vec<Note> = Vec::new();
    let mut jobs = Vec::new();
    for (name, line, opts) in sections {
        match job(&name, line, &opts, default, &mut notes) {
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
fn job(
    name: &str,
    line: usize,
    opts: &[Opt],
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
