//! `readlab serve`: a read-only NBD server on a file, a device or zeros; prints the bound address,
//! a line per second (IOPS, MB/s, clients, CPU by thread kind) and a summary, and writes the
//! summary as JSON at exit. SIGINT and SIGTERM stop it cleanly (exit 0: that is how a server ends).

use crate::args::{count, duration, size};
use crate::engine_flags::{EngineFlags, Scope};
use crate::progress::Progress;
use clap::{Args, ValueEnum};
use readlab::engine::EngineKind;
use readlab::nbd::Address;
use readlab::runner::Observer;
use readlab::serve::{Backend, Model, Second, ServeConfig, ServeObserver, Server};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// A line on stdout; a reader that went away (a closed pipe) does not stop the server.
macro_rules! say {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

#[derive(Copy, Clone, Debug, ValueEnum)]
pub enum ModelArg {
    Thread,
    Uring,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// File or block device to export read-only (or --null SIZE).
    #[arg(required_unless_present = "null", conflicts_with = "null")]
    pub target: Option<PathBuf>,
    /// Where to listen: HOST:PORT (port 0 picks a free port and prints it), unix:PATH or a path.
    #[arg(long)]
    pub listen: String,
    /// Serve zeros of this size without storage (the null block device of the NBD study).
    #[arg(long, value_parser = size)]
    pub null: Option<u64>,
    /// Fixed service time added to every read (e.g. 10us); slept and then spun to be accurate.
    #[arg(long, default_value = "0s", value_parser = duration)]
    pub delay: Duration,
    /// Spin on the sockets for a request for up to this long (default 200us; `--busy-poll=300us`) before sleeping for
    /// it: QD1 latency without the wake-up of an idle CPU, at the cost of a spinning core.
    #[arg(long, value_parser = duration, num_args = 0..=1, require_equals = true, default_missing_value = "200us")]
    pub busy_poll: Option<Duration>,
    /// thread: a thread per connection; uring: io_uring event loops driving sockets and reads.
    #[arg(long, value_enum, default_value = "thread")]
    pub model: ModelArg,
    /// Event-loop threads of the uring model.
    #[arg(long, default_value = "1", value_parser = count)]
    pub threads: usize,
    /// Engine reading the target in the thread model: psync, pvsync2, libaio, uring, pool, posixaio
    /// (not null: zeros are --null SIZE).
    #[arg(long, default_value = "psync")]
    pub engine: String,
    /// Reads in flight per connection (the engine's queue in the thread model).
    #[arg(long, default_value = "1", value_parser = count)]
    pub iodepth: usize,
    /// Read the target with O_DIRECT (the default).
    #[arg(long, conflicts_with = "buffered")]
    pub direct: bool,
    /// Read the target through the page cache.
    #[arg(long)]
    pub buffered: bool,
    /// The reading engine's options, from its table (`--fixed-files`, `--pool-threads N`, …).
    #[command(flatten)]
    pub engine_options: EngineFlags<ServeEngines>,
    /// Clients served at once; more are disconnected at once.
    #[arg(long, default_value = "256", value_parser = count)]
    pub max_clients: usize,
    /// The export's name: clients must ask for it, others are refused (without --export, any
    /// name a client asks for reaches the export).
    #[arg(long, default_value = "")]
    pub export: String,
    /// How long a client may take to negotiate, the whole handshake (not per read).
    #[arg(long, default_value = "10s", value_parser = duration)]
    pub handshake_timeout: Duration,
    /// Close a negotiated client that sends nothing with nothing in flight for this long, or
    /// takes longer than this to take a batch of its replies (0: never).
    #[arg(long, default_value = "300s", value_parser = duration)]
    pub idle_timeout: Duration,
    /// Payload bytes in flight across all connections (beyond one request of up to 256 KiB
    /// each); a connection over it is not read until replies drain. At least 32 MiB.
    #[arg(long, default_value = "128M", value_parser = size)]
    pub max_in_flight: u64,
    /// Stop after this long (default: until SIGINT/SIGTERM).
    #[arg(long, value_parser = duration)]
    pub runtime: Option<Duration>,
    /// Write the summary (with every second's figures) as JSON to this file at exit.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Replace an output file that is there and that readlab did not write (--json); never a
    /// symbolic link, an input, a device, FIFO or directory.
    #[arg(long)]
    pub force: bool,
    /// No line per second.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The options of the engines the server reads local storage through (all but the nbd client,
/// which `Server::bind` refuses) are flags of `serve`, for its thread model.
#[derive(Debug)]
pub struct ServeEngines;

impl Scope for ServeEngines {
    fn takes(kind: EngineKind) -> bool {
        kind.name() != "nbd"
    }

    fn prefix(kind: EngineKind) -> String {
        format!("{0} engine (--model thread --engine {0}): ", kind.name())
    }

    const REFUSED_BESIDE: &'static [&'static str] = &[];
}

impl ServeArgs {
    fn to_config(&self) -> anyhow::Result<ServeConfig> {
        let backend = match (&self.target, self.null) {
            (_, Some(n)) => Backend::Null(n),
            (Some(t), None) => Backend::Target(t.clone()),
            (None, None) => unreachable!("clap requires TARGET or --null"),
        };
        let listen = Address::parse_listen(&self.listen)?;
        let mut cfg = ServeConfig::new(backend, listen);
        cfg.model = match self.model {
            ModelArg::Thread => Model::Thread,
            ModelArg::Uring => Model::Uring,
        };
        cfg.threads = self.threads;
        cfg.engine = EngineKind::parse(&self.engine)?;
        cfg.iodepth = self.iodepth;
        cfg.direct = !self.buffered;
        // An option of another engine is kept, for the server's check to refuse by name.
        cfg.options = self.engine_options.options_for(cfg.engine, true);
        cfg.delay = self.delay;
        cfg.busy_poll = self.busy_poll.unwrap_or_default();
        cfg.max_clients = self.max_clients;
        cfg.export_name = self.export.clone();
        cfg.handshake_timeout = self.handshake_timeout;
        cfg.idle_timeout = self.idle_timeout;
        cfg.max_in_flight = self.max_in_flight;
        Ok(cfg)
    }
}

struct Watch {
    signals: Progress,
    quiet: bool,
    until: Option<Instant>,
}

impl ServeObserver for Watch {
    fn second(&self, s: &Second) {
        if self.quiet {
            return;
        }
        say!(
            "{:5.0}s {:9.0} IOPS {:9.1} MB/s  clients {:3}  cpu app {:5.1}% io-wrk {:4.1}% sqpoll {:4.1}% machine {:5.1}%",
            s.t,
            s.iops,
            s.mb_per_s,
            s.clients,
            s.cpu_app_pct,
            s.cpu_io_worker_pct,
            s.cpu_sqpoll_pct,
            s.cpu_machine_busy_pct
        );
        let _ = std::io::stdout().flush();
    }

    fn stop(&self) -> bool {
        self.signals.cancelled() || self.until.is_some_and(|t| Instant::now() >= t)
    }
}

pub fn run(a: &ServeArgs) -> anyhow::Result<ExitCode> {
    let cfg = a.to_config()?;
    if let Some(r) = a.runtime {
        readlab::config::check_runtime(r)?;
    }
    if let Some(p) = &a.json {
        let inputs: Vec<&std::path::Path> = a.target.iter().map(|t| t.as_path()).collect();
        readlab::outpath::check_file(p, &inputs, a.force)?;
    }
    let watch = Watch {
        signals: Progress::new(true),
        quiet: a.quiet,
        until: None,
    };
    let server = Server::bind(cfg.clone())?;
    let e = server.export();
    let bs = e.block_sizes.expect("readlab serve advertises block sizes");
    say!(
        "readlab serve: listening on {} — export '{}', {} B, read-only, multi-conn, block sizes {}/{}/{} B, model {}, {}{}{}",
        server.address(),
        e.name,
        e.size,
        bs.minimum,
        bs.preferred,
        bs.maximum,
        match cfg.model {
            Model::Thread => format!(
                "thread (engine {}, iodepth {})",
                cfg.engine.name(),
                cfg.iodepth
            ),
            Model::Uring => format!("uring ({} thread(s))", cfg.threads),
        },
        storage(&cfg),
        if cfg.delay.is_zero() {
            String::new()
        } else {
            format!(
                ", delay {} us per read ({})",
                cfg.delay.as_secs_f64() * 1e6,
                readlab::serve::DELAY_METHOD
            )
        },
        if cfg.busy_poll.is_zero() {
            String::new()
        } else {
            format!(
                ", busy-polling its sockets for up to {} us before sleeping",
                cfg.busy_poll.as_micros()
            )
        }
    );
    let _ = std::io::stdout().flush();
    let watch = Watch {
        until: a.runtime.map(|d| Instant::now() + d),
        ..watch
    };
    let summary = server.run(&watch)?;
    say!(
        "readlab serve: stopped after {:.1} s: {} reads ({:.0} IOPS, {:.1} MB/s), {} refused, {} clients ({} at most at once, {} rejected, {} closed on errors, {} timed out), {:.1} us CPU per read",
        summary.seconds,
        summary.reads,
        summary.iops,
        summary.mb_per_s,
        summary.refused,
        summary.clients_total,
        summary.clients_max,
        summary.clients_rejected,
        summary.connections_hung_up,
        summary.connections_timed_out,
        summary.cpu_us_per_read
    );
    if let Some(p) = &a.json {
        readlab::fsio::write_file(p, &serde_json::to_string_pretty(&summary)?)?;
    }
    // A signal is how a server is meant to end: exit 0.
    Ok(ExitCode::SUCCESS)
}

/// How the target is read, said on the first line: O_DIRECT reads go to the device while
/// nbdkit's `file` plugin and qemu-nbd read through the page cache, so a client comparing
/// servers over the same file must know which one it measures.
fn storage(cfg: &ServeConfig) -> &'static str {
    match (&cfg.backend, cfg.direct) {
        (Backend::Null(_), _) => "no storage (zeros)",
        (Backend::Target(_), true) => {
            "reads with O_DIRECT (from the device, not the page cache; --buffered reads through it as nbdkit's file plugin does)"
        }
        (Backend::Target(_), false) => "reads through the page cache (--buffered)",
    }
}
