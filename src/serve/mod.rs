//! `readlab serve`: a read-only NBD server, itself a subject of study (the networked-flash
//! document's server). It exports a file or device read through any readlab engine, or zeros
//! without storage (`--null`), optionally with a fixed injected service time (`--delay`).
//!
//! - `request`: what to do with each request (both models decide alike).
//! - `thread`: one thread per connection doing its own reads (the document's design).
//! - `uring`: one io_uring per server thread driving both the sockets and the storage reads.
//! - `delay`: the injected service time, slept and then spun to be accurate.
//! - `accept`: the acceptor, taking connections and refusing them when it must.
//! - `budget`: payload buffers, their cache and the bytes in flight, bounded.
//!
//! The acceptor (the caller's thread) negotiates nothing itself: a connection is negotiated on its
//! own thread, so a slow or hostile client never holds up the others. Out of file descriptors,
//! it refuses connections (closing a reserve descriptor to accept and close them) and backs off
//! instead of spinning. It never prints: each second's figures and the summary go to a
//! [`ServeObserver`].

mod accept;
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
use crate::source::Source;
use accept::{Acceptor, readable};
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

/// What is served, opened: the source (None: zeros), its size, and the smallest block a client
/// may ask for (the alignment O_DIRECT needs).
type Opened = (Option<Box<dyn Source>>, u64, u32);

/// Descriptors readlab itself holds beside its event loops' (standard streams, the listener,
/// the target, /proc files read for CPU, its JSON). Clients are not counted: a server out of
/// descriptors for them backs off and refuses until one closes, and serves again.
const OWN_FDS: u64 = 16;

/// The longest `--delay` injected per read.
pub const MAX_DELAY: std::time::Duration = std::time::Duration::from_secs(1);

/// A bound server, not yet serving.
pub struct Server {
    listener: Listener,
    ctx: Arc<Ctx>,
}

impl Server {
    /// Check the configuration, open what is served and bind the listening socket.
    pub fn bind(cfg: ServeConfig) -> Result<Server> {
        Server::check(&cfg)?;
        let (source, size, min_block) = Server::open_backend(&cfg)?;
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
            files: 1,
        };
        (cfg.engine.spec().check)(&cfg.options, &workload)?;
        let export = Server::export_info(&cfg, size, min_block);
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

    /// Refuse a configuration the server cannot serve, saying what to change.
    fn check(cfg: &ServeConfig) -> Result<()> {
        if cfg.iodepth == 0 || cfg.threads == 0 || cfg.max_clients == 0 {
            return Err(Error::invalid(
                "--iodepth, --threads and --max-clients must be at least 1",
            ));
        }
        if cfg.iodepth > 256 {
            return Err(Error::invalid("--iodepth must be at most 256"));
        }
        Server::check_threads(cfg)?;
        Server::check_null(cfg)?;
        if cfg.delay > MAX_DELAY {
            return Err(Error::invalid(format!(
                "--delay {:?} per read is longer than readlab injects (at most 1s: clients time out); use a smaller --delay",
                cfg.delay
            )));
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
        Ok(())
    }

    /// `--threads` belongs to the uring model's event loops, each with two descriptors (its
    /// ring and its eventfd): at most [`crate::engine::MAX_THREADS`], within what RLIMIT_NOFILE
    /// leaves after readlab's own few. Refused up front rather than failing with "Too many open
    /// files" half-started.
    fn check_threads(cfg: &ServeConfig) -> Result<()> {
        if cfg.model == Model::Thread && cfg.threads > 1 {
            return Err(Error::invalid(
                "--threads sets the uring model's event loops; the thread model starts one thread per client: add --model uring or drop --threads",
            ));
        }
        if cfg.threads > crate::engine::MAX_THREADS {
            return Err(Error::invalid(format!(
                "--threads {} is more threads than readlab starts (at most {})",
                cfg.threads,
                crate::engine::MAX_THREADS
            )));
        }
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        let need = cfg.threads as u64 * 2 + OWN_FDS;
        if let Some(limit) = limit
            && need > limit
        {
            return Err(Error::invalid(format!(
                "--threads {} needs about {need} open files and this process may open {limit} (RLIMIT_NOFILE); raise it (`ulimit -n {}`) or use at most --threads {}",
                cfg.threads,
                need.max(1024).next_power_of_two(),
                limit.saturating_sub(OWN_FDS) / 2
            )));
        }
        Ok(())
    }

    /// `--null SIZE` serves zeros without reading anything, so the flags that say how the
    /// target is read would be ignored: refused instead.
    fn check_null(cfg: &ServeConfig) -> Result<()> {
        if !matches!(cfg.backend, Backend::Null(_)) {
            return Ok(());
        }
        let flag = if cfg.engine != EngineKind::Psync {
            Some("engine".to_string())
        } else if !cfg.direct {
            Some("buffered".to_string())
        } else {
            let own = crate::engine::option::set_in(cfg.engine, &cfg.options).next();
            own.map(|d| d.flag.to_string()).or_else(|| {
                crate::engine::option::foreign(cfg.engine, &cfg.options).map(|(_, f)| f.to_string())
            })
        };
        match flag {
            Some(f) => Err(Error::invalid(format!(
                "--{f} says how the target is read, and --null serves zeros without reading: drop --{f} or serve a TARGET"
            ))),
            None => Ok(()),
        }
    }

    /// Open what is served.
    fn open_backend(cfg: &ServeConfig) -> Result<Opened> {
        Ok(match &cfg.backend {
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
        })
    }

    /// What the clients are told about the export.
    fn export_info(cfg: &ServeConfig, size: u64, min_block: u32) -> ExportInfo {
        ExportInfo {
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
        }
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
        let mut meter = Meter::new();
        let mut acceptor = Acceptor::new();
        loop {
            if observer.stop() {
                break;
            }
            let now = Instant::now();
            if now >= meter.next {
                meter.second(now, &ctx.counters, observer);
                acceptor.forget_finished();
                continue;
            }
            if acceptor.backing_off(now, meter.next) {
                continue;
            }
            let wait = (meter.next - now).min(Duration::from_millis(100));
            if !readable(&self.listener, wait) {
                continue;
            }
            acceptor.accept_all(&self.listener, &ctx, workers.as_ref());
        }
        // CPU is read while every server thread still exists (connection threads that ended
        // earlier are in the process's own figure, which the per-read cost uses).
        let cpu = meter.cpu0.usage_until(&CpuSnapshot::take());
        // Stop: wake every connection and wait for it.
        ctx.stop.store(true, Ordering::Relaxed);
        for s in ctx.live.lock().unwrap().values() {
            s.shutdown();
        }
        acceptor.join();
        if let Some(w) = workers {
            w.join();
        }
        drop(self.listener);
        let secs = meter.start.elapsed().as_secs_f64();
        Ok(summary(&ctx, address, secs, cpu, meter.seconds))
    }
}

/// Each second's figures, taken on the acceptor's thread.
struct Meter {
    /// When the server started listening.
    start: Instant,
    /// CPU at the start, for the summary.
    cpu0: CpuSnapshot,
    /// CPU, reads and bytes at the start of the second under way.
    last_cpu: CpuSnapshot,
    last_reads: u64,
    last_bytes: u64,
    /// When the second under way ends.
    next: Instant,
    seconds: Vec<Second>,
}

impl Meter {
    fn new() -> Meter {
        let start = Instant::now();
        let cpu0 = CpuSnapshot::take();
        Meter {
            start,
            last_cpu: cpu0.clone(),
            cpu0,
            last_reads: 0,
            last_bytes: 0,
            next: start + Duration::from_secs(1),
            seconds: Vec::new(),
        }
    }

    /// The second just ended: measured, shown to the observer and kept.
    fn second(&mut self, now: Instant, counters: &Counters, observer: &dyn ServeObserver) {
        let cpu = CpuSnapshot::take();
        let u = self.last_cpu.usage_until(&cpu);
        let reads = counters.reads.load(Ordering::Relaxed);
        let bytes = counters.bytes.load(Ordering::Relaxed);
        let s = Second {
            t: now.duration_since(self.start).as_secs_f64(),
            iops: (reads - self.last_reads) as f64 / u.window_s,
            mb_per_s: (bytes - self.last_bytes) as f64 / u.window_s / 1e6,
            clients: counters.clients.load(Ordering::Relaxed),
            cpu_app_pct: u.app.pct_of_core,
            cpu_io_worker_pct: u.io_worker.pct_of_core,
            cpu_sqpoll_pct: u.sqpoll.pct_of_core,
            cpu_machine_busy_pct: u.machine_busy_pct_of_core,
        };
        observer.second(&s);
        self.seconds.push(s);
        (self.last_reads, self.last_bytes, self.last_cpu) = (reads, bytes, cpu);
        self.next += Duration::from_secs(1);
    }
}

/// What the server did, from its counters once every connection has ended.
fn summary(
    ctx: &Ctx,
    address: String,
    secs: f64,
    cpu: CpuUsage,
    per_second: Vec<Second>,
) -> ServeSummary {
    let c = &ctx.counters;
    let reads = c.reads.load(Ordering::Relaxed);
    let bytes = c.bytes.load(Ordering::Relaxed);
    let cfg = &ctx.cfg;
    ServeSummary {
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
        per_second,
    }
}
