//! Helpers shared by the end-to-end tests: run the real binary, prepare real files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_readlab"))
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("start readlab")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A temporary directory on the real disk (not tmpfs), so O_DIRECT goes to a device.
pub fn disk_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("readlab-test-")
        .tempdir_in(std::env::temp_dir())
        .expect("temp dir")
}

pub fn prepare(dir: &Path, name: &str, size: &str) -> PathBuf {
    let p = dir.join(name);
    let o = run(&["prepare", p.to_str().unwrap(), "--size", size]);
    assert!(o.status.success(), "prepare failed: {}", stderr(&o));
    p
}

pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not pure JSON ({e}): {}\nstderr: {}",
            stdout(o),
            stderr(o)
        )
    })
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}
