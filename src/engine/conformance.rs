//! One conformance suite for every registered engine, in every feature variant its spec lists,
//! direct and buffered: what the runner relies on of any engine, checked the same way for all of
//! them (the scripted fake included) instead of a copy per engine.
//!
//! An engine conforms when reads land in the slot of their token with the right bytes, a failed
//! read comes back as a completion (never an `Err`, never a hang), `reap` never waits for more than
//! is in flight, `reap_at_most` hands back no more than asked, and dropping an engine with reads in
//! flight neither hangs nor frees a buffer under the kernel. A feature this machine cannot give
//! (IOPOLL without poll queues) must fail each read with its errno, quickly. Every engine reads
//! two files (a job's `filename=a:b`), each read from the file its [`Io::file`] names: the two
//! hold different prepared data, so a read of the other file is caught.

use super::{EngineKind, EngineOptions, EngineSetup, Io, registry};
use crate::buffer::BufferPool;
use crate::data;
use std::io::Write;
use std::sync::mpsc;
use std::time::Duration;

const BS: usize = data::SECTOR;
const BLOCKS: u64 = 64;
/// The prepared data's ids of the two files every engine reads.
const IDS: [u64; 2] = [0xC0_FFEE, 0xBE_EF];

/// A prepared file of `BLOCKS` sectors, with the data of file id `id`.
fn prepared(id: u64) -> tempfile::NamedTempFile {
    let dir = std::env::current_dir().unwrap();
    let mut f = tempfile::NamedTempFile::new_in(dir).unwrap();
    let mut buf = vec![0u8; BLOCKS as usize * BS];
    data::fill(id, 0, &mut buf);
    f.write_all(&buf).unwrap();
    f.flush().unwrap();
    f
}

/// Run `f` on its own thread and fail if it does not finish within `secs`: a hang is a failure,
/// not a stuck test run.
fn within<T: Send + 'static>(secs: u64, what: String, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("{what}: did not finish within {secs} s"))
}

fn setup(
    paths: &[std::path::PathBuf],
    direct: bool,
    depth: usize,
    options: EngineOptions,
) -> EngineSetup {
    let open = |p| crate::source::local::open_read(p, direct).unwrap().into();
    EngineSetup {
        handles: paths.iter().map(|p| open(p)).collect(),
        pool: BufferPool::new(depth, BS),
        depth,
        direct,
        options,
    }
}

/// What one engine variant did.
enum Outcome {
    Conforms,
    /// Every read failed with this errno, as the feature cannot work here.
    Unsupported(i32),
}

fn check(
    kind: EngineKind,
    options: EngineOptions,
    direct: bool,
    paths: Vec<std::path::PathBuf>,
) -> Outcome {
    let depth = if kind.capabilities().asynchronous {
        8
    } else {
        1
    };
    let open = kind.spec().open;
    let mut e = open(setup(&paths, direct, depth, options.clone())).expect("engine opens");

    // Nothing in flight: a reap asking for more returns at once.
    let mut out = Vec::new();
    assert_eq!(
        e.reap(4, &mut out).unwrap(),
        0,
        "reap with nothing in flight"
    );

    // Reads land in their own slots with the right bytes of the right file, in rounds of
    // `depth`: the files in turn (both in each round of an asynchronous engine, in flight at
    // once).
    let offsets: Vec<(u16, u64)> = (0..3 * depth as u64)
        .map(|i| ((i % 2) as u16, (i * 7 % BLOCKS) * BS as u64))
        .collect();
    let mut failed = None;
    for round in offsets.chunks(depth) {
        for (t, &(file, off)) in round.iter().enumerate() {
            e.queue(Io {
                file,
                token: t as u32,
                offset: off,
                len: BS as u32,
            })
            .unwrap();
        }
        e.submit().unwrap();
        let mut got = Vec::new();
        while got.len() < round.len() {
            let before = got.len();
            // At most one at a time: the engine must keep the rest for the next call.
            let n = e.reap_at_most(1, 1, &mut got).unwrap();
            assert_eq!(n, got.len() - before);
            assert!(
                n <= 1 || got[before..].iter().any(|c| c.res < 0),
                "reap_at_most(1, 1) gave {n}"
            );
        }
        got.sort_by_key(|c| c.token);
        for c in &got {
            let (file, off) = round[c.token as usize];
            if c.res < 0 {
                failed.get_or_insert((-c.res) as i32);
                continue;
            }
            assert_eq!(c.res, BS as i64, "token {} at {off}", c.token);
            let buf = e.buffer(c.token, BS);
            assert!(
                data::verify(IDS[file as usize], off, buf).is_none(),
                "token {} holds the bytes of {off} of file {file}",
                c.token
            );
        }
    }
    if let Some(errno) = failed {
        return Outcome::Unsupported(errno);
    }

    // A read past the end is a completion (0 bytes), not an error of the engine.
    e.queue(Io {
        file: 1,
        token: 0,
        offset: BLOCKS * BS as u64,
        len: BS as u32,
    })
    .unwrap();
    e.submit().unwrap();
    // One in flight: a reap asking for four returns with the one.
    let mut out = Vec::new();
    while out.is_empty() {
        e.reap(4, &mut out).unwrap();
    }
    assert_eq!(
        (out[0].token, out[0].res),
        (0, 0),
        "a read at the end of the file"
    );

    // Dropped with reads in flight: waits for them or cancels them, never hangs.
    for t in 0..depth as u32 {
        e.queue(Io {
            file: 0,
            token: t,
            offset: t as u64 * BS as u64,
            len: BS as u32,
        })
        .unwrap();
    }
    e.submit().unwrap();
    drop(e);
    Outcome::Conforms
}

/// The variants this machine cannot run, and the errno each read must fail with.
fn expected_unsupported(flags: &str) -> Option<i32> {
    // No device here has poll queues: IOPOLL fails every read with EOPNOTSUPP.
    (flags == "--iopoll").then_some(libc::EOPNOTSUPP)
}

#[test]
fn every_registered_engine_conforms() {
    let files = [prepared(IDS[0]), prepared(IDS[1])];
    let mut ran = Vec::new();
    for spec in registry() {
        if !spec.capabilities.does_io {
            continue;
        }
        let kind = EngineKind::parse(spec.name).unwrap();
        for (flags, options) in (spec.variants)() {
            for direct in [true, false] {
                if flags == "--iopoll" && !direct {
                    continue; // refused up front by RunConfig::check
                }
                let what = format!("{} {flags} direct={direct}", spec.name);
                let paths = files.iter().map(|f| f.path().to_path_buf()).collect();
                let options = options.clone();
                let outcome = within(30, what.clone(), move || {
                    check(kind, options, direct, paths)
                });
                match (outcome, expected_unsupported(flags)) {
                    (Outcome::Conforms, None) => {}
                    (Outcome::Unsupported(e), Some(want)) => {
                        assert_eq!(e, want, "{what}: reads failed with errno {e}")
                    }
                    (Outcome::Conforms, Some(_)) => {
                        eprintln!("{what}: works here (this machine has poll queues)")
                    }
                    (Outcome::Unsupported(e), None) => {
                        panic!("{what}: every read failed, errno {e}")
                    }
                }
                ran.push(what);
            }
        }
    }
    // The suite saw every engine, the scripted fake (registered with one line) included.
    for name in [
        "psync", "pvsync2", "libaio", "uring", "pool", "posixaio", "fake",
    ] {
        assert!(
            ran.iter().any(|w| w.starts_with(&format!("{name} "))),
            "{name} not run: {ran:?}"
        );
    }
}
