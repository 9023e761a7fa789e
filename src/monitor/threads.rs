//! Where a process's threads are, many times a second, the way Tanel Poder's `psn` samples them:
//! each thread's state from `/proc/PID/task/TID/stat`, its kernel wait channel from `wchan` and
//! its system call from `syscall`, grouped by (kind, state, syscall, wchan). Kinds: application
//! threads, io_uring's `iou-sqp` and `iou-wrk` helpers, and `other`: kernel threads elsewhere on
//! the machine seen running or in disk wait (loop and kworker threads doing the device's work).
//! Files stay open between samples and are re-read in place, so a sample costs a few reads.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// What a thread is, by its name.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// The process's own threads.
    App,
    /// io_uring's submission-queue poll thread (`iou-sqp-*`).
    IouSqp,
    /// io_uring's async workers (`iou-wrk-*`), which take reads that cannot complete inline
    /// (buffered reads that miss the page cache).
    IouWrk,
    /// Kernel threads outside the process, counted only when running or in disk wait.
    Other,
}

impl Kind {
    pub fn of(comm: &str) -> Kind {
        match crate::cpu::ThreadKind::of(comm) {
            crate::cpu::ThreadKind::App => Kind::App,
            crate::cpu::ThreadKind::SqPoll => Kind::IouSqp,
            crate::cpu::ThreadKind::IoWorker => Kind::IouWrk,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::App => "app",
            Kind::IouSqp => "iou-sqp",
            Kind::IouWrk => "iou-wrk",
            Kind::Other => "other",
        }
    }
}

/// A thread's scheduler state, psn's way.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// On a CPU or waiting for one (R).
    Running,
    /// Uninterruptible sleep, usually disk or page-lock wait (D).
    Disk,
    /// Sleeping (S, I).
    Sleeping,
    /// Stopped, traced, zombie.
    Other,
}

impl State {
    pub fn of(c: char) -> State {
        match c {
            'R' => State::Running,
            'D' => State::Disk,
            'S' | 'I' => State::Sleeping,
            _ => State::Other,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            State::Running => "running",
            State::Disk => "disk",
            State::Sleeping => "sleeping",
            State::Other => "other",
        }
    }

    fn active(self) -> bool {
        matches!(self, State::Running | State::Disk)
    }
}

/// Threads of one kind over an interval: how many on average, and in which state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KindCount {
    pub kind: Option<Kind>,
    /// Mean number of threads seen per sample (for `other`: only active ones).
    pub threads: f64,
    pub running: f64,
    pub disk: f64,
    pub sleeping: f64,
    /// Largest number of threads of this kind in one sample.
    pub max_threads: u64,
}

/// One (kind, state, syscall, wchan) group, psn's output row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadGroup {
    pub kind: Kind,
    pub state: State,
    /// System call name, `[running]` when on a CPU, `[kernel]` for kernel threads and io_uring
    /// helpers, `[user]` for a thread stopped outside any system call.
    pub syscall: String,
    /// Kernel function the thread waits in (`0` when it is not waiting), or the thread's name
    /// pattern for `other` (e.g. `kworker/u*:*+loop0`).
    pub wchan: String,
    /// For `other`: the kernel thread's name with digits as `*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comm: Option<String>,
    pub samples: u64,
    /// samples / thread samples taken: mean threads in this group.
    pub avg_threads: f64,
}

/// The process's threads over one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadsSample {
    /// Thread samples taken in the interval.
    pub thread_samples: u64,
    /// CPU of the whole process over the interval, % of one core (user, system; 1/100 s ticks).
    pub cpu_usr_pct: f64,
    pub cpu_sys_pct: f64,
    pub kinds: Vec<KindCount>,
    /// Groups by samples, active (running, disk) before sleeping, the largest first.
    pub top: Vec<ThreadGroup>,
}

/// Groups kept per interval.
pub const TOP: usize = 12;

struct Task {
    kind: Kind,
    comm: String,
    stat: File,
    wchan: Option<File>,
    syscall: Option<File>,
}

type GroupKey = (Kind, State, String, String, Option<String>);

/// Samples one process's threads (and active kernel threads) and accumulates an interval.
pub struct ThreadSampler {
    pid: Option<u32>,
    /// The sampler's own thread, left out when it samples its own process.
    exclude: Option<u32>,
    tasks: HashMap<u32, Task>,
    kthreads: HashMap<u32, Task>,
    proc_stat: Option<File>,
    buf: Vec<u8>,
    samples: u64,
    groups: HashMap<GroupKey, u64>,
    /// Per kind: summed thread count, running, disk, sleeping; largest count.
    counts: HashMap<Kind, ([u64; 4], u64)>,
    cpu_ticks: Option<(u64, u64)>,
}

fn task_dir(pid: u32) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/task"))
}

/// State and comm from a stat line `TID (comm) S ...`.
fn parse_stat(text: &str) -> Option<(char, &str, Vec<&str>)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let rest: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let state = rest.first()?.chars().next()?;
    Some((state, &text[open + 1..close], rest))
}

/// A kernel thread's name as a pattern: digits become `*` (`kworker/u4:2+loop0` → `kworker/u*:*+loop*`).
pub fn comm_pattern(comm: &str) -> String {
    let mut out = String::with_capacity(comm.len());
    let mut prev_star = false;
    for c in comm.chars() {
        if c.is_ascii_digit() {
            if !prev_star {
                out.push('*');
            }
            prev_star = true;
        } else {
            out.push(c);
            prev_star = false;
        }
    }
    out
}

/// What `/proc/.../syscall` says, as a name.
pub fn syscall_name(text: &str) -> String {
    let first = text.split_whitespace().next().unwrap_or("");
    match first {
        "running" => "[running]".into(),
        "-1" => "[user]".into(),
        "" => "?".into(),
        n => match n.parse::<i64>() {
            Ok(nr) => super::syscalls::name(nr)
                .map(str::to_string)
                .unwrap_or_else(|| format!("syscall_{nr}")),
            Err(_) => n.to_string(),
        },
    }
}

const PF_KTHREAD: u64 = 0x0020_0000;

/// Open one thread of the sampled process (`/proc/PID/task/TID`).
fn open_task(p: &std::path::Path) -> Option<Task> {
    let stat = File::open(p.join("stat")).ok()?;
    let comm = std::fs::read_to_string(p.join("comm"))
        .unwrap_or_default()
        .trim()
        .to_string();
    let kind = Kind::of(&comm);
    Some(Task {
        kind,
        comm,
        stat,
        wchan: File::open(p.join("wchan")).ok(),
        // io_uring's helpers never return to user space: no syscall to read.
        syscall: (kind == Kind::App)
            .then(|| File::open(p.join("syscall")).ok())
            .flatten(),
    })
}

impl ThreadSampler {
    /// A sampler for process `pid` (None: kernel threads only). A PID that does not exist is
    /// bad input.
    pub fn new(pid: Option<u32>) -> Result<ThreadSampler> {
        let proc_stat = match pid {
            Some(p) => Some(File::open(format!("/proc/{p}/stat")).map_err(|_| {
                Error::invalid(format!(
                    "no process with PID {p}; give the PID of a running process (see `pgrep fio`)"
                ))
            })?),
            None => None,
        };
        let mut s = ThreadSampler {
            pid,
            exclude: None,
            tasks: HashMap::new(),
            kthreads: HashMap::new(),
            proc_stat,
            buf: vec![0; 4096],
            samples: 0,
            groups: HashMap::new(),
            counts: HashMap::new(),
            cpu_ticks: None,
        };
        s.cpu_ticks = s.process_ticks();
        s.rescan_kernel();
        Ok(s)
    }

    /// Leave this thread (the sampler's own) out.
    pub fn exclude(&mut self, tid: u32) {
        self.exclude = Some(tid);
    }

    fn read<'a>(buf: &'a mut [u8], f: &File) -> Option<&'a str> {
        let n = f.read_at(buf, 0).ok()?;
        std::str::from_utf8(&buf[..n]).ok()
    }

    fn process_ticks(&mut self) -> Option<(u64, u64)> {
        let f = self.proc_stat.as_ref()?;
        let t = Self::read(&mut self.buf, f)?;
        let (_, _, rest) = parse_stat(t)?;
        Some((rest.get(11)?.parse().ok()?, rest.get(12)?.parse().ok()?))
    }

    /// Find the machine's kernel threads again (they come and go; kworkers especially).
    pub fn rescan_kernel(&mut self) {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return;
        };
        let mut seen = Vec::new();
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if Some(pid) == self.pid {
                continue;
            }
            seen.push(pid);
            if self.kthreads.contains_key(&pid) {
                continue;
            }
            let Ok(stat) = File::open(e.path().join("stat")) else {
                continue;
            };
            let Some(t) = Self::read(&mut self.buf, &stat) else {
                continue;
            };
            let Some((_, comm, rest)) = parse_stat(t) else {
                continue;
            };
            let flags: u64 = rest.get(6).and_then(|v| v.parse().ok()).unwrap_or(0);
            if flags & PF_KTHREAD == 0 {
                continue;
            }
            let comm = comm.to_string();
            self.kthreads.insert(
                pid,
                Task {
                    kind: Kind::Other,
                    comm,
                    stat,
                    wchan: File::open(e.path().join("wchan")).ok(),
                    syscall: None,
                },
            );
        }
        self.kthreads.retain(|p, _| seen.contains(p));
    }

    /// True while the process runs (a zombie has ended: it waits only to be reaped).
    fn process_alive(&mut self) -> bool {
        let Some(f) = &self.proc_stat else {
            return true;
        };
        match Self::read(&mut self.buf, f).and_then(parse_stat) {
            Some((state, _, _)) => !matches!(state, 'Z' | 'X'),
            None => false,
        }
    }

    /// One sample of every thread. False when the process is gone.
    pub fn sample(&mut self) -> bool {
        let mut alive = self.process_alive();
        let mut per_kind: HashMap<Kind, [u64; 4]> = HashMap::new();
        if let Some(pid) = self.pid {
            match std::fs::read_dir(task_dir(pid)) {
                Ok(dir) => {
                    let mut seen = Vec::new();
                    for e in dir.flatten() {
                        let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok())
                        else {
                            continue;
                        };
                        if Some(tid) == self.exclude {
                            continue;
                        }
                        seen.push(tid);
                        if let std::collections::hash_map::Entry::Vacant(v) = self.tasks.entry(tid)
                            && let Some(t) = open_task(&e.path())
                        {
                            v.insert(t);
                        }
                    }
                    self.tasks.retain(|t, _| seen.contains(t));
                }
                Err(_) => {
                    alive = false;
                    self.tasks.clear();
                }
            }
        }
        let buf = &mut self.buf;
        let mut observe = |task: &Task, counted_idle: bool| -> Option<(Kind, State)> {
            let (state, _, _) = parse_stat(Self::read(buf, &task.stat)?)?;
            let state = State::of(state);
            if !counted_idle && !state.active() {
                return None;
            }
            let wchan = task
                .wchan
                .as_ref()
                .and_then(|f| Self::read(buf, f).map(|s| s.trim().to_string()))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "0".into());
            let syscall = match (&task.syscall, task.kind) {
                (Some(f), _) => Self::read(buf, f).map_or_else(|| "?".into(), syscall_name),
                (None, Kind::App) => "?".into(),
                (None, _) => "[kernel]".into(),
            };
            let comm = (task.kind == Kind::Other).then(|| comm_pattern(&task.comm));
            *self
                .groups
                .entry((task.kind, state, syscall, wchan, comm))
                .or_default() += 1;
            Some((task.kind, state))
        };
        for t in self.tasks.values() {
            if let Some((k, s)) = observe(t, true) {
                let c = per_kind.entry(k).or_default();
                c[0] += 1;
                match s {
                    State::Running => c[1] += 1,
                    State::Disk => c[2] += 1,
                    State::Sleeping => c[3] += 1,
                    State::Other => {}
                }
            }
        }
        for t in self.kthreads.values() {
            if let Some((k, s)) = observe(t, false) {
                let c = per_kind.entry(k).or_default();
                c[0] += 1;
                c[if s == State::Running { 1 } else { 2 }] += 1;
            }
        }
        for (k, c) in per_kind {
            let e = self.counts.entry(k).or_default();
            for (acc, v) in e.0.iter_mut().zip(c) {
                *acc += v;
            }
            e.1 = e.1.max(c[0]);
        }
        self.samples += 1;
        alive
    }

    /// The interval's figures (`dt` seconds long); starts the next interval.
    pub fn take(&mut self, dt: f64) -> ThreadsSample {
        let n = self.samples.max(1) as f64;
        let mut kinds: Vec<KindCount> = std::mem::take(&mut self.counts)
            .into_iter()
            .map(|(k, (c, max))| KindCount {
                kind: Some(k),
                threads: c[0] as f64 / n,
                running: c[1] as f64 / n,
                disk: c[2] as f64 / n,
                sleeping: c[3] as f64 / n,
                max_threads: max,
            })
            .collect();
        kinds.sort_by_key(|k| k.kind);
        let mut top: Vec<ThreadGroup> = std::mem::take(&mut self.groups)
            .into_iter()
            .map(
                |((kind, state, syscall, wchan, comm), samples)| ThreadGroup {
                    kind,
                    state,
                    syscall,
                    wchan,
                    comm,
                    samples,
                    avg_threads: samples as f64 / n,
                },
            )
            .collect();
        top.sort_by(|a, b| {
            (!a.state.active(), std::cmp::Reverse(a.samples), a.kind)
                .cmp(&(!b.state.active(), std::cmp::Reverse(b.samples), b.kind))
                .then_with(|| a.wchan.cmp(&b.wchan))
        });
        top.truncate(TOP);
        let ticks = self.process_ticks();
        let (usr, sys) = match (self.cpu_ticks, ticks) {
            (Some((u0, s0)), Some((u1, s1))) => (u1.saturating_sub(u0), s1.saturating_sub(s0)),
            _ => (0, 0),
        };
        if ticks.is_some() {
            self.cpu_ticks = ticks;
        }
        let dt = dt.max(1e-9);
        let out = ThreadsSample {
            thread_samples: self.samples,
            cpu_usr_pct: usr as f64 / dt,
            cpu_sys_pct: sys as f64 / dt,
            kinds,
            top,
        };
        self.samples = 0;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_patterns() {
        assert_eq!(comm_pattern("kworker/u4:2+loop0"), "kworker/u*:*+loop*");
        assert_eq!(comm_pattern("ksoftirqd/1"), "ksoftirqd/*");
        assert_eq!(syscall_name("running"), "[running]");
        assert_eq!(syscall_name("-1 0x7ffd 0x4005"), "[user]");
        assert_eq!(Kind::of("iou-wrk-77"), Kind::IouWrk);
        assert_eq!(Kind::of("iou-sqp-77"), Kind::IouSqp);
        assert_eq!(Kind::of("readlab-w0"), Kind::App);
        assert_eq!(State::of('D'), State::Disk);
        assert_eq!(State::of('I'), State::Sleeping);
    }

    #[test]
    fn a_sleeping_child_is_seen_in_its_syscall() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let mut s = ThreadSampler::new(Some(child.id())).unwrap();
        // Let it reach its nanosleep.
        std::thread::sleep(std::time::Duration::from_millis(200));
        for _ in 0..5 {
            assert!(s.sample());
        }
        let t = s.take(0.5);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(t.thread_samples, 5);
        let app = t.kinds.iter().find(|k| k.kind == Some(Kind::App)).unwrap();
        assert_eq!(app.threads, 1.0, "{t:?}");
        assert_eq!(app.sleeping, 1.0, "{t:?}");
        let g = t
            .top
            .iter()
            .find(|g| g.kind == Kind::App)
            .expect("the child's group");
        assert_eq!(g.state, State::Sleeping);
        assert!(g.syscall.contains("nanosleep"), "{g:?}");
        assert!(!s.sample(), "the process is gone");
    }

    #[test]
    fn a_missing_pid_is_bad_input() {
        let e = ThreadSampler::new(Some(u32::MAX - 1))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no process with PID"), "{e}");
    }
}
