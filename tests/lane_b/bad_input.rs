//! End-to-end: every kind of bad input gets a one-line error, exit code 2, and nothing is touched.

use crate::common;
use common::*;
use std::path::Path;

fn digest(p: &Path) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&std::fs::read(p).unwrap())
}

/// Run, expect exit 2 with a single-line error containing `needle`.
fn expect_bad(args: &[&str], needle: &str) {
    let o = run(args);
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{args:?} should be bad input; stderr: {err}"
    );
    assert!(
        err.to_lowercase().contains(&needle.to_lowercase()),
        "{args:?}: expected '{needle}' in: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        stdout(&o).is_empty(),
        "{args:?} printed to stdout: {}",
        stdout(&o)
    );
}

#[test]
fn bad_run_inputs_exit_2_and_touch_nothing() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "1M");
    let fs = f.to_str().unwrap();
    let before = digest(&f);
    let out = d.path().join("out.json");
    let js = out.to_str().unwrap();
    let missing = d.path().join("nope");
    let cases: &[(&[&str], &str)] = &[
        (&["run", missing.to_str().unwrap()], "no such file"),
        (
            &["run", "--bs", "1000", fs],
            "not a multiple of the direct-I/O alignment",
        ),
        (&["run", "--bs", "2m", fs], "larger than the range"),
        (&["run", "--bs", "4q", fs], "cannot parse size"),
        (&["run", "--bs", "-4k", fs], "negative"),
        (&["run", "--bs", "128m", fs], "outside 512 B"),
        (&["run", "--runtime", "0", fs], "runtime must be positive"),
        (&["run", "--runtime", "-1s", fs], "negative"),
        (&["run", "--runtime", "soon", fs], "cannot parse duration"),
        (&["run", "--numjobs", "0", fs], "at least 1"),
        (&["run", "--threads", "-2", fs], "at least 1"),
        (&["run", "--iodepth", "0", fs], "at least 1"),
        (&["run", "--iodepth", "-1", fs], "at least 1"),
        (&["run", "--iodepth", "4", fs], "synchronous"),
        (&["run", "--engine", "foo", fs], "unknown engine"),
        (
            &["run", "--engine", "null", "--verify", fs],
            "nothing to verify",
        ),
        (&["run", "--offset", "2m", fs], "past the end"),
        (&["run", "--size", "2m", fs], "runs past the end"),
        (&["run", "--hipri", fs], "pvsync2"),
        (&["run", "--rw", "write", fs], "invalid value"),
    ];
    for (args, needle) in cases {
        let mut a = args.to_vec();
        a.extend_from_slice(&["--json", js]);
        expect_bad(&a, needle);
        assert!(!out.exists(), "{args:?} wrote results");
    }
    assert_eq!(digest(&f), before, "the target changed");
}

#[test]
fn verify_on_a_foreign_file_is_refused() {
    let d = disk_dir();
    let f = d.path().join("foreign");
    std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    expect_bad(
        &["run", "--verify", f.to_str().unwrap()],
        "not written by `readlab prepare`",
    );
    // Without --verify, any file can be read.
    let o = run(&["run", "--runtime", "1s", "-q", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn prepare_refuses_foreign_files_and_bad_sizes() {
    let d = disk_dir();
    let f = d.path().join("precious");
    std::fs::write(&f, b"my database").unwrap();
    let before = digest(&f);
    expect_bad(
        &["prepare", f.to_str().unwrap(), "--size", "1m"],
        "--overwrite",
    );
    assert_eq!(digest(&f), before);
    expect_bad(
        &[
            "prepare",
            d.path().join("x").to_str().unwrap(),
            "--size",
            "abc",
        ],
        "cannot parse size",
    );
    assert!(!d.path().join("x").exists());
    expect_bad(&["prepare", d.path().join("y").to_str().unwrap()], "size");
    // With --overwrite it is destroyed as asked, and becomes verifiable.
    let o = run(&[
        "prepare",
        f.to_str().unwrap(),
        "--size",
        "1m",
        "--overwrite",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "run",
        "--verify",
        "--runtime",
        "1s",
        "-q",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Re-preparing a readlab file needs no flag.
    let o = run(&["prepare", f.to_str().unwrap(), "--size", "2m"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn permission_denied_is_bad_input() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "1M");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    if is_root() {
        // Root reads anything: drop to nobody for this check.
        let o = std::process::Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                env!("CARGO_BIN_EXE_readlab"),
                "run",
                f.to_str().unwrap(),
            ])
            .output()
            .expect("setpriv (util-linux) is needed to test permissions as root");
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("permission denied"), "{}", stderr(&o));
    } else {
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
        expect_bad(&["run", f.to_str().unwrap()], "permission denied");
    }
}

#[test]
fn prepare_refuses_block_devices_without_overwrite() {
    assert!(
        is_root(),
        "this test needs root to create a loop device (CI runs as root)"
    );
    let d = disk_dir();
    let backing = d.path().join("backing");
    std::fs::write(&backing, vec![0xabu8; 4 << 20]).unwrap();
    let o = std::process::Command::new("losetup")
        .args(["--find", "--show", backing.to_str().unwrap()])
        .output()
        .expect("losetup");
    assert!(o.status.success(), "losetup: {}", stderr(&o));
    let dev = stdout(&o).trim().to_string();
    let res = std::panic::catch_unwind(|| {
        let before = digest(&backing);
        expect_bad(&["prepare", &dev, "--size", "1m"], "block device");
        assert_eq!(digest(&backing), before);
        expect_bad(
            &["run", "--verify", &dev],
            "not written by `readlab prepare`",
        );
        // With --overwrite the device is prepared and then verifies.
        let o = run(&["prepare", &dev, "--overwrite"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = run(&[
            "run",
            "--verify",
            "--runtime",
            "1s",
            "--output",
            "json",
            &dev,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(json(&o)["environment"]["target"]["kind"], "block");
    });
    let _ = std::process::Command::new("losetup")
        .args(["-d", &dev])
        .status();
    res.unwrap();
}

/// A size that is not whole 4 KiB sectors is rounded up, and said: the file is the size readlab
/// says, and the note names both sizes.
#[test]
fn prepare_says_when_it_rounds_the_size_up() {
    let d = disk_dir();
    let f = d.path().join("small.dat");
    let o = run(&["prepare", f.to_str().unwrap(), "--size", "100"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 4096);
    let err = unwrapped(&stderr(&o));
    assert!(err.contains("--size 100 B rounded up to 4096 B"), "{err}");
    let o = run(&["prepare", f.to_str().unwrap(), "--size", "8K"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("rounded"), "{}", stderr(&o));
}
