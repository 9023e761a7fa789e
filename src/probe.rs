//! The capability probe: what a target is and which read interfaces and io_uring features work on
//! it, and why not. `readlab info` prints it; `readlab run` uses the same words to refuse or warn.

use crate::config::RunConfig;
use crate::engine::EngineKind;
use crate::env::DeviceInfo;

/// Why IOPOLL cannot work on a device without poll queues.
pub fn iopoll_unsupported(dev: &DeviceInfo) -> String {
    format!(
        "IOPOLL needs a device with poll queues (io_poll=1, e.g. nvme poll_queues>0); {} has none, \
         so every polled read would fail with EOPNOTSUPP. Drop --iopoll",
        dev.name.as_deref().unwrap_or("this target")
    )
}

/// Why RWF_HIPRI does nothing on a device without poll queues.
pub fn hipri_ignored(dev: &DeviceInfo) -> String {
    format!(
        "RWF_HIPRI is ignored: {} has no poll queues (io_poll=0), so reads complete by interrupt as usual",
        dev.name.as_deref().unwrap_or("this target's device")
    )
}

pub const BUFFERED_LIBAIO: &str = "buffered libaio is synchronous: without O_DIRECT io_submit performs \
     each read before it returns, so the queue never holds more than one I/O; use --direct";

pub const SQPOLL_DEFER_TASKRUN: &str = "SQPOLL cannot be combined with DEFER_TASKRUN (the kernel rejects it with EINVAL); readlab sets up SQPOLL rings without it";

/// Refusals and warnings for a run, decided before any I/O. Errors are bad input.
pub fn check_run(cfg: &RunConfig, dev: &DeviceInfo) -> Result<Vec<String>, String> {
    let mut warnings = Vec::new();
    if cfg.options.iopoll && dev.io_poll != Some(true) {
        return Err(iopoll_unsupported(dev));
    }
    if cfg.options.hipri && dev.io_poll != Some(true) {
        warnings.push(hipri_ignored(dev));
    }
    if cfg.engine == EngineKind::Libaio && !cfg.direct {
        warnings.push(BUFFERED_LIBAIO.into());
    }
    Ok(warnings)
}

/// Explain an errno the way the probe would, for the run's error messages.
pub fn explain_errno(errno: i32, cfg: &RunConfig) -> Option<String> {
    match errno {
        libc::EOPNOTSUPP if cfg.options.iopoll => Some(
            "IOPOLL needs a device with poll queues (io_poll=1, e.g. nvme poll_queues>0); this one has none, \
             so every polled read fails with EOPNOTSUPP. Drop --iopoll"
                .into(),
        ),
        libc::EINVAL if cfg.direct => Some(
            "O_DIRECT reads must be aligned to the device's logical block size in offset, length and memory"
                .into(),
        ),
        _ => None,
    }
}
