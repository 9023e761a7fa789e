//! `null`: completes every I/O at once without reading, to measure readlab's own cost per I/O.

use super::SyncRead;

pub struct Null;

impl SyncRead for Null {
    fn read_at(&mut self, buf: &mut [u8], _offset: u64) -> std::io::Result<usize> {
        Ok(buf.len())
    }
}
