//! Validated run configuration: what the CLI (or a study, or a profile) asks the runner to do.
//! Nothing here knows about clap; every field has already been parsed into its real type.

use crate::engine::{EngineKind, EngineOptions};
use crate::error::{Error, Result};
use crate::fileset::FileService;
use crate::source::{Source, Target};
use crate::stability::StopRule;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    /// Sequential: each thread reads its own stripe, wrapping around.
    Read,
    /// Uniform random offsets aligned to the block size.
    Randread,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Fadvise {
    Sequential,
    Random,
}

/// One measured workload against one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunConfig {
    pub target: PathBuf,
    /// The job's further files after `target`, read by the same threads (fio's `filename=a:b`):
    /// each read goes to one of the job's files as `file_service` picks, at an offset within that
    /// file. Absent when the job reads one file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<PathBuf>,
    /// How successive reads pick their file among several (fio's `file_service_type`); absent
    /// for fio's default, round robin.
    #[serde(default, skip_serializing_if = "FileService::is_default")]
    pub file_service: FileService,
    pub engine: EngineKind,
    /// Block size in bytes.
    pub bs: u64,
    pub rw: Rw,
    /// Worker threads, each with its own file descriptor and engine (fio's numjobs).
    pub threads: usize,
    /// I/Os in flight per thread.
    pub iodepth: usize,
    /// I/Os added to the queue per submit.
    pub batch: usize,
    /// Completions awaited per reap.
    pub complete_min: usize,
    /// O_DIRECT (the report's method) rather than the page cache.
    pub direct: bool,
    #[serde(with = "crate::secs")]
    #[schemars(with = "f64")]
    pub runtime: Duration,
    /// Warm-up excluded from every figure.
    #[serde(with = "crate::secs")]
    #[schemars(with = "f64")]
    pub ramp: Duration,
    /// Bytes of the target to read from `offset` on; None means up to the end.
    pub size: Option<u64>,
    pub offset: u64,
    pub seed: u64,
    /// How random reads pick their blocks, in fio's words (`zipf:1.2`, `pareto:0.2`, `normal:5`,
    /// `zoned:60/10:40/90`); absent for fio's default, uniform `random`. Only for `randread`.
    #[serde(
        default,
        skip_serializing_if = "crate::distribution::RandomDistribution::is_uniform"
    )]
    #[schemars(with = "Option<String>")]
    pub random_distribution: crate::distribution::RandomDistribution,
    /// Several block sizes, each its share of the requests, in fio's words (`4k/60:64k/40`);
    /// absent when every request is `bs`. With a mix, `bs` is its smallest size: every offset
    /// is aligned to it.
    #[serde(default, skip_serializing_if = "crate::bssplit::BsSplit::is_single")]
    #[schemars(with = "Option<String>")]
    pub bssplit: crate::bssplit::BsSplit,
    pub verify: bool,
    pub fadvise: Option<Fadvise>,
    /// Random blocks per logical request (report §7.2): async engines submit them together and the
    /// request completes with its last block; sync engines read them one after another.
    #[serde(default = "one")]
    pub blocks_per_request: usize,
    /// Stop each thread after it has issued this many bytes (a whole-target scan); runtime is then
    /// the upper bound.
    #[serde(default)]
    pub io_limit: Option<u64>,
    /// fio's `loops`: the run reads a fixed amount, each thread its pass (`io_limit`, else its
    /// part of the range: its stripe sequentially, the range's size at random) this many times,
    /// then ends (the runtime is then the upper bound). Absent: the run is not multiplied (and
    /// ends at the runtime unless `io_limit` ends it first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loops: Option<u64>,
    /// fio's `thinktime`: pauses between a worker's I/Os ([`crate::think::ThinkTime`]). Absent:
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinktime: Option<crate::think::ThinkTime>,
    /// Also sample throughput every this many bytes of the target read (a scan's bandwidth
    /// against offset, however fast or slow each second was); meant for one thread reading in
    /// order. Absent from results that did not ask for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_bytes: Option<u64>,
    /// End early once per-second IOPS is stable (runtime is then the upper bound).
    #[serde(default)]
    pub stop_when_stable: Option<crate::stability::StopRule>,
    /// Open loop: issue requests on a schedule instead of as fast as completions allow.
    #[serde(default)]
    pub rate: Option<Rate>,
    pub options: EngineOptions,
    /// Write the byte offset of each block read (completed in full) to this file, one per line
    /// (a job over several files: its file first), the first [`MAX_LOGGED_OFFSETS`] of the run:
    /// for checking the access pattern. Never stored in a result.
    #[serde(skip)]
    #[schemars(skip)]
    pub log_offsets: Option<PathBuf>,
}

/// The most offsets `log_offsets` keeps (8 MiB of memory at most, about 10 MB of text).
pub const MAX_LOGGED_OFFSETS: usize = 1_000_000;

fn one() -> usize {
    1
}

/// Open-loop arrivals: `iops` requests per second over all threads, latency measured from each
/// request's intended issue time (free of coordinated omission).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Rate {
    pub iops: f64,
    pub arrivals: Arrivals,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Exponential inter-arrival times (a Poisson process).
    Poisson,
    /// Evenly spaced.
    Fixed,
}

/// How long each point runs.
#[derive(Debug, Clone, Copy, PartialEq)]
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

impl RunConfig {
    /// A measured point on `target` — what studies and the tuner both start from: engine, access,
    /// block size, direct I/O where the target takes it, verification as asked, and its timing.
    pub fn point(
        target: &Target,
        engine: EngineKind,
        rw: Rw,
        bs: u64,
        verify: bool,
        timing: Timing,
    ) -> RunConfig {
        RunConfig {
            engine,
            rw,
            bs,
            runtime: timing.runtime,
            ramp: timing.ramp,
            stop_when_stable: timing.stable,
            verify,
            direct: target.direct_supported,
            ..RunConfig::new(&target.path)
        }
    }

    /// A config with fio-like defaults for everything but the target.
    pub fn new(target: impl Into<PathBuf>) -> RunConfig {
        RunConfig {
            target: target.into(),
            files: Vec::new(),
            file_service: FileService::Roundrobin,
            engine: EngineKind::Psync,
            bs: 4096,
            rw: Rw::Randread,
            threads: 1,
            iodepth: 1,
            batch: 1,
            complete_min: 1,
            direct: true,
            runtime: Duration::from_secs(5),
            ramp: Duration::ZERO,
            size: None,
            offset: 0,
            seed: 1,
            random_distribution: Default::default(),
            bssplit: Default::default(),
            verify: false,
            fadvise: None,
            blocks_per_request: 1,
            io_limit: None,
            loops: None,
            thinktime: None,
            sample_bytes: None,
            stop_when_stable: None,
            rate: None,
            options: EngineOptions::default(),
            log_offsets: None,
        }
    }

    /// The report's label: `P` pread, `A<qs>B<batch>` aio, `U<qs>B<batch>` io_uring with `M` fixed
    /// buffers, `F` fixed files, `S` SQ poll, then `×<n>` for n blocks per request and `T<n>`
    /// when more than one thread: `U64B1MFT2`, `U1B1×4`. Each engine's letters are in its
    /// `EngineSpec`; `crate::label::parse` reads a label back.
    pub fn label(&self) -> String {
        let mut l = self.engine.label_prefix().to_string();
        if self.engine.capabilities().asynchronous {
            l.push_str(&format!("{}B{}", self.iodepth, self.batch));
        }
        l.push_str(&crate::engine::option::label_suffix(
            self.engine,
            &self.options,
        ));
        if self.blocks_per_request > 1 {
            l.push_str(&format!("×{}", self.blocks_per_request));
        }
        if self.threads > 1 {
            l.push_str(&format!("T{}", self.threads));
        }
        l
    }

    /// What of the configuration an engine checks its options against.
    pub(crate) fn workload(&self) -> crate::engine::Workload {
        crate::engine::Workload {
            direct: self.direct,
            iodepth: self.iodepth,
            blocks_per_request: self.blocks_per_request,
            threads: self.threads,
            files: self.files.len() + 1,
        }
    }

    /// Every check of a configuration, in one place, against the source it will read, before
    /// anything starts; returns the byte range to read. In order: the workload's own numbers,
    /// the range of the source it reads, then the engine's options and the run's extras.
    pub fn check(&self, source: &dyn Source) -> Result<Range> {
        self.check_workload()?;
        let range = self.check_range(source)?;
        self.check_extras()?;
        Ok(range)
    }

    /// The workload's own numbers, whatever it reads: timing, threads, queue, batch, block size.
    fn check_workload(&self) -> Result<()> {
        check_runtime(self.runtime)?;
        // Durations from a profile or a study never went through the command line's parser.
        check_length("--ramp", self.ramp)?;
        if self.threads == 0 {
            return Err(Error::invalid("--numjobs must be at least 1"));
        }
        if self.iodepth == 0 {
            return Err(Error::invalid("--iodepth must be at least 1"));
        }
        if self.threads > crate::engine::MAX_THREADS {
            return Err(Error::invalid(format!(
                "--numjobs must be at most {}",
                crate::engine::MAX_THREADS
            )));
        }
        if !self.engine.capabilities().asynchronous && self.iodepth > 1 {
            return Err(Error::invalid(format!(
                "engine {} is synchronous and keeps one I/O in flight; drop --iodepth or use more --numjobs",
                self.engine.name()
            )));
        }
        if self.batch == 0 || self.batch > self.iodepth {
            return Err(Error::invalid(format!(
                "batch must be between 1 and iodepth ({})",
                self.iodepth
            )));
        }
        if self.complete_min == 0 || self.complete_min > self.iodepth {
            return Err(Error::invalid(format!(
                "complete-min must be between 1 and iodepth ({})",
                self.iodepth
            )));
        }
        if !BLOCK_SIZES.contains(&self.bs) {
            return Err(Error::invalid(format!(
                "block size {} B is outside 512 B … 64 MiB",
                self.bs
            )));
        }
        if let Some(problem) = self
            .distribution_problem()
            .or_else(|| self.bssplit_problem())
            .or_else(|| self.files_problem())
        {
            return Err(Error::invalid(problem));
        }
        Ok(())
    }

    /// The one rule for `random_distribution`: it picks random reads' blocks, so a sequential
    /// run cannot take one. The problem in words, for the command line and job files alike.
    pub fn distribution_problem(&self) -> Option<String> {
        (self.rw == Rw::Read && !self.random_distribution.is_uniform()).then(|| {
            format!(
                "random_distribution {} applies to random reads; use rw randread or drop it",
                self.random_distribution
            )
        })
    }

    /// The one rule for think time and loops beside the rest of a run: a pause stops a closed
    /// loop, while `--rate`'s open loop counts each read's latency from its due time, so a pause
    /// would count as latency; and loops of at least one. The problem in words, for the command
    /// line and job files alike.
    pub fn think_problem(&self) -> Option<String> {
        if self.loops == Some(0) {
            return Some("--loops must be at least 1".into());
        }
        let iotime = |t: crate::think::ThinkTime| {
            let d = Duration::from_micros(t.iotime_us.unwrap_or(0));
            check_length("--thinktime-iotime", d)
        };
        if let Some(Err(e)) = self.thinktime.map(|t| t.check().and_then(|_| iotime(t))) {
            return Some(e.to_string());
        }
        (self.thinktime.is_some() && self.rate.is_some()).then(|| {
            "--thinktime pauses a closed loop; --rate's open loop counts latency from each request's due time, so a pause would count as latency: give one or the other".into()
        })
    }

    /// Whether the run reads a fixed amount (`--io-limit`, `--loops`) and ends once read.
    pub fn reads_fixed_amount(&self) -> bool {
        self.io_limit.is_some() || self.loops.is_some()
    }

    /// The workload's access in words, the one name runs are grouped and compared under:
    /// `sequential`, `random`, `random zipf:1.2` or `random mix 4k/60:64k/40` (a skewed
    /// random run, a mix of sizes, each is its own workload).
    pub fn access(&self) -> String {
        let rw = match self.rw {
            Rw::Read => "read",
            Rw::Randread => "randread",
        };
        access_words(
            rw,
            &self.random_distribution.to_string(),
            &self.bssplit.to_string(),
        )
    }

    /// The largest request in bytes: `bs`, or a mix's largest size.
    pub fn max_bs(&self) -> u64 {
        self.bssplit.max().unwrap_or(self.bs)
    }

    /// The one rule for a mix of sizes: `bs` is its smallest (the offsets' alignment), one
    /// block per request. The problem in words, for the command line and job files alike.
    pub fn bssplit_problem(&self) -> Option<String> {
        let min = self.bssplit.min()?;
        if let Some(s) = self
            .bssplit
            .shares()
            .iter()
            .find(|s| !s.bs.is_multiple_of(min))
        {
            return Some(format!(
                "bssplit {}: {} B is not a multiple of the smallest size ({min} B), which every \
                 offset is aligned to; give sizes that are",
                self.bssplit, s.bs
            ));
        }
        if self.bs != min {
            return Some(format!(
                "bssplit {}: --bs is the mix's smallest size ({min} B); drop --bs",
                self.bssplit
            ));
        }
        (self.blocks_per_request > 1).then(|| {
            format!(
                "bssplit {} takes one block per request; drop --blocks-per-request",
                self.bssplit
            )
        })
    }

    /// The part of `source` the workload reads: direct-I/O alignment, offset and size within
    /// it, a stripe for every sequential thread, data to verify.
    fn check_range(&self, source: &dyn Source) -> Result<Range> {
        let caps = self.engine.capabilities();
        let name = source.name();
        let size = source.size();
        if self.direct && caps.does_io {
            let Some(align) = source.direct() else {
                return Err(Error::invalid(format!(
                    "{name}: the filesystem does not support O_DIRECT; use --buffered"
                )));
            };
            let sizes = self.bssplit.shares().iter().map(|s| ("block size", s.bs));
            for (what, value) in [("block size", self.bs), ("offset", self.offset)]
                .into_iter()
                .chain(sizes)
            {
                if value % align.offset != 0 {
                    return Err(Error::Misaligned {
                        what,
                        value,
                        align: align.offset,
                        path: name.clone().into(),
                    });
                }
            }
        }
        if self.offset >= size {
            return Err(Error::invalid(format!(
                "offset {} is past the end of {name} ({size} B)",
                self.offset
            )));
        }
        let avail = size - self.offset;
        let len = self.size.unwrap_or(avail);
        if len > avail {
            return Err(Error::invalid(format!(
                "size {len} B from offset {} runs past the end of {name} ({size} B)",
                self.offset
            )));
        }
        if self.max_bs() > len {
            return Err(Error::BlockLargerThanTarget {
                bs: self.max_bs(),
                range: len,
                path: name.clone().into(),
            });
        }
        let blocks = len / self.bs;
        if self.rw == Rw::Read && blocks / (self.max_bs() / self.bs) < self.threads as u64 {
            return Err(Error::invalid(format!(
                "{} threads cannot each get a sequential stripe of {} blocks; use fewer threads or a smaller --bs",
                self.threads, blocks
            )));
        }
        if self.verify {
            if !caps.does_io {
                return Err(Error::invalid(format!(
                    "engine {} reads nothing, so there is nothing to verify; drop --verify",
                    self.engine.name()
                )));
            }
            if source.prepared_id().is_none() {
                return Err(Error::NotPrepared {
                    path: name.clone().into(),
                });
            }
        }
        Ok(Range {
            offset: self.offset,
            len: blocks * self.bs,
            blocks,
        })
    }

    /// The engine's options and the run's extras: sampling, an I/O limit, a rate, a stop rule,
    /// blocks per request, and the memory all of it needs.
    fn check_extras(&self) -> Result<()> {
        // An option belongs to one engine (its spec says which are its own); the engine checks
        // its own options against the rest of the configuration.
        if let Some((owner, flag)) = crate::engine::option::foreign(self.engine, &self.options) {
            return Err(Error::invalid(format!(
                "--{flag} needs --engine {}",
                owner.name()
            )));
        }
        (self.engine.spec().check)(&self.options, &self.workload())?;
        if let Some(n) = self.sample_bytes
            && n < self.bs
        {
            return Err(Error::invalid(format!(
                "--sample-every {n} B is smaller than a block ({} B)",
                self.bs
            )));
        }
        if self.io_limit == Some(0) {
            return Err(Error::invalid("--io-limit must be positive"));
        }
        if let Some(n) = self.io_limit
            && n < self.bs
        {
            return Err(Error::invalid(format!(
                "--io-limit {n} B is less than one block ({} B), so nothing would be read; use at least --bs",
                self.bs
            )));
        }
        if let Some(problem) = self.think_problem() {
            return Err(Error::invalid(problem));
        }
        if let Some(r) = &self.rate {
            check_rate(r.iops)?;
            if self.batch != 1 {
                return Err(Error::invalid(
                    "--rate issues each request when it is due; drop --batch",
                ));
            }
        }
        if let Some(s) = &self.stop_when_stable {
            if s.window < 2 {
                return Err(Error::invalid("--stable-window must be at least 2 seconds"));
            }
            if !(s.band > 0.0 && s.band < 1.0) {
                return Err(Error::invalid(
                    "--stable-band must be between 0 and 1 (e.g. 0.02)",
                ));
            }
            if s.min_runtime > self.runtime {
                return Err(Error::invalid("--min-runtime must not exceed --runtime"));
            }
        }
        if self.blocks_per_request == 0 || self.blocks_per_request > 1024 {
            return Err(Error::invalid(
                "--blocks-per-request must be between 1 and 1024",
            ));
        }
        let slots = (self.iodepth as u64).saturating_mul(self.blocks_per_request as u64);
        let memory = slots
            .saturating_mul(self.max_bs())
            .saturating_mul(self.threads as u64);
        if memory > 8 << 30 {
            return Err(Error::invalid(format!(
                "threads × iodepth × blocks-per-request × bs needs {} MiB of buffers; the limit is 8 GiB",
                memory >> 20
            )));
        }
        Ok(())
    }
}

/// The access of a pattern in fio's words (`read`, `randread`, or fio's other names) with its
/// `random_distribution` (fio's words; `random` or empty for uniform) and its `bssplit` (fio's
/// words; empty for one size): `sequential`, `random`, `random zipf:1.2`, `random mix
/// 4k/60:64k/40`. The one rule for a workload's access, for readlab's runs and fio's jobs.
pub fn access_words(rw: &str, distribution: &str, bssplit: &str) -> String {
    let mut s = match rw {
        "read" => "sequential",
        "randread" => "random",
        other => other,
    }
    .to_string();
    if !matches!(distribution, "" | "random") {
        s = format!("{s} {distribution}");
    }
    if !bssplit.is_empty() {
        s = format!("{s} mix {bssplit}");
    }
    s
}

pub use crate::size::BLOCK_SIZES;

/// The one rule for how long a run measures, wherever the length comes from (the command line,
/// a profile, a job file, a study's, `readlab quick`'s or `readlab serve`'s `--runtime`): more
/// than nothing, and at most [`MAX_LENGTH`].
pub fn check_runtime(runtime: Duration) -> Result<()> {
    if runtime.is_zero() {
        return Err(Error::invalid("--runtime must be positive, e.g. 5s"));
    }
    check_length("--runtime", runtime)
}

/// The longest a run, its warm-up, a server's `--runtime` or a command's `--budget` may last: a
/// week (fio's runtime has no such bound, but a measurement longer than a week is a typo).
pub const MAX_LENGTH: Duration = Duration::from_secs(7 * 24 * 3600);

/// The one rule for how long a measurement or a search may last (`flag` as the user wrote it):
/// at most [`MAX_LENGTH`].
pub fn check_length(flag: &str, d: Duration) -> Result<()> {
    if d > MAX_LENGTH {
        return Err(Error::invalid(format!(
            "{flag} {} s is longer than readlab allows (a week); use at most 7d",
            crate::units::grouped(d.as_secs())
        )));
    }
    Ok(())
}

/// The one rule for an open loop's rate, wherever it comes from: a positive number of IOPS (a
/// rate beyond the device is allowed: the run says it could not keep up, with its backlog).
pub fn check_rate(iops: f64) -> Result<()> {
    if !(iops.is_finite() && iops > 0.0) {
        return Err(Error::invalid("--rate must be a positive number of IOPS"));
    }
    Ok(())
}

/// The open loop the flags ask for: `--rate` with its `--arrivals` (Poisson when not given);
/// `--arrivals` alone shapes nothing, so it is refused rather than ignored.
pub fn open_loop(rate: Option<f64>, arrivals: Option<Arrivals>) -> Result<Option<Rate>> {
    match (rate, arrivals) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err(Error::invalid(
            "--arrivals shapes an open loop's requests; add --rate IOPS or drop --arrivals",
        )),
        (Some(iops), a) => {
            check_rate(iops)?;
            Ok(Some(Rate {
                iops,
                arrivals: a.unwrap_or(Arrivals::Poisson),
            }))
        }
    }
}

/// The part of the target a run reads: whole blocks from `offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    pub offset: u64,
    pub len: u64,
    pub blocks: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Pvsync2Options, UringOptions};
    use crate::source::Target;

    fn cfg(engine: EngineKind, qs: usize, batch: usize, threads: usize) -> RunConfig {
        RunConfig {
            engine,
            iodepth: qs,
            batch,
            threads,
            ..RunConfig::new("/x")
        }
    }

    #[test]
    fn labels_follow_the_report() {
        assert_eq!(cfg(EngineKind::Psync, 1, 1, 1).label(), "P");
        assert_eq!(cfg(EngineKind::Psync, 1, 1, 8).label(), "PT8");
        assert_eq!(cfg(EngineKind::Libaio, 16, 1, 3).label(), "A16B1T3");
        assert_eq!(cfg(EngineKind::Uring, 32, 1, 1).label(), "U32B1");
        let mut u = cfg(EngineKind::Uring, 64, 1, 2);
        UringOptions::edit(&mut u.options, |o| {
            (o.fixed_bufs, o.fixed_files) = (true, true)
        });
        assert_eq!(u.label(), "U64B1MFT2");
        UringOptions::edit(&mut u.options, |o| (o.sqpoll, o.fixed_bufs) = (true, false));
        assert_eq!(u.label(), "U64B1FST2");
        let mut f = cfg(EngineKind::Uring, 1, 1, 1);
        UringOptions::edit(&mut f.options, |o| o.fixed_files = true);
        assert_eq!(f.label(), "U1B1F");
        UringOptions::edit(&mut f.options, |o| o.fixed_files = false);
        f.blocks_per_request = 4;
        assert_eq!(f.label(), "U1B1×4");
        let mut v = cfg(EngineKind::Pvsync2, 1, 1, 2);
        assert_eq!(v.label(), "VT2");
        Pvsync2Options::edit(&mut v.options, |o| o.hipri = true);
        assert_eq!(v.label(), "VHT2");
        Pvsync2Options::edit(&mut v.options, |o| o.nowait = true);
        v.blocks_per_request = 8;
        assert_eq!(v.label(), "VHN×8T2");
    }

    fn target(size: u64) -> Target {
        Target {
            path: "/x".into(),
            kind: crate::source::TargetKind::File,
            size,
            dio_offset_align: 4096,
            dio_mem_align: 512,
            direct_supported: true,
            prepared_id: Some(1),
        }
    }

    #[test]
    fn validation_rejects_what_cannot_run() {
        let t = target(1 << 20);
        assert!(RunConfig::new("/x").check(&t).is_ok());
        let bad = |f: fn(&mut RunConfig)| {
            let mut c = RunConfig::new("/x");
            f(&mut c);
            c.check(&t).is_err()
        };
        assert!(bad(|c| c.bs = 512)); // below the 4 KiB DIO alignment
        assert!(bad(|c| c.bs = 2 << 20));
        assert!(bad(|c| c.iodepth = 2)); // psync is synchronous
        assert!(bad(|c| {
            c.engine = EngineKind::Uring;
            c.iodepth = 4;
            c.batch = 8;
        }));
        assert!(bad(|c| UringOptions::edit(&mut c.options, |o| o
            .fixed_files =
            true))); // uring's
        assert!(bad(|c| {
            c.engine = EngineKind::Uring;
            UringOptions::edit(&mut c.options, |o| o.iopoll = true);
            c.direct = false;
        }));
        assert!(bad(|c| c.blocks_per_request = 0));
        assert!(bad(|c| c.offset = 4096 * 300));
        assert!(!bad(|c| {
            c.engine = EngineKind::Libaio;
            c.iodepth = 32;
            c.batch = 8;
            c.complete_min = 4;
        }));
    }

    #[test]
    fn a_skewed_random_run_is_its_own_workload() {
        let mut c = RunConfig::new("/x");
        assert_eq!(c.access(), "random");
        c.random_distribution = "pareto:0.2".parse().unwrap();
        assert_eq!(c.access(), "random pareto:0.2");
        assert_eq!(access_words("randread", "zipf:1.2", ""), "random zipf:1.2");
        assert_eq!(access_words("read", "", ""), "sequential");
        assert_eq!(
            access_words("randread", "random", "4k/60:64k/40"),
            "random mix 4k/60:64k/40"
        );
        assert!(c.check(&target(1 << 20)).is_ok());
        c.rw = Rw::Read;
        let e = c.check(&target(1 << 20)).unwrap_err().to_string();
        assert!(e.contains("applies to random reads"), "{e}");
    }

    #[test]
    fn range_is_whole_blocks() {
        let mut c = RunConfig::new("/x");
        c.bs = 12288;
        let r = c.check(&target(1 << 20)).unwrap();
        assert_eq!(r.blocks, (1 << 20) / 12288);
        assert_eq!(r.len, r.blocks * 12288);
    }
}
