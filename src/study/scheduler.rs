//! The `scheduler` study: 4 KiB and 256 KiB thread sweeps under each I/O scheduler of the device
//! (§6.2). Its one side effect is switching the device's I/O scheduler in sysfs; a guard puts the
//! original back however the study ends (finished, Ctrl-C, SIGTERM, error or panic).

use super::plan::*;
use super::{Counts, Exec, Key, Metric::*, StudyObserver, StudySpec, Summary, Table, run_points};
use crate::config::Rw;
use crate::engine::EngineKind;
use crate::error::{Error, Result};
use crate::result::StudyTag;
use crate::store::Store;
use std::path::{Path, PathBuf};

pub static SPEC: StudySpec = StudySpec {
    name: "scheduler",
    title: "I/O schedulers (§6.2)",
    describe: "4 KiB and 256 KiB thread sweeps under each I/O scheduler of the device (§6.2)",
    in_all: true,
    exec: Exec::Custom(run_scheduler_study),
    summary: Summary::Pivot(Table {
        rows: Key::BsThreads,
        cols: Key::Scheduler,
        metrics: &[MBs, P999],
        title: "block size and threads × scheduler → MB/s, p99.9",
    }),
};

/// Owns `/sys/block/<disk>/queue/scheduler` while the study runs; restores it on drop.
pub struct SchedulerGuard {
    path: PathBuf,
    original: String,
    available: Vec<String>,
}

/// "none [mq-deadline] kyber" → (["none", "mq-deadline", "kyber"], "mq-deadline").
pub fn parse(line: &str) -> (Vec<String>, Option<String>) {
    let mut current = None;
    let all = line
        .split_whitespace()
        .map(|w| {
            let name = w.trim_matches(['[', ']']).to_string();
            if w.starts_with('[') {
                current = Some(name.clone());
            }
            name
        })
        .collect();
    (all, current)
}

impl SchedulerGuard {
    pub fn new(path: &Path) -> Result<SchedulerGuard> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "cannot read", e))?;
        let (available, current) = parse(&text);
        let original = current.ok_or_else(|| {
            Error::invalid(format!(
                "{}: no current scheduler in '{}'",
                path.display(),
                text.trim()
            ))
        })?;
        // Fail now, not halfway through, when sysfs cannot be written.
        std::fs::write(path, &original).map_err(|e| {
            if e.kind() == std::io::ErrorKind::PermissionDenied {
                Error::invalid(format!(
                    "{}: cannot change the I/O scheduler ({e}); the scheduler study needs root",
                    path.display()
                ))
            } else {
                Error::io(path, "cannot write", e)
            }
        })?;
        Ok(SchedulerGuard {
            path: path.into(),
            original,
            available,
        })
    }

    pub fn available(&self) -> &[String] {
        &self.available
    }

    pub fn original(&self) -> &str {
        &self.original
    }

    pub fn set(&self, name: &str) -> Result<()> {
        std::fs::write(&self.path, name)
            .map_err(|e| Error::io(&self.path, "cannot switch the scheduler", e))
    }
}

impl Drop for SchedulerGuard {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.path, &self.original);
    }
}

/// Run the thread sweeps under every scheduler the device offers, then restore the original.
fn run_scheduler_study(
    ctx: &Context,
    store: &mut Store,
    obs: &dyn StudyObserver,
) -> Result<Counts> {
    let dev = crate::env::device_of(&ctx.target.path).ok_or_else(|| {
        Error::invalid(format!(
            "{}: the scheduler study needs a target on a block device (this one has none)",
            ctx.target.path.display()
        ))
    })?;
    let guard = SchedulerGuard::new(&dev.queue_dir().join("scheduler"))?;
    obs.note(&format!(
        "{}: schedulers {} (now {}; restored at the end)",
        dev.name,
        guard.available().join(", "),
        guard.original()
    ));
    let mut counts = Counts::default();
    for sched in guard.available().to_vec() {
        guard.set(&sched)?;
        obs.note(&format!("{}: scheduler {sched}", dev.name));
        let points = scheduler_points(ctx, &sched);
        let c = run_points(SPEC.study_name(), &points, ctx.repeat, store, obs)?;
        counts.measured += c.measured;
        counts.skipped += c.skipped;
        if c.interrupted {
            counts.interrupted = true;
            break;
        }
    }
    drop(guard);
    Ok(counts)
}

/// The points run under each scheduler: 4 KiB and 256 KiB thread sweeps.
fn scheduler_points(ctx: &Context, scheduler: &str) -> Vec<Point> {
    let tag = StudyTag {
        study: SPEC.study_name(),
        scheduler: Some(scheduler.into()),
        net: None,
        setting: None,
    };
    let max = ctx
        .max_threads
        .unwrap_or(4 * crate::env::cpus())
        .clamp(1, 256);
    let threads = if ctx.quick {
        vec![1, 4.min(max)]
    } else {
        powers_of_two(1, max)
    };
    let mut points = Vec::new();
    for bs in ctx.sizes(&[4 * K, 256 * K], &[4 * K, 256 * K]) {
        for &t in &threads {
            let mut c = ctx.base(EngineKind::Psync, Rw::Randread, bs);
            c.threads = t;
            points.push(Point {
                tag: tag.clone(),
                cfg: c,
            });
        }
    }
    points
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_the_sysfs_line() {
        let (all, cur) = super::parse("none [mq-deadline] kyber bfq\n");
        assert_eq!(all, ["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(cur.as_deref(), Some("mq-deadline"));
        let (all, cur) = super::parse("[none]");
        assert_eq!((all.len(), cur.as_deref()), (1, Some("none")));
    }
}
