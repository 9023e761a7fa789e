//! `psync`: one pread(2) per I/O, the interface of section 5 of the report.

use super::spec::{EngineSetup, EngineSpec};
use super::sync::{SyncEngine, SyncRead};
use std::fs::File;
use std::sync::Arc;

pub static SPEC: EngineSpec = EngineSpec {
    name: "psync",
    label: "P",
    fio_name: "psync",
    words: "pread",
    capabilities: super::spec::SYNC,
    options: &[],
    stored: &[],
    check: super::spec::no_check,
    variants: super::spec::plain,
    open: |s: EngineSetup| {
        let files = s.files()?;
        Ok(Box::new(SyncEngine::new(Psync::new(files), s.pool)))
    },
};

pub struct Psync {
    files: Vec<Arc<File>>,
}

impl Psync {
    pub fn new(files: Vec<Arc<File>>) -> Self {
        Psync { files }
    }
}

impl SyncRead for Psync {
    fn read_at(&mut self, file: usize, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        Ok(rustix::io::pread(&*self.files[file], buf, offset)?)
    }
}
