//! `pvsync2`: preadv2(2) with optional RWF_HIPRI (polled completion) and RWF_NOWAIT flags.

use super::options::EngineOptions;
use super::spec::{EngineOption, EngineSetup, EngineSpec, Value};
use super::sync::{SyncEngine, SyncRead};
use rustix::io::ReadWriteFlags;
use std::fs::File;
use std::io::IoSliceMut;
use std::sync::Arc;

/// RWF_HIPRI: poll for completion (needs a device with poll queues).
const HIPRI: EngineOption = EngineOption {
    flag: "hipri",
    letter: Some('H'),
    words: "polled completions (RWF_HIPRI)",
    help: "RWF_HIPRI (polled completion)",
    fio: Some("hipri"),
    column: "hipri",
    value: Value::Switch,
};

/// RWF_NOWAIT: fail with EAGAIN instead of blocking.
const NOWAIT: EngineOption = EngineOption {
    flag: "nowait",
    letter: Some('N'),
    words: "no waiting (RWF_NOWAIT)",
    help: "RWF_NOWAIT (EAGAIN instead of blocking; counted apart from errors)",
    fio: Some("nowait"),
    column: "nowait",
    value: Value::Switch,
};

pub static SPEC: EngineSpec = EngineSpec {
    name: "pvsync2",
    label: "V",
    fio_name: "pvsync2",
    words: "preadv2",
    capabilities: super::spec::SYNC,
    options: &[HIPRI, NOWAIT],
    stored: &[],
    check: super::spec::no_check,
    variants: || {
        vec![
            ("", EngineOptions::default()),
            ("--hipri", super::spec::with(|o| HIPRI.switch(o, true))),
            ("--nowait", super::spec::with(|o| NOWAIT.switch(o, true))),
        ]
    },
    open: |s: EngineSetup| {
        let files = s.files()?;
        Ok(Box::new(SyncEngine::new(
            Pvsync2::new(files, Pvsync2Options::of(&s.options)),
            s.pool,
        )))
    },
};

/// pvsync2's options, typed: what its rows hold in an [`EngineOptions`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pvsync2Options {
    /// preadv2 RWF_HIPRI: poll for completion (needs a device with poll queues).
    pub hipri: bool,
    /// preadv2 RWF_NOWAIT: fail with EAGAIN instead of blocking.
    pub nowait: bool,
}

impl Pvsync2Options {
    /// pvsync2's options in `o`.
    pub fn of(o: &EngineOptions) -> Self {
        Pvsync2Options {
            hipri: HIPRI.on(o),
            nowait: NOWAIT.on(o),
        }
    }

    /// Write them into `o`, leaving other engines' options as they are.
    pub fn write(&self, o: &mut EngineOptions) {
        HIPRI.switch(o, self.hipri);
        NOWAIT.switch(o, self.nowait);
    }

    /// Change them in `o` with `f`.
    pub fn edit(o: &mut EngineOptions, f: impl FnOnce(&mut Self)) {
        let mut v = Self::of(o);
        f(&mut v);
        v.write(o);
    }
}

pub struct Pvsync2 {
    files: Vec<Arc<File>>,
    flags: ReadWriteFlags,
}

impl Pvsync2 {
    pub fn new(files: Vec<Arc<File>>, opts: Pvsync2Options) -> Self {
        let mut flags = ReadWriteFlags::empty();
        if opts.hipri {
            flags |= ReadWriteFlags::HIPRI;
        }
        if opts.nowait {
            flags |= ReadWriteFlags::NOWAIT;
        }
        Pvsync2 { files, flags }
    }
}

impl SyncRead for Pvsync2 {
    fn read_at(&mut self, file: usize, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        let mut iov = [IoSliceMut::new(buf)];
        Ok(rustix::io::preadv2(
            &*self.files[file],
            &mut iov,
            offset,
            self.flags,
        )?)
    }
}
