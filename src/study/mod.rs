//! Studies: the report's experiments as one command each. Each study is one file here holding a
//! [`StudySpec`] — its plan (data, not code paths) or its own executor, its description with the
//! report's section number and its summary table — listed once in [`registry`]. How a study is
//! drawn (its charts, the fio jobs beside its points) is the report's, keyed by the study's name
//! (`report::charts::study_charts`). The executor runs the points not yet in the results store,
//! appending each as it finishes, and ends with the summary table the report would print.

mod async_sizes;
mod batch;
mod cache;
mod clients;
mod delay;
mod devices;
mod exec;
mod flags;
mod latency;
mod latency_breakdown;
mod multiblock;
mod net;
mod plan;
mod queue;
mod scan;
mod scheduler;
mod server_model;
mod spec;
mod stream;
mod summary;
mod threads;
mod tuned;
mod uring_features;

pub use crate::config::Timing;
pub use crate::result::study_name::StudyName;
pub use cache::{OffsetCache, WHOLE as CACHE_WHOLE_TARGET, by_offset as cache_by_offset};
pub use exec::{run_each, run_points};
pub use net::GIVEN_SERVER;
pub use plan::{Context, Point};
pub use scheduler::SchedulerGuard;
pub use spec::{Bare, Counts, Exec, StudyObserver, StudySpec};
pub use summary::column as stream_column;
pub use summary::{Key, Metric, Summary, Table, summarize};
pub use tuned::SPEC as TUNE;

use crate::error::{Error, Result};
use crate::netns::Network;
use crate::source::Target;
use crate::store::Store;
use std::path::{Path, PathBuf};

/// Every study readlab knows, in the report's order. Adding a study is one file and one line here.
pub fn registry() -> &'static [&'static StudySpec] {
    static ALL: &[&StudySpec] = &[
        &latency::SPEC,
        &scan::SPEC,
        &stream::SPEC,
        &threads::SPEC,
        &queue::SPEC,
        &batch::SPEC,
        &async_sizes::SPEC,
        &multiblock::SPEC,
        &uring_features::SPEC,
        &scheduler::SPEC,
        &cache::SPEC,
        &devices::SPEC,
        &tuned::SPEC,
        &clients::SPEC,
        &delay::SPEC,
        &latency_breakdown::SPEC,
        &server_model::SPEC,
    ];
    ALL
}

impl StudyName {
    /// The registered study called `s`.
    pub fn parse(s: &str) -> Result<StudyName> {
        registry()
            .iter()
            .find(|spec| spec.name == s)
            .map(|spec| spec.study_name())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown study '{s}'; known studies: {}, all",
                    runnable().map(|s| s.name).collect::<Vec<_>>().join(", ")
                ))
            })
    }

    /// Everything the registry says about this study.
    pub fn spec(self) -> &'static StudySpec {
        registry()
            .iter()
            .find(|spec| spec.name == self.name())
            .expect("a StudyName is only made from a registered spec")
    }

    /// What the study measures, with the report section it comes from.
    pub fn describe(self) -> &'static str {
        self.spec().describe
    }
}

/// In the JSON reference: one of the registered studies' names.
impl schemars::JsonSchema for StudyName {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "StudyName".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = registry().iter().map(|s| s.name).collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

impl<'de> serde::Deserialize<'de> for StudyName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        StudyName::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// The studies `readlab study` can run (every registered one but those another command writes,
/// like `tune`'s), in the registry's order: what its help lists and its completions offer.
pub fn runnable() -> impl Iterator<Item = &'static StudySpec> {
    registry()
        .iter()
        .copied()
        .filter(|s| !matches!(s.exec, Exec::External))
}

/// The studies a command-line name stands for: `all`, or one runnable study.
pub fn select(s: &str) -> Result<Vec<StudyName>> {
    if s == "all" {
        return Ok(runnable()
            .filter(|s| s.in_all)
            .map(|s| s.study_name())
            .collect());
    }
    let name = StudyName::parse(s)?;
    if matches!(name.spec().exec, Exec::External) {
        return Err(Error::invalid(format!(
            "'{s}' is not a study readlab study runs ({}); known studies: {}, all",
            name.describe(),
            runnable().map(|s| s.name).collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(vec![name])
}

/// What the user asked for.
#[derive(Debug, Clone)]
pub struct StudyOptions {
    /// The file or device studied; None for studies that need none (e.g. `delay`).
    pub target: Option<PathBuf>,
    pub quick: bool,
    pub out: PathBuf,
    pub resume: bool,
    /// Largest thread count of the `threads` study (default 4 × cores, at most 256).
    pub max_threads: Option<usize>,
    /// Verify every read (default: when the target was prepared by readlab).
    pub verify: Option<bool>,
    /// Runs of every point (`--repeat`, at least 1).
    pub repeat: usize,
    /// Every target with its name when several were given (the `devices` study); empty: just
    /// `target`.
    pub targets: Vec<crate::targets::TargetSpec>,
    /// Let a study change device settings (readahead), restoring them however it ends.
    pub allow_device_changes: bool,
    /// Each point's measured time instead of the study's (its warm-up a fifth of it at most).
    pub runtime: Option<std::time::Duration>,
    /// How the networked studies' clients reach their servers (`--network`); None: a veth pair
    /// between two network namespaces when one can be made (root, iproute2), else loopback.
    pub network: Option<Network>,
    /// Network delays the delay study also measures (`--netem`), made by netem on the veth pair
    /// beside the server's injected delays; empty: none.
    pub netem: Vec<std::time::Duration>,
}

/// What a finished (or interrupted) set of studies left behind.
#[derive(Debug)]
pub struct Outcome {
    pub results: PathBuf,
    pub summary_path: PathBuf,
    pub summary: String,
    pub interrupted: bool,
    pub measured: usize,
    pub skipped: usize,
}

/// The `--netem` delays in µs: only the delay study takes them, over the veth network, each
/// between 1 µs and 1 s.
fn netem_us(names: &[StudyName], opts: &StudyOptions) -> Result<Vec<u64>> {
    if opts.netem.is_empty() {
        return Ok(Vec::new());
    }
    if let Some(n) = names.iter().find(|n| n.name() != delay::SPEC.name) {
        return Err(Error::invalid(format!(
            "--netem delays the delay study's network; the {n} study takes none"
        )));
    }
    if opts.network == Some(Network::Loopback) {
        return Err(Error::invalid(
            "--netem delays the veth pair between two network namespaces: it cannot be used \
             with --network loopback",
        ));
    }
    let mut us = Vec::new();
    for d in &opts.netem {
        let v = d.as_micros();
        if !(1..=1_000_000).contains(&v) || d.subsec_nanos() % 1000 != 0 {
            return Err(Error::invalid(format!(
                "--netem {d:?}: a netem delay is whole microseconds, from 1us to 1s"
            )));
        }
        us.push(v as u64);
    }
    us.sort_unstable();
    us.dedup();
    Ok(us)
}

/// The flags only some studies take, refused beside studies none of which takes them.
fn check_flags(names: &[StudyName], opts: &StudyOptions) -> Result<()> {
    let chosen: Vec<&str> = names.iter().map(|n| n.name()).collect();
    let networked = [
        clients::SPEC.name,
        delay::SPEC.name,
        latency_breakdown::SPEC.name,
        server_model::SPEC.name,
    ];
    let threads = [threads::SPEC.name, scheduler::SPEC.name];
    flags::check(
        &chosen,
        &[
            ("--network", opts.network.is_some(), &networked),
            ("--max-threads", opts.max_threads.is_some(), &threads),
            (
                "--allow-device-changes",
                opts.allow_device_changes,
                &[cache::SPEC.name],
            ),
        ],
    )
}

/// Run studies `names` (see [`select`]) on the target, storing every point in `opts.out/results.jsonl`.
pub fn run(names: &[StudyName], opts: &StudyOptions, obs: &dyn StudyObserver) -> Result<Outcome> {
    check_flags(names, opts)?;
    let target = match &opts.target {
        Some(t) => Some(inspect(t, names)?),
        None => {
            if let Some(n) = names
                .iter()
                .find(|n| !matches!(n.spec().exec, Exec::Standalone(_)))
            {
                return Err(Error::invalid(format!(
                    "the {n} study reads a file or device: give it as TARGET \
                     (readlab study {n} TARGET)"
                )));
            }
            None
        }
    };
    if opts.targets.len() > 1
        && let Some(n) = names.iter().find(|n| n.name() != devices::SPEC.name)
    {
        return Err(Error::invalid(format!(
            "the {n} study reads one target; only the devices study reads several at once"
        )));
    }
    let timing = timing(opts)?;
    let mut store = Store::open(&opts.out, opts.resume)?;
    let prepared = target.as_ref().and_then(|t| t.prepared_id);
    let verify = opts.verify.unwrap_or(prepared.is_some());
    if let Some(t) = &target
        && verify
        && prepared.is_none()
    {
        return Err(Error::NotPrepared {
            path: t.path.clone(),
        });
    }
    let one: Vec<crate::targets::TargetSpec> = target
        .iter()
        .map(|t| crate::targets::TargetSpec {
            name: t.path.file_name().map_or_else(
                || t.path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            path: t.path.clone(),
        })
        .collect();
    let targets = if opts.targets.is_empty() {
        &one[..]
    } else {
        &opts.targets[..]
    };
    let ctx = target.as_ref().map(|target| plan::Context {
        target,
        timing,
        quick: opts.quick,
        verify,
        max_threads: opts.max_threads,
        repeat: opts.repeat.max(1),
        targets,
        allow_device_changes: opts.allow_device_changes,
        network: opts.network,
    });
    let bare = Bare {
        timing,
        quick: opts.quick,
        network: opts.network,
        netem_us: netem_us(names, opts)?,
    };
    let mut counts = Counts::default();
    for name in names {
        // Later studies read what earlier ones found (e.g. batch uses the best queue sizes), so
        // each plan is made when its study starts.
        let c = match (&name.spec().exec, &ctx) {
            (Exec::Standalone(exec), _) => exec(&bare, &mut store, obs)?,
            (Exec::External, _) => {
                return Err(Error::invalid(format!(
                    "'{name}' is not a study readlab study runs"
                )));
            }
            (_, None) => unreachable!("a target was required above"),
            (Exec::Plan(plan), Some(ctx)) => {
                let points: Vec<Point> = plan(ctx, store.docs())
                    .into_iter()
                    .map(|cfg| Point::of(*name, cfg))
                    .collect();
                run_points(*name, &points, ctx.repeat, &mut store, obs)?
            }
            (Exec::Custom(exec), Some(ctx)) => exec(ctx, &mut store, obs)?,
        };
        counts.measured += c.measured;
        counts.skipped += c.skipped;
        counts.interrupted = c.interrupted;
        if counts.interrupted {
            break;
        }
    }
    let summary = summarize(names, store.docs());
    let summary_path = opts.out.join("summary.md");
    crate::fsio::write_file(&summary_path, &summary)?;
    Ok(Outcome {
        results: store.path().to_path_buf(),
        summary_path,
        summary,
        interrupted: counts.interrupted,
        measured: counts.measured,
        skipped: counts.skipped,
    })
}

/// Each point's timing: `--quick` or full, with `--runtime` instead of the study's own (its
/// warm-up a fifth of it at most).
pub fn timing(opts: &StudyOptions) -> Result<Timing> {
    let mut timing = if opts.quick {
        Timing::quick()
    } else {
        Timing::full()
    };
    if let Some(r) = opts.runtime {
        crate::config::check_runtime(r)?;
        timing.runtime = r;
        timing.ramp = timing.ramp.min(r / 5);
        timing.stable = timing.stable.filter(|s| s.min_runtime < r);
    }
    Ok(timing)
}

/// Whether a study reads a server given by URL (`nbd://…`) instead of a file or device.
pub fn reads_a_server(name: StudyName) -> bool {
    name.name() == clients::SPEC.name
}

/// The points of study `name` against the server `ctx.target` names (an NBD URL), the clients
/// spread over `ranks` MPI ranks when given; None for a study that reads no given server.
pub fn server_points(name: StudyName, ctx: &Context, ranks: Option<usize>) -> Option<Vec<Point>> {
    reads_a_server(name).then(|| clients::at_server(ctx, ranks))
}

/// What a study reads: a file or device, or the export of a server given by URL (`nbd://…`),
/// which only studies that read a given server take.
pub fn inspect(path: &Path, names: &[StudyName]) -> Result<Target> {
    let Some(url) = path.to_str().filter(|s| crate::nbd::NbdUrl::is_url(s)) else {
        let t = Target::inspect(path)?;
        check_studiable(&t)?;
        return Ok(t);
    };
    if let Some(n) = names.iter().find(|n| !reads_a_server(**n)) {
        return Err(Error::invalid(format!(
            "the {n} study reads a file or device, not an NBD server ({url}); of the studies, \
             clients reads a server given by URL"
        )));
    }
    Ok(crate::source::open(path)?.describe())
}

/// Refuse, before anything is created, a target a study could only fail on point after point:
/// an empty file, a block device of 0 B (a free loop device) or a file of a kernel pseudo
/// filesystem (/sys, /proc), which holds no storage to measure.
fn check_studiable(t: &Target) -> Result<()> {
    use crate::source::TargetKind;
    let p = t.path.display();
    if let Some(fs) = pseudo_fs(&t.path) {
        return Err(Error::invalid(format!(
            "{p} is a file of {fs}, the kernel's own view, not storage; study a file or a \
             block device"
        )));
    }
    if t.size == 0 {
        return Err(Error::invalid(match t.kind {
            TargetKind::Block
                if crate::source::device::device_of(&t.path)
                    .is_some_and(|d| d.name.starts_with("loop")) =>
            {
                format!(
                    "{p} is a loop device with nothing attached (0 B); attach a file with \
                 `losetup {p} FILE` or study another target"
                )
            }
            TargetKind::Block => format!("{p} is a block device of 0 B: there is nothing to read"),
            _ => format!(
                "{p} is empty (0 B): there is nothing to read; fill it with `readlab prepare {p} \
                 --size 1G`"
            ),
        }));
    }
    Ok(())
}

/// The name of the kernel pseudo filesystem `path` lies on, if it does.
fn pseudo_fs(path: &Path) -> Option<&'static str> {
    let f = rustix::fs::statfs(path).ok()?;
    // The filesystems' magic numbers (linux/magic.h).
    match f.f_type as u64 {
        0x6265_6572 => Some("sysfs (/sys)"),
        0x9fa0 => Some("procfs (/proc)"),
        0x6462_6720 => Some("debugfs"),
        0x7472_6163 => Some("tracefs"),
        0x0027_e0eb => Some("cgroup"),
        0x6367_7270 => Some("cgroup2"),
        0x6265_6570 => Some("configfs"),
        0x7363_6673 => Some("securityfs"),
        _ => None,
    }
}

/// Whether the store already holds a point (a networked point is matched on what was asked,
/// not on its server's URL).
pub fn is_stored(store: &Store, p: &Point) -> bool {
    if p.tag.net.is_some() {
        net::stored(store, p)
    } else {
        store.contains(Some(&p.tag), &p.cfg)
    }
}

/// Whether `path` names a server's export (`nbd://…`) rather than a file or device.
pub fn is_server(path: &Path) -> bool {
    path.to_str().is_some_and(crate::nbd::NbdUrl::is_url)
}

/// The directory studies write to by default: `readlab-study-<target name>`.
pub fn default_out(target: &Path) -> PathBuf {
    crate::outdir::for_target("study", target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn netem_delays_are_the_delay_studys_whole_microseconds_over_veth() {
        let opts = |netem: &[u64], network| StudyOptions {
            target: None,
            quick: true,
            out: PathBuf::from("unused"),
            resume: false,
            max_threads: None,
            verify: None,
            repeat: 1,
            targets: Vec::new(),
            allow_device_changes: false,
            runtime: None,
            network,
            netem: netem.iter().map(|&n| Duration::from_nanos(n)).collect(),
        };
        let delay = select("delay").unwrap();
        let us = |netem: &[u64], network| netem_us(&delay, &opts(netem, network));
        assert_eq!(us(&[], None).unwrap(), Vec::<u64>::new());
        assert_eq!(
            us(&[1_000_000, 100_000, 100_000], Some(Network::Veth)).unwrap(),
            [100, 1000]
        );
        assert!(us(&[100_000], Some(Network::Loopback)).is_err());
        for bad in [0, 500, 1_500, 2_000_000_000] {
            assert!(us(&[bad], None).is_err(), "{bad} ns");
        }
        let latency = select("latency").unwrap();
        let e = netem_us(&latency, &opts(&[100_000], None)).unwrap_err();
        assert!(e.to_string().contains("latency"), "{e}");
    }
}
