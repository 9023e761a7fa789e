//! `readlab serve`: a read-only NBD server, itself a subject of study (the networked-flash
//! document's server). It exports a file or device read through any readlab engine, or zeros
//! without storage (`--null`), optionally with a fixed injected service time (`--delay`).
//!
//! - `request`: what to do with each request (both models decide alike).
//! - `thread`: one thread per connection doing its own reads (the document's design).
//! - `uring`: one io_uring per server thread driving both the sockets and the storage reads.
//! - `delay`: the injected service time, slept and then spun to be accurate.
//! - `budget`: payload buffers, their cache and the bytes in flight, bounded.
//!
//! The acceptor (the caller's thread) negotiates nothing itself: a connection is negotiated on its
//! own thread, so a slow or hostile client never holds up the others. Out of file descriptors,
//! it refuses connections (closing a reserve descriptor to accept and close them) and backs off
//! instead of spinning. It never prints: each second's figures and the summary go to a
//! [`ServeObserver`].

mod budget;
mod delay;
pub mod request;
mod shared;
mod thread;
mod uring;

pub use budget::{CACHE_CAP, DEFAULT_MAX_IN_FLIGHT, FLOOR};
pub use delay::METHOD as DELAY_METHOD;
pub use shared::{Backend, HANDSHAKE_TIMEOUT, IDLE_TIMEOUT, MAX_REQUEST, Model, ServeConfig};
pub(crate) use shared::{ClientSlot, Counters, Ctx, negotiate};

use crate::cpu::{CpuSnapshot, CpuUsage};
use crate::engine::EngineKind;
use crate::error::{Error, Result};
use crate::nbd::proto::{FLAG_CAN_MULTI_CONN, FLAG_HAS_FLAGS, FLAG_READ_ONLY};
use crate::nbd::{Address, BlockSizes, ExportInfo, Listener};
use request::Limits;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One second of serving.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Second {
    /// Seconds since the server started listening.
    pub t: f64,
    pub iops: f64,
    /// MB/s (10^6 bytes) of payload served.
    pub mb_per_s: f64,
    pub clients: u64,
    /// CPU of the server's threads (% of one core), by kind as `readlab run` counts it.
    pub cpu_app_pct: f64,
    pub cpu_io_worker_pct: f64,
    pub cpu_sqpoll_pct: f64,
    pub cpu_machine_busy_pct: f64,
}

/// What a server did, written as JSON at exit.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServeSummary {
    pub address: String,
    pub model: Model,
    pub threads: usize,
    pub engine: String,
    pub iodepth: usize,
    pub direct: bool,
    pub backend: Backend,
    pub size: u64,
    pub delay_us: f64,
    pub delay_method: Option<String>,
    pub seconds: f64,
    pub reads: u64,
    pub bytes: u64,
    pub iops: f64,
    pub mb_per_s: f64,
    pub refused: u64,
    pub clients_total: u64,
    pub clients_max: u64,
    pub clients_rejected: u64,
    pub connections_hung_up: u64,
    /// Connections closed at the handshake deadline or for being idle (`--idle-timeout`).
    #[serde(default)]
    pub connections_timed_out: u64,
    pub cpu: CpuUsage,
    /// CPU of the server process per read served, µs (from the process's own tick counts, so
    /// connection threads that ended are included).
    pub cpu_us_per_read: f64,
    pub per_second: Vec<Second>,
}

/// Receives what the server does; runs on the acceptor's thread.
pub trait ServeObserver: Sync {
    fn second(&self, _s: &Second) {}
    /// Checked a few times a second: true stops the server (e.g. on SIGINT/SIGTERM).
    fn stop(&self) -> bool {
        false
    }
}

/// A bound server, not yet serving.
pub struct Server {
    listener: Listener,
    ctx: Arc<Ctx>,
}

impl Server {
    /// Check the configuration, open what is served and bind the listening socket.
    pub fn bind(cfg: ServeConfig) -> Result<Server> {
        if cfg.iodepth == 0 || cfg.threads == 0 || cfg.max_clients == 0 {
            return Err(Error::invalid(
                "--iodepth, --threads and --max-clients must be at least 1",
            ));
        }
        if cfg.iodepth > 256 {
            return Err(Error::invalid("--iodepth must be at most 256"));
        }
        if cfg.handshake_timeout.is_zero() {
            return Err(Error::invalid(
                "--handshake-timeout must be more than 0 (e.g. 10s): it is how long a client may take to negotiate",
            ));
        }
        if cfg.max_in_flight < MAX_REQUEST as u64 {
            return Err(Error::invalid(format!(
                "--max-in-flight must be at least {} MiB, the largest request served",
                MAX_REQUEST >> 20
            )));
        }
        let slots = (cfg.iodepth as u64 - 1) * thread::CHUNK as u64;
        if cfg.model == Model::Thread && slots > cfg.max_in_flight {
            return Err(Error::invalid(format!(
                "--iodepth {} needs {} MiB of --max-in-flight per connection; raise --max-in-flight or lower --iodepth",
                cfg.iodepth,
                slots >> 20
            )));
        }
        if !cfg.engine.capabilities().asynchronous && cfg.iodepth > 1 {
            return Err(Error::invalid(format!(
                "engine {} is synchronous and keeps one read in flight; drop --iodepth",
                cfg.engine.name()
            )));
        }
        if cfg.model == Model::Uring && cfg.engine != EngineKind::Psync {
            return Err(Error::invalid(
                "the uring model reads through its own ring; --engine applies to --model thread",
            ));
        }
        if cfg.engine == EngineKind::parse("nbd")? {
            return Err(Error::invalid(
                "the server reads local storage; --engine nbd is a client",
            ));
        }
        if cfg.model == Model::Thread
            && cfg.engine == EngineKind::Null
            && let Backend::Target(p) = &cfg.backend
        {
            return Err(Error::invalid(format!(
                "--engine null reads nothing: the clients would get zeros, not {}; serve zeros \
                 with --null SIZE, or read the target with another --engine",
                p.display()
            )));
        }
        // An engine option sets up the reads of the engine whose table has it, and only the
        // thread model reads through an engine.
        let stray = crate::engine::option::foreign(cfg.engine, &cfg.options).or_else(|| {
            let own = crate::engine::option::set_in(cfg.engine, &cfg.options).next();
            own.filter(|_| cfg.model != Model::Thread)
                .map(|d| (cfg.engine, d.flag))
        });
        if let Some((owner, flag)) = stray {
            return Err(Error::invalid(format!(
                "--{flag} sets up the {0} engine's reads, which only --model thread --engine {0} \
                 reads through; drop it",
                owner.name()
            )));
        }
        if cfg.export_name.len() > crate::nbd::proto::MAX_EXPORT_NAME {
            return Err(Error::invalid(format!(
                "--export is {} bytes long; an NBD export name is at most {} bytes",
                cfg.export_name.len(),
                crate::nbd::proto::MAX_EXPORT_NAME
            )));
        }
        let (source, size, min_block) = match &cfg.backend {
            Backend::Null(size) => (None, *size, 1),
            Backend::Target(p) => {
                if p.to_str().is_some_and(crate::nbd::NbdUrl::is_url) {
                    return Err(Error::invalid(
                        "readlab serve exports a local file or device, not an NBD URL",
                    ));
                }
                let s = crate::source::open(p)?;
                let align = match (cfg.direct, s.direct()) {
                    (false, _) => 1,
                    (true, Some(a)) => a.offset,
                    (true, None) => {
                        return Err(Error::invalid(format!(
                            "{}: the filesystem does not support O_DIRECT; use --buffered",
                            p.display()
                        )));
                    }
                };
                let size = s.size();
                (Some(s), size, align.clamp(1, 64 << 10) as u32)
            }
        };
        if size == 0 {
            return Err(Error::invalid(
                "the export is empty; serve something of at least one block",
            ));
        }
        let workload = crate::engine::Workload {
            direct: cfg.direct,
            iodepth: cfg.iodepth,
            blocks_per_request: 1,
            // Each connection (thread model) or server thread (uring model) owns one engine.
            threads: 1,
        };
        (cfg.engine.spec().check)(&cfg.options, &workload)?;
        let export = ExportInfo {
            name: cfg.export_name.clone(),
            description: Some(match &cfg.backend {
                Backend::Null(_) => "readlab serve --null".into(),
                Backend::Target(p) => format!("readlab serve {}", p.display()),
            }),
            size,
            flags: FLAG_HAS_FLAGS | FLAG_READ_ONLY | FLAG_CAN_MULTI_CONN,
            block_sizes: Some(BlockSizes {
                minimum: min_block,
                preferred: min_block.max(4096),
                maximum: MAX_REQUEST,
            }),
        };
        let listener = Listener::bind(&cfg.listen).map_err(|e| {
            Error::invalid(format!(
                "cannot listen on {}: {e}; choose another address (port 0 picks a free port)",
                cfg.listen
            ))
        })?;
        let limits = Limits {
            size,
            max_request: MAX_REQUEST,
            min_block,
        };
        let cfg_max_in_flight = cfg.max_in_flight;
        Ok(Server {
            listener,
            ctx: Arc::new(Ctx {
                cfg,
                export,
                limits,
                source,
                counters: Counters::default(),
                stop: AtomicBool::new(false),
                live: Mutex::new(HashMap::new()),
                budget: budget::Budget::new(cfg_max_in_flight),
            }),
        })
    }

    /// The address bound (the real port when port 0 was asked for).
    pub fn address(&self) -> Address {
        self.listener.local_addr()
    }

    pub fn export(&self) -> &ExportInfo {
        &self.ctx.export
    }

    /// Serve until the observer says stop; then close every connection and sum up.
    pub fn run(self, observer: &dyn ServeObserver) -> Result<ServeSummary> {
        let ctx = self.ctx;
        self.listener
            .set_nonblocking(true)
            .map_err(|e| Error::io("listener", "cannot set non-blocking", e))?;
        let workers = match ctx.cfg.model {
            Model::Uring => Some(uring::Workers::start(&ctx)?),
            Model::Thread => None,
        };
        let address = self.listener.local_addr().to_string();
        let start = Instant::now();
        let cpu0 = CpuSnapshot::take();
        let mut last_cpu = cpu0.clone();
        let (mut last_reads, mut last_bytes) = (0u64, 0u64);
        let mut next = start + Duration::from_secs(1);
        let mut seconds = Vec::new();
        let mut conn_threads: Vec<std::thread::JoinHandle<()>> = Vec::new();
        let mut id = 0u64;
        let mut reserve = reserve_fd();
        let mut backoff: Option<Instant> = None;
        loop {
            if observer.stop() {
                break;
            }
            let now = Instant::now();
            if now >= next {
                let cpu = CpuSnapshot::take();
                let u = last_cpu.usage_until(&cpu);
                let reads = ctx.counters.reads.load(Ordering::Relaxed);
                let bytes = ctx.counters.bytes.load(Ordering::Relaxed);
                let s = Second {
                    t: now.duration_since(start).as_secs_f64(),
                    iops: (reads - last_reads) as f64 / u.window_s,
                    mb_per_s: (bytes - last_bytes) as f64 / u.window_s / 1e6,
                    clients: ctx.counters.clients.load(Ordering::Relaxed),
                    cpu_app_pct: u.app.pct_of_core,
                    cpu_io_worker_pct: u.io_worker.pct_of_core,
                    cpu_sqpoll_pct: u.sqpoll.pct_of_core,
                    cpu_machine_busy_pct: u.machine_busy_pct_of_core,
                };
                observer.second(&s);
                seconds.push(s);
                (last_reads, last_bytes, last_cpu) = (reads, bytes, cpu);
                next += Duration::from_secs(1);
                conn_threads.retain(|h| !h.is_finished());
                continue;
            }
            if let Some(until) = backoff {
                // Out of descriptors (or memory) a moment ago: wait before trying again, the
                // clients meanwhile in the listen queue.
                if now < until {
                    std::thread::sleep((until - now).min(next - now));
                    continue;
                }
                backoff = None;
            }
            let wait = (next - now).min(Duration::from_millis(100));
            if !readable(&self.listener, wait) {
                continue;
            }
            // Take every connection waiting (a flood is refused promptly, not one per wake-up).
            for _ in 0..ACCEPT_BATCH {
                let stream = match self.listener.accept() {
                    Ok(s) => s,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if out_of_descriptors(&e) => {
                        if !refuse_waiting(&self.listener, &mut reserve, &ctx.counters) {
                            backoff = Some(Instant::now() + BACKOFF);
                        }
                        break;
                    }
                    Err(e)
                        if e.raw_os_error() == Some(libc::ENOBUFS)
                            || e.raw_os_error() == Some(libc::ENOMEM) =>
                    {
                        backoff = Some(Instant::now() + BACKOFF);
                        break;
                    }
                    Err(_) => continue,
                };
                let c = &ctx.counters;
                if c.clients.load(Ordering::Relaxed) >= ctx.cfg.max_clients as u64 {
                    c.rejected.fetch_add(1, Ordering::Relaxed);
                    drop(stream);
                    continue;
                }
                let now_clients = c.clients.fetch_add(1, Ordering::Relaxed) + 1;
                c.clients_total.fetch_add(1, Ordering::Relaxed);
                c.clients_max.fetch_max(now_clients, Ordering::Relaxed);
                let slot = ClientSlot(ctx.clone());
                id += 1;
                let spawned = match &workers {
                    None => {
                        thread::spawn(ctx.clone(), stream, slot, id).map(|h| conn_threads.push(h))
                    }
                    Some(w) => w.hand_over(ctx.clone(), stream, slot, id),
                };
                if spawned.is_err() {
                    // Out of threads: this client is dropped, the others go on.
                    c.rejected.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        // CPU is read while every server thread still exists (connection threads that ended
        // earlier are in the process's own figure, which the per-read cost uses).
        let cpu = cpu0.usage_until(&CpuSnapshot::take());
        // Stop: wake every connection and wait for it.
        ctx.stop.store(true, Ordering::Relaxed);
        for s in ctx.live.lock().unwrap().values() {
            s.shutdown();
        }
        for h in conn_threads {
            let _ = h.join();
        }
        if let Some(w) = workers {
            w.join();
        }
        drop(self.listener);
        let secs = start.elapsed().as_secs_f64();
        let c = &ctx.counters;
        let reads = c.reads.load(Ordering::Relaxed);
        let bytes = c.bytes.load(Ordering::Relaxed);
        let cfg = &ctx.cfg;
        Ok(ServeSummary {
            address,
            model: cfg.model,
            threads: cfg.threads,
            engine: cfg.engine.name().into(),
            iodepth: cfg.iodepth,
            direct: cfg.direct,
            backend: cfg.backend.clone(),
            size: ctx.export.size,
            delay_us: cfg.delay.as_secs_f64() * 1e6,
            delay_method: (!cfg.delay.is_zero()).then(|| DELAY_METHOD.to_string()),
            seconds: secs,
            reads,
            bytes,
            iops: reads as f64 / secs.max(1e-9),
            mb_per_s: bytes as f64 / secs.max(1e-9) / 1e6,
            refused: c.refused.load(Ordering::Relaxed),
            clients_total: c.clients_total.load(Ordering::Relaxed),
            clients_max: c.clients_max.load(Ordering::Relaxed),
            clients_rejected: c.rejected.load(Ordering::Relaxed),
            connections_hung_up: c.hung_up.load(Ordering::Relaxed),
            connections_timed_out: c.timed_out.load(Ordering::Relaxed),
            cpu_us_per_read: if reads > 0 {
                cpu.process_pct_of_core / 100.0 * cpu.window_s * 1e6 / reads as f64
            } else {
                0.0
            },
            cpu,
            per_second: seconds,
        })
    }
}

/// Connections taken from the listen queue per wake-up.
const ACCEPT_BATCH: usize = 256;
/// How long the acceptor waits after running out of descriptors (or memory) it could not free.
const BACKOFF: Duration = Duration::from_millis(100);

fn out_of_descriptors(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// A descriptor held so that, out of descriptors, one can be freed to accept and close.
fn reserve_fd() -> Option<std::os::fd::OwnedFd> {
    rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .ok()
}

/// Out of descriptors: close the reserve, accept and close every connection waiting (each told
/// no at once rather than left to time out in the listen queue, and counted as rejected), then
/// take the reserve back. False when that could not be done (the caller backs off).
fn refuse_waiting(l: &Listener, reserve: &mut Option<std::os::fd::OwnedFd>, c: &Counters) -> bool {
    if reserve.take().is_none() {
        *reserve = reserve_fd();
        return false;
    }
    let mut ok = true;
    for _ in 0..ACCEPT_BATCH {
        match l.accept() {
            Ok(s) => {
                drop(s);
                c.rejected.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if out_of_descriptors(&e) => {
                ok = false; // another thread took the descriptor freed
                break;
            }
            Err(_) => {}
        }
    }
    *reserve = reserve_fd();
    ok && reserve.is_some()
}

/// Wait up to `timeout` for a connection to accept.
fn readable(l: &Listener, timeout: Duration) -> bool {
    let mut fds = [rustix::event::PollFd::new(l, rustix::event::PollFlags::IN)];
    let ts = rustix::time::Timespec {
        tv_sec: timeout.as_secs() as i64,
        tv_nsec: timeout.subsec_nanos() as i64,
    };
    matches!(rustix::event::poll(&mut fds, Some(&ts)), Ok(n) if n > 0)
}
