//! `pvsync2`: preadv2(2) with optional RWF_HIPRI (polled completion) and RWF_NOWAIT flags.

use super::{EngineOptions, SyncRead};
use rustix::io::ReadWriteFlags;
use std::fs::File;
use std::io::IoSliceMut;
use std::sync::Arc;

pub struct Pvsync2 {
    file: Arc<File>,
    flags: ReadWriteFlags,
}

impl Pvsync2 {
    pub fn new(file: Arc<File>, opts: &EngineOptions) -> Self {
        let mut flags = ReadWriteFlags::empty();
        if opts.hipri {
            flags |= ReadWriteFlags::HIPRI;
        }
        if opts.nowait {
            flags |= ReadWriteFlags::NOWAIT;
        }
        Pvsync2 { file, flags }
    }
}

impl SyncRead for Pvsync2 {
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        let mut iov = [IoSliceMut::new(buf)];
        Ok(rustix::io::preadv2(
            &*self.file,
            &mut iov,
            offset,
            self.flags,
        )?)
    }
}
