//! The command lines that replay a tuned configuration: `readlab run …` and the fio job that
//! measures the same workload, printed under each recommendation.

use crate::config::{RunConfig, Rw};
use crate::engine::EngineKind;
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
    let o = &c.options;
    if c.engine == EngineKind::Uring {
        if o.uring.fixed_bufs {
            s.push_str(" --fixedbufs=1");
        }
        if o.uring.fixed_files {
            s.push_str(" --registerfiles=1");
        }
        if o.uring.sqpoll {
            s.push_str(" --sqthread_poll=1");
        }
        if o.uring.iopoll {
            s.push_str(" --hipri=1");
        }
    }
    if o.pvsync2.hipri {
        s.push_str(" --hipri=1");
    }
    s
}

/// The `readlab run` command line for a configuration.
pub fn readlab_command(c: &RunConfig) -> String {
    let mut s = format!(
        "readlab run --engine {} --rw {} --bs {} --numjobs {}",
        c.engine.name(),
        match c.rw {
            Rw::Read => "read",
            Rw::Randread => "randread",
        },
        format_bytes(c.bs as f64, Style::Table).to_lowercase(),
        c.threads
    );
    if c.engine.capabilities().asynchronous {
        s.push_str(&format!(" --iodepth {} --batch {}", c.iodepth, c.batch));
    }
    if !c.direct {
        s.push_str(" --buffered");
    }
    let o = &c.options;
    for (on, flag) in [
        (o.uring.fixed_files, " --fixed-files"),
        (o.uring.fixed_bufs, " --fixed-bufs"),
        (o.uring.sqpoll, " --sqpoll"),
    ] {
        if on {
            s.push_str(flag);
        }
    }
    s.push_str(&format!(" {}", c.target.display()));
    s
}
