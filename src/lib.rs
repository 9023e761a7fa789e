//! readlab: what is the fastest way to read from this device, at what latency, and at what CPU cost?
//!
//! The library holds everything but the command line: the `readlab` binary (`src/bin/readlab/`,
//! behind the default `cli` feature) parses arguments, calls the library and prints.

pub mod bssplit;
pub mod buffer;
pub mod clock;
pub mod compare;
pub mod config;
pub mod cpu;
pub mod data;
pub mod decide;
pub mod distribution;
pub mod document;
pub mod engine;
pub mod env;
pub mod error;
pub mod estimate;
pub mod eta;
pub mod export;
pub mod failures;
pub mod fileset;
pub mod fiojob;
#[cfg(test)]
mod fixture;
pub mod fleet;
pub mod fsio;
pub mod input;
pub mod interrupt;
pub mod interval;
pub mod irq;
pub mod jobfiles;
pub mod label;
pub mod memory;
pub mod monitor;
pub mod nbd;
pub mod netns;
pub mod outdir;
pub mod outpath;
pub mod pareto;
pub mod points;
pub mod prepare;
pub mod probe;
pub mod quick;
pub mod race;
pub mod repeat;
pub mod report;
pub mod residency;
pub mod result;
pub mod runner;
pub mod schema;
pub(crate) mod secs;
pub mod serve;
pub mod size;
pub mod source;
pub mod stability;
pub mod stats;
pub mod store;
pub mod study;
pub mod table;
pub mod targets;
pub mod terminal;
pub mod think;
pub mod tune;
pub mod units;
pub mod verdict;
pub mod warnings;

pub use error::{Error, Result};
