//! io_uring engine tests: setup-flag fallback, every option on real files, registered buffers
//! split across registrations, reaping and draining, IOPOLL without poll queues.

use super::*;
use crate::data;
use SetupFlag::*;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

const ID: u64 = 0x5eed_1234_abcd_0001;
const BS: usize = 4096;

/// A file of `blocks` verifiable 4 KiB sectors on the real disk (not tmpfs).
fn prepared(dir: &Path, blocks: usize) -> PathBuf {
    let p = dir.join("data");
    let mut buf = vec![0u8; blocks * BS];
    data::fill(ID, 0, &mut buf);
    std::fs::write(&p, &buf).unwrap();
    p
}

fn open(path: &Path, direct: bool, slots: usize, options: UringOptions) -> Result<Uring> {
    open_with(path, direct, slots, options, MAX_REGISTERED_BUF)
}

fn open_with(
    path: &Path,
    direct: bool,
    slots: usize,
    options: UringOptions,
    max_buf: usize,
) -> Result<Uring> {
    let file = crate::source::local::open_read(path, direct).unwrap();
    Uring::with_max_registered_buf(
        EngineSetup {
            handles: vec![file.into()],
            pool: BufferPool::new(slots, BS),
            depth: slots,
            direct,
            options: crate::engine::spec::with(|o| options.write(o)),
        },
        max_buf,
    )
}

/// Keep every slot busy for `rounds` refills, checking every byte read; returns the reads.
fn read_verified(u: &mut Uring, slots: usize, blocks: u64, rounds: usize) -> usize {
    let mut out = Vec::with_capacity(slots);
    let mut at = vec![0u64; slots];
    let mut next = 0u64;
    let mut done = 0;
    let mut free: Vec<u32> = (0..slots as u32).collect();
    for round in 0..rounds {
        for t in free.drain(..) {
            at[t as usize] = (next * 7919 % blocks) * BS as u64;
            next += 1;
            u.queue(Io {
                file: 0,
                token: t,
                offset: at[t as usize],
                len: BS as u32,
            })
            .unwrap();
        }
        u.submit().unwrap();
        out.clear();
        let min = if round + 1 == rounds { slots } else { 1 };
        let n = u.reap(min, &mut out).unwrap();
        assert_eq!(n, out.len());
        assert!(n >= min, "reap({min}) returned {n}");
        for c in &out {
            assert_eq!(
                c.res, BS as i64,
                "token {} at {}",
                c.token, at[c.token as usize]
            );
            let m = data::verify(ID, at[c.token as usize], u.buffer(c.token, BS));
            assert!(m.is_none(), "{m:?}");
            free.push(c.token);
            done += 1;
        }
    }
    assert_eq!(u.inflight, 0);
    done
}

/// Run `f` on its own thread (where its ring is created); fail instead of hanging.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(t) => t,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("the engine hung: no answer in {secs} s")
        }
        Err(_) => panic!("the test thread panicked (see above)"),
    }
}

#[test]
fn all_flags_are_wanted_but_never_defer_taskrun_with_sqpoll() {
    let o = UringOptions::default();
    assert_eq!(
        wanted_flags(&o),
        [CoopTaskrun, SingleIssuer, DeferTaskrun, NoSqarray]
    );
    let sq = UringOptions {
        sqpoll: true,
        ..UringOptions::default()
    };
    assert_eq!(wanted_flags(&sq), [CoopTaskrun, SingleIssuer, NoSqarray]);
    let plain = UringOptions {
        plain_setup: true,
        ..UringOptions::default()
    };
    assert!(wanted_flags(&plain).is_empty());
}

fn einval() -> io::Error {
    io::Error::from_raw_os_error(libc::EINVAL)
}

#[test]
fn fallback_keeps_every_flag_the_kernel_takes() {
    // Everything taken: one attempt.
    let mut tries = Vec::new();
    let (_, got) = with_fallback(vec![CoopTaskrun, SingleIssuer, DeferTaskrun], |f| {
        tries.push(f.to_vec());
        Ok(())
    })
    .unwrap();
    assert_eq!(got, [CoopTaskrun, SingleIssuer, DeferTaskrun]);
    assert_eq!(tries.len(), 1);

    // An old kernel without DEFER_TASKRUN.
    let (_, got) = with_fallback(vec![CoopTaskrun, SingleIssuer, DeferTaskrun], |f| {
        if f.contains(&DeferTaskrun) {
            Err(einval())
        } else {
            Ok(())
        }
    })
    .unwrap();
    assert_eq!(got, [CoopTaskrun, SingleIssuer]);

    // A refused flag in the middle leaves the others (SQPOLL + COOP_TASKRUN on 6.18).
    let (_, got) = with_fallback(vec![CoopTaskrun, SingleIssuer], |f| {
        if f.contains(&CoopTaskrun) {
            Err(einval())
        } else {
            Ok(())
        }
    })
    .unwrap();
    assert_eq!(got, [SingleIssuer]);

    // Without SINGLE_ISSUER, DEFER_TASKRUN is not even tried.
    let mut tries = Vec::new();
    let (_, got) = with_fallback(vec![CoopTaskrun, SingleIssuer, DeferTaskrun], |f| {
        tries.push(f.to_vec());
        if f.contains(&SingleIssuer) {
            Err(einval())
        } else {
            Ok(())
        }
    })
    .unwrap();
    assert_eq!(got, [CoopTaskrun]);
    assert!(tries.iter().skip(1).all(|t| !t.contains(&DeferTaskrun)));

    // None taken: the plain ring.
    let (_, got) = with_fallback(vec![CoopTaskrun, SingleIssuer], |f| {
        if f.is_empty() { Ok(()) } else { Err(einval()) }
    })
    .unwrap();
    assert!(got.is_empty());
}

#[test]
fn fallback_reports_other_errors_and_a_refused_plain_ring() {
    let e = with_fallback(vec![CoopTaskrun], |_| -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::ENOMEM))
    })
    .unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOMEM));
    let e = with_fallback(vec![CoopTaskrun], |_| -> io::Result<()> { Err(einval()) }).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    let e = with_fallback(Vec::new(), |_| -> io::Result<()> { Err(einval()) }).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
}

/// Every option reads the right bytes, direct and buffered, and reports the features this
/// kernel (6.18) takes: a missing one fails here.
#[test]
fn every_option_reads_the_right_bytes_with_the_features_it_reports() {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = prepared(dir.path(), 256);
    let full = [
        "COOP_TASKRUN",
        "SINGLE_ISSUER",
        "DEFER_TASKRUN",
        "NO_SQARRAY",
        "REGISTERED_RING_FD",
    ];
    // 6.18 refuses COOP_TASKRUN with SQPOLL, and readlab never asks for DEFER_TASKRUN there.
    let sqpoll = [
        "SQPOLL",
        "SINGLE_ISSUER",
        "NO_SQARRAY",
        "REGISTERED_RING_FD",
    ];
    let o = |f: fn(&mut UringOptions)| {
        let mut o = UringOptions {
            sqpoll_idle_ms: 100,
            ..UringOptions::default()
        };
        f(&mut o);
        o
    };
    let cases: Vec<(UringOptions, Vec<&str>)> = vec![
        (o(|_| {}), full.to_vec()),
        (o(|o| o.plain_setup = true), vec![]),
        (
            o(|o| o.fixed_files = true),
            [&["FIXED_FILES"][..], &full].concat(),
        ),
        (
            o(|o| o.fixed_bufs = true),
            [&["FIXED_BUFFERS"][..], &full].concat(),
        ),
        (
            o(|o| {
                o.fixed_files = true;
                o.fixed_bufs = true;
                o.plain_setup = true
            }),
            vec!["FIXED_FILES", "FIXED_BUFFERS"],
        ),
        (o(|o| o.sqpoll = true), sqpoll.to_vec()),
        (
            o(|o| {
                o.sqpoll = true;
                o.sqpoll_cpu = Some(0);
                o.fixed_files = true;
                o.fixed_bufs = true
            }),
            vec![
                "SQPOLL",
                "FIXED_FILES",
                "FIXED_BUFFERS",
                "SINGLE_ISSUER",
                "NO_SQARRAY",
                "REGISTERED_RING_FD",
            ],
        ),
    ];
    for (opts, want) in cases {
        for direct in [true, false] {
            let p = path.clone();
            let o2 = opts;
            let (features, n) = within(20, move || {
                let mut u = open(&p, direct, 16, o2).unwrap();
                let n = read_verified(&mut u, 16, 256, 200);
                (u.features(), n)
            });
            assert_eq!(features, want, "{opts:?} direct={direct}");
            assert!(n >= 200, "{n}");
        }
    }
}

#[test]
fn regions_larger_than_one_registration_use_several_buffers() {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = prepared(dir.path(), 64);
    within(20, move || {
        let o = UringOptions {
            fixed_bufs: true,
            fixed_files: true,
            ..UringOptions::default()
        };
        // 3 slots per registered buffer: tokens 0-2 use buffer 0, … 9 uses buffer 3. A wrong
        // index would point outside its buffer and fail with EFAULT.
        let mut u = open_with(&path, true, 10, o, 3 * BS + 100).unwrap();
        assert_eq!(u.slots_per_buf, 3);
        assert_eq!(
            u.buf_index(Io {
                file: 0,
                token: 9,
                offset: 0,
                len: 4096
            }),
            3
        );
        assert!(read_verified(&mut u, 10, 64, 50) >= 50);
    });
}

#[test]
fn reap_never_waits_for_more_than_is_in_flight() {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = prepared(dir.path(), 8);
    within(10, move || {
        let mut u = open(&path, true, 8, UringOptions::default()).unwrap();
        let mut out = Vec::new();
        assert_eq!(u.reap(1, &mut out).unwrap(), 0);
        for t in 0..2 {
            u.queue(Io {
                file: 0,
                token: t,
                offset: t as u64 * 4096,
                len: 4096,
            })
            .unwrap();
        }
        assert_eq!(u.submit().unwrap(), 2);
        assert_eq!(u.submit().unwrap(), 0);
        assert_eq!(u.reap(8, &mut out).unwrap(), 2);
        assert_eq!(out.len(), 2);
        // Queued but never submitted: reap submits them itself.
        u.queue(Io {
            file: 0,
            token: 5,
            offset: 0,
            len: 4096,
        })
        .unwrap();
        out.clear();
        assert_eq!(u.reap(1, &mut out).unwrap(), 1);
        assert_eq!(out[0], Completion::new(5, 4096));
    });
}

#[test]
fn with_defer_taskrun_a_submit_posts_finished_completions() {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = prepared(dir.path(), 8);
    within(10, move || {
        let mut u = open(&path, true, 4, UringOptions::default()).unwrap();
        assert!(u.features().contains(&"DEFER_TASKRUN".to_string()));
        u.queue(Io {
            file: 0,
            token: 0,
            offset: 0,
            len: 4096,
        })
        .unwrap();
        u.submit().unwrap();
        // Long enough for a direct read to finish; its completion waits as deferred task work
        // until the next enter with GETEVENTS: the next submit.
        std::thread::sleep(Duration::from_millis(200));
        u.queue(Io {
            file: 0,
            token: 1,
            offset: 4096,
            len: 4096,
        })
        .unwrap();
        u.submit().unwrap();
        let mut seen = Vec::new();
        assert!(
            u.drain(usize::MAX, |c| seen.push(c)) >= 1,
            "no completion posted by the submit"
        );
        assert_eq!(seen[0], Completion::new(0, 4096));
        let left = 2 - seen.len();
        let mut out = Vec::new();
        assert_eq!(u.reap(left, &mut out).unwrap(), left);
    });
}

#[test]
fn dropping_with_ios_in_flight_waits_for_them() {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = prepared(dir.path(), 64);
    within(10, move || {
        for opts in [
            UringOptions::default(),
            UringOptions {
                sqpoll: true,
                fixed_bufs: true,
                ..UringOptions::default()
            },
        ] {
            let mut u = open(&path, true, 32, opts).unwrap();
            for t in 0..32 {
                u.queue(Io {
                    file: 0,
                    token: t,
                    offset: t as u64 * 4096,
                    len: 4096,
                })
                .unwrap();
            }
            u.submit().unwrap();
            // Some queued but never submitted.
            let mut u2 = open(&path, true, 4, UringOptions::default()).unwrap();
            u2.queue(Io {
                file: 0,
                token: 0,
                offset: 0,
                len: 4096,
            })
            .unwrap();
            assert!(u.wait_all());
            assert_eq!(u.inflight, 0);
            drop(u);
            drop(u2);
        }
    });
}

/// IOPOLL on a device without poll queues: every read completes with an error, and reap hands
/// those completions back instead of spinning or hanging.
#[test]
fn iopoll_without_poll_queues_fails_each_read_without_hanging() {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = prepared(dir.path(), 64);
    let dev = crate::env::DeviceInfo::of(&path);
    assert_eq!(
        dev.io_poll,
        Some(false),
        "this test needs a temp dir on a device without poll queues: {dev:?}"
    );
    let res = within(10, move || {
        let o = UringOptions {
            iopoll: true,
            ..UringOptions::default()
        };
        let mut u = open(&path, true, 16, o).unwrap();
        assert!(u.features().contains(&"IOPOLL".to_string()));
        let mut res = Vec::new();
        let mut out = Vec::new();
        for _ in 0..20 {
            for t in 0..16 {
                u.queue(Io {
                    file: 0,
                    token: t,
                    offset: t as u64 * 4096,
                    len: 4096,
                })
                .unwrap();
            }
            u.submit().unwrap();
            let mut got = 0;
            while got < 16 {
                out.clear();
                got += u.reap(1, &mut out).unwrap();
                res.extend(out.iter().map(|c| c.res));
            }
        }
        res
    });
    assert_eq!(res.len(), 320);
    assert!(
        res.iter().all(|&r| r == -(libc::EOPNOTSUPP as i64)),
        "{:?}",
        &res[..8]
    );
}

#[test]
fn a_bad_sqpoll_cpu_is_explained() {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = prepared(dir.path(), 8);
    let o = UringOptions {
        sqpoll: true,
        sqpoll_cpu: Some(4095),
        ..UringOptions::default()
    };
    let e = within(10, move || {
        open(&path, true, 4, o).err().map(|e| e.to_string())
    });
    let e = e.expect("SQPOLL on a CPU that does not exist must fail");
    assert!(e.contains("SQPOLL on CPU 4095"), "{e}");
}

#[test]
fn reads_land_in_the_slot_of_their_token() {
    // Slots are disjoint: two tokens reading different blocks see their own data.
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = prepared(dir.path(), 8);
    let f = std::fs::File::open(&path).unwrap();
    let mut expect = vec![0u8; BS];
    f.read_exact_at(&mut expect, 3 * BS as u64).unwrap();
    within(10, move || {
        let mut u = open(&path, false, 4, UringOptions::default()).unwrap();
        u.queue(Io {
            file: 0,
            token: 2,
            offset: 3 * BS as u64,
            len: BS as u32,
        })
        .unwrap();
        u.queue(Io {
            file: 0,
            token: 1,
            offset: 0,
            len: BS as u32,
        })
        .unwrap();
        u.submit().unwrap();
        let mut out = Vec::new();
        u.reap(2, &mut out).unwrap();
        assert_eq!(u.buffer(2, BS), &expect[..]);
        assert_ne!(u.buffer(1, BS), &expect[..]);
    });
}

/// The runner's closed loop at batch 1 through `submit_and_reap`: one read out, one in, every
/// byte checked. Every refill reaches the kernel in the same call (nothing is left in the SQ ring)
/// and the queue stays full; with SQPOLL the poll thread takes the SQEs, so it submits and reaps
/// as before.
#[test]
fn submit_and_reap_submits_each_refill_and_keeps_the_queue_full() {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let path = prepared(dir.path(), 128);
    let sqpoll = UringOptions {
        sqpoll: true,
        sqpoll_idle_ms: 10,
        ..UringOptions::default()
    };
    let plain = UringOptions {
        plain_setup: true,
        ..UringOptions::default()
    };
    for (o, combined) in [
        (UringOptions::default(), true),
        (plain, true),
        (sqpoll, false),
    ] {
        for direct in [true, false] {
            let (p, o2) = (path.clone(), o);
            within(20, move || {
                const SLOTS: usize = 8;
                let mut u = open(&p, direct, SLOTS, o2).unwrap();
                assert_eq!(u.combines_submit_and_reap(), combined, "{o2:?}");
                let mut at = [0u64; SLOTS];
                let mut out = Vec::new();
                let mut free: Vec<u32> = (0..SLOTS as u32).collect();
                for i in 0..2_000u64 {
                    for t in free.drain(..) {
                        at[t as usize] = (i * 7919 + t as u64 * 31) % 128 * BS as u64;
                        u.queue(Io {
                            file: 0,
                            token: t,
                            offset: at[t as usize],
                            len: BS as u32,
                        })
                        .unwrap();
                    }
                    out.clear();
                    let n = u.submit_and_reap(1, 1, &mut out).unwrap();
                    assert_eq!((n, out.len()), (1, 1), "round {i}");
                    if combined {
                        assert_eq!(u.queued, 0, "round {i}: a refill was left unsubmitted");
                        u.sq.sync();
                        assert_eq!(u.sq.len(), 0, "round {i}: the kernel did not take the SQE");
                    }
                    assert_eq!(u.inflight, SLOTS - 1, "round {i}");
                    let c = out[0];
                    assert_eq!(c.res, BS as i64);
                    let m = data::verify(ID, at[c.token as usize], u.buffer(c.token, BS));
                    assert!(m.is_none(), "{m:?}");
                    free.push(c.token);
                }
            });
        }
    }
}
