//! Writing files so a crash never leaves half of one: every results file, summary, profile and
//! report goes through [`write_file`]. A leaf module (it needs only the error type), so anything
//! may use it without tying itself to the exporters.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Write `content` to `path` through a temporary file, fsync, and rename, so a crash leaves either
/// the previous complete file or the new one.
pub fn write_file(path: &Path, content: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| Error::invalid(format!("{}: not a file name", path.display())))?;
    let tmp = dir.join(format!(".{}.tmp", name.to_string_lossy()));
    let mut f = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, "cannot create", e))?;
    f.write_all(content.as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(&tmp, "cannot write", e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, "cannot rename into place", e))
}
