//! The one rule for every file readlab reads as input (results and reports' JSON, fio's JSON, job
//! files and their includes, profiles): a regular file, opened without blocking (a FIFO never
//! stalls `open`), and read to at most a limit, in memory bounded by that limit whatever its size
//! says (a /proc file says 0 and /dev/zero never ends).

use crate::error::{Error, Result};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What a file system object is, in words: for refusing an input and an output alike.
pub(crate) fn kind_of(ft: std::fs::FileType) -> &'static str {
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

fn cannot(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::invalid(format!("{}: cannot read the {what} ({e})", path.display()))
}

/// Open `path` for reading without blocking and check that it is a regular file; `what` names
/// the input expected ("job file", "profile") in the refusals.
pub fn open(path: &Path, what: &str) -> Result<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| cannot(path, what, e))?;
    let ft = f.metadata().map_err(|e| cannot(path, what, e))?.file_type();
    if !ft.is_file() {
        return Err(Error::invalid(format!(
            "{}: {}, not a regular file; readlab reads the {what} from a regular file",
            path.display(),
            kind_of(ft)
        )));
    }
    Ok(f)
}

/// The bytes of `file` (opened from `path`), at most `limit` of them: one more is refused, with
/// what was expected, however large the file says it is.
pub fn read_open(file: &mut std::fs::File, path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let too_large = || {
        Error::invalid(format!(
            "{}: larger than {}, more than readlab reads as the {what}",
            path.display(),
            crate::units::format_bytes(limit as f64, crate::units::Style::Table),
        ))
    };
    if len > limit {
        return Err(too_large());
    }
    // Reserved from the size it says only up to the limit (a /proc file says 0, and grows).
    let mut bytes = Vec::with_capacity(len.min(limit) as usize + 1);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| cannot(path, what, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Read the regular file `path` whole, refusing anything else (without blocking on it) and
/// anything past `limit` bytes (without reading more than one byte past it).
pub fn read(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    let mut f = open(path, what)?;
    read_open(&mut f, path, limit, what)
}

/// [`read`] as UTF-8 text (a leading byte-order mark dropped).
pub fn read_text(path: &Path, limit: u64, what: &str) -> Result<String> {
    let bytes = read(path, limit, what)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::invalid(format!(
            "{}: not a text file (not UTF-8); the {what} is text",
            path.display()
        ))
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &p,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = read(&p, 100, "job file").unwrap_err().to_string();
        assert!(e.contains("a FIFO, not a regular file"), "{e}");
    }

    #[test]
    fn a_proc_file_saying_zero_is_read_to_the_limit_only() {
        let e = read(Path::new("/proc/self/maps"), 16, "job file")
            .unwrap_err()
            .to_string();
        assert!(e.contains("larger than"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x");
        std::fs::write(&p, "\u{feff}[a]\n").unwrap();
        assert_eq!(read_text(&p, 16, "job file").unwrap(), "[a]\n");
        assert!(read(&p, 3, "job file").is_err());
        assert!(read(dir.path(), 3, "job file").is_err());
    }
}
