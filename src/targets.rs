//! Several targets in one run: what each is called and which lists are refused. A target is named
//! `NAME:PATH`, or `--name PATH=NAME`, or else after its device (`loop0`) or file name; every
//! output, chart and label uses that name. The same target twice (the same path, the same device
//! through another node, the same file through another link) is refused: readlab would count one
//! device's I/O as two targets' — more jobs on one target is `--numjobs`.

use crate::error::{Error, Result};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// One target of a run, as the user named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetSpec {
    pub name: String,
    pub path: PathBuf,
}

/// `NAME:PATH` when the word is not itself a path or a URL (`nbd://…`) and NAME has no `/`.
fn split_named(word: &str) -> Option<(&str, &str)> {
    if Path::new(word).exists() {
        return None;
    }
    let (name, path) = word.split_once(':')?;
    let url = path.starts_with("//");
    (!name.is_empty() && !name.contains('/') && !path.is_empty() && !url).then_some((name, path))
}

/// The name a target gets when none was given: its device's name for a block device, else its
/// file name.
fn default_name(path: &Path) -> String {
    let is_block = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device());
    if is_block && let Some(d) = crate::source::device::device_of(path) {
        return d.name;
    }
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The targets of `readlab run T1 T2 …` with their names; `names` are `--name PATH=NAME`
/// options. Bad input: a `--name` for no target, the same target twice, an empty or repeated
/// name.
pub fn parse(words: &[PathBuf], names: &[String]) -> Result<Vec<TargetSpec>> {
    let mut specs: Vec<(Option<String>, PathBuf, String)> = words
        .iter()
        .map(|w| {
            let text = w.to_string_lossy().into_owned();
            match split_named(&text) {
                Some((n, p)) => (Some(n.to_string()), PathBuf::from(p), text),
                None => (None, w.clone(), text),
            }
        })
        .collect();
    for opt in names {
        let Some((which, name)) = opt.rsplit_once('=') else {
            // fio's `--name=JOB` names its one job: with one target, NAME alone names it.
            if let [only] = specs.as_mut_slice()
                && only.0.is_none()
            {
                only.0 = Some(opt.clone());
                continue;
            }
            return Err(Error::invalid(format!(
                "--name {opt}: say which target it names, as TARGET=NAME, e.g. --name \
                 /dev/nvme0n1=nvme0 (NAME alone names the only target of a run of one)"
            )));
        };
        let hit = specs
            .iter_mut()
            .find(|(_, p, w)| p.as_os_str() == which || w == which);
        match hit {
            Some(s) if s.0.is_some() => {
                return Err(Error::invalid(format!(
                    "--name {opt}: {which} is already named '{}'; give each target one name",
                    s.0.as_deref().unwrap_or_default()
                )));
            }
            Some(s) => s.0 = Some(name.to_string()),
            None => {
                return Err(Error::invalid(format!(
                    "--name {opt}: {which} is not one of the run's targets"
                )));
            }
        }
    }
    let mut out: Vec<TargetSpec> = specs
        .into_iter()
        .map(|(n, path, _)| TargetSpec {
            name: n.unwrap_or_else(|| default_name(&path)),
            path,
        })
        .collect();
    // Default names that collide (two files called data.dat) fall back to their paths.
    let defaults: Vec<String> = out.iter().map(|t| t.name.clone()).collect();
    for t in &mut out {
        if defaults.iter().filter(|n| **n == t.name).count() > 1 && default_name(&t.path) == t.name
        {
            t.name = t.path.display().to_string();
        }
    }
    check_distinct(&out)?;
    for (i, t) in out.iter().enumerate() {
        if t.name.trim().is_empty() {
            return Err(Error::invalid(format!(
                "{}: a target's name cannot be empty",
                t.path.display()
            )));
        }
        if out[..i].iter().any(|o| o.name == t.name) {
            return Err(Error::invalid(format!(
                "two targets are both named '{}'; give each its own name (--name PATH=NAME)",
                t.name
            )));
        }
    }
    Ok(out)
}

/// What makes two paths the same target: the device for a block device, else the file.
fn identity(path: &Path) -> Option<(bool, u64, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some(if m.file_type().is_block_device() {
        (true, m.rdev(), 0)
    } else {
        (false, m.dev(), m.ino())
    })
}

/// Refuse the same target twice in one run (bad input, nothing read).
pub fn check_distinct(targets: &[TargetSpec]) -> Result<()> {
    for (i, a) in targets.iter().enumerate() {
        for b in &targets[..i] {
            let same = match (identity(&a.path), identity(&b.path)) {
                (Some(x), Some(y)) => x == y,
                _ => a.path == b.path,
            };
            if same {
                return Err(Error::invalid(format!(
                    "{} and {} are the same target; each target gets its own jobs and its I/O \
                     would be counted twice. For more jobs on one target use --numjobs",
                    b.path.display(),
                    a.path.display()
                )));
            }
        }
    }
    Ok(())
}

/// Refuse a run whose targets together start more threads than readlab allows
/// ([`crate::engine::MAX_THREADS`] is for the whole process, not per target): each target gets
/// `--numjobs` workers, and the pool engine `--pool-threads` readers beside each worker.
pub fn check_threads(cfg: &crate::config::RunConfig, targets: usize) -> Result<()> {
    use crate::engine::{EngineKind, MAX_THREADS, PoolOptions};
    let per_worker = if cfg.engine == EngineKind::Pool {
        PoolOptions::of(&cfg.options)
            .pool_threads
            .unwrap_or(cfg.iodepth)
            .saturating_add(1)
    } else {
        1
    };
    let per_target = cfg.threads.saturating_mul(per_worker);
    let total = per_target.saturating_mul(targets);
    if targets > 1 && total > MAX_THREADS {
        return Err(Error::invalid(format!(
            "{targets} targets × {per_target} threads each make {total} threads; readlab starts \
             at most {MAX_THREADS} in all: use fewer --numjobs (at most {} per target here) or \
             fewer targets",
            MAX_THREADS / targets / per_worker
        )));
    }
    Ok(())
}

/// The name of a run on `targets` (their names joined with `+`), which the aggregate's
/// configuration carries as its target.
pub fn joined(targets: &[TargetSpec]) -> PathBuf {
    PathBuf::from(
        targets
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join("+"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_limit_counts_every_targets_threads() {
        let mut c = crate::config::RunConfig::new("/x");
        c.threads = 3000;
        assert!(check_threads(&c, 1).is_ok());
        let e = check_threads(&c, 2).unwrap_err().to_string();
        assert!(
            e.contains("6000 threads") && e.contains("2048 per target"),
            "{e}"
        );
        c.threads = 2048;
        assert!(check_threads(&c, 2).is_ok());
        // The pool's readers count too: 40 workers × (64 readers + 1) on each of two targets.
        c.engine = crate::engine::EngineKind::Pool;
        c.iodepth = 64;
        c.threads = 40;
        let e = check_threads(&c, 2).unwrap_err().to_string();
        assert!(e.contains("5200 threads"), "{e}");
    }

    #[test]
    fn names_from_prefix_option_and_file() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.dat");
        let b = dir.path().join("b.dat");
        std::fs::write(&a, b"x").unwrap();
        std::fs::write(&b, b"y").unwrap();
        let words = vec![
            PathBuf::from(format!("fast:{}", a.display())),
            b.clone(),
            PathBuf::from("/dev/null"),
        ];
        let t = parse(&words, &["/dev/null=nothing".into()]).unwrap();
        assert_eq!(t[0].name, "fast");
        assert_eq!(t[0].path, a);
        assert_eq!(t[1].name, "b.dat");
        assert_eq!(t[2].name, "nothing");
        assert_eq!(joined(&t), PathBuf::from("fast+b.dat+nothing"));
    }

    #[test]
    fn a_url_is_a_target_not_a_name() {
        let t = parse(&[PathBuf::from("nbd://127.0.0.1:10809/x")], &[]).unwrap();
        assert_eq!(t[0].path, PathBuf::from("nbd://127.0.0.1:10809/x"));
        let t = parse(&[PathBuf::from("far:nbd://127.0.0.1:10809/x")], &[]).unwrap();
        assert_eq!(
            (t[0].name.as_str(), t[0].path.to_str().unwrap()),
            ("far", "nbd://127.0.0.1:10809/x")
        );
    }

    #[test]
    fn bad_names_are_refused() {
        let w = vec![PathBuf::from("/tmp/x"), PathBuf::from("/tmp/y")];
        let e = parse(&w, &["/tmp/z=a".into()]).unwrap_err().to_string();
        assert!(e.contains("not one of the run's targets"), "{e}");
        let e = parse(&w, &["/tmp/x=a".into(), "/tmp/y=a".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("both named 'a'"), "{e}");
        let e = parse(&w, &["nameless".into()]).unwrap_err().to_string();
        assert!(e.contains("TARGET=NAME"), "{e}");
        // One target: NAME alone (fio's --name=JOB) names it, once.
        let one = vec![PathBuf::from("/tmp/x")];
        assert_eq!(parse(&one, &["job".into()]).unwrap()[0].name, "job");
        let e = parse(&one, &["job".into(), "again".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("TARGET=NAME"), "{e}");
    }

    #[test]
    fn the_same_file_twice_is_refused_even_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.dat");
        std::fs::write(&a, b"x").unwrap();
        let l = dir.path().join("link");
        std::os::unix::fs::symlink(&a, &l).unwrap();
        let t = vec![
            TargetSpec {
                name: "a".into(),
                path: a.clone(),
            },
            TargetSpec {
                name: "l".into(),
                path: l,
            },
        ];
        let e = check_distinct(&t).unwrap_err().to_string();
        assert!(e.contains("same target"), "{e}");
        assert!(check_distinct(&t[..1]).is_ok());
    }
}
