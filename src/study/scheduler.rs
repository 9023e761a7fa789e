//! The scheduler study's one side effect: switching the device's I/O scheduler in sysfs. A guard
//! puts the original back however the study ends (finished, Ctrl-C, error or panic).

use super::plan::{self, Context, StudyName};
use super::{StudyObserver, run_points};
use crate::error::{Error, Result};
use crate::store::Store;
use std::path::{Path, PathBuf};

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
pub(crate) fn run_scheduler_study(
    ctx: &Context,
    store: &mut Store,
    obs: &dyn StudyObserver,
) -> Result<(usize, usize, bool)> {
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
    let (mut measured, mut skipped, mut interrupted) = (0, 0, false);
    for sched in guard.available().to_vec() {
        guard.set(&sched)?;
        obs.note(&format!("{}: scheduler {sched}", dev.name));
        let points = plan::scheduler_points(ctx, &sched);
        let (m, s, i) = run_points(StudyName::Scheduler, &points, store, obs)?;
        measured += m;
        skipped += s;
        if i {
            interrupted = true;
            break;
        }
    }
    drop(guard);
    Ok((measured, skipped, interrupted))
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
