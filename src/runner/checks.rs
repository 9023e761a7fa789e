//! What the runner checks around the I/O: before a run, the configuration against its target
//! ([`prepare_run`]); during it, the rule that stops a worker whose reads all fail; after it, the
//! warnings a result carries. Also how many errors and mismatches are kept in full.

use crate::config::{Range, RunConfig};
use crate::data::{self, Mismatch};
use crate::engine::{Pvsync2Options, UringOptions};
use crate::error::{Error, Result};
use crate::result::{ErrorSummary, IoErrorRecord, RunResult, VerifySummary};
use crate::source::Source;
use crate::warnings::{
    CLOCK_CHANGED, EVERY_READ_FAILED, FEW_SAMPLES, NOTHING_MEASURED, SHORT_WINDOW, STEAL,
};

/// How many errors and mismatches are kept in full (all are counted).
pub(super) const KEEP_FIRST: usize = 16;
/// A worker whose first this-many reads all failed stops the run instead of spinning on errors.
pub(super) const ABORT_AFTER_FAILURES: u64 = 256;

/// What `prepare_run` found out about a run before any I/O.
pub struct Prepared {
    /// Every file of the job (fio's `filename=a:b`), each checked: its source and the range of
    /// it the job reads. The first is the job's target; a job of one file has only it.
    pub files: Vec<(Box<dyn Source>, Range)>,
    /// The device behind the target.
    pub device: crate::env::DeviceInfo,
    /// The probe's warnings for this configuration, on every file (each said once).
    pub warnings: Vec<String>,
}

impl Prepared {
    /// A job of one file, `source`'s `range`, with nothing more known about it.
    pub(super) fn one(source: Box<dyn Source>, range: Range) -> Prepared {
        Prepared {
            files: vec![(source, range)],
            device: Default::default(),
            warnings: Vec::new(),
        }
    }

    /// The job's target: its first file.
    pub fn source(&self) -> &dyn Source {
        self.files[0].0.as_ref()
    }

    /// The range of the target the job reads.
    pub fn range(&self) -> Range {
        self.files[0].1
    }

    /// Every file of the job, the target first: its source and the range of it read.
    pub fn files(&self) -> impl Iterator<Item = (&dyn Source, Range)> {
        self.files.iter().map(|(s, r)| (s.as_ref(), *r))
    }
}

/// Check a configuration against its target (every file of a job over several); nothing is
/// read yet.
pub fn prepare_run(cfg: &RunConfig) -> Result<Prepared> {
    cfg.check_files()?;
    let mut files = Vec::new();
    let mut device = None;
    let mut warnings: Vec<String> = Vec::new();
    for c in cfg.per_file() {
        let source = crate::source::open(&c.target)?;
        let (d, range, said) = check_on(&c, source.as_ref())?;
        if device.is_none() {
            // The target's: its device, and its warnings as the probe gave them.
            device = Some(d);
            warnings = said;
        } else {
            for w in said {
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
        }
        files.push((source, range));
    }
    Ok(Prepared {
        files,
        device: device.expect("a job reads at least one file"),
        warnings,
    })
}

/// Check every configuration against its target before any of them runs (a list of block
/// sizes against a server's maximum, say), each target opened once: the first problem is
/// returned and nothing has run.
pub fn check_all(cfgs: &[RunConfig]) -> Result<()> {
    let mut open: Vec<(std::path::PathBuf, Box<dyn Source>)> = Vec::new();
    for job in cfgs {
        job.check_files()?;
        for cfg in job.per_file() {
            let i = match open.iter().position(|(p, _)| *p == cfg.target) {
                Some(i) => i,
                None => {
                    open.push((cfg.target.clone(), crate::source::open(&cfg.target)?));
                    open.len() - 1
                }
            };
            check_on(&cfg, open[i].1.as_ref())?;
        }
    }
    Ok(())
}

/// [`prepare_run`] on a source already open: the device, the range read and the warnings.
fn check_on(
    cfg: &RunConfig,
    source: &dyn Source,
) -> Result<(crate::env::DeviceInfo, Range, Vec<String>)> {
    // What the source itself says it serves comes first: its words are more exact than the
    // generic alignment rules (for an NBD server, --buffered changes nothing).
    let requests = if cfg.engine.capabilities().does_io {
        // Each size of a mix is a request the source must take.
        let mut said = source.check_requests(cfg.bs, cfg.offset)?;
        for s in cfg.bssplit.shares() {
            for w in source.check_requests(s.bs, cfg.offset)? {
                if !said.contains(&w) {
                    said.push(w);
                }
            }
        }
        said
    } else {
        Vec::new()
    };
    let range = cfg.check(source)?;
    let slots = (cfg.iodepth as u64).saturating_mul(cfg.blocks_per_request as u64);
    crate::memory::check(
        crate::memory::estimate(cfg.threads, slots, cfg.max_bs()),
        crate::memory::available(),
    )?;
    let device = crate::env::DeviceInfo::of(&cfg.target);
    let mut warnings = crate::probe::check_run(cfg, &device)?;
    warnings.extend(requests);
    if cfg.verify {
        let last = range.offset + range.len - 1;
        let last_sector = last - last % data::SECTOR as u64;
        if !source.prepared_at(last_sector) {
            if crate::interrupt::requested() {
                return Err(Error::InterruptedWhile(format!(
                    "checking that {} is prepared throughout",
                    source.name()
                )));
            }
            return Err(Error::invalid(format!(
                "{}: the sector at {last_sector} is not part of the prepared image; \
                 limit the range with --size or drop --verify",
                source.name()
            )));
        }
    }
    Ok((device, range, warnings))
}

/// For commands that verify a whole target by default (study, tune): refuse, up front, a target
/// readlab prepared only the start of (a file grown after `prepare`), naming `no_verify`, the
/// command's own way to read it without verification.
pub fn check_prepared_throughout(target: &crate::source::Target, no_verify: &str) -> Result<()> {
    let sector = data::SECTOR as u64;
    if target.prepared_id.is_none() || target.size < sector {
        return Ok(());
    }
    let last_sector = (target.size - 1) / sector * sector;
    if target.prepared_at(last_sector) {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "{}: readlab prepared only the start of it (the sector at {last_sector} is not its \
         data), so it cannot be verified throughout; prepare it again over its whole size, or \
         pass {no_verify}",
        target.path.display()
    )))
}

/// Never spin for the whole runtime on an interface that fails every read (IOPOLL on a device
/// without poll queues): once a worker's first [`ABORT_AFTER_FAILURES`] reads have all failed,
/// the error that stops the run, with the probe's explanation. Inline: the worker asks after
/// every reap.
#[inline]
pub(super) fn every_read_failed(
    errors: &ErrorSummary,
    succeeded: bool,
    cfg: &RunConfig,
) -> Option<Error> {
    if succeeded || errors.count < ABORT_AFTER_FAILURES {
        return None;
    }
    let first = errors.first[0].clone();
    let remote = cfg.target.to_str().is_some_and(crate::nbd::NbdUrl::is_url);
    let hint = if remote {
        // Neither O_DIRECT nor the page cache is the client's business: the server refused.
        Some(format!(
            "The NBD server answered every read with an error; `readlab info {}` shows what it \
             advertised (block sizes included)",
            crate::nbd::shown(&cfg.target.to_string_lossy())
        ))
    } else {
        crate::probe::explain_errno(first.errno, cfg)
    };
    Some(Error::ReadsFailed {
        count: errors.count,
        hint: hint.map(|h| format!(". {h}")).unwrap_or_default(),
        offset: first.offset,
        len: first.len,
        errno: first.errno,
        message: first.message,
    })
}

/// Warnings a finished run adds to the probe's: reads failed and none was measured.
pub(super) fn after_run(errors: &ErrorSummary, ios: u64, warnings: &mut Vec<String>) {
    if errors.count > 0 && ios == 0 {
        let first = &errors.first[0];
        warnings.push(format!(
            "{EVERY_READ_FAILED}; first at offset {}: {}",
            first.offset, first.message
        ));
    }
}

/// Other processes' CPU, as a share of one core, beyond which a result says it was disturbed.
pub(super) const OTHER_LOAD_PCT: f64 = 10.0;
/// Hypervisor steal, as a share of one core, beyond which a result says so.
pub(super) const STEAL_PCT: f64 = 5.0;
/// A change of the CPUs' mean clock between the window's edges beyond this share is warned about.
pub(super) const CLOCK_CHANGE: f64 = 0.10;
/// A measured window shorter than this is too short for CPU shares and load warnings.
pub(super) const SHORT_WINDOW_S: f64 = 0.2;

/// Warnings on how far a finished run's figures can be trusted: other load on the machine, time
/// stolen by the hypervisor, a target in memory, too few samples for the tail percentiles.
pub(super) fn trust(cfg: &RunConfig, range: &Range, r: &mut RunResult) {
    trust_window(r);
    trust_machine(r);
    trust_target(cfg, range, r);
    trust_samples(r);
}

/// A measured window that holds nothing, or too little for CPU figures.
pub(super) fn trust_window(r: &mut RunResult) {
    if r.requests == 0 && r.errors.count == 0 {
        r.warnings.push(if r.seconds <= 0.0 {
            format!(
                "{NOTHING_MEASURED}: the run stopped before its measured window began (during \
                 the ramp); every figure is empty"
            )
        } else {
            format!(
                "{NOTHING_MEASURED}: no request completed in the {} measured window; every \
                 figure is empty; give a longer --runtime",
                crate::units::format_ns(r.seconds * 1e9, crate::units::Style::Table)
            )
        });
    } else if r.seconds < SHORT_WINDOW_S {
        r.warnings.push(format!(
            "{SHORT_WINDOW} {}: too short for CPU figures (the kernel counts CPU \
             in 10 ms ticks) and to tell other load on the machine; run at least 1 s for those",
            crate::units::format_ns(r.seconds * 1e9, crate::units::Style::Table)
        ));
    }
}

/// The words that begin the warning about other load.
pub(crate) const OTHER_LOAD: &str = crate::warnings::OTHER_LOAD;

/// The warning about other load on the machine, if it was beyond what leaves figures alone
/// (a window too short to tell says nothing).
pub(crate) fn other_load(cpu: &crate::cpu::CpuUsage, seconds: f64) -> Option<String> {
    (seconds >= SHORT_WINDOW_S && cpu.other_processes_pct_of_core > OTHER_LOAD_PCT).then(|| {
        format!(
            "{OTHER_LOAD} {:.0} % of a core during the run (readlab itself {:.0} %): the \
             figures may be disturbed; measure on a quiet machine, or compare runs with --repeat",
            cpu.other_processes_pct_of_core,
            cpu.threads_pct_of_core()
        )
    })
}

/// Other load and steal time during the run.
pub(super) fn trust_machine(r: &mut RunResult) {
    let cpu = &r.cpu;
    let judge_load = r.seconds >= SHORT_WINDOW_S;
    if let Some(w) = other_load(cpu, r.seconds) {
        r.warnings.push(w);
    }
    if judge_load && cpu.steal_pct_of_core > STEAL_PCT {
        r.warnings.push(format!(
            "the hypervisor took {:.0} % of a core from this machine during the run {STEAL}: \
             the figures may be disturbed",
            cpu.steal_pct_of_core
        ));
    }
    if judge_load
        && let Some([from, to]) = cpu.clock_mhz
        && from > 0.0
        && (to - from).abs() / from > CLOCK_CHANGE
    {
        r.warnings.push(format!(
            "{CLOCK_CHANGED} from {from:.0} MHz to {to:.0} MHz during the run (frequency \
             scaling or power limits): the figures may not be comparable; fix the frequency \
             (e.g. the performance governor) or compare runs with --repeat"
        ));
    }
}

/// A target whose data came from memory.
pub(super) fn trust_target(cfg: &RunConfig, range: &Range, r: &mut RunResult) {
    if cfg.engine.capabilities().does_io {
        let len = range.blocks * cfg.bs;
        if let Some(w) =
            crate::residency::memory_warning(&cfg.target, cfg.direct, range.offset, len)
        {
            r.warnings.push(w);
        }
    }
}

/// The completion interrupts of the target's device over the window (`irq`: /proc/interrupts
/// at its edges), and the warning of a run that asked for polled completions and got an
/// interrupt per I/O all the same.
pub(super) fn trust_polling(
    cfg: &RunConfig,
    queues: Option<&crate::irq::Queues>,
    irq: Option<&(crate::irq::Snapshot, crate::irq::Snapshot)>,
    r: &mut RunResult,
) {
    let (Some(q), Some((start, end))) = (queues, irq) else {
        return;
    };
    r.completions = crate::irq::CompletionInterrupts::between(q, start, end, r.requests);
    let asked = if UringOptions::of(&cfg.options).iopoll {
        "--iopoll"
    } else if Pvsync2Options::of(&cfg.options).hipri {
        "--hipri"
    } else {
        return;
    };
    if let Some(w) = r.completions.as_ref().and_then(|c| c.not_polled(asked)) {
        r.warnings.push(w);
    }
}

/// Too few samples for the tail percentiles.
pub(super) fn trust_samples(r: &mut RunResult) {
    let n = r.latency.count;
    if n > 0 && !r.latency.supports(99.9) {
        let shown = [99.0, 90.0, 50.0]
            .into_iter()
            .find(|&q| r.latency.supports(q))
            .map_or("none".to_string(), |q| format!("up to p{q}"));
        r.warnings.push(format!(
            "only {n} requests measured: {FEW_SAMPLES} (p99.9 needs \
             {}, p99.99 {}); percentiles shown: {shown}; run longer for the tail",
            crate::stats::min_samples(99.9),
            crate::stats::min_samples(99.99)
        ));
    }
}

/// Count a failed read; keep the first few in full (a short read has errno 0 and its own message).
pub(super) fn record_error(
    e: &mut ErrorSummary,
    offset: u64,
    len: u64,
    errno: i32,
    msg: Option<String>,
) {
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

/// Count a verification mismatch; keep the first few in full.
pub(super) fn record_mismatch(v: &mut VerifySummary, m: Mismatch) {
    v.mismatches += 1;
    if v.first.len() < KEEP_FIRST {
        v.first.push(m);
    }
}
