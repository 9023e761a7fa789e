//! `null`: completes every I/O at once without reading, to measure readlab's own cost per I/O.

use super::{Capabilities, EngineSetup, EngineSpec, SyncEngine, SyncRead};

pub static SPEC: EngineSpec = EngineSpec {
    name: "null",
    label: "N",
    fio_name: "psync",
    words: "no reads (null)",
    capabilities: Capabilities {
        does_io: false,
        ..super::SYNC
    },
    options: &[],
    check: super::no_check,
    variants: super::plain,
    open: |s: EngineSetup| Ok(Box::new(SyncEngine::new(Null, s.pool))),
};

pub struct Null;

impl SyncRead for Null {
    fn read_at(&mut self, buf: &mut [u8], _offset: u64) -> std::io::Result<usize> {
        Ok(buf.len())
    }
}
