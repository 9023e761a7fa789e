//! Writing files so a crash never leaves half of one and nothing is written through a link:
//! every results file, summary, profile, job file, man page and report goes through
//! [`write_file`]. A leaf module (it needs only the error type), so anything may use it without
//! tying itself to the exporters.

use crate::error::{Error, OutputError, Result};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Write `content` to `path` through a temporary file in the same directory (created anew, never
/// through a link), fsync, and rename, so a crash leaves either the previous complete file or the
/// new one. Never replaces anything but a regular file, never a symbolic link (the final
/// component is not followed, nor replaced); a file that was not there is put in place only if
/// none appeared meanwhile. Callers check paths up front with [`crate::outpath`] (which also
/// says whose a file already there is); this is the last line of defence.
pub fn write_file(path: &Path, content: &str) -> Result<()> {
    write_with(path, |tmp, f| {
        f.write_all(content.as_bytes())
            .and_then(|_| f.sync_all())
            .map_err(|e| Error::io(tmp, "cannot write", e))
    })
}

/// As [`write_file`], for content `fill` puts into the temporary file (given by path and open
/// handle) itself: a PNG the drawing library writes by path. The temporary file is removed when
/// `fill` fails.
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&Path, &mut std::fs::File) -> Result<()>,
) -> Result<()> {
    let existed = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(OutputError::Symlink { out: path.into() }.into());
        }
        Ok(m) if !m.is_file() => {
            return Err(Error::invalid(format!(
                "refusing to replace {}: it is not a regular file; choose a file path",
                path.display()
            )));
        }
        Ok(_) => true,
        Err(_) => false,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| Error::invalid(format!("{}: not a file name", path.display())))?;
    let (tmp, mut f) = create_temporary(dir, &name.to_string_lossy())?;
    let done = fill(&tmp, &mut f).and_then(|_| put_in_place(&tmp, path, existed));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// A new temporary file beside the output (`.readlab-PID-N.tmp.NAME`: the output's extension
/// kept, for writers that choose the format by it), created exclusively and without following a
/// link, so a file or link already at that name is never written.
fn create_temporary(dir: &Path, name: &str) -> Result<(std::path::PathBuf, std::fs::File)> {
    let mut n = 0u32;
    loop {
        let tmp = dir.join(format!(".readlab-{}-{n}.tmp.{name}", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(Error::io(&tmp, "cannot create", e)),
        }
    }
}

/// Rename `tmp` to `path`: over the regular file that was there, or (when none was) only if none
/// has appeared since (RENAME_NOREPLACE; a plain rename where the file system lacks it).
fn put_in_place(tmp: &Path, path: &Path, existed: bool) -> Result<()> {
    let cannot = |e: std::io::Error| Error::io(path, "cannot rename into place", e);
    if existed {
        // A link put there since the check is refused rather than replaced.
        if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(OutputError::Symlink { out: path.into() }.into());
        }
        return std::fs::rename(tmp, path).map_err(cannot);
    }
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    match renameat_with(CWD, tmp, CWD, path, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::EXIST) => Err(OutputError::Appeared { out: path.into() }.into()),
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {
            std::fs::rename(tmp, path).map_err(cannot)
        }
        Err(e) => Err(cannot(e.into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_and_never_through_a_link() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out.json");
        write_file(&out, "one\n").unwrap();
        write_file(&out, "two\n").unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "two\n");
        let data = d.path().join("data");
        std::fs::write(&data, "precious").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&data, &link).unwrap();
        let e = write_file(&link, "x").unwrap_err();
        assert!(e.is_bad_input(), "{e}");
        assert_eq!(std::fs::read_to_string(&data).unwrap(), "precious");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // Nothing left behind: only the three names.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 3);
    }

    #[test]
    fn a_planted_temporary_name_is_never_written() {
        let d = tempfile::tempdir().unwrap();
        let data = d.path().join("data");
        std::fs::write(&data, "precious").unwrap();
        let planted = d
            .path()
            .join(format!(".readlab-{}-0.tmp.out", std::process::id()));
        std::os::unix::fs::symlink(&data, &planted).unwrap();
        write_file(&d.path().join("out"), "new").unwrap();
        assert_eq!(std::fs::read_to_string(&data).unwrap(), "precious");
        assert_eq!(
            std::fs::read_to_string(d.path().join("out")).unwrap(),
            "new"
        );
    }
}
