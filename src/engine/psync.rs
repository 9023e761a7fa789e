//! `psync`: one pread(2) per I/O, the interface of section 5 of the report.

use super::SyncRead;
use std::fs::File;
use std::sync::Arc;

pub struct Psync {
    file: Arc<File>,
}

impl Psync {
    pub fn new(file: Arc<File>) -> Self {
        Psync { file }
    }
}

impl SyncRead for Psync {
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        Ok(rustix::io::pread(&*self.file, buf, offset)?)
    }
}
