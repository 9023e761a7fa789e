//! The results store: `results.jsonl`, one run per line, appended and fsynced after every point so
//! a crash or Ctrl-C loses nothing but the point in flight; `--resume` skips what is already there.
//! One writer at a time: the directory is locked (flock on [`LOCK`]) while a store is open, and a
//! resumed file is only ever appended to (a torn last line is cut in place, never rewritten).

use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::result::{Document, StudyTag};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub const RESULTS: &str = "results.jsonl";

/// The lock file of a results directory; it names the run holding it.
pub const LOCK: &str = ".readlab.lock";

/// The identity of a point: its study tag and its full configuration.
pub fn key(tag: Option<&StudyTag>, cfg: &RunConfig) -> String {
    serde_json::to_string(&(tag, cfg)).expect("configs serialise")
}

/// Inputs larger than this are refused before they are read (a results file of a thousand
/// points with the monitor's samples is some hundred MB).
pub const MAX_INPUT: u64 = 1 << 30;

/// What a readlab input is, for a refusal.
const WHAT: &str = "input (a results directory, a results.jsonl, a `readlab run --json` file, a report's JSON or fio's JSON)";

/// Read an input file whole (a regular file of at most [`MAX_INPUT`]; see [`crate::input`]).
pub fn read_bounded(path: &Path) -> Result<Vec<u8>> {
    crate::input::read(path, MAX_INPUT, WHAT)
}

/// Read every document of a results file; a torn last line (a crash mid-write) is left out.
pub fn load(path: &Path) -> Result<Vec<Document>> {
    Ok(load_noting(path)?.0)
}

/// [`load`], with what to say of a torn last line when there was one: the file and the line
/// left out.
pub fn load_noting(path: &Path) -> Result<(Vec<Document>, Option<String>)> {
    let bytes = read_bounded(path)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::invalid(format!(
            "{}: not a text file (expected readlab's results, one JSON run per line)",
            path.display()
        ))
    })?;
    let (docs, torn) = parse(path, &text)?;
    let said = torn.then(|| {
        format!(
            "{}: line {} is cut off (a run that did not finish writing); left out",
            path.display(),
            text.trim_end_matches('\n').lines().count()
        )
    });
    Ok((docs, said))
}

/// The documents of a results file's text, and whether its last line was torn. The runs are read
/// one JSON value after another, so a last line without its newline is read like any other;
/// only a value cut off by the end of the file (a crash mid-write) is torn.
fn parse(path: &Path, text: &str) -> Result<(Vec<Document>, bool)> {
    let mut docs = Vec::new();
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Document>();
    loop {
        match values.next() {
            None => return Ok((docs, false)),
            Some(Ok(d)) => {
                if d.schema != crate::result::SCHEMA {
                    return Err(Error::invalid(format!(
                        "{}: run {} is a '{}' document; this readlab reads {} (written by a newer readlab? use that one)",
                        path.display(),
                        docs.len() + 1,
                        d.schema,
                        crate::result::SCHEMA
                    )));
                }
                docs.push(d)
            }
            Some(Err(e)) if e.is_eof() && !text.ends_with('\n') => return Ok((docs, true)),
            Some(Err(e)) => {
                return Err(Error::invalid(format!(
                    "{}: line {} is not a readlab result ({e})",
                    path.display(),
                    e.line()
                )));
            }
        }
    }
}

/// Refuse to add the points of `targets` to the results in `dir` when they are a study of
/// another target (`study --resume` with a different target would mix two targets' points):
/// the first stored run's target must be among `targets`.
pub fn check_same_target(dir: &Path, targets: &[&Path]) -> Result<()> {
    let path = dir.join(RESULTS);
    if targets.is_empty() || !path.is_file() {
        return Ok(());
    }
    let docs = load(&path)?;
    let Some(old) = docs.first().map(|d| d.config.target.clone()) else {
        return Ok(());
    };
    let same = |t: &Path| {
        t == old
            || matches!(
                (std::fs::canonicalize(t), std::fs::canonicalize(&old)),
                (Ok(a), Ok(b)) if a == b
            )
    };
    if targets.iter().any(|t| same(t)) {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "{} holds a study of {}, not of {}; choose another --out for {}, or resume with {}",
        dir.display(),
        old.display(),
        targets[0].display(),
        targets[0].display(),
        old.display()
    )))
}

/// Take the exclusive lock of results directory `dir` (without waiting), or say who holds it.
fn lock_dir(dir: &Path) -> Result<File> {
    let path = dir.join(LOCK);
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        // Never through a link (the rule of every output, crate::outpath).
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| Error::io(&path, "cannot open the lock file", e))?;
    match rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            let holder = holder.trim();
            return Err(Error::ResultsLocked {
                dir: dir.to_path_buf(),
                holder: if holder.is_empty() {
                    "a process that has not said who it is".into()
                } else {
                    holder.to_string()
                },
            });
        }
        Err(e) => return Err(Error::io(&path, "cannot lock", e.into())),
    }
    let args: Vec<String> = std::env::args().collect();
    let who = format!("pid {}: {}", std::process::id(), args.join(" "));
    // Best effort: the lock itself is what excludes; the text only names the holder.
    let _ = f.set_len(0).and_then(|_| f.write_all(who.as_bytes()));
    Ok(f)
}

/// An open results file.
pub struct Store {
    path: PathBuf,
    file: File,
    /// Held (flocked) for as long as the store is open.
    _lock: File,
    done: HashSet<String>,
    docs: Vec<Document>,
}

impl Store {
    /// Open `dir/results.jsonl`, locking `dir` for this process until the store is dropped (a
    /// second writer is refused at once, naming this one). Without `resume` an existing non-empty
    /// file is refused, so no earlier study is mixed in by accident.
    pub fn open(dir: &Path, resume: bool) -> Result<Store> {
        let path = dir.join(RESULTS);
        let has_results = || std::fs::metadata(&path).is_ok_and(|m| m.len() > 0);
        let refuse = || {
            Error::invalid(format!(
                "{} already holds results; pass --resume to continue it, or choose another --out",
                path.display()
            ))
        };
        // Refused before anything is created (not even the lock file); checked again under the
        // lock, which is what decides.
        if !resume && has_results() {
            return Err(refuse());
        }
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "cannot create", e))?;
        let lock = lock_dir(dir)?;
        let exists = has_results();
        if exists && !resume {
            return Err(refuse());
        }
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| Error::io(&path, "cannot open", e))?;
        let mut docs = Vec::new();
        if exists {
            let bytes = crate::input::read_open(&mut file, &path, MAX_INPUT, WHAT)?;
            let text = String::from_utf8(bytes).map_err(|_| {
                Error::invalid(format!(
                    "{}: not a text file (expected readlab's results, one JSON run per line)",
                    path.display()
                ))
            })?;
            let torn;
            (docs, torn) = parse(&path, &text)?;
            // Appending only: a torn last line is cut off in place, a whole last line without
            // its newline gets one.
            if torn {
                let keep = text.rfind('\n').map_or(0, |i| i + 1);
                file.set_len(keep as u64)
                    .map_err(|e| Error::io(&path, "cannot cut the torn last line", e))?;
            } else if !text.ends_with('\n') {
                file.write_all(b"\n")
                    .map_err(|e| Error::io(&path, "cannot append", e))?;
            }
        }
        let done = docs
            .iter()
            .map(|d| key(d.study.as_ref(), &d.config))
            .collect();
        Ok(Store {
            path,
            file,
            _lock: lock,
            done,
            docs,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn contains(&self, tag: Option<&StudyTag>, cfg: &RunConfig) -> bool {
        self.done.contains(&key(tag, cfg))
    }

    /// Every document in the file, earlier ones first.
    pub fn docs(&self) -> &[Document] {
        &self.docs
    }

    /// Append one finished point and make it durable before returning.
    pub fn append(&mut self, doc: Document) -> Result<()> {
        let mut line = serde_json::to_string(&doc).map_err(|source| Error::Json {
            what: "a result",
            source,
        })?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.sync_data())
            .map_err(|e| Error::io(&self.path, "cannot append", e))?;
        self.done.insert(key(doc.study.as_ref(), &doc.config));
        self.docs.push(doc);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_store_on_the_same_directory_is_refused_until_the_first_closes() {
        let d = tempfile::tempdir().unwrap();
        let first = Store::open(d.path(), false).unwrap();
        let e = Store::open(d.path(), true).err().expect("locked");
        assert!(matches!(e, Error::ResultsLocked { .. }), "{e}");
        assert!(e.is_bad_input());
        assert!(
            e.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{e}"
        );
        drop(first);
        Store::open(d.path(), true).unwrap();
    }

    #[test]
    fn a_last_line_without_its_newline_is_read() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join(RESULTS);
        let lines: Vec<&str> = crate::fixture::RESULTS_SMALL.lines().take(2).collect();
        std::fs::write(&path, lines.join("\n")).unwrap();
        assert_eq!(load(&path).unwrap().len(), 2);
        // Runs one after another with no newline at all.
        std::fs::write(&path, lines.join("")).unwrap();
        assert_eq!(load(&path).unwrap().len(), 2);
        // A run cut off by the end of the file is torn, and ignored.
        std::fs::write(&path, format!("{}\n{}", lines[0], &lines[1][..50])).unwrap();
        assert_eq!(load(&path).unwrap().len(), 1);
    }

    #[test]
    fn resume_cuts_a_torn_line_in_place() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join(RESULTS);
        std::fs::write(&path, "{\"torn").unwrap();
        let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&path).unwrap());
        let s = Store::open(d.path(), true).unwrap();
        assert!(s.docs().is_empty());
        let m = std::fs::metadata(&path).unwrap();
        assert_eq!(m.len(), 0);
        assert_eq!(
            std::os::unix::fs::MetadataExt::ino(&m),
            ino,
            "the file was replaced"
        );
    }
}
