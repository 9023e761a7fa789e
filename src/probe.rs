//! The capability probe: what a target is and which read interfaces and io_uring features work on
//! it, and why not. `readlab info` prints it; `readlab run` uses the same words to refuse or warn.

use crate::config::RunConfig;
use crate::engine::EngineKind;
use crate::env::DeviceInfo;

/// Why IOPOLL cannot work on a device without poll queues.
pub fn iopoll_unsupported(dev: &DeviceInfo) -> String {
    format!(
        "IOPOLL needs a device with poll queues (io_poll=1, e.g. nvme poll_queues>0); {} has none, \
         so every polled read would fail with EOPNOTSUPP. Drop --iopoll",
        dev.name.as_deref().unwrap_or("this target")
    )
}

/// Why RWF_HIPRI does nothing on a device without poll queues.
pub fn hipri_ignored(dev: &DeviceInfo) -> String {
    format!(
        "RWF_HIPRI is ignored: {} has no poll queues (io_poll=0), so reads complete by interrupt as usual",
        dev.name.as_deref().unwrap_or("this target's device")
    )
}

pub const BUFFERED_LIBAIO: &str = "buffered libaio is synchronous: without O_DIRECT io_submit performs \
     the reads of each batch before it returns, so nothing is in flight between submits; use --direct";

pub const POSIXAIO_ONE_PER_FD: &str = "glibc POSIX AIO runs one read at a time per file descriptor: \
     deeper queues only line reads up behind each other (latency grows with --iodepth, IOPS does not); \
     use more --numjobs for parallelism";

pub const SQPOLL_DEFER_TASKRUN: &str = "SQPOLL cannot be combined with DEFER_TASKRUN (the kernel rejects it \
     with EINVAL, and COOP_TASKRUN too on recent kernels); readlab sets up SQPOLL rings without them";

/// Whether `o` asks for polled completions (pvsync2's RWF_HIPRI, io_uring's IOPOLL).
fn polled(o: &EngineOptions) -> bool {
    Pvsync2Options::of(o).hipri || UringOptions::of(o).iopoll
}

/// Refusals and warnings for a run, decided before any I/O. Errors are bad input.
pub fn check_run(cfg: &RunConfig, dev: &DeviceInfo) -> crate::error::Result<Vec<String>> {
    let mut warnings = Vec::new();
    if UringOptions::of(&cfg.options).iopoll && dev.io_poll != Some(true) {
        return Err(crate::error::Error::InvalidArgument(iopoll_unsupported(
            dev,
        )));
    }
    if Pvsync2Options::of(&cfg.options).hipri && dev.io_poll != Some(true) {
        warnings.push(hipri_ignored(dev));
    }
    if cfg.engine == EngineKind::Libaio && !cfg.direct {
        warnings.push(BUFFERED_LIBAIO.into());
    }
    if cfg.engine == EngineKind::Posixaio && cfg.iodepth * cfg.blocks_per_request > 1 {
        warnings.push(POSIXAIO_ONE_PER_FD.into());
    }
    Ok(warnings)
}

/// Explain an errno the way the probe would, for the run's error messages.
pub fn explain_errno(errno: i32, cfg: &RunConfig) -> Option<String> {
    match errno {
        libc::EOPNOTSUPP if UringOptions::of(&cfg.options).iopoll => Some(
            "IOPOLL needs a device with poll queues (io_poll=1, e.g. nvme poll_queues>0); this one has none, \
             so every polled read fails with EOPNOTSUPP. Drop --iopoll"
                .into(),
        ),
        libc::EINVAL if cfg.direct => Some(
            "O_DIRECT reads must be aligned to the device's logical block size in offset, length and memory"
                .into(),
        ),
        _ => None,
    }
}

use crate::buffer::BufferPool;
use crate::engine::{
    self, Completion, EngineOptions, EngineSetup, Io, Pvsync2Options, UringOptions,
};
use crate::source::{Target, local as target};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// How one interface behaves on the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Reads work as intended.
    Works,
    /// Reads work but the feature does nothing here (e.g. RWF_HIPRI without poll queues).
    Ignored,
    /// Reads work but complete synchronously (e.g. buffered libaio).
    Synchronous,
    /// Reads fail; `detail` says why.
    Fails,
}

/// One interface/feature tried on the target.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Check {
    /// What was tried, as `readlab run` options (e.g. "uring --fixed-bufs").
    pub name: String,
    pub direct: bool,
    pub status: Status,
    /// Latency of the one probe read, when it completed.
    pub latency_ns: Option<u64>,
    /// Features in use after fallback (io_uring setup flags).
    pub features: Vec<String>,
    pub detail: String,
}

/// Everything `readlab info` knows about a target.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Report {
    pub target: Target,
    pub device: DeviceInfo,
    pub filesystem: Option<String>,
    pub kernel: String,
    /// Why the target cannot be opened at all, when it cannot (the facts above come from sysfs).
    pub access: Option<String>,
    /// Why reads of the target measure memory rather than a device, when they do (tmpfs, a RAM
    /// disk, a loop device over a file in memory; buffered reads of a target in the page cache):
    /// said first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    pub checks: Vec<Check>,
}

/// What sysfs says about a block device this process may not open (e.g. a mounted root disk in a
/// sandbox), so `info` can still describe it.
fn target_from_sysfs(path: &std::path::Path, dev: &DeviceInfo) -> Option<Target> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    let name = dev.name.as_deref()?;
    let sectors = crate::env::sysfs_u64(
        &std::path::Path::new("/sys/class/block")
            .join(name)
            .join("size"),
    )?;
    let lbs = dev.logical_block_size.unwrap_or(512);
    Some(Target {
        path: path.into(),
        kind: crate::source::TargetKind::Block,
        size: sectors * 512,
        dio_offset_align: lbs,
        dio_mem_align: lbs,
        direct_supported: true,
        prepared_id: None,
    })
}

/// Reads of a polled check (`--iopoll`, `--hipri`) whose completion interrupts are counted.
const POLL_PROBE_READS: u64 = 4;

/// Longest a probe read may take before it is reported as hung.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a probe read gave no completion (said in the report's detail column).
#[derive(Debug, thiserror::Error)]
enum ProbeFailed {
    #[error(transparent)]
    Read(crate::error::Error),
    #[error("cannot start a probe thread: {0}")]
    NoThread(std::io::Error),
    #[error("no completion within {} s: the read hangs here", PROBE_TIMEOUT.as_secs())]
    Hung,
}

/// One read of the first block through `kind`, on a thread of its own so that a read that never
/// completes is reported instead of hanging the probe.
fn probe_read(
    t: &Target,
    kind: EngineKind,
    options: EngineOptions,
    direct: bool,
) -> (Result<(i64, u64), ProbeFailed>, Vec<String>) {
    let path = t.path.clone();
    let len = t.dio_offset_align.max(4096).min(t.size.max(512)) as usize;
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("readlab-probe".into())
        .spawn(move || {
            let res = (|| -> crate::error::Result<((i64, u64), Vec<String>)> {
                let file = target::open_read(&path, direct)?;
                let mut e = engine::open(
                    kind,
                    EngineSetup {
                        handles: vec![file.into()],
                        pool: BufferPool::new(1, len),
                        depth: 1,
                        direct,
                        options,
                    },
                )?;
                let features = e.features();
                let started = Instant::now();
                e.queue(Io {
                    file: 0,
                    token: 0,
                    offset: 0,
                    len: len as u32,
                })?;
                e.submit()?;
                let mut out: Vec<Completion> = Vec::with_capacity(1);
                while out.is_empty() {
                    e.reap(1, &mut out)?;
                }
                Ok(((out[0].res, started.elapsed().as_nanos() as u64), features))
            })();
            let _ = tx.send(res);
        });
    if let Err(e) = spawned {
        return (Err(ProbeFailed::NoThread(e)), Vec::new());
    }
    match rx.recv_timeout(PROBE_TIMEOUT) {
        Ok(Ok((r, f))) => (Ok(r), f),
        Ok(Err(e)) => (Err(ProbeFailed::Read(e)), Vec::new()),
        Err(_) => (Err(ProbeFailed::Hung), Vec::new()),
    }
}

/// Names of the io_uring worker threads currently alive in this process.
fn io_workers() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    std::fs::read_to_string(e.path().join("comm"))
                        .is_ok_and(|c| c.starts_with("iou-wrk-"))
                })
                .count()
        })
        .unwrap_or(0)
}

/// Whether the kernel accepts SQPOLL together with DEFER_TASKRUN (it should not).
fn sqpoll_with_defer_taskrun() -> std::io::Result<()> {
    io_uring::IoUring::<io_uring::squeue::Entry, io_uring::cqueue::Entry>::builder()
        .setup_sqpoll(10)
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(4)
        .map(drop)
}

/// Try every interface and feature on `path` with one small read each.
/// An empty target has nothing to read, so every "works" of the table would be a read of
/// nothing: refused, saying what to do (an unattached loop device is the usual one).
fn check_not_empty(t: &Target) -> crate::error::Result<()> {
    if t.size > 0 {
        return Ok(());
    }
    let p = t.path.display();
    Err(crate::error::Error::invalid(match t.kind {
        crate::source::TargetKind::Block => format!(
            "{p}: the device is empty (0 B; a loop device with nothing attached?); attach a file (`losetup {p} FILE`) or name another device"
        ),
        _ => format!("{p}: the file is empty (0 B); fill it with `readlab prepare {p} --size 1G`"),
    }))
}

pub fn probe(path: &std::path::Path) -> crate::error::Result<Report> {
    let dev = DeviceInfo::of(path);
    let t = match Target::inspect(path) {
        Ok(t) => t,
        Err(e @ crate::error::Error::PermissionDenied { .. }) => return unopened(path, dev, e),
        Err(e) => return Err(e),
    };
    check_not_empty(&t)?;
    let polls = dev.io_poll == Some(true);
    let queues = if polls {
        crate::irq::Queues::of(path)
    } else {
        None
    };
    let prober = Prober {
        t: &t,
        dev: &dev,
        polls,
        queues,
    };
    let mut checks = Vec::new();
    let cases = cases();
    for direct in [true, false] {
        if direct && !t.direct_supported {
            checks.push(Check {
                name: "O_DIRECT".into(),
                direct,
                status: Status::Fails,
                latency_ns: None,
                features: Vec::new(),
                detail: "the filesystem does not support O_DIRECT; use --buffered".into(),
            });
            continue;
        }
        for (name, kind, o) in &cases {
            if polled(o) && !direct {
                continue; // polling exists only for direct I/O
            }
            checks.push(prober.check(name, *kind, o, direct));
        }
    }
    checks.push(Check {
        name: "uring SQPOLL + DEFER_TASKRUN".into(),
        direct: true,
        status: match sqpoll_with_defer_taskrun() {
            Ok(()) => Status::Works,
            Err(_) => Status::Fails,
        },
        latency_ns: None,
        features: Vec::new(),
        detail: SQPOLL_DEFER_TASKRUN.into(),
    });
    // The whole environment (cpuinfo, meminfo, sysfs again) is not needed here, only these two.
    Ok(Report {
        access: None,
        memory: crate::residency::before_reading(path, t.size),
        filesystem: crate::env::filesystem(&t),
        kernel: crate::env::kernel(),
        target: t,
        device: dev,
        checks,
    })
}

/// The report on a target this process may not open (`e`): what sysfs says of it and why no
/// interface can be tried; `e` itself when sysfs does not know it either.
fn unopened(
    path: &std::path::Path,
    dev: DeviceInfo,
    e: crate::error::Error,
) -> crate::error::Result<Report> {
    let Some(t) = target_from_sysfs(path, &dev) else {
        return Err(e);
    };
    let why = std::fs::File::open(path)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_else(|| "permission denied".into());
    Ok(Report {
        kernel: crate::env::kernel(),
        filesystem: None,
        target: t,
        device: dev,
        memory: crate::residency::target_in_memory(path),
        access: Some(format!(
            "cannot open {} ({why}): no interface can be tried; the facts above come from sysfs. \
             Run as a user allowed to read the device (outside a sandbox or device cgroup that forbids it)",
            path.display()
        )),
        checks: Vec::new(),
    })
}

/// Every registered engine that reads, in each feature variant its spec lists: (its name as
/// `readlab run` options, the engine, its options).
fn cases() -> Vec<(String, EngineKind, EngineOptions)> {
    EngineKind::all()
        .filter(|k| k.capabilities().does_io)
        .flat_map(|k| {
            (k.spec().variants)().into_iter().map(move |(flags, o)| {
                let name = if flags.is_empty() {
                    k.name().to_string()
                } else {
                    format!("{} {flags}", k.name())
                };
                (name, k, o)
            })
        })
        .collect()
}

/// What the probe knows of the target while it tries each interface on it.
struct Prober<'a> {
    t: &'a Target,
    dev: &'a DeviceInfo,
    /// The device has poll queues (io_poll=1).
    polls: bool,
    /// Its queues, whose completion interrupts can be counted (polled devices only).
    queues: Option<crate::irq::Queues>,
}

impl Prober<'_> {
    /// One interface in one mode: a read through it, and what that says.
    fn check(&self, name: &str, kind: EngineKind, o: &EngineOptions, direct: bool) -> Check {
        let (t, dev) = (self.t, self.dev);
        let polled = polled(o);
        let workers_before = io_workers();
        // Polled reads on a device whose queues' interrupts can be counted: did the kernel
        // poll them? A few reads, so one stray interrupt does not decide.
        let irq = self
            .queues
            .as_ref()
            .filter(|_| polled)
            .and_then(|q| Some((q, crate::irq::Snapshot::take()?)));
        let (res, features) = probe_read(t, kind, o.clone(), direct);
        let completions = irq.and_then(|(q, before)| {
            for _ in 1..POLL_PROBE_READS {
                let _ = probe_read(t, kind, o.clone(), direct);
            }
            let after = crate::irq::Snapshot::take()?;
            crate::irq::CompletionInterrupts::between(q, &before, &after, POLL_PROBE_READS)
        });
        let punted = kind == EngineKind::Uring && io_workers() > workers_before;
        let (status, latency_ns, detail) = match res {
            Ok((n, ns)) if n >= 0 => (Status::Works, Some(ns), String::new()),
            Ok((n, _)) => {
                let errno = (-n) as i32;
                let why = std::io::Error::from_raw_os_error(errno).to_string();
                let detail = if UringOptions::of(o).iopoll && errno == libc::EOPNOTSUPP {
                    iopoll_unsupported(dev)
                } else if Pvsync2Options::of(o).nowait && errno == libc::EAGAIN {
                    "RWF_NOWAIT: the data is not cached, so the read was refused with EAGAIN \
                     (counted apart from errors in a run)"
                        .into()
                } else {
                    why
                };
                (Status::Fails, None, detail)
            }
            Err(e) => (Status::Fails, None, e.to_string()),
        };
        let (status, mut detail) = if status == Status::Works {
            self.worked(kind, o, direct, completions.as_ref())
        } else {
            (status, detail)
        };
        if punted {
            detail = format!(
                "{}{}reads were punted to io-wq worker threads (iou-wrk-*): each costs a thread \
                 hand-off; runs count their CPU",
                detail,
                if detail.is_empty() { "" } else { "; " }
            );
        }
        Check {
            name: name.to_string(),
            direct,
            status,
            latency_ns,
            features,
            detail,
        }
    }

    /// A read that worked: whether the feature did here what it is for, and why not.
    fn worked(
        &self,
        kind: EngineKind,
        o: &EngineOptions,
        direct: bool,
        completions: Option<&crate::irq::CompletionInterrupts>,
    ) -> (Status, String) {
        let polls = self.polls;
        let (hipri, iopoll) = (Pvsync2Options::of(o).hipri, UringOptions::of(o).iopoll);
        let mut status = Status::Works;
        let mut detail = String::new();
        if hipri && !polls {
            status = Status::Ignored;
            detail = hipri_ignored(self.dev);
        } else if kind == EngineKind::Libaio && !direct {
            status = Status::Synchronous;
            detail = BUFFERED_LIBAIO.into();
        } else if iopoll && !polls {
            detail = "completed, but this device reports io_poll=0".into();
        } else if let Some(c) = completions {
            let asked = if iopoll { "--iopoll" } else { "--hipri" };
            match c.not_polled(asked) {
                Some(w) => {
                    status = Status::Ignored;
                    detail = w;
                }
                None => detail = c.words(),
            }
        }
        (status, detail)
    }
}

/// The capability table for the terminal: `readlab info`'s text, every line within `width` columns.
pub fn render(r: &Report, width: usize) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    if let Some(m) = &r.memory {
        let _ = writeln!(s, "warning: {m}\n");
    }
    describe(r, &mut s);
    let _ = writeln!(s);
    if let Some(a) = &r.access {
        let _ = writeln!(s, "access     {a}");
        return s;
    }
    checks_table(&r.checks, width, &mut s);
    s
}

/// The target, its device, queue, direct I/O and data, a line each.
fn describe(r: &Report, s: &mut String) {
    use crate::units::{Style, format_bytes};
    use std::fmt::Write;
    let t = &r.target;
    let d = &r.device;
    let yn = |b: Option<bool>| match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    };
    let _ = writeln!(
        s,
        "target     {} ({}, {} = {} B), kernel {}",
        t.path.display(),
        match t.kind {
            crate::source::TargetKind::File => "regular file",
            crate::source::TargetKind::Block => "block device",
            crate::source::TargetKind::Nbd => "NBD export",
        },
        format_bytes(t.size as f64, Style::Table),
        t.size,
        r.kernel
    );
    let _ = writeln!(
        s,
        "device     {}{}, model {}, scheduler {}, rotational {}, io_poll {}",
        d.name.as_deref().unwrap_or("none (no block device)"),
        r.filesystem
            .as_deref()
            .map(|f| format!(" ({f})"))
            .unwrap_or_default(),
        d.model.as_deref().unwrap_or("?"),
        d.scheduler.as_deref().unwrap_or("?"),
        yn(d.rotational),
        yn(d.io_poll),
    );
    let _ = writeln!(
        s,
        "queue      logical block {} B, physical {} B, read_ahead {} KiB, nr_requests {}, max_sectors {} KiB",
        d.logical_block_size.map_or("?".into(), |v| v.to_string()),
        d.physical_block_size.map_or("?".into(), |v| v.to_string()),
        d.read_ahead_kb.map_or("?".into(), |v| v.to_string()),
        d.nr_requests.map_or("?".into(), |v| v.to_string()),
        d.max_sectors_kb.map_or("?".into(), |v| v.to_string()),
    );
    if let Some(b) = &d.loop_backing_file {
        let _ = writeln!(
            s,
            "loop       backing file {}, direct I/O {}",
            b,
            yn(d.loop_direct_io)
        );
    }
    let _ = writeln!(
        s,
        "direct I/O {}; alignment: offset/length {} B, memory {} B",
        if r.access.is_some() {
            "unknown (cannot open)"
        } else if t.direct_supported {
            "supported"
        } else {
            "NOT supported"
        },
        t.dio_offset_align,
        t.dio_mem_align
    );
    let _ = writeln!(
        s,
        "data       {}",
        match (t.prepared_id, &r.access) {
            (_, Some(_)) => "unknown (cannot read the first sector)".into(),
            (Some(id), None) => format!("prepared by readlab (file id {id:016x}): --verify works"),
            (None, None) => "not prepared by readlab: reads work, --verify does not".into(),
        }
    );
}

/// The checks as a table within `width` columns, then why each interface is ignored, synchronous
/// or fails, in full, once per interface.
fn checks_table(checks: &[Check], width: usize, s: &mut String) {
    use crate::units::{Style, format_ns};
    use std::fmt::Write;
    // The table fits the terminal; why an interface is ignored, synchronous or fails is said
    // under it in full, once per interface.
    let mut table = crate::table::Table::new(vec![
        crate::table::Column::left("interface").keep(),
        crate::table::Column::left("mode").keep(),
        crate::table::Column::left("status").keep(),
        crate::table::Column::right("1st read").priority(1),
        crate::table::Column::left("features"),
    ]);
    let mut why: Vec<(String, Vec<&str>, &str)> = Vec::new();
    for c in checks {
        let status = match c.status {
            Status::Works => "works",
            Status::Ignored => "IGNORED",
            Status::Synchronous => "SYNCHRONOUS",
            Status::Fails => "FAILS",
        };
        let mode = if c.direct { "direct" } else { "buffered" };
        table.push([
            c.name.clone(),
            mode.into(),
            if c.detail.is_empty() {
                status.to_string()
            } else {
                format!("{status} (*)")
            },
            c.latency_ns
                .map_or("-".into(), |n| format_ns(n as f64, Style::Table)),
            c.features.join(" "),
        ]);
        if !c.detail.is_empty() {
            match why
                .iter_mut()
                .find(|(n, _, d)| *n == c.name && *d == c.detail)
            {
                Some((_, modes, _)) => modes.push(mode),
                None => why.push((c.name.clone(), vec![mode], &c.detail)),
            }
        }
    }
    s.push_str(&table.text_within(width));
    if !why.is_empty() {
        let _ = writeln!(s, "\n(*) why:");
        for (name, modes, detail) in why {
            let line = format!("  {name} ({}): {detail}", modes.join(", "));
            let _ = writeln!(s, "{}", crate::terminal::wrap(&line, width));
        }
    }
}
