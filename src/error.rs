//! Library errors: one enum whose messages tell the user what to do, split into bad input (exit 2) and run failures.

use std::path::PathBuf;

/// Everything that can go wrong inside the library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: no such file or device; create it with `readlab prepare {path} --size 1G`")]
    TargetNotFound { path: PathBuf },

    #[error(
        "{path}: permission denied; run as a user who can read it (block devices usually need root)"
    )]
    PermissionDenied { path: PathBuf },

    #[error(
        "{what} {value} is not a multiple of the direct-I/O alignment {align} B of {path}; use a multiple of {align} or --buffered"
    )]
    Misaligned {
        what: &'static str,
        value: u64,
        align: u64,
        path: PathBuf,
    },

    #[error(
        "block size {bs} B is larger than the range to read ({range} B) of {path}; use a smaller --bs or a larger --size"
    )]
    BlockLargerThanTarget { bs: u64, range: u64, path: PathBuf },

    #[error("{0}")]
    InvalidArgument(String),

    #[error("unknown engine '{name}'; known engines: {known}")]
    UnknownEngine { name: String, known: String },

    #[error(
        "{path} was not written by `readlab prepare`, so it cannot be verified; prepare it first or drop --verify"
    )]
    NotPrepared { path: PathBuf },

    #[error("refusing to overwrite {path}: {why}; pass --overwrite to destroy its contents")]
    Foreign { path: PathBuf, why: String },

    #[error(
        "refusing to write to {path}: it is in use ({why}); unmount it or stop what holds it first (--overwrite does not override this)"
    )]
    Busy { path: PathBuf, why: String },

    #[error(
        "{path}: not enough free space: {need} B to write, {avail} B available on its filesystem; use a smaller --size or free some space"
    )]
    NoSpace {
        path: PathBuf,
        need: u64,
        avail: u64,
    },

    #[error(
        "{path}: interrupted; what was written is not marked prepared, run the same command again"
    )]
    Interrupted { path: PathBuf },

    #[error(
        "{dir} is in use by another readlab run ({holder}); wait for it to finish or choose another --out"
    )]
    ResultsLocked { dir: PathBuf, holder: String },

    #[error(transparent)]
    Output(#[from] OutputError),

    #[error("{path}: {what}: {source}")]
    Io {
        path: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },

    #[error("{0}")]
    Engine(String),

    /// A run stopped because every one of its first reads failed: a failure of the target (or
    /// of the interface on it), not bad input.
    #[error("every read failed ({count} of {count}), first at offset {offset}: {message}{hint}")]
    ReadsFailed {
        count: u64,
        /// The first failed read: where, how long, errno (0 for a short read), and why.
        offset: u64,
        len: u64,
        errno: i32,
        message: String,
        /// The probe's explanation, starting with ". ", or empty.
        hint: String,
    },

    /// One or more ranks of an MPI fleet failed (`crate::fleet`); every rank reports the same
    /// message, naming the ranks and their own errors.
    #[error("{message}")]
    Fleet { message: String, bad_input: bool },

    /// A rank of an MPI fleet did not reach a meeting point in time (stuck or gone): the job
    /// cannot end cleanly and must be aborted.
    #[error("{0}")]
    FleetStuck(String),
}

impl Error {
    /// True when the user asked for something impossible (exit code 2, nothing was touched).
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::Fleet { bad_input, .. } => *bad_input,
            _ => !matches!(
                self,
                Error::Io { .. }
                    | Error::Engine(_)
                    | Error::ReadsFailed { .. }
                    | Error::Interrupted { .. }
                    | Error::FleetStuck(_)
            ),
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, what: &'static str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            what,
            source,
        }
    }

    pub(crate) fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }
}

/// Why an output path was refused (bad input: exit 2, nothing touched).
/// (Checked by `crate::outpath`.)
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error(
        "refusing to write {out}: it is {input}, which this command reads; choose another output path"
    )]
    IsInput { out: PathBuf, input: PathBuf },

    #[error("refusing to write {out}: it is {kind}, not a regular file; choose a file path")]
    NotRegular { out: PathBuf, kind: &'static str },

    #[error("refusing to use {out} as a directory: it is {kind}; choose a directory path")]
    NotDirectory { out: PathBuf, kind: &'static str },

    #[error("cannot write {out}: the directory {parent} does not exist; create it first")]
    NoParent { out: PathBuf, parent: PathBuf },

    #[error("cannot write {out}: {why}")]
    Unusable { out: PathBuf, why: String },

    #[error(
        "refusing to write {out}: it holds test data `readlab prepare` wrote (a target to read, not an output); choose another output path"
    )]
    TestData { out: PathBuf },

    #[error("refusing to replace {out}: readlab did not write it; {hint}")]
    NotOurs { out: PathBuf, hint: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failed read: where, and why.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct IoErrorRecord {
    pub offset: u64,
    pub len: u64,
    /// errno, or 0 for a short read.
    pub errno: i32,
    pub message: String,
}
