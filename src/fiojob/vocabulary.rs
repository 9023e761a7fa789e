//! fio's options as one table: what readlab does with each fio option it meets in a job file —
//! reads it into the run, notes it as asking for nothing readlab does not already do (saying what
//! readlab does instead), or refuses it with what to use instead. The job-file parser, the command
//! line's refusals of fio's flags, the unknown-option message and the README's fio paragraph all
//! read this table.

/// What readlab does with a fio option it does not read into a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foreign {
    /// Accepted and ignored: it asks for what readlab always does, or for an output readlab
    /// keeps in its own form (the text says which).
    NoOp(&'static str),
    /// Refused: the text says what to use instead.
    Refused(&'static str),
}

/// What readlab does with one fio option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Treatment {
    /// Read into the run; the text is readlab's own word for it (its flag).
    Read(&'static str),
    Foreign(Foreign),
}

/// One row of the table: fio's names for an option (the first is the one shown) and what
/// readlab does with it.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub names: &'static [&'static str],
    pub treatment: Treatment,
}

const fn read(names: &'static [&'static str], flag: &'static str) -> Row {
    Row {
        names,
        treatment: Treatment::Read(flag),
    }
}

const fn noted(names: &'static [&'static str], why: &'static str) -> Row {
    Row {
        names,
        treatment: Treatment::Foreign(Foreign::NoOp(why)),
    }
}

const fn refused(names: &'static [&'static str], what: &'static str) -> Row {
    Row {
        names,
        treatment: Treatment::Foreign(Foreign::Refused(what)),
    }
}

const WRITES: &str =
    "readlab only reads; it never writes to a target (prepare data with `readlab prepare`)";

/// Every fio option readlab knows, by what it does with it. The engines' own options
/// (`registerfiles`, `fixedbufs`, `hipri`, …) are the engines' tables' (`engine::option`).
pub const OPTIONS: &[Row] = &[
    read(&["ioengine"], "--engine"),
    read(&["rw", "readwrite"], "--rw (read or randread)"),
    read(&["bs", "blocksize"], "--bs (the read size of `bs=r,w`)"),
    read(
        &["bssplit"],
        "--bssplit (sizes and their shares of the requests)",
    ),
    read(
        &["bsrange", "blocksize_range"],
        "--bs, when it names one size (`4k-4k`); a range of sizes is refused (use `bssplit=`)",
    ),
    read(
        &["size", "filesize"],
        "--size (bytes; `filesize` when `size` is not given)",
    ),
    read(&["offset"], "--offset"),
    read(
        &["include"],
        "the options of FILE in place of the line (`include FILE` or `include=FILE`, in a section)",
    ),
    read(&["io_size", "io_limit"], "--io-limit"),
    read(&["runtime"], "--runtime"),
    read(&["ramp_time"], "--ramp"),
    read(
        &["iodepth"],
        "--iodepth (1 for synchronous engines, as fio runs them)",
    ),
    read(&["iodepth_batch", "iodepth_batch_submit"], "--batch"),
    read(
        &["iodepth_batch_complete_min", "iodepth_batch_complete"],
        "--complete-min",
    ),
    read(
        &["iodepth_batch_complete_max"],
        "--batch (when equal to it)",
    ),
    read(&["numjobs"], "--numjobs"),
    read(&["direct", "buffered"], "--direct"),
    read(
        &["filename", "uri"],
        "TARGET; several (`a:b`) are one job's files, its reads spread over them (--filename=a:b)",
    ),
    read(
        &["directory", "nrfiles"],
        "the job's files: fio's JOB.0.N in the directory (they must exist: `readlab prepare` writes them)",
    ),
    read(
        &["file_service_type"],
        "--file_service_type (roundrobin, random or sequential)",
    ),
    read(&["randseed"], "--seed"),
    read(&["fadvise_hint"], "--fadvise"),
    read(
        &["rate_iops", "rate"],
        "--rate (IOPS of all the job's threads together; latency from each request's due time)",
    ),
    read(
        &["rate_process"],
        "--arrivals (poisson, or fixed for fio's linear)",
    ),
    read(
        &["random_distribution"],
        "--random-distribution (zipf:θ, pareto:h, normal:σ, zoned:…, as fio draws them)",
    ),
    read(&["name", "description"], "the job's name"),
    noted(&["time_based"], "readlab always runs for the whole runtime"),
    noted(
        &["group_reporting"],
        "readlab always reports a run's threads together",
    ),
    noted(&["thread", "threads"], "readlab's jobs are always threads"),
    noted(
        &["norandommap"],
        "readlab's random offsets never keep a map",
    ),
    noted(
        &["randrepeat"],
        "readlab's offsets come from its seed (--seed, randseed=)",
    ),
    noted(
        &["invalidate"],
        "readlab reads with O_DIRECT unless buffered; fadvise with --fadvise",
    ),
    noted(
        &["new_group", "stonewall", "wait_for_previous"],
        "readlab runs jobs one after another, in file order",
    ),
    noted(
        &[
            "lat_percentiles",
            "clat_percentiles",
            "slat_percentiles",
            "percentile_list",
        ],
        "readlab reports exact latency percentiles of every run",
    ),
    noted(
        &["gtod_reduce", "clocksource"],
        "readlab reads its clock (the TSC where it can) around every I/O and shows what that costs",
    ),
    noted(
        &[
            "write_lat_log",
            "write_bw_log",
            "write_iops_log",
            "write_hist_log",
            "log_avg_msec",
            "log_hist_msec",
            "log_hist_coarseness",
            "log_max_value",
            "log_offset",
            "log_unix_epoch",
            "per_job_logs",
        ],
        "readlab keeps its own per-second timeline and full latency histogram in every run's JSON (--json)",
    ),
    noted(
        &[
            "latency_target",
            "latency_window",
            "latency_percentile",
            "latency_run",
        ],
        "readlab runs at the iodepth given; `readlab tune` searches the depths for a tail-latency goal",
    ),
    noted(
        &["rate_min", "rate_iops_min"],
        "readlab reports the rate it achieved and never ends a run for being slow",
    ),
    noted(
        &["significant_figures", "unified_rw_reporting", "disk_util"],
        "readlab reports in its own form (per-second progress, the device's counters in the run's JSON)",
    ),
    noted(
        &["allow_file_create"],
        "readlab never creates a target; it reads what exists",
    ),
    refused(
        &["ioscheduler"],
        "readlab does not change the device's I/O scheduler; set /sys/block/DEV/queue/scheduler before the run",
    ),
    refused(
        &[
            "verify",
            "do_verify",
            "verify_pattern",
            "verify_interval",
            "verify_backlog",
            "verify_fatal",
            "verify_async",
            "verify_only",
        ],
        "fio's verify checks data fio wrote; readlab checks every byte of data `readlab prepare` wrote: use --verify (no value)",
    ),
    refused(
        &[
            "rwmixread",
            "rwmixwrite",
            "fsync",
            "fdatasync",
            "end_fsync",
            "fsync_on_close",
            "sync",
            "overwrite",
            "fill_device",
            "fill_fs",
            "buffer_pattern",
            "zero_buffers",
            "refill_buffers",
            "scramble_buffers",
            "buffer_compress_percentage",
            "dedupe_percentage",
            "create_on_open",
            "create_only",
            "fallocate",
            "unlink",
            "unlink_each_loop",
            "trim_percentage",
            "write_barrier",
        ],
        WRITES,
    ),
    read(
        &["loops"],
        "--loops (the range, or io_size, read N times; moot beside time_based, as in fio)",
    ),
    refused(
        &["rate_cycle"],
        "readlab's open loop is --rate IOPS (all threads together) with --arrivals poisson|fixed",
    ),
    refused(
        &["blockalign", "ba"],
        "readlab aligns every read to its block size",
    ),
    refused(
        &["filename_format", "opendir"],
        "readlab reads the files filename=a:b names, or fio's JOB.0.N for directory= and nrfiles=",
    ),
    refused(
        &[
            "cpus_allowed",
            "cpumask",
            "cpus_allowed_policy",
            "numa_cpu_nodes",
            "numa_mem_policy",
        ],
        "run readlab under taskset or numactl instead",
    ),
    refused(
        &["random_generator", "percentage_random"],
        "readlab's random reads are all random, from its own generator; a skew is random_distribution=",
    ),
    read(
        &[
            "thinktime",
            "thinktime_spin",
            "thinktime_blocks",
            "thinktime_iotime",
        ],
        "--thinktime, --thinktime-spin, --thinktime-blocks, --thinktime-iotime (after completed I/Os; not beside rate_iops)",
    ),
    read(
        &["thinktime_blocks_type"],
        "complete (fio's default) only: readlab counts completed I/Os towards a pause",
    ),
    refused(
        &["startdelay"],
        "readlab starts a job's threads together; run jobs one after another (stonewall)",
    ),
    refused(
        &["exitall", "exitall_on_error", "continue_on_error"],
        "readlab ends a run on its first error and reports it",
    ),
];

/// fio's option name as readlab compares it: leading dashes dropped, `-` as `_`.
fn key(option: &str) -> String {
    option.trim().trim_start_matches('-').replace('-', "_")
}

/// The row of a fio option, by any of its names.
pub fn row(option: &str) -> Option<&'static Row> {
    let k = key(option);
    OPTIONS.iter().find(|r| r.names.contains(&k.as_str()))
}

/// What readlab does with a fio option it does not read into a run (none for one it reads, or
/// one it does not know).
pub fn foreign(option: &str) -> Option<Foreign> {
    match row(option)?.treatment {
        Treatment::Foreign(f) => Some(f),
        Treatment::Read(_) => None,
    }
}

/// The names of the options readlab reads from a job file, the engines' own included: what the
/// refusal of an unknown option lists.
pub fn read_names() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = OPTIONS
        .iter()
        .filter(|r| matches!(r.treatment, Treatment::Read(_)))
        .flat_map(|r| r.names.iter().copied())
        .collect();
    for (_, d) in crate::engine::option::all() {
        if let Some(f) = d.fio
            && !v.contains(&f)
        {
            v.push(f);
        }
    }
    v
}

/// The table as the README's fio paragraph shows it: read, noted and refused, one line each.
pub fn markdown() -> String {
    let names = |r: &Row| {
        r.names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = String::from("| fio option | readlab |\n|---|---|\n");
    for r in OPTIONS {
        let what = match r.treatment {
            Treatment::Read(flag) => format!("read: {flag}"),
            Treatment::Foreign(Foreign::NoOp(why)) => format!("noted, ignored: {why}"),
            Treatment::Foreign(Foreign::Refused(what)) => format!("refused: {what}"),
        };
        s.push_str(&format!(
            "| {} | {} |\n",
            names(r),
            what.replace('|', "\\|")
        ));
    }
    let engine: Vec<String> = crate::engine::option::all()
        .filter_map(|(k, d)| Some(format!("`{}` ({})", d.fio?, k.fio_name())))
        .collect();
    s.push_str(&format!(
        "| {} | read: the engine's own options |\n",
        engine.join(", ")
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's fio table is this table: `READLAB_BLESS=1` writes it there.
    #[test]
    fn the_readme_shows_this_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
        let readme = std::fs::read_to_string(path).unwrap();
        let (begin, end) = ("<!-- fio-options -->\n", "<!-- /fio-options -->");
        let a = readme
            .find(begin)
            .expect("README has the fio table's markers")
            + begin.len();
        let b = readme[a..].find(end).expect("its end marker") + a;
        let table = markdown();
        if std::env::var_os("READLAB_BLESS").is_some() {
            let new = format!("{}{table}{}", &readme[..a], &readme[b..]);
            std::fs::write(path, new).unwrap();
        } else {
            assert_eq!(
                readme[a..b],
                table,
                "the README's fio table is stale: run this test again with READLAB_BLESS=1 set"
            );
        }
    }

    #[test]
    fn every_name_is_in_one_row_only() {
        let mut seen = std::collections::HashSet::new();
        for r in OPTIONS {
            for n in r.names {
                assert!(seen.insert(*n), "{n} is in two rows");
                assert_eq!(key(n), *n, "{n}: written as fio writes it");
            }
        }
    }

    #[test]
    fn dashes_and_underscores_alike() {
        assert_eq!(
            foreign("group-reporting"),
            Some(Foreign::NoOp(
                "readlab always reports a run's threads together"
            ))
        );
        assert_eq!(foreign("bs"), None);
        assert!(matches!(row("bs").unwrap().treatment, Treatment::Read(_)));
        assert!(row("bogus").is_none());
    }
}
