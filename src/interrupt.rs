//! The process's interrupt flag as the library sees it: the binary hands in the flag its SIGINT
//! and SIGTERM handlers set ([`watch`]), and the waits that could otherwise block for seconds
//! (connecting to an NBD server, its handshake, the reads made before a run) look at it between
//! short slices ([`requested`], [`SLICE`]), so a signal ends them within a fraction of a second.
//! Runs themselves are stopped through their observer (`runner::Observer::cancelled`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How long a blocking wait sleeps at most between two looks at the flag.
pub const SLICE: Duration = Duration::from_millis(50);

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// From now on, [`requested`] is true once `flag` is (the first flag handed in stays).
pub fn watch(flag: Arc<AtomicBool>) {
    let _ = FLAG.set(flag);
}

/// Whether the process was asked to stop (a signal arrived): a wait should give up now.
pub fn requested() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::Relaxed))
}
