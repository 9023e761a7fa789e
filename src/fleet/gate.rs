//! The runner's start gate for a fleet. Once this rank has set up, every rank says whether it
//! could (one failure stops all, with its message); the ranks' clocks are compared with rank 0's;
//! rank 0 names an instant a little ahead and every rank starts at that instant on its own clock
//! (corrected by its offset). Starting at an instant rather than on leaving a barrier means the
//! skew is the clock error and a wake-up, not the barrier's release fanning out; and since every
//! rank runs the same ramp and runtime, the measured windows coincide. The wait runs at real-time
//! priority where permitted: with more ranks than cores, a rank that started first keeps the
//! cores busy, and an ordinary wake-up waits its turn for milliseconds.

use super::Fleet;
use super::clock::{self, Offset};
use crate::error::{Error, Result};
use crate::runner::StartGate;
use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

/// How far ahead rank 0 sets the start: time for its word to reach every rank and wake it.
pub const NOTICE: Duration = Duration::from_millis(20);
/// Ping-pong exchanges per rank and run.
const EXCHANGES: usize = 8;

/// How one rank started.
#[derive(Debug, Clone, Copy, Default)]
pub struct Started {
    /// The offset used to read the agreed instant on this rank's clock.
    pub offset: Offset,
    /// What the exchanges measured, even where the clock is known to be rank 0's own.
    pub measured: Option<Offset>,
    /// The agreed instant on rank 0's clock.
    pub agreed_ns: i64,
    /// When this rank really started, on its own clock.
    pub started_ns: i64,
    /// Whether it waited for the instant at real-time priority.
    pub realtime: bool,
}

impl Started {
    /// The start on rank 0's clock.
    pub fn on_root_clock(&self) -> i64 {
        self.started_ns - self.offset.ns
    }

    /// How late after the agreed instant.
    pub fn late_ns(&self) -> u64 {
        (self.on_root_clock() - self.agreed_ns).max(0) as u64
    }
}

pub struct Gate<'a> {
    fleet: &'a Fleet,
    /// Whether this rank has met the others for this run (successfully or not).
    met: Cell<bool>,
    started: RefCell<Option<Started>>,
}

impl<'a> Gate<'a> {
    pub fn new(fleet: &'a Fleet) -> Gate<'a> {
        Gate {
            fleet,
            met: Cell::new(false),
            started: RefCell::new(None),
        }
    }

    pub fn met(&self) -> bool {
        self.met.get()
    }

    pub fn started(&self) -> Option<Started> {
        *self.started.borrow()
    }

    /// Meet the others with this rank's set-up outcome; on success, start at the agreed instant.
    pub fn meet(&self, setup: Result<()>) -> Result<Instant> {
        let (offset, measured, agreed) = self.agree(setup)?;
        // Real-time priority for the wait alone: the wake-up preempts a busy core, and the
        // thread is back to its own policy before it starts the workers.
        let urgent = clock::Urgent::raise();
        clock::wait_until(agreed + offset.ns, self.fleet.spare_cores());
        let t0 = Instant::now();
        let started_ns = clock::realtime_ns();
        let realtime = urgent.raised();
        drop(urgent);
        *self.started.borrow_mut() = Some(Started {
            offset,
            measured,
            agreed_ns: agreed,
            started_ns,
            realtime,
        });
        Ok(t0)
    }

    /// Take part in the meeting of a run this rank sits out (it has no share of the work): the
    /// same collectives as [`Gate::meet`], without starting anything.
    pub fn attend(&self) -> Result<()> {
        self.agree(Ok(())).map(|_| ())
    }

    /// The meeting: every rank's set-up outcome, the clock exchanges, the instant rank 0 names.
    /// Returns this rank's offset (as used and as measured) and the instant on rank 0's clock.
    fn agree(&self, setup: Result<()>) -> Result<(Offset, Option<Offset>, i64)> {
        self.met.set(true);
        self.fleet.agree(setup, "set-up")?;
        let exchanges = self.fleet.comm.clock_exchanges(
            EXCHANGES,
            clock::realtime_ns,
            super::MEET_WITHIN,
            "clock",
        )?;
        let measured = clock::estimate(&exchanges);
        let offset = if self.fleet.shares_root_clock(self.fleet.rank()) {
            Offset::default()
        } else {
            measured.unwrap_or_default()
        };
        let when = (clock::realtime_ns() + NOTICE.as_nanos() as i64).to_le_bytes();
        let agreed = self
            .fleet
            .broadcast(&when, super::MEET_WITHIN, "start")?
            .try_into()
            .map(i64::from_le_bytes)
            .map_err(|_| Error::Mpi("fleet start: rank 0 sent a malformed instant".into()))?;
        Ok((offset, measured, agreed))
    }
}

impl StartGate for Gate<'_> {
    fn start(&self, setup: Result<()>) -> Result<Instant> {
        self.meet(setup)
    }
}
