//! `pvsync2`: preadv2(2) with optional RWF_HIPRI (polled completion) and RWF_NOWAIT flags.

use super::{EngineOptions, EngineSetup, EngineSpec, SyncEngine, SyncRead};
use rustix::io::ReadWriteFlags;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::IoSliceMut;
use std::sync::Arc;

/// pvsync2's own options.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Pvsync2Options {
    /// preadv2 RWF_HIPRI: poll for completion (needs a device with poll queues).
    pub hipri: bool,
    /// preadv2 RWF_NOWAIT: fail with EAGAIN instead of blocking.
    pub nowait: bool,
}

pub static SPEC: EngineSpec = EngineSpec {
    name: "pvsync2",
    label: "V",
    fio_name: "pvsync2",
    capabilities: super::SYNC,
    options_set: |o| {
        let o = &o.pvsync2;
        [(o.hipri, "hipri"), (o.nowait, "nowait")]
            .into_iter()
            .filter_map(|(on, f)| on.then_some(f))
            .collect()
    },
    check: super::no_check,
    // `H` RWF_HIPRI, `N` RWF_NOWAIT: `VH` is preadv2 polling for its completion.
    label_suffix: |o| {
        let o = &o.pvsync2;
        [(o.hipri, 'H'), (o.nowait, 'N')]
            .into_iter()
            .filter_map(|(on, c)| on.then_some(c))
            .collect()
    },
    parse_suffix: |s| {
        super::parse_letters(
            s,
            &[
                ('H', |o| o.pvsync2.hipri = true),
                ('N', |o| o.pvsync2.nowait = true),
            ],
        )
    },
    variants: || {
        vec![
            ("", EngineOptions::default()),
            ("--hipri", super::with(|o| o.pvsync2.hipri = true)),
            ("--nowait", super::with(|o| o.pvsync2.nowait = true)),
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
