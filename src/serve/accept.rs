//! The acceptor: takes the connections waiting in the listen queue and gives each to its model
//! (a thread of its own, or the least loaded event loop) within `--max-clients`. Out of file
//! descriptors it refuses them (closing a reserve descriptor to accept and close them) and backs
//! off instead of spinning.

use super::{ClientSlot, Counters, Ctx, thread, uring};
use crate::nbd::{Listener, Stream};
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What the acceptor keeps from one wake-up to the next.
pub(super) struct Acceptor {
    /// The thread model's connection threads.
    conn_threads: Vec<std::thread::JoinHandle<()>>,
    /// The last connection's number.
    id: u64,
    /// Held so that, out of descriptors, one can be freed (see [`refuse_waiting`]).
    reserve: Option<OwnedFd>,
    /// Out of descriptors (or memory): accept nothing until then.
    backoff: Option<Instant>,
}

impl Acceptor {
    pub(super) fn new() -> Acceptor {
        Acceptor {
            conn_threads: Vec::new(),
            id: 0,
            reserve: reserve_fd(),
            backoff: None,
        }
    }

    /// Out of descriptors (or memory) a moment ago: wait before trying again (not past `next`),
    /// the clients meanwhile in the listen queue. True when it waited.
    pub(super) fn backing_off(&mut self, now: Instant, next: Instant) -> bool {
        if let Some(until) = self.backoff {
            if now < until {
                std::thread::sleep((until - now).min(next - now));
                return true;
            }
            self.backoff = None;
        }
        false
    }

    /// Take every connection waiting (a flood is refused promptly, not one per wake-up).
    pub(super) fn accept_all(
        &mut self,
        listener: &Listener,
        ctx: &Arc<Ctx>,
        workers: Option<&uring::Workers>,
    ) {
        for _ in 0..ACCEPT_BATCH {
            let stream = match listener.accept() {
                Ok(s) => s,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if out_of_descriptors(&e) => {
                    if !refuse_waiting(listener, &mut self.reserve, &ctx.counters) {
                        self.backoff = Some(Instant::now() + BACKOFF);
                    }
                    break;
                }
                Err(e)
                    if e.raw_os_error() == Some(libc::ENOBUFS)
                        || e.raw_os_error() == Some(libc::ENOMEM) =>
                {
                    self.backoff = Some(Instant::now() + BACKOFF);
                    break;
                }
                Err(_) => continue,
            };
            self.admit(stream, ctx, workers);
        }
    }

    /// Give a connection to its model, or refuse it (over `--max-clients`, or out of threads).
    fn admit(&mut self, stream: Stream, ctx: &Arc<Ctx>, workers: Option<&uring::Workers>) {
        let c = &ctx.counters;
        if c.clients.load(Ordering::Relaxed) >= ctx.cfg.max_clients as u64 {
            c.rejected.fetch_add(1, Ordering::Relaxed);
            drop(stream);
            return;
        }
        let now_clients = c.clients.fetch_add(1, Ordering::Relaxed) + 1;
        c.clients_total.fetch_add(1, Ordering::Relaxed);
        c.clients_max.fetch_max(now_clients, Ordering::Relaxed);
        let slot = ClientSlot(ctx.clone());
        self.id += 1;
        let id = self.id;
        let spawned = match workers {
            None => thread::spawn(ctx.clone(), stream, slot, id).map(|h| self.conn_threads.push(h)),
            Some(w) => w.hand_over(ctx.clone(), stream, slot, id),
        };
        if spawned.is_err() {
            // Out of threads: this client is dropped, the others go on.
            c.rejected.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Forget the connection threads that have ended.
    pub(super) fn forget_finished(&mut self) {
        self.conn_threads.retain(|h| !h.is_finished());
    }

    /// Wait for every connection thread (the server is stopping).
    pub(super) fn join(self) {
        for h in self.conn_threads {
            let _ = h.join();
        }
    }
}

/// Connections taken from the listen queue per wake-up.
const ACCEPT_BATCH: usize = 256;
/// How long the acceptor waits after running out of descriptors (or memory) it could not free.
const BACKOFF: Duration = Duration::from_millis(100);

fn out_of_descriptors(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// A descriptor held so that, out of descriptors, one can be freed to accept and close.
fn reserve_fd() -> Option<std::os::fd::OwnedFd> {
    rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .ok()
}

/// Out of descriptors: close the reserve, accept and close every connection waiting (each told
/// no at once rather than left to time out in the listen queue, and counted as rejected), then
/// take the reserve back. False when that could not be done (the caller backs off).
fn refuse_waiting(l: &Listener, reserve: &mut Option<std::os::fd::OwnedFd>, c: &Counters) -> bool {
    if reserve.take().is_none() {
        *reserve = reserve_fd();
        return false;
    }
    let mut ok = true;
    for _ in 0..ACCEPT_BATCH {
        match l.accept() {
            Ok(s) => {
                drop(s);
                c.rejected.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if out_of_descriptors(&e) => {
                ok = false; // another thread took the descriptor freed
                break;
            }
            Err(_) => {}
        }
    }
    *reserve = reserve_fd();
    ok && reserve.is_some()
}

/// Wait up to `timeout` for a connection to accept.
pub(super) fn readable(l: &Listener, timeout: Duration) -> bool {
    let mut fds = [rustix::event::PollFd::new(l, rustix::event::PollFlags::IN)];
    let ts = rustix::time::Timespec {
        tv_sec: timeout.as_secs() as i64,
        tv_nsec: timeout.subsec_nanos() as i64,
    };
    matches!(rustix::event::poll(&mut fds, Some(&ts)), Ok(n) if n > 0)
}
