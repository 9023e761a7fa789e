//! The points of every study, as data: which configurations to run for each experiment of the
//! report, in a full and a `--quick` size.

use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
use crate::error::{Error, Result};
use crate::result::{Document, StudyTag};
use crate::source::Target;
use crate::stability::StopRule;
use std::time::Duration;

/// The studies readlab knows, named as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StudyName {
    Latency,
    Scan,
    Stream,
    Threads,
    Queue,
    Batch,
    Multiblock,
    UringFeatures,
    Scheduler,
    All,
}

impl StudyName {
    pub const EACH: [StudyName; 9] = [
        StudyName::Latency,
        StudyName::Scan,
        StudyName::Stream,
        StudyName::Threads,
        StudyName::Queue,
        StudyName::Batch,
        StudyName::Multiblock,
        StudyName::UringFeatures,
        StudyName::Scheduler,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StudyName::Latency => "latency",
            StudyName::Scan => "scan",
            StudyName::Stream => "stream",
            StudyName::Threads => "threads",
            StudyName::Queue => "queue",
            StudyName::Batch => "batch",
            StudyName::Multiblock => "multiblock",
            StudyName::UringFeatures => "uring-features",
            StudyName::Scheduler => "scheduler",
            StudyName::All => "all",
        }
    }

    pub fn parse(s: &str) -> Result<StudyName> {
        StudyName::EACH
            .into_iter()
            .chain([StudyName::All])
            .find(|n| n.name() == s)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown study '{s}'; known studies: {}, all",
                    StudyName::EACH.map(|n| n.name()).join(", ")
                ))
            })
    }

    /// `all` stands for every study; the others for themselves.
    pub fn expand(self) -> Vec<StudyName> {
        match self {
            StudyName::All => StudyName::EACH.to_vec(),
            n => vec![n],
        }
    }

    /// What the study measures, with the report section it comes from.
    pub fn describe(self) -> &'static str {
        match self {
            StudyName::Latency => {
                "single random reads, one at a time, pread and preadv2, per block size (§4)"
            }
            StudyName::Scan => {
                "the whole target read sequentially in 1 MiB blocks, buffered and direct: bandwidth against offset (§5.1)"
            }
            StudyName::Stream => "one thread, sequential vs random, per block size (§5.2–5.3)",
            StudyName::Threads => "pread from 1 … N threads per block size (§6)",
            StudyName::Queue => {
                "Linux aio and io_uring, queue size × threads at 4 KiB (§8.2, §9.1)"
            }
            StudyName::Batch => {
                "Linux aio and io_uring, batch size for the two best queue sizes (§8.2, §9.1)"
            }
            StudyName::Multiblock => {
                "N random 4 KiB blocks per request: pread vs aio vs io_uring (§7.2)"
            }
            StudyName::UringFeatures => {
                "io_uring plain vs fixed files vs fixed buffers vs both vs SQ poll (§10)"
            }
            StudyName::Scheduler => {
                "4 KiB and 256 KiB thread sweeps under each I/O scheduler of the device (§6.2)"
            }
            StudyName::All => "every study",
        }
    }
}

/// How long each point runs.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub runtime: Duration,
    pub ramp: Duration,
    pub stable: Option<StopRule>,
}

impl Timing {
    /// A real study: up to 30 s per point, ended once IOPS is stable.
    pub fn full() -> Timing {
        Timing {
            runtime: Duration::from_secs(30),
            ramp: Duration::from_secs(2),
            stable: Some(StopRule {
                window: 5,
                band: 0.02,
                min_runtime: Duration::from_secs(5),
            }),
        }
    }

    /// `--quick`: one second per point, so a study takes a couple of minutes.
    pub fn quick() -> Timing {
        Timing {
            runtime: Duration::from_secs(1),
            ramp: Duration::from_millis(200),
            stable: None,
        }
    }
}

/// One point of a study.
#[derive(Debug, Clone)]
pub struct Point {
    pub tag: StudyTag,
    pub cfg: RunConfig,
}

/// What plans are made from.
pub struct Context<'a> {
    pub target: &'a Target,
    pub timing: Timing,
    pub quick: bool,
    pub verify: bool,
    pub max_threads: Option<usize>,
}

impl Context<'_> {
    fn base(&self, engine: EngineKind, rw: Rw, bs: u64) -> RunConfig {
        RunConfig {
            engine,
            rw,
            bs,
            runtime: self.timing.runtime,
            ramp: self.timing.ramp,
            stop_when_stable: self.timing.stable,
            verify: self.verify,
            direct: self.target.direct_supported,
            ..RunConfig::new(&self.target.path)
        }
    }

    fn pick<T: Copy>(&self, full: &[T], quick: &[T]) -> Vec<T> {
        if self.quick { quick } else { full }.to_vec()
    }

    /// Block sizes that fit the target (a quarter of it at most) and its direct-I/O alignment.
    fn sizes(&self, full: &[u64], quick: &[u64]) -> Vec<u64> {
        self.pick(full, quick)
            .into_iter()
            .filter(|&bs| bs <= self.target.size / 4 && bs % self.target.dio_offset_align == 0)
            .collect()
    }
}

const K: u64 = 1024;
const M: u64 = 1024 * 1024;

fn powers_of_two(from: usize, to: usize) -> Vec<usize> {
    std::iter::successors(Some(from), |&x| Some(x * 2))
        .take_while(|&x| x <= to)
        .collect()
}

/// The best `n` queue sizes found by the queue study (highest throughput at any thread count),
/// or the report's choice of 16 and 32 when there is none yet.
fn best_queue_sizes(docs: &[Document], engine: EngineKind, n: usize) -> Vec<usize> {
    let mut found: Vec<(usize, f64)> = Vec::new();
    for d in docs.iter().filter(|d| {
        d.study.as_ref().is_some_and(|t| t.study == "queue") && d.config.engine == engine
    }) {
        match found.iter_mut().find(|(qs, _)| *qs == d.config.iodepth) {
            Some(e) => e.1 = e.1.max(d.result.mb_s),
            None => found.push((d.config.iodepth, d.result.mb_s)),
        }
    }
    if found.len() < n {
        return vec![16, 32];
    }
    found.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut best: Vec<usize> = found.into_iter().take(n).map(|(qs, _)| qs).collect();
    best.sort();
    best
}

/// The best (queue size, batch) of the batch study for io_uring, or (32, 1).
fn best_uring_point(docs: &[Document]) -> (usize, usize) {
    docs.iter()
        .filter(|d| {
            d.study.as_ref().is_some_and(|t| t.study == "batch")
                && d.config.engine == EngineKind::Uring
                && d.config.threads == 1
        })
        .max_by(|a, b| a.result.mb_s.total_cmp(&b.result.mb_s))
        .map(|d| (d.config.iodepth, d.config.batch))
        .unwrap_or((32, 1))
}

/// The points of one study (not `all` and not `scheduler`, which have their own executors).
pub fn plan(name: StudyName, ctx: &Context, docs: &[Document]) -> Result<Vec<Point>> {
    let tag = StudyTag {
        study: name.name().into(),
        scheduler: None,
    };
    let point = |cfg: RunConfig| Point {
        tag: tag.clone(),
        cfg,
    };
    let cores = crate::env::cpus();
    let mut points = Vec::new();
    match name {
        StudyName::Latency => {
            let sizes = ctx.sizes(
                &powers_of_two(4, 32 * 1024)
                    .iter()
                    .map(|&k| k as u64 * K)
                    .collect::<Vec<_>>(),
                &[4 * K, 16 * K, 64 * K, 256 * K, M, 4 * M],
            );
            for bs in sizes {
                for engine in [EngineKind::Psync, EngineKind::Pvsync2] {
                    points.push(point(ctx.base(engine, Rw::Randread, bs)));
                }
            }
        }
        StudyName::Scan => {
            let mut directs = vec![false];
            if ctx.target.direct_supported {
                directs.insert(0, true);
            }
            for direct in directs {
                let mut c = ctx.base(EngineKind::Psync, Rw::Read, M);
                c.direct = direct;
                c.ramp = Duration::ZERO;
                c.stop_when_stable = None;
                c.io_limit = Some(ctx.target.size / M * M);
                c.fadvise = Some(crate::config::Fadvise::Sequential);
                c.runtime = if ctx.quick {
                    Duration::from_secs(20)
                } else {
                    Duration::from_secs(24 * 3600)
                };
                points.push(point(c));
            }
        }
        StudyName::Stream => {
            for bs in ctx.sizes(
                &[4 * K, 16 * K, 64 * K, 256 * K, M, 4 * M],
                &[4 * K, 64 * K, M],
            ) {
                for rw in [Rw::Read, Rw::Randread] {
                    points.push(point(ctx.base(EngineKind::Psync, rw, bs)));
                }
            }
        }
        StudyName::Threads => {
            let max = ctx.max_threads.unwrap_or(4 * cores).clamp(1, 256);
            let threads = if ctx.quick {
                powers_of_two(1, max.min(8))
            } else {
                powers_of_two(1, max)
            };
            for bs in ctx.sizes(&[4 * K, 64 * K, 256 * K, M], &[4 * K, 256 * K]) {
                for &t in &threads {
                    let mut c = ctx.base(EngineKind::Psync, Rw::Randread, bs);
                    c.threads = t;
                    points.push(point(c));
                }
            }
        }
        StudyName::Queue => {
            let sizes = ctx.pick(&powers_of_two(1, 256), &[1, 4, 16, 64]);
            let threads = ctx.pick(&[1, 2, 3], &[1, 2]);
            for engine in [EngineKind::Libaio, EngineKind::Uring] {
                for &t in &threads {
                    for &qs in &sizes {
                        let mut c = ctx.base(engine, Rw::Randread, 4 * K);
                        c.iodepth = qs;
                        c.threads = t;
                        points.push(point(c));
                    }
                }
            }
        }
        StudyName::Batch => {
            for engine in [EngineKind::Libaio, EngineKind::Uring] {
                for qs in best_queue_sizes(docs, engine, 2) {
                    let batches = if ctx.quick {
                        let mut b = vec![1, 4.min(qs), qs];
                        b.dedup();
                        b
                    } else {
                        powers_of_two(1, qs)
                    };
                    for batch in batches {
                        let mut c = ctx.base(engine, Rw::Randread, 4 * K);
                        c.iodepth = qs;
                        c.batch = batch;
                        points.push(point(c));
                    }
                }
            }
        }
        StudyName::Multiblock => {
            for n in ctx.pick(&[1, 2, 4, 8, 16, 32, 64], &[1, 4, 16, 64]) {
                for engine in [EngineKind::Psync, EngineKind::Libaio, EngineKind::Uring] {
                    let mut c = ctx.base(engine, Rw::Randread, 4 * K);
                    c.blocks_per_request = n;
                    if engine != EngineKind::Psync {
                        // One request in flight; its n blocks go out in one submit.
                        c.iodepth = 1;
                    }
                    points.push(point(c));
                }
            }
        }
        StudyName::UringFeatures => {
            let (qs, batch) = best_uring_point(docs);
            let variants: [(bool, bool, bool); 6] = [
                (false, false, false),
                (true, false, false),
                (false, true, false),
                (true, true, false),
                (false, false, true),
                (true, true, true),
            ];
            for (files, bufs, sqpoll) in variants {
                let mut c = ctx.base(EngineKind::Uring, Rw::Randread, 4 * K);
                c.iodepth = qs;
                c.batch = batch;
                c.options.uring.fixed_files = files;
                c.options.uring.fixed_bufs = bufs;
                c.options.uring.sqpoll = sqpoll;
                points.push(point(c));
            }
        }
        StudyName::Scheduler | StudyName::All => {
            return Err(Error::invalid(format!(
                "study {} has no plan of its own",
                name.name()
            )));
        }
    }
    Ok(points)
}

/// The points run under each scheduler: 4 KiB and 256 KiB thread sweeps.
pub fn scheduler_points(ctx: &Context, scheduler: &str) -> Vec<Point> {
    let tag = StudyTag {
        study: StudyName::Scheduler.name().into(),
        scheduler: Some(scheduler.into()),
    };
    let max = ctx
        .max_threads
        .unwrap_or(4 * crate::env::cpus())
        .clamp(1, 256);
    let threads = if ctx.quick {
        vec![1, 4.min(max)]
    } else {
        powers_of_two(1, max)
    };
    let mut points = Vec::new();
    for bs in ctx.sizes(&[4 * K, 256 * K], &[4 * K, 256 * K]) {
        for &t in &threads {
            let mut c = ctx.base(EngineKind::Psync, Rw::Randread, bs);
            c.threads = t;
            points.push(Point {
                tag: tag.clone(),
                cfg: c,
            });
        }
    }
    points
}
