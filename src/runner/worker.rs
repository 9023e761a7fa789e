//! One worker thread: its own engine and offsets, the closed loop (queue a batch, submit, reap),
//! the timestamps of every request, and the accounting of every completion: errors, short reads,
//! verification, latency per one-second interval of the measured window.

use super::checks::{self, record_error, record_mismatch};
use super::requests::Requests;
use super::schedule::{OpenLoopStats, Schedule};
use super::think::{ThinkStats, Thinker};
use super::{EngineFactory, Group, Shared};
use crate::buffer::BufferPool;
use crate::clock::Tick;
use crate::config::RunConfig;
use crate::data;
use crate::engine::{Completion, Engine, EngineSetup, Pvsync2Options};
use crate::error::Result;
use crate::result::{ErrorSummary, VerifySummary};
use crate::source::Handle;
use crate::stats::Recorder;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// What one worker hands back.
#[derive(Default, Clone)]
pub(super) struct WorkerOut {
    /// Read time alone and hand-off time (total − read) per block, for engines that report it.
    pub(super) service: Recorder,
    pub(super) handoff: Recorder,
    pub(super) features: Vec<String>,
    pub(super) open_loop: Option<OpenLoopStats>,
    /// With `--thinktime`: the pauses that began in the measured window.
    pub(super) think: Option<ThinkStats>,
    /// Clock reads and completed block I/Os over the whole run, for the timer-cost figure.
    pub(super) clock_reads: u64,
    pub(super) ios_all: u64,
    pub(super) errors: ErrorSummary,
    pub(super) verify: VerifySummary,
    /// Requests × nanoseconds in flight inside the measured window.
    pub(super) depth_area: f64,
    /// With `--sample-every`: per stretch of the target, (bytes, ns of its last completion since
    /// the window began).
    pub(super) samples: std::collections::BTreeMap<u64, (u64, u64)>,
    /// When this worker's last request counted in the measured window completed: a run that
    /// stops before its planned end (`--io-limit`, a stop rule, Ctrl-C) has its window end at the
    /// latest of these, not when the runner's thread noticed the workers had finished.
    pub(super) last_done: Option<Instant>,
    /// With `log_offsets`: the files, offsets (and lengths) of the blocks read, in completion
    /// order, up to this worker's share of
    /// [`MAX_LOGGED_OFFSETS`](crate::config::MAX_LOGGED_OFFSETS).
    pub(super) offsets: Vec<(u16, u64, u32)>,
    /// With a mix of sizes: the latencies of the window's requests of each size (the mix's
    /// order), beside the run's own.
    pub(super) by_size: Vec<Recorder>,
}

/// One worker thread: its I/O loop, then the finish barrier whatever happened.
pub(super) fn worker(
    sh: &Shared,
    group: usize,
    idx: usize,
    handles: Vec<Handle>,
    open: &EngineFactory,
) -> Result<WorkerOut> {
    let mut guard = Exit {
        sh,
        stage: Stage::SettingUp,
    };
    let g = &sh.groups[group];
    let r = worker_loop(sh, g, idx, handles, open, &mut guard.stage);
    if r.is_err() {
        // This target's workers stop; other targets of the run go on.
        g.stop.store(true, Ordering::Relaxed);
    }
    r
}

/// Keeps the runner's barriers whole however a worker ends, a panic included: a worker that
/// never reached the start or finish barrier would leave the runner waiting forever.
struct Exit<'a, 'c> {
    sh: &'a Shared<'c>,
    stage: Stage,
}

/// How far a worker got: the barriers it has passed.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Stage {
    SettingUp,
    Ready,
    Started,
}

impl Drop for Exit<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.sh.stop.store(true, Ordering::Relaxed);
            if self.stage == Stage::SettingUp {
                self.sh
                    .setup_failed("a worker thread panicked while setting up its engine");
            }
        }
        if self.stage < Stage::Ready {
            self.sh.ready.wait();
        }
        if self.stage < Stage::Started {
            self.sh.start.wait();
        }
        self.sh.worker_exited();
        self.sh.finish.wait();
    }
}

/// The worker's closed (or open) loop from its engine's set-up to its last completion.
fn worker_loop(
    sh: &Shared,
    g: &Group,
    idx: usize,
    handles: Vec<Handle>,
    open: &EngineFactory,
    stage: &mut Stage,
) -> Result<WorkerOut> {
    let cfg = g.cfg;
    let Setup {
        mut engine,
        ramp_end,
        end,
        mut out,
        mut req,
        mut comps,
        mut q,
        mut tl,
        mut schedule,
        mut think,
    } = set_up(sh, g, idx, handles, open, stage)?;
    let mut now = Tick::now();
    let mut stopping = false;
    let mut succeeded = false;
    let counter = &g.done[idx].0;
    let mut completed = 0u64;
    let mut last_done: Option<Tick> = None;

    loop {
        let stop = sh.stop.load(Ordering::Relaxed) || g.stop.load(Ordering::Relaxed);
        if !stopping && (now >= end || stop || req.budget == Some(0)) {
            // Requests still in flight are waited for, and those completing inside the window
            // count (their time and depth too: the window ends at the last completion).
            stopping = true;
        }
        let mut wait_for = cfg.complete_min.min(req.inflight);
        let holding = think.as_ref().is_some_and(Thinker::holds);
        match (&mut schedule, stopping || holding) {
            (_, true) => {}
            (None, false) => {
                q.refill(&mut req, engine.as_mut(), &mut out)?;
                wait_for = cfg.complete_min.min(req.inflight);
            }
            (Some(s), false) => {
                out.clock_reads += 1;
                match s.issue_due(&mut req, engine.as_mut(), ramp_end, cfg.complete_min)? {
                    Some(n) => wait_for = n,
                    None => {
                        tl.record();
                        s.sleep_until_due(end);
                        now = Tick::now();
                        continue;
                    }
                }
            }
        }
        q.fresh = None;
        tl.record();
        if req.inflight == 0 {
            let spent = req.budget == Some(0);
            match think.as_mut().filter(|_| holding && !stop) {
                Some(th) => now = pause(th, sh, g, (ramp_end, end), spent, &mut last_done),
                None => break,
            }
            continue;
        }
        if let Err(e) = q.reap(engine.as_mut(), wait_for, &mut comps) {
            if !sh.aborted.load(Ordering::SeqCst) {
                return Err(e);
            }
            // The runner gave up waiting (past the grace period after the end, or interrupted):
            // the reads still in flight failed with its reason.
            now = Tick::now();
            abandon(&mut req, &mut out.errors, cfg.bs, &e.to_string(), now);
            break;
        }
        now = Tick::now();
        if comps.is_empty() {
            continue;
        }
        // One writer per counter: a plain store, not a locked read-modify-write.
        completed += comps.len() as u64;
        counter.store(completed, Ordering::Relaxed);
        if let Some(th) = &mut think {
            th.completed(comps.len() as u64, now);
        }
        let in_window = now >= ramp_end && now <= end;
        let reaped = account(
            &comps,
            &mut req,
            &mut out,
            &mut tl,
            engine.as_ref(),
            now,
            in_window,
        );
        succeeded |= reaped.succeeded;
        if reaped.finished > 0 && in_window {
            last_done = Some(now);
        }
        tl.pending_at = now;
        if !q.reuse {
            tl.record();
        } else if reaped.light && schedule.is_none() {
            q.fresh = Some(now);
        }
        if let Some(e) = checks::every_read_failed(&out.errors, succeeded, cfg) {
            tl.record();
            tl.flush();
            drain(engine.as_mut(), req.inflight, &mut comps);
            return Err(e);
        }
    }
    out.think = think.map(|t| t.stats);
    Ok(finish(out, &mut tl, req, schedule, (now, end), last_done))
}

/// What a worker's loop works with, made once before its first read.
struct Setup<'a, 'g> {
    engine: Box<dyn Engine>,
    /// When the measured window begins and when the run is planned to end.
    ramp_end: Tick,
    end: Tick,
    out: WorkerOut,
    req: Requests,
    comps: Vec<Completion>,
    q: Queue,
    tl: Timeline<'a, 'g>,
    /// Open loop: requests are due on a schedule; their latency counts from the due time.
    schedule: Option<Schedule>,
    think: Option<Thinker>,
}

/// The worker's engine opened and the start barrier passed ([`start`]), then what its loop
/// needs from the run's start on: the window's edges, its requests and their queue, its
/// timeline, the open loop's schedule and think time's pauses.
fn set_up<'a, 'g>(
    sh: &Shared,
    g: &'a Group<'g>,
    idx: usize,
    handles: Vec<Handle>,
    open: &EngineFactory,
    stage: &mut Stage,
) -> Result<Setup<'a, 'g>> {
    let cfg = g.cfg;
    // Think time's sleep granularity is measured before the start, never in the window.
    let think = cfg.thinktime.map(Thinker::new);
    let (engine, t0) = start(sh, g, idx, handles, open, stage)?;
    let ramp_end = t0.plus(cfg.ramp);
    let end = ramp_end.plus(cfg.runtime);
    let files: Vec<_> = g.files.iter().map(|f| (f.range, &f.sampler)).collect();
    Ok(Setup {
        out: WorkerOut {
            features: engine.features(),
            ..WorkerOut::default()
        },
        req: Requests::new(cfg, &files, idx, t0, (ramp_end, end)),
        comps: Vec::with_capacity(cfg.iodepth * cfg.blocks_per_request),
        q: Queue::new(cfg, engine.as_ref()),
        tl: Timeline::new(g, t0, ramp_end),
        schedule: cfg
            .rate
            .map(|rate| Schedule::new(rate, cfg.threads, cfg.seed ^ idx as u64, t0)),
        think: think.map(|th| th.begin(t0)),
        engine,
        ramp_end,
        end,
    })
}

/// A pause due, the queue empty (fio's quiesce): taken (cut short if the run is told to stop);
/// when it ended. A fixed amount's last pause (`spent`: nothing more to read) counts in its
/// window, as fio's runtime counts it: the window's end moves past it.
fn pause(
    th: &mut Thinker,
    sh: &Shared,
    g: &Group,
    (ramp_end, end): (Tick, Tick),
    spent: bool,
    last_done: &mut Option<Tick>,
) -> Tick {
    th.pause((ramp_end, end), &|| {
        sh.stop.load(Ordering::Relaxed) || g.stop.load(Ordering::Relaxed)
    });
    let now = Tick::now();
    if spent && last_done.is_some() {
        *last_done = Some(now.min(end));
    }
    now
}

/// The worker's output once its loop ended at `now` (the run's planned end `end`): the last
/// second of its timeline handed over, its depth over the window, its open-loop figures.
#[inline]
fn finish(
    mut out: WorkerOut,
    tl: &mut Timeline,
    req: Requests,
    schedule: Option<Schedule>,
    (now, end): (Tick, Tick),
    last_done: Option<Tick>,
) -> WorkerOut {
    tl.flush();
    out.by_size = std::mem::take(&mut tl.by_size);
    out.depth_area = req.depth.area(now);
    out.last_done = last_done.map(Tick::to_instant);
    if let Some(s) = schedule {
        out.open_loop = Some(s.finish(end));
    }
    out
}

/// Open the worker's engine and pass the start barrier; the engine and the run's start.
/// Engines are created before the start barrier so set-up cost is never measured; a failed
/// set-up still reaches the barrier so the other threads are not left waiting.
#[inline]
fn start(
    sh: &Shared,
    g: &Group,
    idx: usize,
    handles: Vec<Handle>,
    open: &EngineFactory,
    stage: &mut Stage,
) -> Result<(Box<dyn Engine>, Tick)> {
    let cfg = g.cfg;
    let depth = cfg.iodepth;
    let bpr = cfg.blocks_per_request;
    let setup = EngineSetup {
        handles,
        pool: BufferPool::new(depth * bpr, cfg.max_bs() as usize),
        depth: depth * bpr,
        direct: cfg.direct,
        options: cfg.options.clone(),
    };
    let engine = open(idx, setup);
    if let Err(e) = &engine {
        sh.setup_failed(&e.to_string());
    }
    sh.ready.wait();
    *stage = Stage::Ready;
    sh.start.wait();
    *stage = Stage::Started;
    let engine = engine?;
    let t0 = Tick::from_instant(
        *sh.t0
            .get()
            .expect("t0 set before the start barrier is released"),
    );
    Ok((engine, t0))
}

/// How the loop hands requests to its engine and takes their completions back.
struct Queue {
    /// Requests per submit call, and blocks per request.
    batch: usize,
    bpr: usize,
    /// Completions taken per reap at most.
    reap_max: usize,
    /// The clock read that saw the last completions, when nothing heavier than freeing their
    /// slots ran since: it stamps the refill that follows at once (one clock read per I/O, not
    /// two). Verification reads the buffer before its slot is reused, so with it on (or after
    /// an error's message was formatted) the refill reads the clock afresh.
    fresh: Option<Tick>,
    /// A synchronous engine reads during `submit`: what runs between two of its clock reads is
    /// that read's latency, so it records and stamps as before (two clock reads per I/O), and
    /// only an asynchronous engine's refill reuses the completion's clock read.
    reuse: bool,
    /// Requests queued and not yet submitted: the refill's last batch, which the reap that
    /// follows submits when the engine does both in one system call (io_uring). The pending
    /// latencies are then recorded before that call rather than between two: like the rest of
    /// the bookkeeping after the completion's clock read, that time counts in the refill's
    /// latency (~20 ns).
    combine: bool,
    unsubmitted: bool,
}

impl Queue {
    #[inline]
    fn new(cfg: &RunConfig, engine: &dyn Engine) -> Queue {
        let bpr = cfg.blocks_per_request;
        // Reap no more than a batch (at least --complete-min) before refilling: one out, one in
        // at batch 1, the way fio's iodepth_batch_complete_max holds the queue at its depth.
        // Taking every completion at once and then submitting each freed slot in turn left
        // slots idle while the others were submitted (QD32 ran at a mean depth of ~20). The open
        // loop issues on its schedule, not on completions, so it takes all there are.
        let reap_max = if cfg.rate.is_some() {
            usize::MAX
        } else {
            cfg.batch.max(cfg.complete_min) * bpr
        };
        let reuse = cfg.engine.capabilities().asynchronous;
        Queue {
            batch: cfg.batch,
            bpr,
            reap_max,
            fresh: None,
            reuse,
            combine: reuse && engine.combines_submit_and_reap(),
            unsubmitted: false,
        }
    }

    /// Refill every free slot, up to `batch` requests per submit call; a request is never held
    /// back to fill a batch (its latency would count the wait).
    #[inline]
    fn refill(
        &mut self,
        req: &mut Requests,
        engine: &mut dyn Engine,
        out: &mut WorkerOut,
    ) -> Result<()> {
        while !req.free.is_empty() && req.budget != Some(0) {
            if self.unsubmitted {
                engine.submit()?;
                self.unsubmitted = false;
            }
            let ts = match self.fresh.take() {
                Some(t) => t,
                None => {
                    out.clock_reads += 1;
                    Tick::now()
                }
            };
            let mut n = 0;
            while n < self.batch && req.budget != Some(0) {
                let Some(r) = req.free.pop() else { break };
                if let Some(b) = &mut req.budget {
                    *b -= 1;
                }
                req.start(r as usize, ts, engine)?;
                n += 1;
            }
            if self.combine {
                self.unsubmitted = true;
            } else {
                engine.submit()?;
            }
            req.inflight += n * self.bpr;
            req.depth.started(ts, n);
        }
        Ok(())
    }

    /// Reap at least `wait_for` completions (at most `reap_max`) into `comps`, submitting the
    /// refill's last batch in the same call when it is still queued.
    #[inline]
    fn reap(
        &mut self,
        engine: &mut dyn Engine,
        wait_for: usize,
        comps: &mut Vec<Completion>,
    ) -> Result<usize> {
        comps.clear();
        if std::mem::take(&mut self.unsubmitted) {
            engine.submit_and_reap(wait_for, self.reap_max, comps)
        } else {
            engine.reap_at_most(wait_for, self.reap_max, comps)
        }
    }
}

/// What one reap's completions came to.
struct Reaped {
    /// Requests whose every block completed.
    finished: usize,
    /// Nothing heavier than freeing slots ran: no error, verification, sample or service time.
    light: bool,
    /// Some read succeeded.
    succeeded: bool,
}

/// Account for one reap's completions, seen at `now` (one clock read): errors, short reads, verification and
/// service times per block; each request whose blocks all completed frees its slot (and leaves
/// the depth), and its latency (inside the window) waits in `tl.pending` (and in the samples
/// of `--sample-every`).
#[inline]
fn account(
    comps: &[Completion],
    req: &mut Requests,
    out: &mut WorkerOut,
    tl: &mut Timeline,
    engine: &dyn Engine,
    now: Tick,
    in_window: bool,
) -> Reaped {
    let (g, bpr) = (tl.g, req.bpr);
    let cfg = g.cfg;
    let mut light = g.files[0].file_id.is_none() && cfg.sample_bytes.is_none();
    let mut succeeded = false;
    let mut finished = 0;
    out.clock_reads += 1;
    out.ios_all += comps.len() as u64;
    req.inflight -= comps.len();
    for c in comps {
        let t = c.token as usize;
        let r = t / bpr;
        let offset = req.at[t];
        let bs = req.len[t];
        let file = req.file[t];
        req.remaining[r] -= 1;
        if c.res < 0 {
            let errno = (-c.res) as i32;
            req.failed[r] = true;
            light = false;
            if errno == libc::EAGAIN && Pvsync2Options::of(&cfg.options).nowait {
                out.errors.eagain += 1;
            } else {
                record_error(&mut out.errors, offset, bs as u64, errno, None);
            }
        } else if (c.res as u64) < bs as u64 {
            req.failed[r] = true;
            light = false;
            let msg = format!("short read: {} of {} bytes", c.res, bs);
            record_error(&mut out.errors, offset, bs as u64, 0, Some(msg));
        } else {
            succeeded = true;
            if cfg.log_offsets.is_some()
                && out.offsets.len() < crate::config::MAX_LOGGED_OFFSETS / cfg.threads
            {
                out.offsets.push((file, offset, bs));
            }
            if let Some(id) = g.files[file as usize].file_id {
                out.verify.checked_ios += 1;
                if let Some(m) = data::verify(id, offset, engine.buffer(c.token, bs as usize)) {
                    record_mismatch(&mut out.verify, m);
                }
            }
            if in_window && c.service_ns > 0 {
                light = false;
                let total = now.ns_since(req.issued[r]);
                out.service.record(c.service_ns, 0);
                if bpr == 1 {
                    out.handoff.record(total.saturating_sub(c.service_ns), 0);
                }
            }
        }
        if req.remaining[r] > 0 {
            continue;
        }
        req.free.push(r as u32);
        finished += 1;
        if in_window && !req.failed[r] {
            // Taken now: the refill below reuses the slot and its issue time.
            let ns = now.ns_since(req.issued[r]);
            tl.pending.push(Done {
                ns,
                offset,
                bytes: bs as u64 * bpr as u64,
                size: req.size_of[r],
            });
        }
    }
    if finished > 0 {
        req.depth.finished(now, finished);
    }
    if let Some(every) = cfg.sample_bytes {
        sample(&mut out.samples, tl, every, now.ns_since(tl.ramp_end));
    }
    Reaped {
        finished,
        light,
        succeeded,
    }
}

/// With `--sample-every`: the requests just completed in the window (`tl.pending`), `at` ns
/// after the window began, counted in the stretch of `every` bytes of the target each read.
#[inline]
fn sample(samples: &mut BTreeMap<u64, (u64, u64)>, tl: &Timeline, every: u64, at: u64) {
    for &Done { offset, bytes, .. } in &tl.pending {
        let k = offset.saturating_sub(tl.g.files[0].range.offset) / every;
        let e = samples.entry(k).or_insert((0, 0));
        e.0 += bytes;
        e.1 = e.1.max(at);
    }
}

const NS_PER_S: u64 = 1_000_000_000;

/// Where a worker's latencies go: the per-second recorder of the measured window.
struct Timeline<'a, 'g> {
    g: &'a Group<'g>,
    ramp_end: Tick,
    interval: Recorder,
    /// The second of the window `interval` holds, and when the next one begins.
    second: u64,
    next_second: Tick,
    /// Latencies (and offsets) of the last completions, all at `pending_at`: recorded once their
    /// slots have been refilled and submitted (the device works while readlab counts).
    pending: Vec<Done>,
    pending_at: Tick,
    /// With a mix of sizes: the window's latencies per size.
    by_size: Vec<Recorder>,
}

/// A request completed in the window: its latency, offset, bytes, and size (an index into a
/// mix; 0 without one).
#[derive(Clone, Copy)]
pub(super) struct Done {
    ns: u64,
    offset: u64,
    bytes: u64,
    size: usize,
}

impl<'a, 'g> Timeline<'a, 'g> {
    /// The timeline of a worker that started at `t0` and measures from `ramp_end`.
    #[inline]
    fn new(g: &'a Group<'g>, t0: Tick, ramp_end: Tick) -> Self {
        let cfg = g.cfg;
        Timeline {
            g,
            ramp_end,
            interval: Recorder::default(),
            second: 0,
            next_second: ramp_end.plus_ns(NS_PER_S),
            pending: Vec::with_capacity(cfg.iodepth),
            pending_at: t0,
            by_size: vec![Recorder::default(); cfg.bssplit.shares().len()],
        }
    }

    /// Record the pending latencies (all in the measured window) into the second of the window
    /// they belong to, flushing the previous second when a new one began.
    #[inline]
    fn record(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let at = self.pending_at;
        if at >= self.next_second {
            let s = at.ns_since(self.ramp_end) / NS_PER_S;
            if s != self.second {
                self.flush();
                self.second = s;
            }
            self.next_second = self.ramp_end.plus_ns((s + 1) * NS_PER_S);
        }
        for d in &self.pending {
            self.interval.record(d.ns, d.bytes);
            if let Some(r) = self.by_size.get_mut(d.size) {
                r.record(d.ns, d.bytes);
            }
        }
        self.pending.clear();
    }

    /// Hand the second being recorded to the run's timeline.
    fn flush(&mut self) {
        self.g.flush_interval(self.second, &mut self.interval);
    }
}

/// Count every read still in flight as failed with `why` (the runner closed the source under
/// them); the requests are over.
fn abandon(req: &mut Requests, errors: &mut ErrorSummary, bs: u64, why: &str, now: Tick) {
    for r in 0..req.remaining.len() {
        let n = std::mem::take(&mut req.remaining[r]);
        for b in 0..n {
            let offset = req.at[r * req.bpr + b];
            record_error(errors, offset, bs, libc::ETIMEDOUT, Some(why.to_string()));
        }
        if n > 0 {
            req.depth.finished(now, 1);
        }
    }
    req.inflight = 0;
}

/// Wait for the I/Os still in flight so their buffers are not freed under the kernel.
fn drain(engine: &mut dyn Engine, mut inflight: usize, comps: &mut Vec<Completion>) {
    while inflight > 0 {
        comps.clear();
        match engine.reap(1, comps) {
            Ok(_) => inflight = inflight.saturating_sub(comps.len()),
            Err(_) => break,
        }
    }
}
