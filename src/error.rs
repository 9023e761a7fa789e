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

    /// A signal (SIGINT, SIGTERM) ended a wait before the run: where it was, e.g. "negotiating
    /// with nbd://127.0.0.1:10809/ (waiting for the server's reply to NBD_OPT_GO)".
    #[error("interrupted while {0}")]
    InterruptedWhile(String),

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

    /// An engine failed to set up or to read (io_uring, libaio, the pool…): a failure of the
    /// interface on this machine, not bad input.
    #[error("{0}")]
    Engine(String),

    /// A worker could not set up its engine; the message is the worker's own error. What a
    /// process of a fleet tells the others at the start gate (`crate::runner::StartGate`).
    #[error("{0}")]
    SetupFailed(String),

    /// A document or result could not be written as JSON (a value serde cannot represent).
    #[error("cannot serialise {what}: {source}")]
    Json {
        /// What was being written: "results", "the report", "a result", "the document".
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },

    /// A chart could not be drawn (its backend failed: no font, a file it cannot write).
    #[error("cannot draw chart {chart}: {why}{hint}")]
    Draw {
        chart: String,
        why: String,
        /// What to install when the backend found no font, starting with " (", or empty.
        hint: &'static str,
    },

    /// A thread of readlab's own ended without its result (it panicked): a bug, not bad input.
    #[error("{0}")]
    ThreadDied(&'static str),

    /// An external program readlab runs (iproute2's `ip`) could not be started, or failed.
    #[error("{message}; {needs}")]
    Tool {
        /// What failed: "cannot run `ip` (iproute2): …" or "`ip netns add …` failed: …".
        message: String,
        /// Why readlab ran it, and what the user can do instead.
        needs: String,
    },

    /// The ranks of an MPI fleet could not work together: MPI refused, a rank sent what cannot
    /// be read, or the ranks' results do not fit together. A failure of the job, not bad input.
    #[error("{0}")]
    Mpi(String),

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
    /// Every variant is named here (no `_`), so a new one must be classified.
    pub fn is_bad_input(&self) -> bool {
        match self {
            Error::TargetNotFound { .. }
            | Error::PermissionDenied { .. }
            | Error::Misaligned { .. }
            | Error::BlockLargerThanTarget { .. }
            | Error::InvalidArgument(_)
            | Error::UnknownEngine { .. }
            | Error::NotPrepared { .. }
            | Error::Foreign { .. }
            | Error::Busy { .. }
            | Error::NoSpace { .. }
            | Error::ResultsLocked { .. }
            | Error::Output(_) => true,
            Error::Fleet { bad_input, .. } => *bad_input,
            Error::Io { .. }
            | Error::Interrupted { .. }
            | Error::InterruptedWhile(_)
            | Error::Engine(_)
            | Error::SetupFailed(_)
            | Error::Json { .. }
            | Error::Draw { .. }
            | Error::ThreadDied(_)
            | Error::Tool { .. }
            | Error::Mpi(_)
            | Error::ReadsFailed { .. }
            | Error::FleetStuck(_) => false,
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

    #[error("refusing to replace {out}: it exists and readlab did not write it; {hint}")]
    NotOurs { out: PathBuf, hint: String },

    #[error(
        "refusing to write {out}: it is a symbolic link and readlab never writes through one; remove the link or choose another path"
    )]
    Symlink { out: PathBuf },

    #[error(
        "refusing to write {out} twice: {first} and {second} both name it; give each its own file"
    )]
    Twice {
        out: PathBuf,
        first: String,
        second: String,
    },

    #[error(
        "refusing to replace {out}: it appeared while readlab was writing it; remove it or pass --force, and run again"
    )]
    Appeared { out: PathBuf },
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_is_decided_by_the_kind_of_error() {
        let json = serde_json::from_str::<u8>("x").unwrap_err();
        for (e, bad) in [
            (Error::invalid("--bs 3"), true),
            (Error::NotPrepared { path: "/x".into() }, true),
            (
                Error::Fleet {
                    message: "rank 1 failed".into(),
                    bad_input: true,
                },
                true,
            ),
            (Error::Engine("io_uring_setup failed".into()), false),
            (Error::SetupFailed("no engine".into()), false),
            (
                Error::Json {
                    what: "results",
                    source: json,
                },
                false,
            ),
            (
                Error::Draw {
                    chart: "c".into(),
                    why: "no font".into(),
                    hint: "",
                },
                false,
            ),
            (Error::ThreadDied("a worker thread panicked"), false),
            (
                Error::Tool {
                    message: "cannot run `ip`".into(),
                    needs: "install iproute2".into(),
                },
                false,
            ),
            (Error::Mpi("a fleet of no ranks".into()), false),
            (Error::FleetStuck("rank 2 is late".into()), false),
        ] {
            assert_eq!(e.is_bad_input(), bad, "{e:?}");
        }
    }

    #[test]
    fn new_kinds_say_what_the_strings_said() {
        let json = serde_json::from_str::<u8>("x").unwrap_err();
        let shown = json.to_string();
        let e = Error::Json {
            what: "the report",
            source: json,
        };
        assert_eq!(
            e.to_string(),
            format!("cannot serialise the report: {shown}")
        );
        let e = Error::Tool {
            message: "`ip netns add x` failed: busy".into(),
            needs: "run as root".into(),
        };
        assert_eq!(e.to_string(), "`ip netns add x` failed: busy; run as root");
        let e = Error::Draw {
            chart: "iops".into(),
            why: "no font".into(),
            hint: " (install a font)",
        };
        assert_eq!(
            e.to_string(),
            "cannot draw chart iops: no font (install a font)"
        );
    }
}
