//! The command lines that replay a tuned configuration: `readlab run …` and the fio job that
//! measures the same workload, printed under each recommendation.

use crate::config::{RunConfig, Rw};
use crate::units::{Style, format_bytes};

/// The fio command line that runs the same workload.
pub fn fio_command(c: &RunConfig) -> String {
    let engine = c.engine.fio_name();
    let mut s = format!(
        "fio --name=readlab --filename={} --ioengine={engine} --rw={} --bs={} --direct={} \
         --iodepth={} --numjobs={} --time_based --runtime={}s --ramp_time={}ms --group_reporting \
         --lat_percentiles=1 --randrepeat=0 --norandommap",
        c.target.display(),
        match c.rw {
            Rw::Read => "read",
            Rw::Randread => "randread",
        },
        c.bs,
        u8::from(c.direct),
        c.iodepth,
        c.threads,
        c.runtime.as_secs_f64().ceil().max(1.0),
        c.ramp.as_millis()
    );
    if c.engine.capabilities().asynchronous {
        s.push_str(&format!(
            " --iodepth_batch_submit={} --iodepth_batch_complete_min={}",
            c.batch, c.complete_min
        ));
    }
    if !c.random_distribution.is_uniform() {
        s.push_str(&format!(" --random_distribution={}", c.random_distribution));
    }
    if !c.bssplit.is_single() {
        s.push_str(&format!(" --bssplit={}", c.bssplit));
    }
    // Each option fio has too, from the engine's table (`--registerfiles=1`, …).
    for d in crate::engine::option::set_in(c.engine, &c.options) {
        if let Some(arg) = d.fio_arg(&c.options) {
            s.push(' ');
            s.push_str(&arg);
        }
    }
    s
}

/// The `readlab run` command line for a configuration.
pub fn readlab_command(c: &RunConfig) -> String {
    let mut s = format!(
        "readlab run --engine {} --rw {} {} --numjobs {}",
        c.engine.name(),
        match c.rw {
            Rw::Read => "read",
            Rw::Randread => "randread",
        },
        if c.bssplit.is_single() {
            format!(
                "--bs {}",
                format_bytes(c.bs as f64, Style::Table).to_lowercase()
            )
        } else {
            format!("--bssplit {}", c.bssplit)
        },
        c.threads
    );
    if c.engine.capabilities().asynchronous {
        s.push_str(&format!(" --iodepth {} --batch {}", c.iodepth, c.batch));
    }
    if !c.direct {
        s.push_str(" --buffered");
    }
    if !c.random_distribution.is_uniform() {
        s.push_str(&format!(" --random-distribution {}", c.random_distribution));
    }
    for d in crate::engine::option::set_in(c.engine, &c.options) {
        if let Some(arg) = d.readlab_arg(&c.options) {
            s.push(' ');
            s.push_str(&arg);
        }
    }
    s.push_str(&format!(" {}", c.target.display()));
    s
}
