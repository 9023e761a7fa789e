//! `null`: completes every I/O at once without reading, to measure readlab's own cost per I/O.

use super::{Capabilities, EngineSetup, EngineSpec, SyncEngine, SyncRead};

pub static SPEC: EngineSpec = EngineSpec {
    name: "null",
    label: "N",
    fio_name: "psync",
    capabilities: Capabilities {
        does_io: false,
        ..super::SYNC
    },
    options_set: super::no_options,
    check: super::no_check,
    label_suffix: super::no_suffix,
    parse_suffix: super::no_suffix_parse,
    variants: super::plain,
    open: |s: EngineSetup| Ok(Box::new(SyncEngine::new(Null, s.pool))),
};

pub struct Null;

impl SyncRead for Null {
    fn read_at(&mut self, buf: &mut [u8], _offset: u64) -> std::io::Result<usize> {
        Ok(buf.len())
    }
}
