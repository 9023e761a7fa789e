//! readlab: what is the fastest way to read from this device, at what latency, and at what CPU cost?
//!
//! The library holds everything; the binary is a thin wrapper around [`cli::main`].

pub mod buffer;
pub mod cli;
pub mod clock;
pub mod config;
pub mod cpu;
pub mod data;
pub mod engine;
pub mod env;
pub mod error;
pub mod export;
pub mod fsio;
pub mod outpath;
pub mod pareto;
pub mod prepare;
pub mod probe;
pub mod quick;
pub mod report;
pub mod result;
pub mod runner;
pub mod size;
pub mod stability;
pub mod stats;
pub mod store;
pub mod study;
pub mod table;
pub mod target;
pub mod tune;
pub mod units;

pub use error::{Error, Result};
