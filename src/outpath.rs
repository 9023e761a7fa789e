//! The one rule for every path readlab writes (outputs, man pages, job files, JSON, tune and
//! quick directories), checked before any work starts so an output can never destroy anything: a
//! file readlab writes is never one of the files it reads or measures (compared by device and
//! inode, and by canonical path), never a symbolic link (not even with `--force`: the final
//! component is never followed), never a device node, FIFO or directory, never a file holding
//! the test data `readlab prepare` wrote, never named by two outputs of one command, and its
//! directory exists. A file already there is replaced only if readlab wrote it, or with `force`
//! (the user's `--force`). [`crate::fsio::write_file`] then writes it whole or not at all.

pub use crate::error::OutputError;

use crate::error::{Error, Result};
use crate::input::kind_of;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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

/// The text chunk readlab writes into every PNG chart (key, value): a PNG is readlab's when it
/// carries it ahead of the image data.
pub const PNG_SOFTWARE: (&str, &str) = ("Software", "readlab");

/// Whether `head` (a file's first bytes) is a PNG with readlab's `Software` chunk: a tEXt chunk's
/// type, its key, a NUL and the value.
fn own_png(head: &[u8]) -> bool {
    let (key, value) = PNG_SOFTWARE;
    let mut mark = b"tEXt".to_vec();
    mark.extend_from_slice(key.as_bytes());
    mark.push(0);
    mark.extend_from_slice(value.as_bytes());
    head.starts_with(b"\x89PNG\r\n\x1a\n") && head.windows(mark.len()).any(|w| w == mark)
}

/// Whether `path` is a file readlab wrote: a report, comparison or summary (by its first line,
/// its CSV header or its HTML title), a fio job file (its `; written by readlab` comment), a man
/// page of readlab's manual, a log of offsets (decimal numbers, one a line, or an offset and a
/// length), a PNG chart (its `Software` chunk, [`PNG_SOFTWARE`]), or JSON whose
/// `schema` names readlab (a run document or a results file, which start with it, or a report's
/// JSON), fio's JSON as readlab writes it (`"fio version": "readlab-…"`), or a monitor's record,
/// a server's summary or a target's probe (`info`; by their keys). An empty file holds nothing
/// to lose and counts as readlab's.
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
    if own_png(&head) {
        return true;
    }
    let text = String::from_utf8_lossy(&head);
    const FIRST_LINES: [&str; 4] = [
        "# readlab ",
        "readlab ",
        "tables,source,label,",
        "; written by readlab ",
    ];
    let compact: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .take(20)
        .collect();
    let whole_json = || {
        m.len() <= OWN_JSON_MAX
            && std::fs::read(path).is_ok_and(|b| {
                serde_json::from_slice::<serde_json::Value>(&b).is_ok_and(|v| {
                    let named = |key: &str, prefix: &str| {
                        v.get(key)
                            .and_then(|s| s.as_str())
                            .is_some_and(|s| s.starts_with(prefix))
                    };
                    let has = |key: &str| v.get(key).is_some();
                    named("schema", "readlab.")
                        || named("fio version", "readlab-")
                        // `monitor --json`'s record, `serve --json`'s summary, `info --json`
                        || (has("sampler_cpu_pct") && has("samples"))
                        || (has("clients_total") && has("per_second"))
                        || (has("checks") && has("access") && has("kernel"))
                })
            })
    };
    // A man page: clap_mangen's preamble, then `.TH readlab… "readlab manual"`.
    let man_page = text
        .lines()
        .take(4)
        .any(|l| l.starts_with(".TH readlab") && l.trim_end().ends_with("\"readlab manual\""));
    let offsets = m.len() <= OWN_HEAD
        && text.ends_with('\n')
        && text.lines().all(|l| {
            // An offset, or with a mix of sizes an offset and a length.
            let w: Vec<&str> = l.split(' ').collect();
            w.len() <= 2
                && w.iter()
                    .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()))
        });
    FIRST_LINES.iter().any(|l| text.starts_with(l))
        || man_page
        || offsets
        || (text.starts_with("<!DOCTYPE html>") && text.contains("<title>readlab "))
        || compact.starts_with("{\"schema\":\"readlab.")
        || (text.starts_with('{') && whole_json())
}

/// What to say to a user whose file is in the way.
const REPLACE_HINT: &str = "remove it, choose another path, or pass --force to replace it";

fn check_file_inner(out: &Path, inputs: &[&Path]) -> Result<(), OutputError> {
    refuse_inputs(out, inputs)?;
    match std::fs::symlink_metadata(out) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(OutputError::Symlink { out: out.into() });
        }
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

/// A file already at `out` that readlab did not write is refused unless `force`.
fn refuse_foreign(out: &Path, force: bool, hint: &str) -> Result<(), OutputError> {
    if !force && out.is_file() && !written_by_readlab(out) {
        return Err(OutputError::NotOurs {
            out: out.into(),
            hint: hint.into(),
        });
    }
    Ok(())
}

/// Check a file the command will write (created, or replaced by rename) against everything the
/// command reads (`inputs`: targets, input files, job files, results directories); a file
/// already there is replaced only if readlab wrote it, or with `force`.
pub fn check_file(out: &Path, inputs: &[&Path], force: bool) -> Result<()> {
    check_default_file(out, inputs, force, REPLACE_HINT)
}

/// As [`check_file`], with `hint` saying what to do instead of replacing a file readlab did not
/// write ("name another with -o, or pass --force" for a default path the user did not name).
pub fn check_default_file(out: &Path, inputs: &[&Path], force: bool, hint: &str) -> Result<()> {
    check_file_inner(out, inputs)?;
    refuse_foreign(out, force, hint)?;
    Ok(())
}

/// The outputs of one command, each named by its flag (`--json`, `--write-job`): no two may be
/// the same file, or one would silently replace the other.
pub fn check_distinct(outs: &[(&str, &Path)]) -> Result<()> {
    for (i, (first, a)) in outs.iter().enumerate() {
        if let Some((second, _)) = outs[i + 1..].iter().find(|(_, b)| same(a, b)) {
            return Err(OutputError::Twice {
                out: a.to_path_buf(),
                first: first.to_string(),
                second: second.to_string(),
            }
            .into());
        }
    }
    Ok(())
}

fn check_dir_inner(
    out: &Path,
    inputs: &[&Path],
    writes: &[&str],
    force: bool,
) -> Result<(), OutputError> {
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
            refuse_foreign(
                &file,
                force,
                "remove it, choose another directory, or pass --force to replace it",
            )?;
        }
    }
    Ok(())
}

/// Check a directory the command will create if needed and write `writes` (file names, or
/// `prefix*` for every file there whose name starts with the prefix) into: each of them already
/// there is checked as [`check_file`] checks a file (so must be a file readlab wrote, unless
/// `force`).
pub fn check_dir(out: &Path, inputs: &[&Path], writes: &[&str], force: bool) -> Result<()> {
    check_dir_inner(out, inputs, writes, force).map_err(Error::from)
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
        let e = refused(check_file(&t, &[&t], false));
        assert!(matches!(e, OutputError::IsInput { .. }), "{e}");
        // Another spelling of the same path, a hard link, and a symlink are the same file.
        let dotted = d.path().join(".").join("target");
        assert!(matches!(
            refused(check_file(&dotted, &[&t], false)),
            OutputError::IsInput { .. }
        ));
        let hard = d.path().join("hard");
        std::fs::hard_link(&t, &hard).unwrap();
        assert!(matches!(
            refused(check_file(&hard, &[&t], false)),
            OutputError::IsInput { .. }
        ));
        let soft = d.path().join("soft");
        std::os::unix::fs::symlink(&t, &soft).unwrap();
        assert!(matches!(
            refused(check_file(&soft, &[&t], false)),
            OutputError::IsInput { .. }
        ));
        // A different file is fine, existing or not.
        let other = d.path().join("other.json");
        check_file(&other, &[&t], false).unwrap();
        std::fs::write(&other, b"{\"schema\": \"readlab.run/1\"}").unwrap();
        check_file(&other, &[&t], false).unwrap();
    }

    #[test]
    fn a_results_directory_stands_for_its_results_file() {
        let d = tempfile::tempdir().unwrap();
        let results = d.path().join(crate::store::RESULTS);
        std::fs::write(&results, b"").unwrap();
        let e = refused(check_file(&results, &[d.path()], false));
        assert!(matches!(e, OutputError::IsInput { .. }), "{e}");
        // Other files beside it are fine (a report next to the study it draws).
        check_file(&d.path().join("report.html"), &[d.path()], false).unwrap();
    }

    #[test]
    fn non_regular_files_and_missing_parents_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = refused(check_file(d.path(), &[], false));
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
        let e = refused(check_file(Path::new("/dev/null"), &[], false));
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
        let e = refused(check_file(&fifo, &[], false));
        assert!(
            matches!(e, OutputError::NotRegular { kind: "a FIFO", .. }),
            "{e}"
        );
        let e = refused(check_file(&d.path().join("no/such/out.json"), &[], false));
        assert!(matches!(e, OutputError::NoParent { .. }), "{e}");
        assert!(!e.to_string().contains('\n'));
        // A file where a directory is expected.
        let f = d.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let e = refused(check_file(&f.join("out.json"), &[], false));
        assert!(matches!(e, OutputError::NotDirectory { .. }), "{e}");
    }

    #[test]
    fn output_directories() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("target");
        std::fs::write(&t, b"x").unwrap();
        // New (nested) directories are created later; an existing one is fine.
        check_dir(&d.path().join("a/b/c"), &[&t], &["results.jsonl"], false).unwrap();
        check_dir(d.path(), &[&t], &["results.jsonl"], false).unwrap();
        // The target is not a directory, nor is anything under a file.
        let e = refused(check_dir(&t, &[&t], &[], false));
        assert!(matches!(e, OutputError::IsInput { .. }), "{e}");
        let e = refused(check_dir(&t.join("sub"), &[], &[], false));
        assert!(matches!(e, OutputError::NotDirectory { .. }), "{e}");
        // A file the command writes into the directory must not be the target.
        let e = refused(check_dir(d.path(), &[&t], &["target"], false));
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
        let e = refused(check_file(&t, &[], false));
        assert!(matches!(e, OutputError::TestData { .. }), "{e}");
        // Also as a file a command writes into a directory.
        let e = refused(check_dir(d.path(), &[], &["prepared"], false));
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
            ("; written by readlab run\n[job]\nbs=4096\n", true),
            (
                ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n.TH readlab 1  \"readlab 0.1.0\" \"readlab manual\"\n",
                true,
            ),
            ("0\n4096\n8192\n", true),
            ("{\"fio version\": \"readlab-0.1.0\", \"jobs\": []}", true),
            (
                "{\"access\": null, \"checks\": [], \"kernel\": \"6.18\"}",
                true,
            ),
            ("my notes\n", false),
            ("; my job\n[job]\nbs=4k\n", false),
            (".TH mine 1\n", false),
            ("12\nthirteen\n", false),
            ("{\"fio version\": \"fio-3.33\"}", false),
            ("<!DOCTYPE html>\n<title>mine</title>", false),
            ("{\"schema\": \"other/1\"}", false),
        ] {
            std::fs::write(&f, text).unwrap();
            assert_eq!(written_by_readlab(&f), ours, "{text:?}");
            let r = check_default_file(&f, &[], false, "pass --force");
            assert_eq!(r.is_ok(), ours, "{text:?}");
            check_default_file(&f, &[], true, "pass --force").unwrap();
            assert_eq!(
                check_dir(d.path(), &[], &["f"], false).is_ok(),
                ours,
                "{text:?}"
            );
        }
        // Files named by a prefix: every one there is checked.
        std::fs::write(&f, "# readlab study summary\n").unwrap();
        std::fs::write(d.path().join("profile-4k.json"), "{\"mine\": 1}").unwrap();
        check_dir(d.path(), &[], &["f", "summary*"], false).unwrap();
        let e = refused(check_dir(d.path(), &[], &["f", "profile-*"], false));
        assert!(matches!(e, OutputError::NotOurs { .. }), "{e}");
    }

    #[test]
    fn a_symlink_is_never_written_even_with_force() {
        let d = tempfile::tempdir().unwrap();
        let data = d.path().join("data");
        std::fs::write(&data, b"{\"schema\": \"readlab.run/1\"}").unwrap();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink(&data, &link).unwrap();
        for force in [false, true] {
            let e = refused(check_file(&link, &[], force));
            assert!(matches!(e, OutputError::Symlink { .. }), "{e}");
            let e = refused(check_dir(d.path(), &[], &["link.json"], force));
            assert!(matches!(e, OutputError::Symlink { .. }), "{e}");
        }
        // Dangling too.
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        let e = refused(check_file(&dangling, &[], true));
        assert!(matches!(e, OutputError::Symlink { .. }), "{e}");
    }

    #[test]
    fn a_foreign_file_is_replaced_only_with_force() {
        let d = tempfile::tempdir().unwrap();
        let notes = d.path().join("notes.json");
        std::fs::write(&notes, b"my notes\n").unwrap();
        let e = refused(check_file(&notes, &[], false));
        assert!(matches!(e, OutputError::NotOurs { .. }), "{e}");
        assert!(e.to_string().contains("--force"), "{e}");
        check_file(&notes, &[], true).unwrap();
    }

    #[test]
    fn two_outputs_never_name_one_file() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        let dotted = d.path().join(".").join("a");
        let b = d.path().join("b");
        check_distinct(&[("--json", &a), ("--write-job", &b)]).unwrap();
        let e = check_distinct(&[("--json", &a), ("--write-job", &b), ("--output", &dotted)]);
        let e = refused(e);
        assert!(matches!(e, OutputError::Twice { .. }), "{e}");
        assert!(e.to_string().contains("--output"), "{e}");
    }

    #[test]
    fn refusals_are_bad_input() {
        let e = check_file(Path::new("/dev/null"), &[], false).unwrap_err();
        assert!(e.is_bad_input());
    }
}
