//! What one study is, as the registry in `study/mod.rs` lists it: its executor, its summary and
//! how it reports progress. Apart from the registry so that each study's file, which holds one
//! [`StudySpec`], and the registry listing them all do not name each other.

use super::StudyName;
use super::plan::{Context, Point};
use super::summary::Summary;
use crate::config::{RunConfig, Timing};
use crate::error::{Error, Result};
use crate::netns::Network;
use crate::result::Document;
use crate::runner::Observer;
use crate::store::Store;

/// How a study's points come to be.
pub enum Exec {
    /// A plan made when the study starts (it may read what earlier studies found), run in order.
    Plan(fn(&Context, &[Document]) -> Vec<RunConfig>),
    /// Its own executor (e.g. one sweep per I/O scheduler).
    Custom(fn(&Context, &mut Store, &dyn StudyObserver) -> Result<Counts>),
    /// Its own executor, needing no target (e.g. a server's null back end); a target given is
    /// ignored.
    Standalone(fn(&Bare, &mut Store, &dyn StudyObserver) -> Result<Counts>),
    /// Not run by `readlab study`: its points come from elsewhere (the tuner).
    External,
}

/// What a study without a target is run with.
pub struct Bare {
    pub timing: Timing,
    pub quick: bool,
    /// How a networked study's clients reach its servers; None: veth when it can be made.
    pub network: Option<Network>,
    /// Network delays (µs) the delay study also measures, made by netem on the veth pair.
    pub netem_us: Vec<u64>,
}

/// Everything readlab knows about one study.
pub struct StudySpec {
    /// The name on the command line and in results files.
    pub name: &'static str,
    /// The report section's heading, with the reference document's section number.
    pub title: &'static str,
    /// What the study measures (one line, for `--help`, summaries and progress).
    pub describe: &'static str,
    /// Part of `readlab study all`.
    pub in_all: bool,
    pub exec: Exec,
    pub summary: Summary,
}

impl StudySpec {
    pub fn study_name(&'static self) -> StudyName {
        StudyName::registered(self.name)
    }
}

/// Points measured, points already in the store, and whether the user interrupted.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counts {
    pub measured: usize,
    pub skipped: usize,
    pub interrupted: bool,
}

/// Progress of a study, for the CLI. The executor itself never prints.
pub trait StudyObserver: Observer {
    /// A study starts with `total` points, `skipped` of them already in the store.
    fn study_start(&self, _name: StudyName, _total: usize, _skipped: usize) {}
    /// Right after `study_start`: what each point still to run is planned to take, in the order
    /// they run (see [`crate::eta`]); the time left is estimated from it.
    fn points_planned(&self, _planned: &[std::time::Duration]) {}
    fn point_start(&self, _index: usize, _total: usize, _point: &Point) {}
    fn point_done(&self, _doc: &Document) {}
    /// A point that could not run on this target (an engine or feature it lacks); the study goes on.
    fn point_skipped(&self, point: &Point, why: &Error) {
        self.note(&format!("{}: skipped: {why}", point.cfg.label()));
    }
    /// A point whose every read failed: a failure of the target, counted as one.
    fn point_failed(&self, point: &Point, why: &Error) {
        self.note(&format!("{}: failed: {why}", point.cfg.label()));
    }
    fn note(&self, _message: &str) {}
}
