//! The checks of a job section once all of it is read: what its options mean together (the
//! engine and its depth, batches and completions, the block size) and that it names a target.

use super::section::{JobRate, Section};
use super::words::{Note, add_note};
use crate::config::Rate;

/// What a section's options mean together once all are read: a synchronous engine's depth
/// (1, as fio runs it, with a note), the size from `filesize=`, the rate of all its threads.
pub(super) fn settle(s: &mut Section, notes: &mut Vec<Note>) {
    let cfg = &mut s.cfg;
    if !cfg.engine.capabilities().asynchronous && cfg.iodepth > 1 {
        add_note(
            notes,
            "iodepth",
            format!(
                "ioengine={} is synchronous (one I/O in flight per thread): its jobs run at iodepth=1, as fio runs them (for more in flight, numjobs= or an asynchronous engine)",
                cfg.engine.fio_name()
            ),
        );
        cfg.iodepth = 1;
    }
    if cfg.size.is_none() {
        cfg.size = s.filesize;
    }
    if let Some(r) = s.rate {
        let per_thread = match r {
            JobRate::Iops(n) => n as f64,
            JobRate::Bytes(b) => b as f64 / cfg.bs.max(1) as f64,
        };
        cfg.rate = Some(Rate {
            iops: per_thread * cfg.threads as f64,
            arrivals: s.arrivals.unwrap_or(crate::config::Arrivals::Fixed),
        });
    }
}

/// A section's think time and loops once all of it is read: the pauses from their parts, loops
/// moot beside `time_based` (the runtime ends the job, as in fio: a note); the problem's text.
pub(super) fn think(s: &mut Section, notes: &mut Vec<Note>) -> Result<(), String> {
    let t = &s.think;
    s.cfg.thinktime = crate::think::ThinkTime::from_parts(t.think, t.spin, t.blocks, t.iotime)
        .map_err(|e| fio_words(&e.to_string()))?;
    if let Some(n) = s.loops.take() {
        if s.time_based {
            add_note(
                notes,
                "loops",
                format!("loops={n} beside time_based: the runtime ends the job, as in fio"),
            );
        } else {
            s.cfg.loops = Some(n);
        }
    }
    s.cfg.think_problem().map_or(Ok(()), |p| Err(fio_words(&p)))
}

/// A rule's text, given in readlab's flags, in a job file's words.
fn fio_words(text: &str) -> String {
    text.replace("--thinktime-", "thinktime_")
        .replace("--thinktime", "thinktime")
        .replace("--loops", "loops")
        .replace("--rate", "rate_iops")
        .replace(" TIME", "=TIME")
}

/// Check the section whose `[name]` is on `line`, adding its problems (on the line of the option
/// at fault, else the header's); its target is set when it named one.
pub(super) fn section(s: &mut Section, line: usize) {
    let mut found: Vec<(usize, String)> = Vec::new();
    let mut at = |l: usize, text: String| found.push((if l == 0 { line } else { l }, text));
    let (cfg, lines, complete_max) = (&s.cfg, &s.lines, s.complete_max);
    let asynchronous = cfg.engine.capabilities().asynchronous;
    if asynchronous && cfg.batch > cfg.iodepth {
        at(
            lines.batch,
            format!(
                "iodepth_batch_submit={} is more than iodepth={}",
                cfg.batch, cfg.iodepth
            ),
        );
    }
    if asynchronous && cfg.complete_min > cfg.batch {
        at(
            lines.complete_min,
            complete_min_problem(
                cfg.complete_min,
                cfg.batch,
                "iodepth_batch_complete_min",
                "iodepth_batch_submit",
            ),
        );
    }
    if let Some((n, l)) = complete_max
        && n != cfg.batch
    {
        at(
            l,
            format!(
                "iodepth_batch_complete_max={n}: readlab reaps at most one batch (iodepth_batch_submit={}); drop it or make them equal",
                cfg.batch
            ),
        );
    }
    if !crate::config::BLOCK_SIZES.contains(&cfg.bs) {
        at(
            lines.bs,
            format!("bs={} B is outside 512 B … 64 MiB", cfg.bs),
        );
    }
    if let Some(problem) = cfg.distribution_problem() {
        at(lines.distribution, problem);
    }
    match job_files(s) {
        Err((l, text)) => at(l, text),
        Ok(Some(mut files)) => {
            s.cfg.target = files.remove(0);
            s.cfg.files = files;
        }
        Ok(None) if s.named || !s.cfg.target.as_os_str().is_empty() => {}
        Ok(None) => at(
            line,
            "no filename=: add filename=PATH to the job (or [global]), or give the TARGET to `readlab run --job FILE TARGET`".into(),
        ),
    }
    for (l, text) in found {
        s.problem(l, text);
    }
}

/// The job's files as fio names them: filename='s (under directory= when given), or fio's
/// `JOB.0.N` names for `nrfiles=` in directory= (the current one when not given), which must
/// exist (readlab never creates them); none when the job names no file. A problem on its line.
fn job_files(s: &Section) -> Result<Option<Vec<std::path::PathBuf>>, (usize, String)> {
    let dir = s.directory.as_ref();
    let (files, line) = match (&s.target, s.nrfiles) {
        (Some(names), Some((n, l))) if n != names.len() => {
            return Err((
                l,
                format!(
                    "nrfiles={n} beside filename= naming {} file(s); readlab reads the files \
                     filename= names: drop nrfiles=",
                    names.len()
                ),
            ));
        }
        // fio puts the directory before each name, whatever the name.
        (Some(names), _) => match dir {
            Some((d, l)) => (
                names
                    .iter()
                    .map(|f| format!("{d}/{}", f.display()).into())
                    .collect(),
                *l,
            ),
            None => return Ok(Some(names.clone())),
        },
        (None, nr) if dir.is_some() || nr.is_some() => {
            let n = nr.map_or(1, |(n, _)| n);
            let line = nr.map_or_else(|| dir.map_or(0, |d| d.1), |(_, l)| l);
            if s.cfg.threads > 1 {
                return Err((
                    line,
                    format!(
                        "directory=/nrfiles= with numjobs={}: fio gives each of its jobs files of \
                         its own (JOB.J.N), readlab's threads read one set: name the files with \
                         filename=a:b (all threads read them) or use numjobs=1",
                        s.cfg.threads
                    ),
                ));
            }
            let d = dir.map_or(".", |(d, _)| d.as_str());
            (crate::fileset::in_directory(d.as_ref(), s.name, n), line)
        }
        (None, _) => return Ok(None),
    };
    crate::fileset::check_exist(&files).map_err(|e| (line, e.to_string()))?;
    Ok(Some(files))
}

/// Why a completion minimum above the batch is refused, in the words of the flags given.
pub fn complete_min_problem(min: usize, batch: usize, min_flag: &str, batch_flag: &str) -> String {
    format!(
        "{min_flag}={min} is more than {batch_flag}={batch}: each reap would wait for more completions than a submit adds, draining the queue below its depth; use {min_flag} ≤ {batch_flag}"
    )
}
