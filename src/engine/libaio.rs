//! `libaio`: not written yet.

use super::{Completion, Engine, EngineSetup, Io};
use crate::error::{Error, Result};

pub struct Libaio;

impl Libaio {
    pub fn new(_setup: EngineSetup) -> Result<Self> {
        Err(Error::Engine("engine libaio is not available yet".into()))
    }
}

impl Engine for Libaio {
    fn queue(&mut self, _io: Io) -> Result<()> {
        unreachable!()
    }
    fn submit(&mut self) -> Result<usize> {
        unreachable!()
    }
    fn reap(&mut self, _min: usize, _out: &mut Vec<Completion>) -> Result<usize> {
        unreachable!()
    }
    fn buffer(&self, _token: u32, _len: usize) -> &[u8] {
        unreachable!()
    }
}
