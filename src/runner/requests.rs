//! A worker's request slots and the offsets they read: shared by the closed loop (`worker`) and
//! the open-loop schedule (`schedule`), so neither has to import the other.

use super::depth::DepthMeter;
use super::distribution::Sampler;
use crate::clock::Tick;
use crate::config::{Range, RunConfig, Rw};
use crate::engine::{Engine, Io};
use crate::error::Result;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

/// Random or sequential offsets for one worker.
pub(super) struct Offsets {
    rw: Rw,
    pub(super) bs: u64,
    base: u64,
    blocks: u64,
    next: u64,
    rng: Xoshiro256PlusPlus,
    /// The random reads' block picker (uniform unless `--random-distribution` says otherwise).
    sampler: Sampler,
}

impl Offsets {
    fn new(cfg: &RunConfig, range: &Range, worker: usize, sampler: &Sampler) -> Offsets {
        let (base, blocks) = match cfg.rw {
            Rw::Randread => (range.offset, range.blocks),
            Rw::Read => {
                let per = range.blocks / cfg.threads as u64;
                (range.offset + worker as u64 * per * cfg.bs, per)
            }
        };
        let seed = cfg
            .seed
            .wrapping_add((worker as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        Offsets {
            rw: cfg.rw,
            bs: cfg.bs,
            base,
            blocks,
            next: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            sampler: sampler.clone(),
        }
    }

    /// Random offsets over `blocks` blocks of `bs` bytes, as a random-read worker draws them
    /// (for the cost breakdown).
    pub(super) fn random(bs: u64, blocks: u64, seed: u64) -> Offsets {
        Offsets {
            rw: Rw::Randread,
            bs,
            base: 0,
            blocks,
            next: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            sampler: Sampler::new(&Default::default(), blocks),
        }
    }

    #[inline]
    pub(super) fn next(&mut self) -> u64 {
        self.next_of(1)
    }

    /// The offset of a request of `n` blocks (a mix's larger sizes): a random one that would
    /// run past the range's end is moved back to end there; a sequential one that would not
    /// fit before the stripe's end starts the stripe again.
    #[inline]
    pub(super) fn next_of(&mut self, n: u64) -> u64 {
        let block = match self.rw {
            Rw::Randread => self.sampler.next(&mut self.rng).min(self.blocks - n),
            Rw::Read => {
                let b = if self.next + n > self.blocks {
                    0
                } else {
                    self.next
                };
                self.next = if b + n >= self.blocks { 0 } else { b + n };
                b
            }
        };
        self.base + block * self.bs
    }
}

/// The bytes of a request on average: a mix's mean size (its shares' weights), so `--io-limit`
/// reads about as many bytes with a mix as without.
fn mean_request(cfg: &RunConfig, request_bytes: u64) -> u64 {
    if cfg.bssplit.is_single() {
        return request_bytes;
    }
    let bytes: u64 = cfg
        .bssplit
        .shares()
        .iter()
        .map(|s| s.bs * s.percent as u64)
        .sum();
    (bytes / 100).max(1)
}

/// The requests one worker may start (none: no limit): `--io-limit` bytes, or with `--loops N`
/// N passes of its part of the range (`blocks` blocks: its stripe, or the whole range at random),
/// or N times `--io-limit` — fio's `io_size` (else `size`) × `loops`.
fn budget(cfg: &RunConfig, request_bytes: u64, blocks: u64) -> Option<u64> {
    let pass = cfg
        .io_limit
        .or_else(|| cfg.loops.map(|_| blocks * cfg.bs))?;
    let bytes = pass.saturating_mul(cfg.loops.unwrap_or(1));
    Some(bytes.div_ceil(mean_request(cfg, request_bytes)))
}

/// The request slots of one worker: `depth` logical requests, each of `bpr` blocks; block `b` of
/// request `r` reads into slot (token) `r * bpr + b`.
pub(super) struct Requests {
    pub(super) bpr: usize,
    pub(super) bs: u32,
    /// A mix's sizes (empty: every request is `bs`), its draws, and each slot's size (an index
    /// into the mix) and length in bytes.
    split: crate::bssplit::BsSplit,
    size_rng: Xoshiro256PlusPlus,
    pub(super) size_of: Vec<usize>,
    pub(super) len: Vec<u32>,
    /// Each file's offsets (one file unless the job reads several), the file of each read
    /// picked by `chooser` (its random draws from `file_rng`).
    offsets: Vec<Offsets>,
    chooser: crate::fileset::Chooser,
    file_rng: Xoshiro256PlusPlus,
    /// Each slot's file.
    pub(super) file: Vec<u16>,
    /// Request slots free to start.
    pub(super) free: Vec<u32>,
    /// Block I/Os submitted and not yet reaped.
    pub(super) inflight: usize,
    /// Requests this worker may still start under `--io-limit`.
    pub(super) budget: Option<u64>,
    pub(super) issued: Vec<Tick>,
    pub(super) remaining: Vec<usize>,
    pub(super) failed: Vec<bool>,
    pub(super) at: Vec<u64>,
    /// Requests in flight over the measured window.
    pub(super) depth: DepthMeter,
}

impl Requests {
    /// Slots for one worker whose loop starts at `t0` and measures `[window_start, window_end)`;
    /// it reads `files` (each its range, and the sampler its random reads pick blocks with).
    pub(super) fn new(
        cfg: &RunConfig,
        files: &[(Range, &Sampler)],
        worker: usize,
        t0: Tick,
        window: (Tick, Tick),
    ) -> Requests {
        let (depth, bpr) = (cfg.iodepth, cfg.blocks_per_request);
        let request_bytes = cfg.bs * bpr as u64;
        let size_seed =
            cfg.seed ^ 0x5bd1_e995 ^ (worker as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
        let offsets: Vec<Offsets> = files
            .iter()
            .map(|(range, sampler)| Offsets::new(cfg, range, worker, sampler))
            .collect();
        // Blocks one pass over each file's part reads: the worker's stripe (sequential) or the
        // range (random).
        let passes: Vec<u64> = offsets.iter().map(|o| o.blocks).collect();
        let blocks = passes.iter().sum();
        // fio's sequential reads mark a file done at its end (random ones start it again).
        let chooser = crate::fileset::Chooser::new(cfg.file_service, passes, cfg.rw == Rw::Read);
        Requests {
            bpr,
            bs: cfg.bs as u32,
            split: cfg.bssplit.clone(),
            size_rng: Xoshiro256PlusPlus::seed_from_u64(size_seed),
            size_of: vec![0; depth],
            len: vec![cfg.bs as u32; depth * bpr],
            offsets,
            chooser,
            file_rng: Xoshiro256PlusPlus::seed_from_u64(size_seed ^ 0xf11e),
            file: vec![0; depth * bpr],
            free: (0..depth as u32).rev().collect(),
            inflight: 0,
            budget: budget(cfg, request_bytes, blocks),
            issued: vec![t0; depth],
            remaining: vec![0; depth],
            failed: vec![false; depth],
            at: vec![0; depth * bpr],
            depth: DepthMeter::new(t0, window.0, window.1),
        }
    }

    /// Queue one logical request (all its blocks) into free request slot `r`; its latency counts
    /// from `at_time`.
    pub(super) fn start(&mut self, r: usize, at_time: Tick, engine: &mut dyn Engine) -> Result<()> {
        self.issued[r] = at_time;
        self.remaining[r] = self.bpr;
        self.failed[r] = false;
        let len = if self.split.is_single() {
            self.bs
        } else {
            let i = self.split.pick(self.size_rng.random::<f64>());
            self.size_of[r] = i;
            self.split.shares()[i].bs as u32
        };
        let blocks = (len / self.bs) as u64;
        for b in 0..self.bpr {
            let token = (r * self.bpr + b) as u32;
            let file = self.chooser.next(blocks, &mut self.file_rng);
            let offset = self.offsets[file].next_of(blocks);
            self.at[token as usize] = offset;
            self.len[token as usize] = len;
            self.file[token as usize] = file as u16;
            engine.queue(Io {
                token,
                file: file as u16,
                offset,
                len,
            })?;
        }
        Ok(())
    }
}
