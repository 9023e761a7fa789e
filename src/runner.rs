//! The runner: one honest run of one workload, like fio's `td_io_queue`. It owns every timestamp,
//! histogram and counter; engines only move data. It never prints: progress goes to an [`Observer`].

use crate::buffer::BufferPool;
use crate::clock;
use crate::config::{Arrivals, Range, Rate, RunConfig, Rw};
use crate::cpu::CpuSnapshot;
use crate::data::{self, Mismatch};
use crate::engine::{self, Completion, EngineSetup, Io};
use crate::env::Environment;
use crate::error::{Error, Result};
use crate::result::{
    Document, ErrorSummary, IoErrorRecord, OpenLoopSummary, RunResult, SCHEMA, TimerInfo,
    VerifySummary,
};
use crate::stats::{self, Recorder, TimelinePoint};
use crate::target::{self, Target};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How many errors and mismatches are kept in full (all are counted).
const KEEP_FIRST: usize = 16;
/// A worker whose first this-many reads all failed stops the run instead of spinning on errors.
const ABORT_AFTER_FAILURES: u64 = 256;

/// Phases of a run, for progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Ramp,
    Measure,
    Drain,
}

/// A progress sample, taken by the runner's own thread a few times per second.
#[derive(Debug, Clone)]
pub struct Tick {
    pub phase: Phase,
    /// Time since the workers started (ramp included).
    pub elapsed: Duration,
    /// Ramp + runtime.
    pub planned: Duration,
    /// I/Os completed since the workers started.
    pub ios: u64,
    /// IOPS over the last sample period.
    pub recent_iops: f64,
}

/// Receives progress from the runner. Implementations must be quick; they run on the runner's thread.
pub trait Observer: Sync {
    fn tick(&self, _tick: &Tick) {}
    /// Checked between samples: returning true stops the run early (e.g. on Ctrl-C).
    fn cancelled(&self) -> bool {
        false
    }
}

/// An observer that ignores everything.
pub struct Silent;
impl Observer for Silent {}

#[repr(align(64))]
#[derive(Default)]
struct Counter(AtomicU64);

/// Random or sequential offsets for one worker.
struct Offsets {
    rw: Rw,
    bs: u64,
    base: u64,
    blocks: u64,
    next: u64,
    rng: Xoshiro256PlusPlus,
}

impl Offsets {
    fn new(cfg: &RunConfig, range: &Range, worker: usize) -> Offsets {
        let (base, blocks) = match cfg.rw {
            Rw::Randread => (range.offset, range.blocks),
            Rw::Read => {
                let per = range.blocks / cfg.threads as u64;
                (range.offset + worker as u64 * per * cfg.bs, per)
            }
        };
        let seed = cfg
            .seed
            .wrapping_add((worker as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        Offsets {
            rw: cfg.rw,
            bs: cfg.bs,
            base,
            blocks,
            next: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    #[inline]
    fn next(&mut self) -> u64 {
        let block = match self.rw {
            Rw::Randread => self.rng.random_range(0..self.blocks),
            Rw::Read => {
                let b = self.next;
                self.next = if b + 1 == self.blocks { 0 } else { b + 1 };
                b
            }
        };
        self.base + block * self.bs
    }
}

/// What one worker hands back.
#[derive(Default)]
struct WorkerOut {
    /// Read time alone and hand-off time (total − read) per block, for engines that report it.
    service: Recorder,
    handoff: Recorder,
    features: Vec<String>,
    open_loop: Option<OpenLoopStats>,
    /// Clock reads and completed block I/Os over the whole run, for the timer-cost figure.
    clock_reads: u64,
    ios_all: u64,
    errors: ErrorSummary,
    verify: VerifySummary,
}

/// Shared state of one run.
struct Shared<'a> {
    cfg: &'a RunConfig,
    range: Range,
    file_id: Option<u64>,
    start: Barrier,
    /// Workers wait here after their last I/O until the runner has taken its final CPU snapshot,
    /// so no worker thread (and its CPU time) disappears from /proc before it is counted.
    finish: Barrier,
    exited: AtomicUsize,
    t0: OnceLock<Instant>,
    stop: AtomicBool,
    done: Vec<Counter>,
    intervals: Mutex<BTreeMap<u64, Recorder>>,
}

impl Shared<'_> {
    /// I/Os completed by every worker so far (ramp included).
    fn total_done(&self) -> u64 {
        self.done.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
    }

    fn flush_interval(&self, second: u64, rec: &mut Recorder) {
        if rec.count == 0 {
            return;
        }
        self.intervals
            .lock()
            .unwrap()
            .entry(second)
            .or_default()
            .merge(rec);
        rec.reset();
    }
}

/// One worker thread: its I/O loop, then the finish barrier whatever happened.
fn worker(sh: &Shared, idx: usize, file: Arc<std::fs::File>) -> Result<WorkerOut> {
    let mut guard = Exit { sh, started: false };
    let r = worker_loop(sh, idx, file, &mut guard.started);
    if r.is_err() {
        sh.stop.store(true, Ordering::Relaxed);
    }
    r
}

/// Keeps the runner's barriers whole however a worker ends, a panic included: a worker that
/// never reached the start or finish barrier would leave the runner waiting forever.
struct Exit<'a, 'c> {
    sh: &'a Shared<'c>,
    started: bool,
}

impl Drop for Exit<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.sh.stop.store(true, Ordering::Relaxed);
        }
        if !self.started {
            self.sh.start.wait();
        }
        self.sh.exited.fetch_add(1, Ordering::Relaxed);
        self.sh.finish.wait();
    }
}

fn worker_loop(
    sh: &Shared,
    idx: usize,
    file: Arc<std::fs::File>,
    started: &mut bool,
) -> Result<WorkerOut> {
    let cfg = sh.cfg;
    // `depth` logical requests in flight, each of `bpr` blocks; block `b` of request `r` reads
    // into slot (token) `r * bpr + b`.
    let depth = cfg.iodepth;
    let bpr = cfg.blocks_per_request;
    let bs = cfg.bs as u32;
    let setup = EngineSetup {
        file,
        pool: BufferPool::new(depth * bpr, cfg.bs as usize),
        depth: depth * bpr,
        direct: cfg.direct,
        options: cfg.options.clone(),
    };
    // Engines are created before the start barrier so set-up cost is never measured; a failed
    // set-up still reaches the barrier so the other threads are not left waiting.
    let engine = engine::open(cfg.engine, setup);
    sh.start.wait();
    *started = true;
    let mut engine = engine?;
    let t0 = *sh
        .t0
        .get()
        .expect("t0 set before the start barrier is released");
    let ramp_end = t0 + cfg.ramp;
    let end = ramp_end + cfg.runtime;

    let mut out = WorkerOut {
        features: engine.features(),
        ..WorkerOut::default()
    };
    let mut offsets = Offsets::new(cfg, &sh.range, idx);
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut issued = vec![t0; depth];
    let mut remaining = vec![0usize; depth];
    let mut failed = vec![false; depth];
    let mut at = vec![0u64; depth * bpr];
    let mut comps: Vec<Completion> = Vec::with_capacity(depth * bpr);
    let mut inflight = 0usize;
    let batch = cfg.batch;
    let mut interval = Recorder::default();
    let mut second = 0u64;
    let mut now = Instant::now();
    let mut stopping = false;
    let mut succeeded = false;
    let counter = &sh.done[idx].0;

    // Open loop: requests are due on a schedule; their latency counts from the due time.
    let mut schedule = cfg
        .rate
        .map(|rate| Schedule::new(rate, cfg.threads, cfg.seed ^ idx as u64, t0));

    let request_bytes = bs as u64 * bpr as u64;
    let mut budget = cfg.io_limit.map(|b| b.div_ceil(request_bytes));
    loop {
        if !stopping && (now >= end || sh.stop.load(Ordering::Relaxed) || budget == Some(0)) {
            stopping = true;
        }
        // Queue one logical request (all its blocks) into free request slot r.
        let mut start_request =
            |r: usize, at_time: Instant, engine: &mut Box<dyn engine::Engine>| {
                issued[r] = at_time;
                remaining[r] = bpr;
                failed[r] = false;
                for b in 0..bpr {
                    let token = (r * bpr + b) as u32;
                    let offset = offsets.next();
                    at[token as usize] = offset;
                    engine.queue(Io {
                        token,
                        offset,
                        len: bs,
                    })?;
                }
                Ok::<(), Error>(())
            };
        let mut wait_for = cfg.complete_min.min(inflight);
        match (&mut schedule, stopping) {
            (_, true) => {}
            (None, false) => {
                while free.len() >= batch && budget.is_none_or(|b| b >= batch as u64) {
                    if let Some(b) = &mut budget {
                        *b -= batch as u64;
                    }
                    let ts = Instant::now();
                    for _ in 0..batch {
                        let r = free.pop().expect("free requests checked") as usize;
                        start_request(r, ts, &mut engine)?;
                    }
                    engine.submit()?;
                    out.clock_reads += 1;
                    inflight += batch * bpr;
                }
                wait_for = cfg.complete_min.min(inflight);
            }
            (Some(s), false) => {
                let ts = Instant::now();
                out.clock_reads += 1;
                let mut queued = 0;
                while !free.is_empty() && s.next <= ts && budget != Some(0) {
                    if let Some(b) = &mut budget {
                        *b -= 1;
                    }
                    let r = free.pop().expect("free request checked") as usize;
                    start_request(r, s.next, &mut engine)?;
                    if s.next >= ramp_end {
                        s.issued(ts.duration_since(s.next));
                    }
                    s.advance();
                    queued += 1;
                }
                if queued > 0 {
                    engine.submit()?;
                    inflight += queued * bpr;
                }
                if s.next <= ts && ts >= ramp_end {
                    s.lagging(ts.duration_since(s.next)); // due but no free slot: backlog
                }
                if free.is_empty() {
                    wait_for = cfg.complete_min.min(inflight);
                } else {
                    // Slots are free: do not block past the next due time.
                    wait_for = 0;
                    if inflight == 0 {
                        s.sleep_until_due(end);
                        now = Instant::now();
                        continue;
                    }
                }
            }
        }
        if inflight == 0 {
            break;
        }
        comps.clear();
        engine.reap(wait_for, &mut comps)?;
        now = Instant::now();
        if comps.is_empty() {
            continue;
        }
        out.clock_reads += 1;
        out.ios_all += comps.len() as u64;
        inflight -= comps.len();
        counter.fetch_add(comps.len() as u64, Ordering::Relaxed);
        let in_window = now >= ramp_end && now <= end;
        for c in &comps {
            let t = c.token as usize;
            let r = t / bpr;
            let offset = at[t];
            remaining[r] -= 1;
            if c.res < 0 {
                let errno = (-c.res) as i32;
                failed[r] = true;
                if errno == libc::EAGAIN && cfg.options.nowait {
                    out.errors.eagain += 1;
                } else {
                    record_error(&mut out.errors, offset, bs as u64, errno, None);
                }
            } else if (c.res as u64) < bs as u64 {
                failed[r] = true;
                let msg = format!("short read: {} of {} bytes", c.res, bs);
                record_error(&mut out.errors, offset, bs as u64, 0, Some(msg));
            } else {
                succeeded = true;
                if let Some(id) = sh.file_id {
                    out.verify.checked_ios += 1;
                    if let Some(m) = data::verify(id, offset, engine.buffer(c.token, bs as usize)) {
                        record_mismatch(&mut out.verify, m);
                    }
                }
                if in_window && c.service_ns > 0 {
                    let total = now.duration_since(issued[r]).as_nanos() as u64;
                    out.service.record(c.service_ns, 0);
                    if bpr == 1 {
                        out.handoff.record(total.saturating_sub(c.service_ns), 0);
                    }
                }
            }
            if remaining[r] > 0 {
                continue;
            }
            free.push(r as u32);
            if in_window && !failed[r] {
                let ns = now.duration_since(issued[r]).as_nanos() as u64;
                let s = now.duration_since(ramp_end).as_secs();
                if s != second {
                    sh.flush_interval(second, &mut interval);
                    second = s;
                }
                interval.record(ns, bs as u64 * bpr as u64);
            }
        }
        // Never spin for the whole runtime on an interface that fails every read (IOPOLL on a
        // device without poll queues): stop with the probe's explanation.
        if !succeeded && out.errors.count >= ABORT_AFTER_FAILURES {
            sh.flush_interval(second, &mut interval);
            drain(engine.as_mut(), inflight, &mut comps);
            let first = &out.errors.first[0];
            return Err(Error::Engine(format!(
                "every read failed ({} of {}), first at offset {}: {}{}",
                out.errors.count,
                out.errors.count,
                first.offset,
                first.message,
                crate::probe::explain_errno(first.errno, cfg)
                    .map(|h| format!(". {h}"))
                    .unwrap_or_default()
            )));
        }
    }
    sh.flush_interval(second, &mut interval);
    if let Some(s) = schedule {
        out.open_loop = Some(s.finish(end));
    }
    Ok(out)
}

/// The open-loop arrival schedule of one worker.
struct Schedule {
    next: Instant,
    mean: f64,
    poisson: bool,
    rng: Xoshiro256PlusPlus,
    stats: OpenLoopStats,
}

/// What one worker's schedule saw.
#[derive(Default)]
struct OpenLoopStats {
    /// How late each request was issued after its due time.
    delay: Recorder,
    late: u64,
    max_lag: Duration,
    /// Requests still due but never issued when the window ended (ns behind / mean gap).
    final_backlog: f64,
    per_thread_rate: f64,
}

impl Schedule {
    fn new(rate: Rate, threads: usize, seed: u64, t0: Instant) -> Schedule {
        let per_thread = rate.iops / threads as f64;
        Schedule {
            next: t0,
            mean: 1e9 / per_thread,
            poisson: rate.arrivals == Arrivals::Poisson,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6f70_656e_6c6f_6f70),
            stats: OpenLoopStats {
                per_thread_rate: per_thread,
                ..OpenLoopStats::default()
            },
        }
    }

    fn advance(&mut self) {
        let gap = if self.poisson {
            // Inverse transform of the exponential distribution.
            let u: f64 = self.rng.random();
            -(1.0 - u).ln() * self.mean
        } else {
            self.mean
        };
        self.next += Duration::from_nanos(gap as u64);
    }

    fn issued(&mut self, delay: Duration) {
        let ns = delay.as_nanos() as u64;
        self.stats.delay.record(ns, 0);
        if ns as f64 > self.mean {
            self.stats.late += 1;
        }
    }

    fn lagging(&mut self, lag: Duration) {
        self.stats.max_lag = self.stats.max_lag.max(lag);
    }

    /// Nothing in flight: wait for the next due time (sleep most of it, spin the last 100 µs so
    /// the request goes out on time).
    fn sleep_until_due(&self, end: Instant) {
        let due = self.next.min(end);
        let now = Instant::now();
        let spin = Duration::from_micros(100);
        if due > now + spin {
            std::thread::sleep(due - now - spin);
        }
        while Instant::now() < due {
            std::hint::spin_loop();
        }
    }

    fn finish(mut self, end: Instant) -> OpenLoopStats {
        if self.next < end {
            self.stats.final_backlog = end.duration_since(self.next).as_nanos() as f64 / self.mean;
        }
        self.stats
    }
}

/// Wait for the I/Os still in flight so their buffers are not freed under the kernel.
fn drain(engine: &mut dyn engine::Engine, mut inflight: usize, comps: &mut Vec<Completion>) {
    while inflight > 0 {
        comps.clear();
        match engine.reap(1, comps) {
            Ok(_) => inflight = inflight.saturating_sub(comps.len()),
            Err(_) => break,
        }
    }
}

fn record_error(e: &mut ErrorSummary, offset: u64, len: u64, errno: i32, msg: Option<String>) {
    e.count += 1;
    if e.first.len() < KEEP_FIRST {
        let message = msg.unwrap_or_else(|| std::io::Error::from_raw_os_error(errno).to_string());
        e.first.push(IoErrorRecord {
            offset,
            len,
            errno,
            message,
        });
    }
}

fn record_mismatch(v: &mut VerifySummary, m: Mismatch) {
    v.mismatches += 1;
    if v.first.len() < KEEP_FIRST {
        v.first.push(m);
    }
}

/// What `prepare_run` found out about a run before any I/O.
pub struct Prepared {
    pub target: Target,
    pub device: crate::env::DeviceInfo,
    pub range: Range,
    /// The probe's warnings for this configuration.
    pub warnings: Vec<String>,
}

/// Check a configuration against its target; nothing is read yet.
pub fn prepare_run(cfg: &RunConfig) -> Result<Prepared> {
    let target = Target::inspect(&cfg.target)?;
    let range = cfg.validate(&target)?;
    let device = crate::env::DeviceInfo::of(&target.path);
    let warnings = crate::probe::check_run(cfg, &device).map_err(Error::InvalidArgument)?;
    if cfg.verify {
        let last = range.offset + range.len - 1;
        let last_sector = last - last % data::SECTOR as u64;
        if !target.prepared_at(last_sector) {
            return Err(Error::invalid(format!(
                "{}: the sector at {last_sector} is not part of the prepared image; \
                 limit the range with --size or drop --verify",
                target.path.display()
            )));
        }
    }
    Ok(Prepared {
        target,
        device,
        range,
        warnings,
    })
}

/// Run one workload and return its document. Bad input fails before any I/O.
pub fn run(cfg: &RunConfig, observer: &dyn Observer) -> Result<Document> {
    let Prepared {
        target,
        device,
        range,
        mut warnings,
    } = prepare_run(cfg)?;
    let does_io = cfg.engine.capabilities().does_io;
    let mut files = Vec::with_capacity(cfg.threads);
    for _ in 0..cfg.threads {
        let f = target::open_read(&cfg.target, cfg.direct && does_io)?;
        if let Some(adv) = cfg.fadvise {
            let advice = match adv {
                crate::config::Fadvise::Sequential => rustix::fs::Advice::Sequential,
                crate::config::Fadvise::Random => rustix::fs::Advice::Random,
            };
            rustix::fs::fadvise(
                &f,
                range.offset,
                std::num::NonZeroU64::new(range.len),
                advice,
            )
            .map_err(|e| Error::io(&cfg.target, "posix_fadvise failed", e.into()))?;
        }
        files.push(Arc::new(f));
    }
    let environment = Environment::capture(&target, device);
    let timer_ns = clock::timer_cost_ns();

    let shared = Shared {
        cfg,
        range,
        file_id: if cfg.verify { target.prepared_id } else { None },
        start: Barrier::new(cfg.threads + 1),
        finish: Barrier::new(cfg.threads + 1),
        exited: AtomicUsize::new(0),
        t0: OnceLock::new(),
        stop: AtomicBool::new(false),
        done: (0..cfg.threads).map(|_| Counter::default()).collect(),
        intervals: Mutex::new(BTreeMap::new()),
    };

    let planned = cfg.ramp + cfg.runtime;
    let (outs, cpu, window, ended_by) = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .into_iter()
            .enumerate()
            .map(|(i, f)| {
                let sh = &shared;
                std::thread::Builder::new()
                    .name(format!("readlab-w{i}"))
                    .spawn_scoped(s, move || worker(sh, i, f))
                    .expect("spawn worker thread")
            })
            .collect();
        let t0 = Instant::now();
        shared.t0.set(t0).expect("t0 set once");
        shared.start.wait();

        let ramp_end = t0 + cfg.ramp;
        let end = ramp_end + cfg.runtime;
        let mut cpu_start = (cfg.ramp.is_zero()).then(CpuSnapshot::take);
        let mut interrupted = false;
        let mut stable = false;
        let mut last = (t0, 0u64);
        let period = Duration::from_millis(200);
        let mut tracker = cfg.stop_when_stable.map(crate::stability::Tracker::new);
        let mut next_second = (ramp_end + Duration::from_secs(1), shared.total_done());
        loop {
            let now = Instant::now();
            let next = if cpu_start.is_none() { ramp_end } else { end };
            let mut wake = (last.0 + period).min(next);
            if tracker.is_some() {
                wake = wake.min(next_second.0);
            }
            if wake > now {
                std::thread::sleep(wake - now);
            }
            let now = Instant::now();
            if cpu_start.is_none() && now >= ramp_end {
                cpu_start = Some(CpuSnapshot::take());
                next_second = (now + Duration::from_secs(1), shared.total_done());
            }
            if let Some(t) = &mut tracker
                && now >= next_second.0
            {
                let done = shared.total_done();
                let started = next_second.0 - Duration::from_secs(1);
                t.push((done - next_second.1) as f64 / now.duration_since(started).as_secs_f64());
                next_second = (now + Duration::from_secs(1), done);
                if t.stable(now.duration_since(ramp_end)) {
                    stable = true;
                    break;
                }
            }
            if now >= end {
                break;
            }
            let ios = shared.total_done();
            let dt = now.duration_since(last.0).as_secs_f64().max(1e-9);
            observer.tick(&Tick {
                phase: if now < ramp_end {
                    Phase::Ramp
                } else {
                    Phase::Measure
                },
                elapsed: now - t0,
                planned,
                ios,
                recent_iops: (ios - last.1) as f64 / dt,
            });
            last = (now, ios);
            if observer.cancelled() || shared.exited.load(Ordering::Relaxed) == cfg.threads {
                interrupted = observer.cancelled();
                break;
            }
        }
        let cpu_end = CpuSnapshot::take();
        shared.stop.store(true, Ordering::Relaxed);
        let stopped_at = Instant::now();
        shared.finish.wait();
        let ios = shared.total_done();
        observer.tick(&Tick {
            phase: Phase::Drain,
            elapsed: stopped_at - t0,
            planned,
            ios,
            recent_iops: 0.0,
        });
        let outs: Vec<Result<WorkerOut>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Engine("a worker thread panicked".into())))
            })
            .collect();
        let start = cpu_start.unwrap_or_else(CpuSnapshot::take);
        let cpu = start.usage_until(&cpu_end);
        let window = stopped_at
            .min(end)
            .saturating_duration_since(ramp_end)
            .as_secs_f64();
        let ended_by = if interrupted {
            "interrupted"
        } else if stable {
            "stable"
        } else if cfg.io_limit.is_some() && stopped_at < end {
            "io-limit"
        } else {
            "runtime"
        };
        (outs, cpu, window, ended_by)
    });

    let mut lat = Recorder::default();
    let mut errors = ErrorSummary::default();
    let mut verify = VerifySummary::default();
    let (mut service, mut handoff) = (Recorder::default(), Recorder::default());
    let mut features = Vec::new();
    let (mut clock_reads, mut ios_all) = (0u64, 0u64);
    let mut open: Option<(Recorder, u64, f64, f64)> = None;
    for o in outs {
        let o = o?;
        service.merge(&o.service);
        if let Some(ol) = &o.open_loop {
            let e = open.get_or_insert_with(|| (Recorder::default(), 0, 0.0, 0.0));
            e.0.merge(&ol.delay);
            e.1 += ol.late;
            e.2 += ol.max_lag.as_nanos() as f64 * ol.per_thread_rate / 1e9;
            e.3 += ol.final_backlog;
        }
        clock_reads += o.clock_reads;
        ios_all += o.ios_all;
        handoff.merge(&o.handoff);
        if features.is_empty() {
            features = o.features;
        }
        errors.count += o.errors.count;
        errors.eagain += o.errors.eagain;
        errors.first.extend(o.errors.first);
        verify.checked_ios += o.verify.checked_ios;
        verify.mismatches += o.verify.mismatches;
        verify.first.extend(o.verify.first);
    }
    errors.first.sort_by_key(|e| e.offset);
    errors.first.truncate(KEEP_FIRST);
    verify.first.sort_by_key(|m| m.offset);
    verify.first.truncate(KEEP_FIRST);

    let intervals = shared.intervals.into_inner().unwrap();
    let mut timeline = Vec::with_capacity(intervals.len());
    let bpr = cfg.blocks_per_request as u64;
    for (sec, rec) in &intervals {
        lat.merge(rec);
        let t_end = ((sec + 1) as f64).min(window.max(1e-9));
        let len = (t_end - *sec as f64).max(1e-9);
        timeline.push(TimelinePoint {
            t_s: t_end,
            ios: rec.count * bpr,
            iops: (rec.count * bpr) as f64 / len,
            mib_s: rec.bytes as f64 / len / (1u64 << 20) as f64,
            p50_ns: rec.percentile(50.0),
            p99_ns: rec.percentile(99.0),
            max_ns: rec.max,
        });
    }

    let secs = window.max(1e-9);
    let total_cpu = cpu.process_total_s();
    let requests = lat.count;
    let ios = requests * bpr;
    let reads_per_io = if ios > 0 {
        clock_reads as f64 / (ios_all.max(1)) as f64
    } else {
        2.0
    };
    if errors.count > 0 && ios == 0 {
        let first = &errors.first[0];
        warnings.push(format!(
            "every read failed; first at offset {}: {}",
            first.offset, first.message
        ));
    }
    let result = RunResult {
        label: cfg.label(),
        seconds: window,
        ios,
        requests,
        bytes: lat.bytes,
        iops: ios as f64 / secs,
        requests_per_s: requests as f64 / secs,
        mb_s: lat.bytes as f64 / secs / 1e6,
        mib_s: lat.bytes as f64 / secs / (1u64 << 20) as f64,
        latency: lat.summary(),
        timeline,
        cpu_us_per_io: if ios > 0 {
            total_cpu * 1e6 / ios as f64
        } else {
            0.0
        },
        cpu,
        timer: TimerInfo {
            ns_per_clock_read: timer_ns,
            clock_reads_per_io: reads_per_io,
            overhead_ns_per_io: reads_per_io * timer_ns,
        },
        service_latency: (service.count > 0).then(|| service.summary()),
        handoff_latency: (handoff.count > 0).then(|| handoff.summary()),
        engine_features: features,
        open_loop: match (open, cfg.rate) {
            (Some((delay, late, max_backlog, final_backlog)), Some(rate)) => {
                Some(OpenLoopSummary {
                    target_iops: rate.iops,
                    achieved_iops: requests as f64 / secs,
                    issue_delay: delay.summary(),
                    late,
                    late_pct: 100.0 * late as f64 / delay.count.max(1) as f64,
                    max_backlog,
                    final_backlog,
                })
            }
            _ => None,
        },
        errors,
        verify: cfg.verify.then_some(verify),
        ended_by: ended_by.into(),
        warnings,
        histogram: stats::encode_histogram(&lat.hist),
    };
    Ok(Document {
        schema: SCHEMA.into(),
        study: None,
        config: cfg.clone(),
        environment,
        result,
    })
}
