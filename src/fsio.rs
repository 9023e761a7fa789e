//! Writing files so a crash never leaves half of one: every results file, summary, profile and
//! report goes through [`write_file`]. A leaf module (it needs only the error type), so anything
//! may use it without tying itself to the exporters.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Write `content` to `path` through a temporary file, fsync, and rename, so a crash leaves either
/// the previous complete file or the new one. Never renames over anything but a regular file (or
/// a symlink, which is replaced, not followed); callers check paths up front with
/// [`crate::outpath`], this is the last line of defence.
pub fn write_file(path: &Path, content: &str) -> Result<()> {
    if let Ok(m) = std::fs::symlink_metadata(path)
        && !m.is_file()
        && !m.file_type().is_symlink()
    {
        return Err(Error::invalid(format!(
            "refusing to replace {}: it is not a regular file",
            path.display()
        )));
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| Error::invalid(format!("{}: not a file name", path.display())))?;
    // One temporary name per process, so two writers never share a half-written file.
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let mut f = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, "cannot create", e))?;
    let done = f
        .write_all(content.as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(&tmp, "cannot write", e))
        .and_then(|_| {
            std::fs::rename(&tmp, path).map_err(|e| Error::io(path, "cannot rename into place", e))
        });
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}
