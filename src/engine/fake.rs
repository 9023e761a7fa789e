//! A scripted engine for tests. It reads the target for real (so buffers hold the right bytes and
//! verification passes), but a [`Script`] can give any I/O (by sequence number or offset) a
//! service time, an errno, a short length or a corrupted byte. Completions come back in the order
//! they fall due, so a slow I/O is overtaken by faster ones queued after it.

use super::spec::{Completion, Engine, EngineSetup, EngineSpec, Io};

/// The fake as a registered engine (its default script: every read correct, at once), so the
/// engine conformance suite runs it like any other: adding it took this file and one line in
/// [`registry`](super::registry).
pub static SPEC: EngineSpec = EngineSpec {
    name: "fake",
    label: "Z",
    fio_name: "psync",
    words: "fake",
    capabilities: super::spec::ASYNC,
    options: &[],
    stored: &[],
    check: super::spec::no_check,
    variants: super::spec::plain,
    open: |s| Ok(Box::new(Fake::new(s, Script::new())?)),
};
use crate::buffer::BufferPool;
use crate::error::Result;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which I/Os a rule applies to. Sequence numbers count the I/Os one engine was given, from 0, in
/// queue order.
#[derive(Debug, Clone)]
pub enum Which {
    All,
    Seq(u64),
    Seqs(std::ops::Range<u64>),
    Offset(u64),
}

impl Which {
    fn matches(&self, seq: u64, offset: u64) -> bool {
        match self {
            Which::All => true,
            Which::Seq(n) => seq == *n,
            Which::Seqs(r) => r.contains(&seq),
            Which::Offset(o) => offset == *o,
        }
    }
}

/// What happens to a matched I/O. Rules apply in order; a later rule of the same kind wins.
#[derive(Debug, Clone, Copy)]
pub enum Act {
    /// Complete this long after submission (never earlier; the default is at once).
    Delay(Duration),
    /// Fail with this errno (nothing is read).
    Errno(i32),
    /// Read only this many bytes.
    Short(u32),
    /// Flip byte `n` of the data read.
    Corrupt(usize),
}

/// The script one engine follows.
#[derive(Debug, Clone, Default)]
pub struct Script {
    rules: Vec<(Which, Act)>,
    report_service: bool,
    /// Time each submit call spends, like a system call's cost.
    submit_cost: Duration,
}

impl Script {
    /// Every I/O reads correctly, at once.
    pub fn new() -> Script {
        Script::default()
    }

    pub fn on(mut self, which: Which, act: Act) -> Script {
        self.rules.push((which, act));
        self
    }

    /// Every I/O takes `d`.
    pub fn delay(self, d: Duration) -> Script {
        self.on(Which::All, Act::Delay(d))
    }

    /// Report each I/O's scripted delay as its service time, as the thread pool does.
    pub fn report_service(mut self) -> Script {
        self.report_service = true;
        self
    }

    /// Each submit call costs `d` (spent spinning, as a system call would spend it).
    pub fn submit_cost(mut self, d: Duration) -> Script {
        self.submit_cost = d;
        self
    }

    fn plan(&self, seq: u64, offset: u64) -> Plan {
        let mut p = Plan::default();
        for (which, act) in &self.rules {
            if !which.matches(seq, offset) {
                continue;
            }
            match *act {
                Act::Delay(d) => p.delay = d,
                Act::Errno(e) => p.errno = Some(e),
                Act::Short(n) => p.short = Some(n),
                Act::Corrupt(at) => p.corrupt = Some(at),
            }
        }
        p
    }
}

#[derive(Default)]
struct Plan {
    delay: Duration,
    errno: Option<i32>,
    short: Option<u32>,
    corrupt: Option<usize>,
}

/// A submitted I/O: read already, handed back once due.
struct Pending {
    due: Instant,
    done: Completion,
}

pub struct Fake {
    files: Vec<Arc<File>>,
    pool: BufferPool,
    script: Script,
    seq: u64,
    queued: Vec<Io>,
    pending: Vec<Pending>,
}

impl Fake {
    pub fn new(setup: EngineSetup, script: Script) -> Result<Fake> {
        Ok(Fake {
            files: setup.files()?,
            queued: Vec::with_capacity(setup.depth),
            pending: Vec::with_capacity(setup.depth),
            pool: setup.pool,
            script,
            seq: 0,
        })
    }
}

impl Engine for Fake {
    fn queue(&mut self, io: Io) -> Result<()> {
        self.queued.push(io);
        Ok(())
    }

    fn submit(&mut self) -> Result<usize> {
        let now = Instant::now();
        while now.elapsed() < self.script.submit_cost {
            std::hint::spin_loop();
        }
        let n = self.queued.len();
        for io in self.queued.drain(..) {
            let plan = self.script.plan(self.seq, io.offset);
            self.seq += 1;
            let len = plan.short.map_or(io.len, |s| s.min(io.len)) as usize;
            let buf = self.pool.slot_mut(io.token as usize, len);
            let res = match plan.errno {
                Some(e) => -(e as i64),
                None => match self.files[io.file as usize].read_at(buf, io.offset) {
                    Ok(got) => {
                        if let Some(at) = plan.corrupt.filter(|&at| at < got) {
                            buf[at] ^= 0xff;
                        }
                        got as i64
                    }
                    Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                },
            };
            let service_ns = if self.script.report_service {
                plan.delay.as_nanos() as u64
            } else {
                0
            };
            self.pending.push(Pending {
                due: now + plan.delay,
                done: Completion {
                    token: io.token,
                    res,
                    service_ns,
                },
            });
        }
        self.pending.sort_by_key(|p| p.due);
        Ok(n)
    }

    fn reap_at_most(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> Result<usize> {
        let min = min.min(self.pending.len());
        if min > 0 {
            let due = self.pending[min - 1].due;
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        let now = Instant::now();
        let n = self
            .pending
            .partition_point(|p| p.due <= now)
            .min(max.max(min));
        out.extend(self.pending.drain(..n).map(|p| p.done));
        Ok(n)
    }

    fn buffer(&self, token: u32, len: usize) -> &[u8] {
        self.pool.slot(token as usize, len)
    }

    fn features(&self) -> Vec<String> {
        vec!["fake".into()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::options::EngineOptions;

    fn fake(file: &tempfile::NamedTempFile, depth: usize, script: Script) -> Fake {
        let setup = EngineSetup {
            handles: vec![Arc::new(file.reopen().unwrap()).into()],
            pool: BufferPool::new(depth, 4096),
            depth,
            direct: false,
            options: EngineOptions::default(),
        };
        Fake::new(setup, script).unwrap()
    }

    fn io(token: u32, block: u64) -> Io {
        Io {
            file: 0,
            token,
            offset: block * 4096,
            len: 4096,
        }
    }

    #[test]
    fn reads_the_right_bytes_and_follows_its_script() {
        let f = crate::engine::spec::test_file(8, 4096);
        let script = Script::new()
            .on(Which::Seq(1), Act::Errno(libc::EIO))
            .on(Which::Offset(2 * 4096), Act::Short(100))
            .on(Which::Offset(3 * 4096), Act::Corrupt(5));
        let mut e = fake(&f, 4, script);
        for t in 0..4 {
            e.queue(io(t, t as u64)).unwrap();
        }
        assert_eq!(e.submit().unwrap(), 4);
        let mut out = Vec::new();
        assert_eq!(e.reap(4, &mut out).unwrap(), 4);
        let res: Vec<i64> = out.iter().map(|c| c.res).collect();
        assert_eq!(res, [4096, -(libc::EIO as i64), 100, 4096]);
        assert!(e.buffer(0, 4096).iter().all(|&b| b == 0));
        let b3 = e.buffer(3, 4096);
        assert_eq!(b3[5], 3 ^ 0xff);
        assert_eq!(b3.iter().filter(|&&b| b != 3).count(), 1);
        assert_eq!(e.features(), ["fake"]);
    }

    #[test]
    fn completions_come_back_when_due_slow_ones_last() {
        let f = crate::engine::spec::test_file(4, 4096);
        let slow = Duration::from_millis(30);
        let script = Script::new()
            .on(Which::Seq(0), Act::Delay(slow))
            .report_service();
        let mut e = fake(&f, 2, script);
        e.queue(io(0, 0)).unwrap();
        e.queue(io(1, 1)).unwrap();
        let t = Instant::now();
        e.submit().unwrap();
        let mut out = Vec::new();
        e.reap(1, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].token, out[0].service_ns), (1, 0));
        e.reap(1, &mut out).unwrap();
        assert!(t.elapsed() >= slow);
        assert_eq!(out[1].token, 0);
        assert_eq!(out[1].service_ns, slow.as_nanos() as u64);
        // Nothing left: a reap returns at once with nothing.
        assert_eq!(e.reap(1, &mut out).unwrap(), 0);
    }
}
