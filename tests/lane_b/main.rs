//! Lane B of `scripts/test`: end-to-end tests that measure no time, no CPU and no throughput,
//! so they may share the machine with the other lane. One test binary (each module was a
//! test file of its own) so that a build links it once, not once per file: run one module's
//! tests with `cargo test --release --test lane_b MODULE::`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../nbd_common/mod.rs"]
mod nbd_common;

mod bad_input;
mod completions;
mod default_job;
mod distribution;
mod hostile;
mod hostile_flags;
mod hostile_inputs;
mod hostile_outputs;
mod hostile_reads;
mod hostile_writes;
mod info;
mod json_schema;
mod nbd_hostile;
mod nbd_interop;
mod nbd_serve;
mod pool_posixaio;
mod study;
mod terminal;
