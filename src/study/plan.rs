//! What study plans are made from: a point's timing in a full and a `--quick` size, the context a
//! plan sees (target, timing, verification), and helpers the studies share (block sizes that fit,
//! the best queue sizes an earlier study found).

use super::StudyName;
use crate::config::{RunConfig, Rw, Timing};
use crate::engine::EngineKind;
use crate::result::StudyTag;
use crate::source::Target;

/// One point of a study.
#[derive(Debug, Clone)]
pub struct Point {
    pub tag: StudyTag,
    pub cfg: RunConfig,
}

impl Point {
    /// A point of study `name` (no scheduler of its own).
    pub fn of(name: StudyName, cfg: RunConfig) -> Point {
        Point {
            tag: StudyTag {
                study: name,
                scheduler: None,
                net: None,
                setting: None,
            },
            cfg,
        }
    }
}

/// What plans are made from.
pub struct Context<'a> {
    pub target: &'a Target,
    pub timing: Timing,
    pub quick: bool,
    pub verify: bool,
    pub max_threads: Option<usize>,
    /// Runs of every point (`--repeat`); the stored point is their median with an interval.
    pub repeat: usize,
    /// Every target of the study (the `devices` study reads 1, 2 … of them at once).
    pub targets: &'a [crate::targets::TargetSpec],
    /// Device settings (readahead) may be changed for a point and are restored afterwards.
    pub allow_device_changes: bool,
    /// How a networked study's clients reach its servers; None: veth when it can be made.
    pub network: Option<crate::netns::Network>,
}

impl Context<'_> {
    pub(super) fn base(&self, engine: EngineKind, rw: Rw, bs: u64) -> RunConfig {
        RunConfig::point(self.target, engine, rw, bs, self.verify, self.timing)
    }

    pub(super) fn pick<T: Copy>(&self, full: &[T], quick: &[T]) -> Vec<T> {
        if self.quick { quick } else { full }.to_vec()
    }

    /// Block sizes that fit the target (a quarter of it at most) and its direct-I/O alignment.
    pub(super) fn sizes(&self, full: &[u64], quick: &[u64]) -> Vec<u64> {
        self.pick(full, quick)
            .into_iter()
            .filter(|&bs| bs <= self.target.size / 4 && bs % self.target.dio_offset_align == 0)
            .collect()
    }
}

pub(super) const K: u64 = 1024;
pub(super) const M: u64 = 1024 * 1024;

pub(super) fn powers_of_two(from: usize, to: usize) -> Vec<usize> {
    std::iter::successors(Some(from), |&x| Some(x * 2))
        .take_while(|&x| x <= to)
        .collect()
}
