//! `null`: completes every I/O at once without reading, to measure readlab's own cost per I/O.

use super::spec::{Capabilities, EngineSetup, EngineSpec};
use super::sync::{SyncEngine, SyncRead};

pub static SPEC: EngineSpec = EngineSpec {
    name: "null",
    label: "N",
    fio_name: "psync",
    words: "no reads (null)",
    capabilities: Capabilities {
        does_io: false,
        ..super::spec::SYNC
    },
    options: &[],
    stored: &[],
    check: super::spec::no_check,
    variants: super::spec::plain,
    open: |s: EngineSetup| Ok(Box::new(SyncEngine::new(Null, s.pool))),
};

pub struct Null;

impl SyncRead for Null {
    fn read_at(&mut self, _file: usize, buf: &mut [u8], _offset: u64) -> std::io::Result<usize> {
        Ok(buf.len())
    }
}
