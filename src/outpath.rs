//! Output paths are checked before any work starts, so an output can never destroy an input: a
//! file readlab writes is never one of the files it reads or measures (compared by device and
//! inode, and by canonical path), never a device node, FIFO or directory, never a file holding
//! the test data `readlab prepare` wrote, and its directory exists. An output the user did not
//! name (a default path, a file in a results directory) replaces only a file readlab wrote.

pub use crate::error::OutputError;

use crate::error::{Error, Result};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What a file system object is, in words.
fn kind_of(ft: std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// The parent directory of `path` as the kernel would resolve it ("" is the current directory).
fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Canonical form of a path that may not exist yet: its canonical parent joined with its name.
fn canonical(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok().or_else(|| {
        let parent = std::fs::canonicalize(parent_of(path)).ok()?;
        Some(parent.join(path.file_name()?))
    })
}

/// Whether `a` and `b` name the same object: same device and inode when both exist, else the
/// same canonical path.
fn same(a: &Path, b: &Path) -> bool {
    if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
        return ma.dev() == mb.dev() && ma.ino() == mb.ino();
    }
    matches!((canonical(a), canonical(b)), (Some(x), Some(y)) if x == y)
}

/// The files an input stands for: itself, and for a results directory the results file readlab
/// reads from it.
fn read_files(input: &Path) -> Vec<PathBuf> {
    let mut v = vec![input.to_path_buf()];
    if input.is_dir() {
        v.push(input.join(crate::store::RESULTS));
    }
    v
}

fn refuse_inputs(out: &Path, inputs: &[&Path]) -> Result<(), OutputError> {
    for input in inputs {
        if read_files(input).iter().any(|f| same(out, f)) {
            return Err(OutputError::IsInput {
                out: out.into(),
                input: input.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Whether the regular file `path` holds the test data `readlab prepare` wrote (its first sector's
/// header), or the marker of a prepare under way.
pub fn holds_test_data(path: &Path) -> bool {
    use std::io::Read;
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(crate::data::SECTOR);
    if f.take(crate::data::SECTOR as u64)
        .read_to_end(&mut head)
        .is_err()
    {
        return false;
    }
    crate::data::sector_file_id(&head, 0).is_some() || crate::prepare::is_pending(path)
}

/// How much of a file is read to tell whether readlab wrote it; a JSON document whose `schema`
/// is not at its start (a report's JSON) is parsed whole up to [`OWN_JSON_MAX`].
const OWN_HEAD: u64 = 64 << 10;
const OWN_JSON_MAX: u64 = 64 << 20;

/// Whether `path` is a file readlab wrote: a report, comparison or summary (by its first line,
/// its CSV header or its HTML title), or JSON whose `schema` names readlab (a run document or a
/// results file, which start with it, or a report's JSON). An empty file holds nothing to lose
/// and counts as readlab's.
pub fn written_by_readlab(path: &Path) -> bool {
    use std::io::Read;
    let Ok(m) = std::fs::metadata(path) else {
        return false;
    };
    if m.len() == 0 {
        return true;
    }
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    if !m.is_file() {
        return false;
    }
    let mut head = Vec::new();
    if f.take(OWN_HEAD).read_to_end(&mut head).is_err() {
        return false;
    }
    let text = String::from_utf8_lossy(&head);
    const FIRST_LINES: [&str; 3] = ["# readlab ", "readlab ", "tables,source,label,"];
    let compact: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .take(20)
        .collect();
    let whole_json = || {
        m.len() <= OWN_JSON_MAX
            && std::fs::read(path).is_ok_and(|b| {
                serde_json::from_slice::<serde_json::Value>(&b).is_ok_and(|v| {
                    v.get("schema")
                        .and_then(|s| s.as_str())
                        .is_some_and(|s| s.starts_with("readlab."))
                })
            })
    };
    FIRST_LINES.iter().any(|l| text.starts_with(l))
        || (text.starts_with("<!DOCTYPE html>") && text.contains("<title>readlab "))
        || compact.starts_with("{\"schema\":\"readlab.")
        || (text.starts_with('{') && whole_json())
}

fn check_file_inner(out: &Path, inputs: &[&Path]) -> Result<(), OutputError> {
    refuse_inputs(out, inputs)?;
    match std::fs::metadata(out) {
        Ok(m) if m.is_file() => {
            if holds_test_data(out) {
                return Err(OutputError::TestData { out: out.into() });
            }
            return writable(out, parent_of(out));
        }
        Ok(m) => {
            return Err(OutputError::NotRegular {
                out: out.into(),
                kind: kind_of(m.file_type()),
            });
        }
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) => {}
        Err(e) => {
            return Err(OutputError::Unusable {
                out: out.into(),
                why: e.to_string(),
            });
        }
    }
    if out.file_name().is_none() {
        return Err(OutputError::Unusable {
            out: out.into(),
            why: "it does not name a file".into(),
        });
    }
    let parent = parent_of(out);
    match std::fs::metadata(parent) {
        Ok(m) if m.is_dir() => writable(out, parent),
        Ok(m) => Err(OutputError::NotDirectory {
            out: parent.into(),
            kind: kind_of(m.file_type()),
        }),
        Err(_) => Err(OutputError::NoParent {
            out: out.into(),
            parent: parent.into(),
        }),
    }
}

/// Whether files can be created in `dir` (where the output's temporary file will go): tried with
/// a probe file, removed at once, since permissions alone do not say (root, read-only mounts,
/// /proc and /sys).
fn writable(out: &Path, dir: &Path) -> Result<(), OutputError> {
    let probe = dir.join(format!(".readlab-probe.{}.tmp", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        // Left over by a crashed readlab of the same pid: creatable, then.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(OutputError::Unusable {
            out: out.into(),
            why: format!("no file can be created in {} ({e})", dir.display()),
        }),
    }
}

/// Check a file the command will write (created, or replaced by rename) against everything the
/// command reads (`inputs`: targets, input files, results directories).
pub fn check_file(out: &Path, inputs: &[&Path]) -> Result<()> {
    check_file_inner(out, inputs).map_err(Error::from)
}

/// Check a file the user did not name (a default output path): as [`check_file`], and a file
/// already there is replaced only if readlab wrote it, or with `force`; `hint` says what to do
/// instead ("name another with -o, or pass --force").
pub fn check_default_file(out: &Path, inputs: &[&Path], force: bool, hint: &str) -> Result<()> {
    check_file_inner(out, inputs)?;
    if !force && out.is_file() && !written_by_readlab(out) {
        return Err(OutputError::NotOurs {
            out: out.into(),
            hint: hint.into(),
        }
        .into());
    }
    Ok(())
}

fn check_dir_inner(out: &Path, inputs: &[&Path], writes: &[&str]) -> Result<(), OutputError> {
    for input in inputs {
        if same(out, input) {
            return Err(OutputError::IsInput {
                out: out.into(),
                input: input.to_path_buf(),
            });
        }
    }
    // The directory itself, or (when it is still to be created) its nearest existing ancestor,
    // must be a directory.
    let mut at = out;
    loop {
        match std::fs::metadata(at) {
            Ok(m) if m.is_dir() => break,
            Ok(m) => {
                return Err(OutputError::NotDirectory {
                    out: at.into(),
                    kind: kind_of(m.file_type()),
                });
            }
            Err(_) => match at.parent().filter(|p| !p.as_os_str().is_empty()) {
                Some(p) => at = p,
                None => break,
            },
        }
    }
    if at.is_dir() {
        writable(out, at)?;
    }
    if out.is_dir() {
        // `prefix*`: every file already there whose name starts with the prefix (the files a
        // command names only once it has run, such as tune's `profile-4k.json`).
        let mut names: Vec<String> = Vec::new();
        for name in writes {
            match name.strip_suffix('*') {
                Some(prefix) => names.extend(
                    std::fs::read_dir(out)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .filter(|n| n.starts_with(prefix)),
                ),
                None => names.push(name.to_string()),
            }
        }
        for name in &names {
            let file = out.join(name);
            check_file_inner(&file, inputs)?;
            if file.is_file() && !written_by_readlab(&file) {
                return Err(OutputError::NotOurs {
                    out: file,
                    hint: "choose another directory".into(),
                });
            }
        }
    }
    Ok(())
}

/// Check a directory the command will create if needed and write `writes` (file names, or
/// `prefix*` for every file there whose name starts with the prefix) into: each of them already
/// there must be a file readlab wrote.
pub fn check_dir(out: &Path, inputs: &[&Path], writes: &[&str]) -> Result<()> {
    check_dir_inner(out, inputs, writes).map_err(Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(r: Result<()>) -> OutputError {
        match r {
            Err(Error::Output(e)) => e,
            other => panic!("expected an output error, got {other:?}"),
        }
    }

    #[test]
    fn an_input_is_never_an_output() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("target");
        std::fs::write(&t, b"x").unwrap();
        let e = refused(check_file(&t, &[&t]));
        assert!(matches!(e, OutputError::IsInput { .. }), "{e}");
        // Another spelling of the same path, a hard link, and a symlink are the same file.
        let dotted = d.path().join(".").join("target");
        assert!(matches!(
            refused(check_file(&dotted, &[&t])),
            OutputError::IsInput { .. }
        ));
        let hard = d.path().join("hard");
        std::fs::hard_link(&t, &hard).unwrap();
        assert!(matches!(
            refused(check_file(&hard, &[&t])),
            OutputError::IsInput { .. }
        ));
        let soft = d.path().join("soft");
        std::os::unix::fs::symlink(&t, &soft).unwrap();
        assert!(matches!(
            refused(check_file(&soft, &[&t])),
            OutputError::IsInput { .. }
        ));
        // A different file is fine, existing or not.
        let other = d.path().join("other.json");
        check_file(&other, &[&t]).unwrap();
        std::fs::write(&other, b"{}").unwrap();
        check_file(&other, &[&t]).unwrap();
    }

    #[test]
    fn a_results_directory_stands_for_its_results_file() {
        let d = tempfile::tempdir().unwrap();
        let results = d.path().join(crate::store::RESULTS);
        std::fs::write(&results, b"").unwrap();
        let e = refused(check_file(&results, &[d.path()]));
        assert!(matches!(e, OutputError::IsInput { .. }), "{e}");
        // Other files beside it are fine (a report next to the study it draws).
        check_file(&d.path().join("report.html"), &[d.path()]).unwrap();
    }

    #[test]
    fn non_regular_files_and_missing_parents_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = refused(check_file(d.path(), &[]));
        assert!(
            matches!(
                e,
                OutputError::NotRegular {
                    kind: "a directory",
                    ..
                }
            ),
            "{e}"
        );
        let e = refused(check_file(Path::new("/dev/null"), &[]));
        assert!(
            matches!(
                e,
                OutputError::NotRegular {
                    kind: "a character device",
                    ..
                }
            ),
            "{e}"
        );
        let fifo = d.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo (coreutils)");
        let e = refused(check_file(&fifo, &[]));
        assert!(
            matches!(e, OutputError::NotRegular { kind: "a FIFO", .. }),
            "{e}"
        );
        let e = refused(check_file(&d.path().join("no/such/out.json"), &[]));
        assert!(matches!(e, OutputError::NoParent { .. }), "{e}");
        assert!(!e.to_string().contains('\n'));
        // A file where a directory is expected.
        let f = d.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let e = refused(check_file(&f.join("out.json"), &[]));
        assert!(matches!(e, OutputError::NotDirectory { .. }), "{e}");
    }

    #[test]
    fn output_directories() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("target");
        std::fs::write(&t, b"x").unwrap();
        // New (nested) directories are created later; an existing one is fine.
        check_dir(&d.path().join("a/b/c"), &[&t], &["results.jsonl"]).unwrap();
        check_dir(d.path(), &[&t], &["results.jsonl"]).unwrap();
        // The target is not a directory, nor is anything under a file.
        let e = refused(check_dir(&t, &[&t], &[]));
        assert!(matches!(e, OutputError::IsInput { .. }), "{e}");
        let e = refused(check_dir(&t.join("sub"), &[], &[]));
        assert!(matches!(e, OutputError::NotDirectory { .. }), "{e}");
        // A file the command writes into the directory must not be the target.
        let e = refused(check_dir(d.path(), &[&t], &["target"]));
        assert!(matches!(e, OutputError::IsInput { .. }), "{e}");
    }

    #[test]
    fn prepared_test_data_is_never_an_output() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("prepared");
        crate::prepare::prepare(
            &crate::prepare::PrepareConfig {
                path: t.clone(),
                size: Some(64 << 10),
                overwrite: false,
            },
            &(),
        )
        .unwrap();
        assert!(holds_test_data(&t));
        let e = refused(check_file(&t, &[]));
        assert!(matches!(e, OutputError::TestData { .. }), "{e}");
        // Also as a file a command writes into a directory.
        let e = refused(check_dir(d.path(), &[], &["prepared"]));
        assert!(matches!(e, OutputError::TestData { .. }), "{e}");
        assert!(!holds_test_data(&d.path().join("none")));
    }

    #[test]
    fn readlab_recognises_its_own_outputs() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        for (text, ours) in [
            ("", true),
            ("# readlab study summary\n", true),
            ("readlab report\n", true),
            ("tables,source,label,name\n", true),
            (
                "<!DOCTYPE html>\n<html>\n<head>\n<title>readlab report</title>",
                true,
            ),
            (
                "{\"schema\":\"readlab.run/1\",\"config\":{}}\n{\"a\":1}\n",
                true,
            ),
            ("{\n  \"schema\": \"readlab.tune/1\"\n}\n", true),
            (
                "{\n  \"banners\": [],\n  \"schema\": \"readlab.report/1\"\n}\n",
                true,
            ),
            ("my notes\n", false),
            ("<!DOCTYPE html>\n<title>mine</title>", false),
            ("{\"schema\": \"other/1\"}", false),
        ] {
            std::fs::write(&f, text).unwrap();
            assert_eq!(written_by_readlab(&f), ours, "{text:?}");
            let r = check_default_file(&f, &[], false, "pass --force");
            assert_eq!(r.is_ok(), ours, "{text:?}");
            check_default_file(&f, &[], true, "pass --force").unwrap();
            assert_eq!(check_dir(d.path(), &[], &["f"]).is_ok(), ours, "{text:?}");
        }
        // Files named by a prefix: every one there is checked.
        std::fs::write(&f, "# readlab study summary\n").unwrap();
        std::fs::write(d.path().join("profile-4k.json"), "{\"mine\": 1}").unwrap();
        check_dir(d.path(), &[], &["f", "summary*"]).unwrap();
        let e = refused(check_dir(d.path(), &[], &["f", "profile-*"]));
        assert!(matches!(e, OutputError::NotOurs { .. }), "{e}");
    }

    #[test]
    fn refusals_are_bad_input() {
        let e = check_file(Path::new("/dev/null"), &[]).unwrap_err();
        assert!(e.is_bad_input());
    }
}
