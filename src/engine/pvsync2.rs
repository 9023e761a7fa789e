//! `pvsync2`: preadv2(2) with optional RWF_HIPRI (polled completion) and RWF_NOWAIT flags.

use super::options::EngineOptions;
use super::spec::{EngineOption, EngineSetup, EngineSpec, Value};
use super::sync::{SyncEngine, SyncRead};
use rustix::io::ReadWriteFlags;
use std::fs::File;
use std::io::IoSliceMut;
use std::sync::Arc;

pub static SPEC: EngineSpec = EngineSpec {
    name: "pvsync2",
    label: "V",
    fio_name: "pvsync2",
    words: "preadv2",
    capabilities: super::spec::SYNC,
    options: &[
        EngineOption {
            flag: "hipri",
            letter: Some('H'),
            words: "polled completions (RWF_HIPRI)",
            help: "RWF_HIPRI (polled completion)",
            fio: Some("hipri"),
            column: "hipri",
            value: Value::Switch,
            get: |o| o.pvsync2.hipri.then_some(1),
            set: |o, _| o.pvsync2.hipri = true,
        },
        EngineOption {
            flag: "nowait",
            letter: Some('N'),
            words: "no waiting (RWF_NOWAIT)",
            help: "RWF_NOWAIT (EAGAIN instead of blocking; counted apart from errors)",
            fio: Some("nowait"),
            column: "nowait",
            value: Value::Switch,
            get: |o| o.pvsync2.nowait.then_some(1),
            set: |o, _| o.pvsync2.nowait = true,
        },
    ],
    check: super::spec::no_check,
    variants: || {
        vec![
            ("", EngineOptions::default()),
            ("--hipri", super::spec::with(|o| o.pvsync2.hipri = true)),
            ("--nowait", super::spec::with(|o| o.pvsync2.nowait = true)),
        ]
    },
    open: |s: EngineSetup| {
        let file = s.handle.file()?;
        Ok(Box::new(SyncEngine::new(
            Pvsync2::new(file, &s.options),
            s.pool,
        )))
    },
};

pub struct Pvsync2 {
    file: Arc<File>,
    flags: ReadWriteFlags,
}

impl Pvsync2 {
    pub fn new(file: Arc<File>, opts: &EngineOptions) -> Self {
        let mut flags = ReadWriteFlags::empty();
        if opts.pvsync2.hipri {
            flags |= ReadWriteFlags::HIPRI;
        }
        if opts.pvsync2.nowait {
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
