//! `uring`: reads through io_uring (the `io-uring` crate), like fio's `io_uring` engine.
//!
//! One ring per worker thread, created on that thread. Options: a registered file (fixed-file
//! SQEs), the buffer region registered once (READ_FIXED), a kernel SQ poll thread, polled
//! completions. Unless `plain_setup`, the ring also asks for COOP_TASKRUN, SINGLE_ISSUER and
//! DEFER_TASKRUN (never with SQPOLL, which the kernel refuses) and a registered ring fd; flags the
//! kernel rejects with EINVAL are left out, one at a time, and [`Engine::features`] lists what was
//! really used.
//!
//! The hot path allocates nothing: `queue` writes one SQE into the ring, `submit` makes at most one
//! `io_uring_enter` per batch (none while an SQ poll thread is awake), and `reap` only enters the
//! kernel when the completions already posted are not enough.
//!
//! `register_ring_fd` is remembered by the `Submitter` it was called on, so the engine keeps the
//! `Submitter`, `SubmissionQueue` and `CompletionQueue` of one `IoUring::split()` for its whole
//! life. They borrow the ring, which lives in a leaked `Box` freed by `Drop` after them.

use super::options::EngineOptions;
use super::spec::{Completion, Engine, EngineOption, EngineSetup, EngineSpec, Io, Unset, Value};

// `M` fixed buffers, `F` fixed files, `S` SQ poll (the report's letters); readlab adds `I` for
// polled completions and `L` for the plain (legacy) ring setup. The SQ poll thread's CPU and idle
// time are tuning details left out of the label.

/// Register the buffer region once and use READ_FIXED.
const FIXED_BUFS: EngineOption = EngineOption {
    flag: "fixed-bufs",
    letter: Some('M'),
    words: "fixed buffers",
    help: "registered buffers (READ_FIXED; fio's --fixedbufs)",
    fio: Some("fixedbufs"),
    column: "fixed_bufs",
    value: Value::Switch,
};

/// Register the file and use fixed-file SQEs.
const FIXED_FILES: EngineOption = EngineOption {
    flag: "fixed-files",
    letter: Some('F'),
    words: "fixed files",
    help: "registered file (fixed-file SQEs; fio's --registerfiles)",
    fio: Some("registerfiles"),
    column: "fixed_files",
    value: Value::Switch,
};

/// A kernel thread polls the submission queue (IORING_SETUP_SQPOLL).
const SQPOLL: EngineOption = EngineOption {
    flag: "sqpoll",
    letter: Some('S'),
    words: "SQ poll",
    help: "kernel SQ poll thread (IORING_SETUP_SQPOLL; fio's --sqthread_poll); its CPU is reported",
    fio: Some("sqthread_poll"),
    column: "sqpoll",
    value: Value::Switch,
};

/// Pin the SQ poll thread to this CPU (CPU 0 is a CPU: unset is none).
const SQPOLL_CPU: EngineOption = EngineOption {
    flag: "sqpoll-cpu",
    letter: None,
    words: "SQ poll on CPU {n}",
    help: "pin the SQ poll thread to this CPU (fio's --sqthread_poll_cpu)",
    fio: Some("sqthread_poll_cpu"),
    column: "sqpoll_cpu",
    value: Value::Setting {
        unit: "",
        bare: None,
        unset: Unset::Null,
    },
};

/// Busy-poll for completions (IORING_SETUP_IOPOLL; needs device poll queues).
const IOPOLL: EngineOption = EngineOption {
    flag: "iopoll",
    letter: Some('I'),
    words: "polled completions",
    help: "polled completions (IORING_SETUP_IOPOLL; needs device poll queues)",
    fio: Some("hipri"),
    column: "iopoll",
    value: Value::Switch,
};

/// Do not try COOP_TASKRUN / SINGLE_ISSUER / DEFER_TASKRUN / NO_SQARRAY / a registered ring fd.
const PLAIN_SETUP: EngineOption = EngineOption {
    flag: "plain-setup",
    letter: Some('L'),
    words: "plain ring setup",
    help: "skip COOP_TASKRUN / SINGLE_ISSUER / DEFER_TASKRUN / NO_SQARRAY / registered ring fd",
    fio: None,
    column: "plain_setup",
    value: Value::Switch,
};

pub static SPEC: EngineSpec = EngineSpec {
    name: "uring",
    label: "U",
    fio_name: "io_uring",
    words: "io_uring",
    capabilities: super::spec::ASYNC,
    options: &[
        FIXED_BUFS,
        FIXED_FILES,
        SQPOLL,
        SQPOLL_CPU,
        IOPOLL,
        PLAIN_SETUP,
    ],
    stored: &[
        FIXED_FILES.column,
        FIXED_BUFS.column,
        SQPOLL.column,
        SQPOLL_CPU.column,
        EngineOptions::SQPOLL_IDLE_MS,
    ],
    check: check_options,
    variants: || {
        let with = |f: fn(&mut UringOptions)| super::spec::with(|o| UringOptions::edit(o, f));
        vec![
            ("", EngineOptions::default()),
            ("--plain-setup", with(|u| u.plain_setup = true)),
            ("--fixed-files", with(|u| u.fixed_files = true)),
            ("--fixed-bufs", with(|u| u.fixed_bufs = true)),
            (
                "--sqpoll",
                with(|u| {
                    u.sqpoll = true;
                    u.sqpoll_idle_ms = 10;
                }),
            ),
            ("--iopoll", with(|u| u.iopoll = true)),
        ]
    },
    open: |s| Ok(Box::new(Uring::new(s)?)),
};

/// io_uring's options, typed: what its rows hold in an [`EngineOptions`], and the SQ poll
/// thread's idle time every configuration carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UringOptions {
    /// Register the file and use fixed-file SQEs.
    pub fixed_files: bool,
    /// Register the buffer region once and use READ_FIXED.
    pub fixed_bufs: bool,
    /// A kernel thread polls the submission queue (IORING_SETUP_SQPOLL).
    pub sqpoll: bool,
    /// Pin the SQ poll thread to this CPU.
    pub sqpoll_cpu: Option<u32>,
    /// Milliseconds the SQ poll thread spins before it sleeps.
    pub sqpoll_idle_ms: u32,
    /// Busy-poll for completions (IORING_SETUP_IOPOLL; needs device poll queues).
    pub iopoll: bool,
    /// Do not try COOP_TASKRUN / SINGLE_ISSUER / DEFER_TASKRUN / NO_SQARRAY / a registered ring fd.
    pub plain_setup: bool,
}

impl UringOptions {
    /// io_uring's options in `o`.
    pub fn of(o: &EngineOptions) -> Self {
        UringOptions {
            fixed_files: FIXED_FILES.on(o),
            fixed_bufs: FIXED_BUFS.on(o),
            sqpoll: SQPOLL.on(o),
            sqpoll_cpu: SQPOLL_CPU.get(o).map(|n| n as u32),
            sqpoll_idle_ms: o.sqpoll_idle_ms,
            iopoll: IOPOLL.on(o),
            plain_setup: PLAIN_SETUP.on(o),
        }
    }

    /// Write them into `o`, leaving other engines' options as they are.
    pub fn write(&self, o: &mut EngineOptions) {
        FIXED_FILES.switch(o, self.fixed_files);
        FIXED_BUFS.switch(o, self.fixed_bufs);
        SQPOLL.switch(o, self.sqpoll);
        SQPOLL_CPU.put(o, self.sqpoll_cpu.map(u64::from));
        o.sqpoll_idle_ms = self.sqpoll_idle_ms;
        IOPOLL.switch(o, self.iopoll);
        PLAIN_SETUP.switch(o, self.plain_setup);
    }

    /// Change them in `o` with `f`.
    pub fn edit(o: &mut EngineOptions, f: impl FnOnce(&mut Self)) {
        let mut v = Self::of(o);
        f(&mut v);
        v.write(o);
    }
}

/// How long the SQ poll thread spins idle before it sleeps when `--sqpoll-idle` is not given.
pub const DEFAULT_SQPOLL_IDLE: std::time::Duration = std::time::Duration::from_secs(1);

/// The SQ poll thread's idle time in milliseconds for options `o`: `--sqpoll-idle` (`given`) or
/// [`DEFAULT_SQPOLL_IDLE`]. Only an SQ poll thread idles, so the flag without `--sqpoll` is
/// refused rather than ignored.
pub fn sqpoll_idle_ms(given: Option<std::time::Duration>, o: &EngineOptions) -> Result<u32> {
    if given.is_some() && !SQPOLL.on(o) {
        return Err(Error::invalid(
            "--sqpoll-idle sets how long the SQ poll thread idles; add --engine uring --sqpoll or drop --sqpoll-idle",
        ));
    }
    let d = given.unwrap_or(DEFAULT_SQPOLL_IDLE);
    Ok(d.as_millis().min(u32::MAX as u128) as u32)
}

/// io_uring's options against the rest of the configuration.
fn check_options(o: &EngineOptions, cfg: &super::spec::Workload) -> Result<()> {
    let o = UringOptions::of(o);
    if o.sqpoll_cpu.is_some() && !o.sqpoll {
        return Err(Error::invalid("--sqpoll-cpu needs --sqpoll"));
    }
    if let Some(cpu) = o.sqpoll_cpu
        && cpu as usize >= crate::env::cpus()
    {
        return Err(Error::invalid(format!(
            "--sqpoll-cpu {cpu}: this machine has CPUs 0…{}",
            crate::env::cpus() - 1
        )));
    }
    if o.iopoll && !cfg.direct {
        return Err(Error::invalid(
            "--iopoll needs O_DIRECT: polled completion only exists for direct I/O; drop --buffered",
        ));
    }
    let slots = cfg.iodepth as u64 * cfg.blocks_per_request as u64;
    if slots > 32768 {
        return Err(Error::invalid(format!(
            "iodepth × blocks-per-request = {slots} exceeds io_uring's 32768 entries"
        )));
    }
    Ok(())
}
use crate::buffer::BufferPool;
use crate::error::{Error, Result};
use io_uring::{CompletionQueue, IoUring, SubmissionQueue, Submitter, opcode, squeue, types};
use std::fs::File;
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// The kernel refuses a registered buffer larger than 1 GiB; bigger regions are registered as
/// several buffers (in one call), each holding whole slots.
const MAX_REGISTERED_BUF: usize = 1 << 30;

/// Optional setup flags, in the order they are tried (DEFER_TASKRUN needs SINGLE_ISSUER).
/// NO_SQARRAY (6.6) drops the index array between the SQ ring and the SQEs: the kernel takes SQE
/// `head & mask` directly, one load fewer per submission (t/io_uring sets it too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SetupFlag {
    CoopTaskrun,
    SingleIssuer,
    DeferTaskrun,
    NoSqarray,
}

impl SetupFlag {
    fn name(self) -> &'static str {
        match self {
            SetupFlag::CoopTaskrun => "COOP_TASKRUN",
            SetupFlag::SingleIssuer => "SINGLE_ISSUER",
            SetupFlag::DeferTaskrun => "DEFER_TASKRUN",
            SetupFlag::NoSqarray => "NO_SQARRAY",
        }
    }
}

/// The optional flags to try for these options.
fn wanted_flags(o: &UringOptions) -> Vec<SetupFlag> {
    if o.plain_setup {
        return Vec::new();
    }
    let mut f = vec![SetupFlag::CoopTaskrun, SetupFlag::SingleIssuer];
    // The kernel rejects DEFER_TASKRUN with SQPOLL (EINVAL): never ask.
    if !o.sqpoll {
        f.push(SetupFlag::DeferTaskrun);
    }
    f.push(SetupFlag::NoSqarray);
    f
}

/// Try `attempt` with every wanted optional flag. When the kernel answers EINVAL, find the flags it
/// takes by adding them back one at a time (in order, skipping DEFER_TASKRUN without
/// SINGLE_ISSUER) and leaving out each one it refuses, e.g. COOP_TASKRUN with SQPOLL on 6.18.
/// Returns what `attempt` built and the flags it was built with.
fn with_fallback<T>(
    flags: Vec<SetupFlag>,
    mut attempt: impl FnMut(&[SetupFlag]) -> io::Result<T>,
) -> io::Result<(T, Vec<SetupFlag>)> {
    let einval = |e: &io::Error| e.raw_os_error() == Some(libc::EINVAL);
    match attempt(&flags) {
        Ok(t) => return Ok((t, flags)),
        Err(e) if einval(&e) && !flags.is_empty() => {}
        Err(e) => return Err(e),
    }
    let mut kept = Vec::new();
    // What `attempt` built with exactly `kept`, once anything succeeded.
    let mut best = None;
    for f in flags {
        if f == SetupFlag::DeferTaskrun && !kept.contains(&SetupFlag::SingleIssuer) {
            continue;
        }
        kept.push(f);
        match attempt(&kept) {
            Ok(t) => best = Some(t),
            Err(e) if einval(&e) => {
                kept.pop();
            }
            Err(e) => return Err(e),
        }
    }
    match best {
        Some(t) => Ok((t, kept)),
        None => attempt(&[]).map(|t| (t, Vec::new())),
    }
}

fn build_ring(entries: u32, o: &UringOptions, flags: &[SetupFlag]) -> io::Result<IoUring> {
    let mut b = IoUring::builder();
    if o.sqpoll {
        b.setup_sqpoll(o.sqpoll_idle_ms);
        if let Some(cpu) = o.sqpoll_cpu {
            b.setup_sqpoll_cpu(cpu);
        }
    }
    if o.iopoll {
        b.setup_iopoll();
    }
    for f in flags {
        match f {
            SetupFlag::CoopTaskrun => b.setup_coop_taskrun(),
            SetupFlag::SingleIssuer => b.setup_single_issuer(),
            SetupFlag::DeferTaskrun => b.setup_defer_taskrun(),
            SetupFlag::NoSqarray => b.setup_no_sqarray(),
        };
    }
    b.build(entries)
}

fn errno_is(e: &io::Error, codes: &[i32]) -> bool {
    e.raw_os_error().is_some_and(|c| codes.contains(&c))
}

/// Interrupted, or the kernel asks to reap before it takes more (CQ overflow, no request memory):
/// nothing is lost, try again after draining the completion queue.
fn transient(e: &io::Error) -> bool {
    errno_is(e, &[libc::EINTR, libc::EBUSY, libc::EAGAIN])
}

fn memlock_limit() -> String {
    match rustix::process::getrlimit(rustix::process::Resource::Memlock).current {
        Some(b) => format!("{} KiB", b >> 10),
        None => "unlimited".into(),
    }
}

pub struct Uring {
    // Declared (and dropped, in `Drop`) before the ring they borrow.
    submitter: ManuallyDrop<Submitter<'static>>,
    sq: ManuallyDrop<SubmissionQueue<'static, squeue::Entry>>,
    cq: ManuallyDrop<CompletionQueue<'static>>,
    /// From `Box::into_raw`; freed in `Drop`.
    ring: *mut IoUring,
    pool: BufferPool,
    /// Keeps the descriptors the SQEs name (or that were registered) open.
    _files: Vec<Arc<File>>,
    /// Each file's descriptor, by [`Io::file`]; with fixed files, [`Io::file`] is the index of
    /// its registration.
    fds: Vec<i32>,
    fixed_files: bool,
    fixed_bufs: bool,
    /// Slots per registered buffer (READ_FIXED's buf_index is token / this).
    slots_per_buf: u32,
    ring_fd_registered: bool,
    /// A kernel SQ poll thread takes the SQEs (submitting needs no system call while it is awake).
    sqpoll: bool,
    /// DEFER_TASKRUN: completions are only posted by an enter with GETEVENTS, so submits ask for
    /// them too (with min_complete 0, like fio): the next reap then usually finds them without a
    /// system call of its own or a sleep.
    getevents_on_submit: bool,
    /// Pushed since the last submit.
    queued: usize,
    /// Pushed and not yet reaped.
    inflight: usize,
    features: Vec<String>,
}

impl Uring {
    pub fn new(setup: EngineSetup) -> Result<Self> {
        Uring::with_max_registered_buf(setup, MAX_REGISTERED_BUF)
    }

    fn with_max_registered_buf(setup: EngineSetup, max_buf: usize) -> Result<Self> {
        let o = UringOptions::of(&setup.options);
        let files = setup.files()?;
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        let slots = setup.pool.slots();
        assert!(
            setup.depth <= slots,
            "depth {} > {slots} buffer slots",
            setup.depth
        );
        let entries = setup.depth.max(1) as u32;
        let (ring, flags) = with_fallback(wanted_flags(&o), |f| build_ring(entries, &o, f))
            .map_err(|e| setup_error(entries, &o, e))?;
        debug_assert!(ring.params().cq_entries() as usize >= setup.depth);

        let raw = Box::into_raw(Box::new(ring));
        // SAFETY: `raw` comes from `Box::into_raw` and is only freed in `Drop`, after the three
        // parts split from it here (the only borrows of it) have been dropped.
        let ring: &'static mut IoUring = unsafe { &mut *raw };
        let (submitter, sq, cq) = ring.split();
        let mut u = Uring {
            submitter: ManuallyDrop::new(submitter),
            sq: ManuallyDrop::new(sq),
            cq: ManuallyDrop::new(cq),
            ring: raw,
            pool: setup.pool,
            _files: files,
            fds,
            fixed_files: false,
            fixed_bufs: false,
            slots_per_buf: slots as u32,
            ring_fd_registered: false,
            sqpoll: o.sqpoll,
            getevents_on_submit: flags.contains(&SetupFlag::DeferTaskrun),
            queued: 0,
            inflight: 0,
            features: Vec::new(),
        };
        // From here on an early return drops `u`, which frees the ring.
        if o.sqpoll {
            u.features.push("SQPOLL".into());
        }
        if o.fixed_files {
            u.submitter.register_files(&u.fds).map_err(|e| {
                Error::Engine(format!(
                    "io_uring: registering the files for --fixed-files failed: {e}; drop --fixed-files"
                ))
            })?;
            u.fixed_files = true;
            u.features.push("FIXED_FILES".into());
        }
        if o.fixed_bufs {
            u.register_buffers(max_buf)?;
            u.fixed_bufs = true;
            u.features.push("FIXED_BUFFERS".into());
        }
        u.features
            .extend(flags.iter().map(|f| f.name().to_string()));
        if !o.plain_setup {
            // Older kernels (< 5.18) lack it; the ring works the same without.
            if u.submitter.register_ring_fd().is_ok() {
                u.ring_fd_registered = true;
                u.features.push("REGISTERED_RING_FD".into());
            }
        }
        if o.iopoll {
            u.features.push("IOPOLL".into());
        }
        Ok(u)
    }

    /// Register the pool's region once: one buffer, or several of whole slots when it is larger
    /// than the kernel's limit for one buffer.
    fn register_buffers(&mut self, max_buf: usize) -> Result<()> {
        let slots = self.pool.slots();
        let (base, len) = self.pool.region();
        let stride = len / slots;
        let per = (max_buf / stride).clamp(1, slots);
        self.slots_per_buf = per as u32;
        let iovecs: Vec<libc::iovec> = (0..slots)
            .step_by(per)
            .map(|first| libc::iovec {
                // SAFETY: first < slots, so the offset stays inside the region.
                iov_base: unsafe { base.add(first * stride) }.cast(),
                iov_len: (per.min(slots - first)) * stride,
            })
            .collect();
        // SAFETY: the iovecs cover the pool's allocation, which outlives the ring: `Drop` frees
        // the ring before the pool (a field dropped after `Drop::drop`).
        let r = unsafe { self.submitter.register_buffers(&iovecs) };
        r.map_err(|e| {
            let mib = len as f64 / (1u64 << 20) as f64;
            if errno_is(&e, &[libc::ENOMEM, libc::EPERM]) {
                Error::Engine(format!(
                    "io_uring: registering {mib:.1} MiB of I/O buffers for --fixed-bufs failed: {e}. \
                     Registered buffers are locked memory: without CAP_IPC_LOCK they count against \
                     RLIMIT_MEMLOCK ({}, shared by all threads of the user). Raise it (`ulimit -l \
                     unlimited`, LimitMEMLOCK=infinity for a service, memlock in \
                     /etc/security/limits.conf), grant CAP_IPC_LOCK (root has it), lower --iodepth, --bs, \
                     --blocks-per-request or --numjobs, or drop --fixed-bufs",
                    memlock_limit()
                ))
            } else {
                Error::Engine(format!(
                    "io_uring: registering {mib:.1} MiB of I/O buffers for --fixed-bufs failed: {e}; drop --fixed-bufs"
                ))
            }
        })
    }

    /// The SQE reading `io` into `buf`.
    #[inline]
    fn sqe(&self, io: Io, buf: *mut u8) -> squeue::Entry {
        let (len, off) = (io.len, io.offset);
        let (fd, fixed) = (
            types::Fd(self.fds[io.file as usize]),
            types::Fixed(io.file.into()),
        );
        let e = match (self.fixed_files, self.fixed_bufs) {
            (false, false) => opcode::Read::new(fd, buf, len).offset(off).build(),
            (true, false) => opcode::Read::new(fixed, buf, len).offset(off).build(),
            (false, true) => opcode::ReadFixed::new(fd, buf, len, self.buf_index(io))
                .offset(off)
                .build(),
            (true, true) => opcode::ReadFixed::new(fixed, buf, len, self.buf_index(io))
                .offset(off)
                .build(),
        };
        e.user_data(io.token as u64)
    }

    #[inline]
    fn buf_index(&self, io: Io) -> u16 {
        (io.token / self.slots_per_buf) as u16
    }

    /// Move up to `max` completions already posted to `f`, reclaiming their buffers. No system call.
    #[inline]
    fn drain(&mut self, max: usize, mut f: impl FnMut(Completion)) -> usize {
        self.cq.sync();
        let mut n = 0;
        for cqe in (&mut *self.cq).take(max) {
            let token = cqe.user_data() as u32;
            // SAFETY: this CQE is the read's completion: the kernel is done with its buffer.
            unsafe { self.pool.reclaim(token as usize) };
            f(Completion::new(token, cqe.result() as i64));
            n += 1;
        }
        // Publish the new head so the kernel can reuse the entries.
        self.cq.sync();
        self.inflight -= n;
        n
    }

    /// Submit what is queued and wait for `want` completions: one io_uring_enter (none with an
    /// awake SQ poll thread and `want == 0`). With DEFER_TASKRUN a submit also carries GETEVENTS
    /// (min_complete 0) so the kernel posts what has finished meanwhile.
    #[inline]
    fn enter(&mut self, want: usize) -> io::Result<usize> {
        self.sq.sync();
        let r = if want == 0 && self.getevents_on_submit {
            let to_submit = self.sq.len() as u32;
            // SAFETY: no argument struct is passed, so the kernel reads no memory of ours.
            unsafe {
                self.submitter.enter::<libc::sigset_t>(
                    to_submit,
                    0,
                    io_uring::EnterFlags::GETEVENTS.bits(),
                    None,
                )
            }
        } else {
            self.submitter.submit_and_wait(want)
        };
        if r.is_ok() {
            self.queued = 0;
        }
        r
    }

    /// Submit what is queued and wait for `want` completions (`enter`), again if interrupted.
    /// False when a transient error left the SQEs in the ring: the next enter submits them.
    #[inline]
    fn submit_waiting(&mut self, want: usize) -> Result<bool> {
        loop {
            match self.enter(want) {
                Ok(_) => return Ok(true),
                Err(e) if errno_is(&e, &[libc::EINTR]) => {}
                Err(e) if transient(&e) => return Ok(false),
                Err(e) => return Err(enter_error("submit", e)),
            }
        }
    }

    /// Wait for every I/O still in flight. False if the kernel stopped answering.
    fn wait_all(&mut self) -> bool {
        while self.inflight > 0 {
            match self.enter(1) {
                Ok(_) => {}
                Err(e) if transient(&e) => std::thread::yield_now(),
                Err(_) => return false,
            }
            self.drain(usize::MAX, |_| {});
        }
        true
    }
}

fn setup_error(entries: u32, o: &UringOptions, e: io::Error) -> Error {
    let mut what = String::new();
    if o.sqpoll {
        what.push_str(" with SQPOLL");
        if let Some(cpu) = o.sqpoll_cpu {
            what.push_str(&format!(" on CPU {cpu}"));
        }
    }
    if o.iopoll {
        what.push_str(" with IOPOLL");
    }
    let hint = match e.raw_os_error() {
        Some(libc::ENOSYS) => "; this kernel has no io_uring",
        Some(libc::EPERM) => {
            "; io_uring is disabled for this user (sysctl kernel.io_uring_disabled) or by a seccomp filter"
        }
        Some(libc::ENOMEM) => {
            "; the ring's memory could not be locked (RLIMIT_MEMLOCK on kernels before 5.12): raise `ulimit -l` or lower --iodepth"
        }
        _ => "",
    };
    Error::Engine(format!(
        "io_uring_setup({entries} entries{what}) failed: {e}{hint}"
    ))
}

fn enter_error(what: &str, e: io::Error) -> Error {
    Error::Engine(format!("io_uring_enter ({what}) failed: {e}"))
}

impl Engine for Uring {
    #[inline]
    fn queue(&mut self, io: Io) -> Result<()> {
        debug_assert!(io.len as usize <= self.pool.slot_len());
        io.file_among(self.fds.len(), "io_uring")?;
        if self.sq.is_full() {
            // The cached head is stale: learn what the kernel has consumed since. Entries in the
            // ring are in flight and `lend` below refuses a slot twice, so there is room then —
            // except under SQPOLL, whose thread can post a batch's completions before it
            // publishes the new SQ head: wait for it (IORING_ENTER_SQ_WAIT), boundedly.
            self.sq.sync();
            let mut tries = 0;
            while self.sq.is_full() && tries < 10_000 {
                let _ = self.submitter.squeue_wait();
                self.sq.sync();
                tries += 1;
            }
        }
        let buf = self.pool.lend(io.token as usize);
        let sqe = self.sqe(io, buf);
        // SAFETY: the buffer is lent to the kernel until its completion is reaped (`drain`) and
        // the pool outlives the ring; the descriptors stay open in `self._files`, and the
        // registered buffer and files an SQE names were registered in `new`.
        if unsafe { self.sq.push(&sqe) }.is_err() {
            // SAFETY: the SQE was not pushed, so the kernel never saw the buffer.
            unsafe { self.pool.reclaim(io.token as usize) };
            return Err(Error::Engine(format!(
                "io_uring: submission queue full with {} I/Os in flight",
                self.inflight
            )));
        }
        self.queued += 1;
        self.inflight += 1;
        Ok(())
    }

    #[inline]
    fn submit(&mut self) -> Result<usize> {
        let n = self.queued;
        if n == 0 {
            return Ok(0);
        }
        Ok(if self.submit_waiting(0)? { n } else { 0 })
    }

    #[inline]
    fn reap_at_most(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize> {
        let max = max.max(min);
        let mut got = self.drain(max, |c| out.push(c));
        if min == 0 && got == 0 && self.inflight > 0 && self.getevents_on_submit {
            // A look without waiting (the open loop's, between due times): under DEFER_TASKRUN
            // finished reads are posted only by an enter with GETEVENTS, so look through one,
            // or each completion would wait for the next due request's submit (at 2,000 IOPS,
            // 500 µs added to every latency).
            match self.enter(0) {
                Ok(_) => {}
                Err(e) if transient(&e) => {}
                Err(e) => return Err(enter_error("wait", e)),
            }
            got += self.drain(max, |c| out.push(c));
        }
        // Never wait for more than is in flight: that would sleep forever.
        while got < min && self.inflight > 0 {
            let want = (min - got).min(self.inflight);
            match self.enter(want) {
                Ok(_) => {}
                Err(e) if transient(&e) => {}
                Err(e) => return Err(enter_error("wait", e)),
            }
            got += self.drain(max - got, |c| out.push(c));
        }
        Ok(got)
    }

    fn combines_submit_and_reap(&self) -> bool {
        !self.sqpoll
    }

    /// One io_uring_enter submits what is queued and waits for what is missing of `min` (none
    /// when enough completions are already posted); fio makes two (its commit, then its wait)
    /// whenever nothing has completed yet. Under SQPOLL the poll thread takes the SQEs: submit,
    /// then reap, as usual.
    #[inline]
    fn submit_and_reap(
        &mut self,
        min: usize,
        max: usize,
        out: &mut Vec<Completion>,
    ) -> Result<usize> {
        if self.queued == 0 || self.sqpoll {
            self.submit()?;
            return self.reap_at_most(min, max, out);
        }
        let max = max.max(min);
        let got = self.drain(max, |c| out.push(c));
        let want = min.saturating_sub(got).min(self.inflight);
        // Left in the SQ ring (or the wait cut short) on a transient error: the reap enters again.
        self.submit_waiting(want)?;
        Ok(got + self.reap_at_most(min.saturating_sub(got), max - got, out)?)
    }

    fn buffer(&self, token: u32, len: usize) -> &[u8] {
        self.pool.slot(token as usize, len)
    }

    fn features(&self) -> Vec<String> {
        self.features.clone()
    }
}

impl Drop for Uring {
    fn drop(&mut self) {
        // The buffers are freed right after: first let the kernel finish writing into them.
        if !self.wait_all() {
            // The kernel may still write into the pool: leak it rather than free it.
            std::mem::forget(std::mem::replace(&mut self.pool, BufferPool::new(1, 512)));
        }
        if self.ring_fd_registered {
            let _ = self.submitter.unregister_ring_fd();
        }
        // SAFETY: the three parts are never used again, and they go before the ring they borrow.
        unsafe {
            ManuallyDrop::drop(&mut self.sq);
            ManuallyDrop::drop(&mut self.cq);
            ManuallyDrop::drop(&mut self.submitter);
        }
        // SAFETY: `ring` came from `Box::into_raw` in `new`, is freed only here, and nothing
        // borrows it any more.
        drop(unsafe { Box::from_raw(self.ring) });
    }
}

#[cfg(test)]
mod tests;
