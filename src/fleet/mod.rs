//! A fleet: several processes (MPI ranks, on one host or many) measuring as one. Every rank runs
//! the same workload on its own target (`{rank}`, `{local_rank}`, `{host}` in the target name),
//! all meet once set up and start at one agreed instant, and rank 0 gathers one document: every
//! rank's result and the fleet's aggregate. readlab has no daemon of its own; the processes are
//! started by an MPI launcher (mpirun, Slurm's srun, the Kubernetes MPI Operator).
//!
//! - `comm`: what the fleet needs from MPI, as byte-level collectives with deadlines ([`Comm`]),
//!   and the lone process that needs no MPI; `mpi` (feature `mpi`) the real thing.
//! - `clock`: the wall clock, rank 0's clock offset from ping-pong exchanges, waiting for an instant.
//! - `gate`: the runner's [`StartGate`](crate::runner::StartGate) for a fleet: agree on set-up,
//!   learn the clock offsets, start at one instant.
//! - `merge`: the ranks' results into the aggregate and the fleet record.
//! - `run`: one fleet run (and repetitions) with its failure protocol; `study`: studies.
//! - `table`: the fleet's lines of the terminal table.
//!
//! Nothing outside this module knows about MPI: the rest of readlab sees a [`Fleet`].

mod clock;
mod comm;
mod gate;
mod merge;
#[cfg(feature = "mpi")]
mod mpi;
pub mod run;
pub mod study;
pub mod table;

pub use clock::realtime_ns;
pub use comm::Comm;
pub use merge::aggregate;

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a rank waits for the others at a meeting point (set-up done, clocks, results) beyond
/// the time the run itself takes, before it declares one of them stuck and the job aborted.
pub const MEET_WITHIN: Duration = Duration::from_secs(60);

/// Who this process is in the fleet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    pub rank: usize,
    pub local_rank: usize,
    pub host: String,
    /// The kernel's boot id: ranks with rank 0's boot id read the very same clock.
    pub boot_id: String,
}

/// The processes of one launch, as this process sees them.
pub struct Fleet {
    comm: Box<dyn Comm>,
    members: Vec<Member>,
}

/// The environment variables MPI launchers set in every process they start, and the one saying
/// how many there are when a launcher says so.
const LAUNCHER_VARS: [(&str, Option<&str>); 4] = [
    ("OMPI_COMM_WORLD_RANK", Some("OMPI_COMM_WORLD_SIZE")),
    ("PMI_RANK", Some("PMI_SIZE")),
    ("PMIX_RANK", None),
    ("MPI_LOCALRANKID", Some("MPI_LOCALNRANKS")),
];

/// Whether an MPI launcher started this process, and how many processes it says it started (None
/// when it does not say).
pub fn launcher() -> Option<Option<usize>> {
    let mut found = None;
    for (rank, size) in LAUNCHER_VARS {
        if std::env::var_os(rank).is_some() {
            let n = size
                .and_then(|s| std::env::var(s).ok())
                .and_then(|s| s.trim().parse::<usize>().ok());
            found = Some(found.flatten().or(n));
        }
    }
    found
}

impl Fleet {
    /// The fleet this process belongs to: None when no MPI launcher started it (readlab then
    /// runs alone, as always). Started by a launcher, readlab built without the `mpi` feature
    /// refuses to run more than one rank: each would measure alone and write the same files.
    pub fn launch() -> Result<Option<Fleet>> {
        let Some(size) = launcher() else {
            return Ok(None);
        };
        #[cfg(feature = "mpi")]
        {
            let _ = size;
            let comm = mpi::Mpi::init()?;
            Fleet::over(Box::new(comm)).map(Some)
        }
        #[cfg(not(feature = "mpi"))]
        {
            if size == Some(1) {
                return Ok(None);
            }
            Err(Error::invalid(format!(
                "an MPI launcher started this readlab{}, but it was built without MPI: every rank would measure alone and write the same files; build it with `cargo build --release --features mpi`",
                size.map(|n| format!(" as one of {n} ranks"))
                    .unwrap_or_default()
            )))
        }
    }

    /// A fleet of one process, without MPI (tests, and the shape of a lone run).
    pub fn solo() -> Fleet {
        Fleet::over(Box::new(comm::Solo)).expect("a lone process meets only itself")
    }

    /// A fleet over `comm`: every member learns who the others are.
    pub fn over(comm: Box<dyn Comm>) -> Result<Fleet> {
        let me = Member {
            rank: comm.rank(),
            local_rank: comm.local_rank(),
            host: hostname(),
            boot_id: std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
                .map(|s| s.trim().to_string())
                .unwrap_or_default(),
        };
        let mine = serde_json::to_vec(&me).expect("members serialise");
        let all = comm.all_gather(&mine, MEET_WITHIN, "start-up")?;
        let members = all
            .iter()
            .map(|b| serde_json::from_slice(b))
            .collect::<std::result::Result<Vec<Member>, _>>()
            .map_err(|e| Error::Mpi(format!("fleet start-up: a rank sent garbage ({e})")))?;
        Ok(Fleet { comm, members })
    }

    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    pub fn size(&self) -> usize {
        self.members.len()
    }

    pub fn is_root(&self) -> bool {
        self.rank() == 0
    }

    pub fn me(&self) -> &Member {
        &self.members[self.rank()]
    }

    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Whether rank `r` reads rank 0's clock (same machine, same boot).
    fn shares_root_clock(&self, r: usize) -> bool {
        let (a, b) = (&self.members[r].boot_id, &self.members[0].boot_id);
        !a.is_empty() && a == b
    }

    /// Whether this host has a core per rank, so a rank may spin for a precise start (with more
    /// ranks than cores, a spinner keeps another rank from waking: milliseconds of skew).
    fn spare_cores(&self) -> bool {
        let here = self
            .members
            .iter()
            .filter(|m| m.boot_id == self.me().boot_id)
            .count();
        here <= online_cpus()
    }

    /// The target this rank reads: `template` with `{rank}`, `{local_rank}` and `{host}` filled in.
    pub fn expand(&self, template: &Path) -> PathBuf {
        PathBuf::from(expand(&template.to_string_lossy(), self.me()))
    }

    /// Every rank's outcome, agreed: `local` when every rank succeeded, else on every rank the
    /// same error naming each failed rank and its message. Collective: every rank calls it.
    pub fn agree<T>(&self, local: Result<T>, at: &str) -> Result<T> {
        let mine = local.as_ref().err().map(Failure::of);
        let all = self.comm.all_gather(
            &serde_json::to_vec(&mine).expect("failures serialise"),
            MEET_WITHIN,
            at,
        )?;
        let failed: Vec<(usize, Failure)> = all
            .iter()
            .enumerate()
            .filter_map(|(r, b)| {
                let f: Option<Failure> = serde_json::from_slice(b).unwrap_or_else(|e| {
                    Some(Failure {
                        message: format!("sent an unreadable status ({e})"),
                        bad_input: false,
                    })
                });
                f.map(|f| (r, f))
            })
            .collect();
        if failed.is_empty() {
            return local;
        }
        Err(self.failure(&failed))
    }

    /// One error for every rank's failures: each rank with its host and message.
    fn failure(&self, failed: &[(usize, Failure)]) -> Error {
        const SHOWN: usize = 4;
        let mut parts: Vec<String> = failed
            .iter()
            .take(SHOWN)
            .map(|(r, f)| format!("rank {r} ({}): {}", self.members[*r].host, f.message))
            .collect();
        if failed.len() > SHOWN {
            parts.push(format!("and {} more ranks", failed.len() - SHOWN));
        }
        Error::Fleet {
            message: format!(
                "{} of {} ranks failed: {}",
                failed.len(),
                self.size(),
                parts.join("; ")
            ),
            bad_input: failed.iter().all(|(_, f)| f.bad_input),
        }
    }

    /// Rank 0's bytes on every rank.
    pub fn broadcast(&self, root: &[u8], within: Duration, at: &str) -> Result<Vec<u8>> {
        self.comm.broadcast(root, within, at)
    }

    /// Every rank's bytes on rank 0 (None elsewhere).
    pub fn gather(&self, mine: &[u8], within: Duration, at: &str) -> Result<Option<Vec<Vec<u8>>>> {
        self.comm.gather(mine, within, at)
    }

    /// Every rank's bytes on every rank.
    pub fn all_gather(&self, mine: &[u8], within: Duration, at: &str) -> Result<Vec<Vec<u8>>> {
        self.comm.all_gather(mine, within, at)
    }

    /// End every rank of the job now (after a rank got stuck): never returns.
    pub fn abort(&self, code: i32) -> ! {
        self.comm.abort(code)
    }
}

/// A rank's failure as the others learn it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Failure {
    message: String,
    bad_input: bool,
}

impl Failure {
    fn of(e: &Error) -> Failure {
        Failure {
            message: e.to_string(),
            bad_input: e.is_bad_input(),
        }
    }
}

/// `template` with `{rank}`, `{local_rank}` and `{host}` filled in for `m`; other text, braces
/// included, is kept as it is.
pub fn expand(template: &str, m: &Member) -> String {
    template
        .replace("{rank}", &m.rank.to_string())
        .replace("{local_rank}", &m.local_rank.to_string())
        .replace("{host}", &m.host)
}

/// CPUs online on this machine, whatever this process's affinity (launchers bind ranks to cores).
fn online_cpus() -> usize {
    std::fs::read_to_string("/proc/stat")
        .map(|s| {
            s.lines()
                .filter(|l| {
                    l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit)
                })
                .count()
        })
        .unwrap_or(1)
        .max(1)
}

/// This machine's name, as the results name it.
pub fn hostname() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(rank: usize) -> Member {
        Member {
            rank,
            local_rank: rank % 2,
            host: format!("node{}", rank / 2),
            boot_id: "b".into(),
        }
    }

    #[test]
    fn targets_name_their_rank_host_and_local_rank() {
        let m = member(3);
        assert_eq!(expand("/dev/loop{rank}", &m), "/dev/loop3");
        assert_eq!(
            expand("/data/{host}/f{local_rank}-{rank}.dat", &m),
            "/data/node1/f1-3.dat"
        );
        assert_eq!(expand("/x/{other}/{rank", &m), "/x/{other}/{rank");
    }

    #[test]
    fn a_lone_fleet_agrees_with_itself() {
        let f = Fleet::solo();
        assert_eq!((f.rank(), f.size(), f.is_root()), (0, 1, true));
        assert_eq!(f.agree(Ok(5), "test").unwrap(), 5);
        let e = f
            .agree::<()>(
                Err(Error::TargetNotFound {
                    path: "/dev/nope".into(),
                }),
                "test",
            )
            .unwrap_err();
        assert!(e.is_bad_input(), "{e}");
        let msg = e.to_string();
        assert!(
            msg.starts_with("1 of 1 ranks failed: rank 0 (") && msg.contains("/dev/nope: no such"),
            "{msg}"
        );
        assert_eq!(
            f.expand(Path::new("/t/{rank}")),
            PathBuf::from("/t/0"),
            "a lone process is rank 0"
        );
    }
}
