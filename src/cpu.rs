//! Where the CPU really goes: every thread of this process (application threads and the kernel's
//! io_uring helpers `iou-sqp-*` / `iou-wrk-*` that live in it) plus machine-wide busy time, which
//! catches loop/virtio work no process is charged for, and what else ran meanwhile: other
//! processes and time stolen by the hypervisor, so a result can say it was disturbed.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Instant;

/// The monitor's sampler thread (`crate::monitor::THREAD_NAME`), left out of the figures.
pub const MONITOR_THREAD: &str = "readlab-mon";

/// Kinds of thread, told apart by their name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThreadKind {
    App,
    SqPoll,
    IoWorker,
}

impl ThreadKind {
    pub fn of(comm: &str) -> ThreadKind {
        if comm.starts_with("iou-sqp-") {
            ThreadKind::SqPoll
        } else if comm.starts_with("iou-wrk-") {
            ThreadKind::IoWorker
        } else {
            ThreadKind::App
        }
    }
}

#[derive(Debug, Clone)]
struct ThreadTimes {
    kind: ThreadKind,
    user_ticks: u64,
    sys_ticks: u64,
    run_ns: u64,
}

/// CPU counters at one instant.
#[derive(Debug, Clone)]
pub struct CpuSnapshot {
    at: Instant,
    threads: HashMap<u32, ThreadTimes>,
    process_ticks: u64,
    /// Idle + iowait ticks of all CPUs (measured precisely by the kernel even where user/system
    /// ticks are sampled and lost, as in VMs).
    machine_idle: u64,
    /// Steal ticks of all CPUs: time the hypervisor gave this VM's CPUs to someone else.
    machine_steal: u64,
    /// user + system ticks of every other process (kernel threads left out), by pid, with the
    /// process's start time so a reused pid is not mistaken for the same process.
    others: HashMap<u32, (u64, u64)>,
    /// The CPUs' mean clock in MHz, where visible.
    clock_mhz: Option<f64>,
}

/// CPU used by one kind of thread during the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KindCpu {
    pub threads: usize,
    pub user_s: f64,
    pub sys_s: f64,
    /// Run time from schedstat (ns precision; user/sys come from 1/100 s ticks).
    pub total_s: f64,
    /// total_s as a percentage of one core over the window.
    pub pct_of_core: f64,
}

/// CPU over the measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CpuUsage {
    pub window_s: f64,
    pub app: KindCpu,
    pub sqpoll: KindCpu,
    pub io_worker: KindCpu,
    /// Whole process from /proc/self/stat (includes threads that exited during the window).
    pub process_pct_of_core: f64,
    /// Busy time of the whole machine (all processes, interrupts, kernel threads), % of one core.
    pub machine_busy_pct_of_core: f64,
    pub machine_cores: usize,
    /// CPU of every other process (kernel threads left out: they may be working for readlab),
    /// % of one core. Processes that started and ended inside the window are not seen.
    #[serde(default)]
    pub other_processes_pct_of_core: f64,
    /// Time the hypervisor ran something else on this machine's CPUs, % of one core.
    #[serde(default)]
    pub steal_pct_of_core: f64,
    /// The CPUs' mean clock (MHz) when the window began and when it ended, where the machine
    /// shows it (cpufreq, else /proc/cpuinfo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_mhz: Option<[f64; 2]>,
}

impl CpuUsage {
    /// Seconds of CPU spent by this process's threads of every kind.
    pub fn process_total_s(&self) -> f64 {
        self.app.total_s + self.sqpoll.total_s + self.io_worker.total_s
    }

    /// CPU of this process's threads of every kind (kernel helpers included), % of one core.
    pub fn threads_pct_of_core(&self) -> f64 {
        self.app.pct_of_core + self.sqpoll.pct_of_core + self.io_worker.pct_of_core
    }
}

fn ticks_per_s() -> f64 {
    // USER_HZ is 100 on every Linux ABI readlab runs on.
    100.0
}

/// Fields after the `(comm)` of a /proc stat line, and the comm.
fn split_stat(line: &str) -> Option<(&str, Vec<&str>)> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let comm = &line[open + 1..close];
    Some((comm, line[close + 1..].split_whitespace().collect()))
}

fn utime_stime(fields: &[&str]) -> Option<(u64, u64)> {
    // After the comm: state(0) ... utime is field 14 of the line, i.e. index 11 here.
    Some((fields.get(11)?.parse().ok()?, fields.get(12)?.parse().ok()?))
}

/// The kernel's flag for its own threads, in /proc/PID/stat's `flags`.
const PF_KTHREAD: u64 = 0x0020_0000;

/// user + system ticks of every process but this one, kernel threads left out.
fn other_processes() -> HashMap<u32, (u64, u64)> {
    let me = std::process::id();
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some((_, f)) = split_stat(&stat) else {
            continue;
        };
        // After the comm: state(0) ppid(1) … flags(6) … utime(11) stime(12) … starttime(19).
        let flags: u64 = f.get(6).and_then(|v| v.parse().ok()).unwrap_or(0);
        if flags & PF_KTHREAD != 0 {
            continue;
        }
        let (Some((u, s)), Some(start)) = (
            utime_stime(&f),
            f.get(19).and_then(|v| v.parse::<u64>().ok()),
        ) else {
            continue;
        };
        out.insert(pid, (start, u + s));
    }
    out
}

/// Ticks used by processes in `later` since `earlier` (a process new in `later` counts from the
/// time it started, which lies inside the window).
fn other_ticks(earlier: &HashMap<u32, (u64, u64)>, later: &HashMap<u32, (u64, u64)>) -> u64 {
    later
        .iter()
        .map(|(pid, &(start, ticks))| match earlier.get(pid) {
            Some(&(s0, t0)) if s0 == start => ticks.saturating_sub(t0),
            _ => ticks,
        })
        .sum()
}

/// The CPUs' mean clock in MHz: cpufreq's current frequencies where the kernel has cpufreq, else
/// the `cpu MHz` lines of /proc/cpuinfo (x86); None where neither says.
fn clock_mhz() -> Option<f64> {
    let mut khz = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu") {
        for e in dir.flatten() {
            let f = e.path().join("cpufreq/scaling_cur_freq");
            if let Some(v) = std::fs::read_to_string(f)
                .ok()
                .and_then(|t| t.trim().parse::<f64>().ok())
            {
                khz.push(v);
            }
        }
    }
    if !khz.is_empty() {
        return Some(khz.iter().sum::<f64>() / khz.len() as f64 / 1000.0);
    }
    cpuinfo_mhz(&std::fs::read_to_string("/proc/cpuinfo").ok()?)
}

/// Mean of the `cpu MHz` lines of a /proc/cpuinfo text.
fn cpuinfo_mhz(cpuinfo: &str) -> Option<f64> {
    let v: Vec<f64> = cpuinfo
        .lines()
        .filter(|l| l.starts_with("cpu MHz"))
        .filter_map(|l| l.split(':').nth(1)?.trim().parse().ok())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Steal ticks of all CPUs from /proc/stat.
fn machine_steal_ticks() -> u64 {
    let s = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("cpu "))
        .and_then(|l| l.split_whitespace().nth(8))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Idle + iowait ticks of all CPUs from /proc/stat.
fn machine_idle_ticks() -> u64 {
    let s = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = s.lines().find(|l| l.starts_with("cpu ")) else {
        return 0;
    };
    // user nice system idle iowait irq softirq steal guest guest_nice
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0)
}

/// CPU seconds used so far by every thread of this process, living or exited: the kernel's
/// `CLOCK_PROCESS_CPUTIME_ID`, which sums the whole thread group, io_uring's `iou-wrk-*` and
/// `iou-sqp-*` threads included (checked on 6.18: a spinning SQPOLL thread and io-wq workers
/// reading /dev/zero were counted in full). One system call (under a microsecond), where a
/// [`CpuSnapshot`] reads /proc for every thread and process (about a millisecond): cheap
/// enough to take ten times a second. It differs from [`CpuUsage::process_total_s`] by the
/// monitor's sampler thread, which it counts too.
pub fn process_cpu_s() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

impl CpuSnapshot {
    pub fn take() -> CpuSnapshot {
        let mut threads = HashMap::new();
        if let Ok(dir) = std::fs::read_dir("/proc/self/task") {
            for e in dir.flatten() {
                let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                    continue;
                };
                let p = e.path();
                let Ok(stat) = std::fs::read_to_string(p.join("stat")) else {
                    continue;
                };
                let Some((comm, fields)) = split_stat(&stat) else {
                    continue;
                };
                // The monitor's sampler reports its own cost; it is not the cost of reading.
                if comm == MONITOR_THREAD {
                    continue;
                }
                let Some((user_ticks, sys_ticks)) = utime_stime(&fields) else {
                    continue;
                };
                let run_ns = std::fs::read_to_string(p.join("schedstat"))
                    .ok()
                    .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
                    .unwrap_or((user_ticks + sys_ticks) * 10_000_000);
                threads.insert(
                    tid,
                    ThreadTimes {
                        kind: ThreadKind::of(comm),
                        user_ticks,
                        sys_ticks,
                        run_ns,
                    },
                );
            }
        }
        let process_ticks = std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|s| {
                let (_, f) = split_stat(&s)?;
                let (u, s) = utime_stime(&f)?;
                Some(u + s)
            })
            .unwrap_or(0);
        CpuSnapshot {
            at: Instant::now(),
            threads,
            process_ticks,
            machine_idle: machine_idle_ticks(),
            machine_steal: machine_steal_ticks(),
            others: other_processes(),
            clock_mhz: clock_mhz(),
        }
    }

    /// CPU used between `self` (earlier) and `later`. Threads born in between count from zero.
    pub fn usage_until(&self, later: &CpuSnapshot) -> CpuUsage {
        let cores = crate::env::cpus();
        if later.at <= self.at {
            // No window (a run stopped before its measured window began): nothing was used in
            // it, and every share of it is zero rather than a count divided by nothing.
            return CpuUsage {
                machine_cores: cores,
                ..CpuUsage::default()
            };
        }
        let window = later.at.duration_since(self.at).as_secs_f64().max(1e-9);
        let hz = ticks_per_s();
        let mut kinds: HashMap<ThreadKind, KindCpu> = HashMap::new();
        for (tid, b) in &later.threads {
            let (u0, s0, r0) = self
                .threads
                .get(tid)
                .map(|a| (a.user_ticks, a.sys_ticks, a.run_ns))
                .unwrap_or((0, 0, 0));
            let k = kinds.entry(b.kind).or_default();
            k.threads += 1;
            k.user_s += b.user_ticks.saturating_sub(u0) as f64 / hz;
            k.sys_s += b.sys_ticks.saturating_sub(s0) as f64 / hz;
            k.total_s += b.run_ns.saturating_sub(r0) as f64 / 1e9;
        }
        let mut take = |kind| {
            let mut k = kinds.remove(&kind).unwrap_or_default();
            k.pct_of_core = 100.0 * k.total_s / window;
            k
        };
        // Busy = wall time of every core minus its idle time. Summing user+system ticks instead
        // undercounts in VMs, where the tick sampling misses time.
        let idle_s = later.machine_idle.saturating_sub(self.machine_idle) as f64 / hz;
        let busy_s = (window * cores as f64 - idle_s).max(0.0);
        CpuUsage {
            window_s: window,
            app: take(ThreadKind::App),
            sqpoll: take(ThreadKind::SqPoll),
            io_worker: take(ThreadKind::IoWorker),
            process_pct_of_core: 100.0
                * (later.process_ticks.saturating_sub(self.process_ticks) as f64 / hz)
                / window,
            machine_busy_pct_of_core: 100.0 * busy_s / window,
            machine_cores: cores,
            other_processes_pct_of_core: 100.0
                * (other_ticks(&self.others, &later.others) as f64 / hz)
                / window,
            steal_pct_of_core: 100.0
                * (later.machine_steal.saturating_sub(self.machine_steal) as f64 / hz)
                / window,
            clock_mhz: self.clock_mhz.zip(later.clock_mhz).map(|(a, b)| [a, b]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_from_cpuinfo() {
        let t = "processor\t: 0\ncpu MHz\t\t: 2000.000\nprocessor\t: 1\ncpu MHz\t\t: 3000.0\n";
        assert_eq!(cpuinfo_mhz(t), Some(2500.0));
        assert_eq!(cpuinfo_mhz("processor: 0\n"), None);
    }

    #[test]
    fn an_empty_window_used_nothing() {
        let a = CpuSnapshot::take();
        let u = a.usage_until(&a.clone());
        assert_eq!(u.threads_pct_of_core(), 0.0);
        assert_eq!(u.machine_busy_pct_of_core, 0.0);
        assert_eq!(u.process_pct_of_core, 0.0);
        assert!(u.machine_cores >= 1);
    }

    #[test]
    fn kinds_by_name() {
        assert_eq!(ThreadKind::of("iou-sqp-1234"), ThreadKind::SqPoll);
        assert_eq!(ThreadKind::of("iou-wrk-1234"), ThreadKind::IoWorker);
        assert_eq!(ThreadKind::of("readlab"), ThreadKind::App);
    }

    #[test]
    fn stat_with_odd_comm_parses() {
        let line = "12 (a (b) c) S 1 2 3 4 5 6 7 8 9 10 111 222 0 0";
        let (comm, f) = split_stat(line).unwrap();
        assert_eq!(comm, "a (b) c");
        assert_eq!(utime_stime(&f), Some((111, 222)));
    }

    fn thread_cpu() -> std::time::Duration {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    #[test]
    fn a_busy_thread_is_counted_in_full() {
        // Spin until this thread has used 300 ms of CPU (not wall time, so a loaded machine
        // cannot make it fail): the app figure must hold at least that much.
        let a = CpuSnapshot::take();
        let start = thread_cpu();
        let mut x = 0u64;
        while thread_cpu() - start < std::time::Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let u = a.usage_until(&CpuSnapshot::take());
        assert!(u.app.total_s >= 0.29, "{u:?}");
        assert!(
            u.app.pct_of_core <= 100.0 * crate::env::cpus() as f64 + 10.0,
            "{u:?}"
        );
    }

    #[test]
    fn another_busy_process_is_seen_and_a_reused_pid_is_new() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let a = CpuSnapshot::take();
        std::thread::sleep(std::time::Duration::from_millis(500));
        let b = CpuSnapshot::take();
        child.kill().unwrap();
        child.wait().unwrap();
        let u = a.usage_until(&b);
        assert!(
            u.other_processes_pct_of_core > 30.0,
            "a spinning shell used {}% of a core",
            u.other_processes_pct_of_core
        );
        let earlier = HashMap::from([(7, (100, 50))]);
        let later = HashMap::from([(7, (900, 20))]);
        assert_eq!(other_ticks(&earlier, &later), 20, "pid 7 was reused");
    }
}
