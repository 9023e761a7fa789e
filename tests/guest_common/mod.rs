//! Runs a scenario of `tests/guest/` inside a throwaway QEMU guest through `scripts/guest` (the same
//! script people run by hand) and hands its results to the test: the files the guest wrote, its
//! scenario log and its exit status. One guest at a time per test binary (each takes both cores).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

static ONE_GUEST: Mutex<()> = Mutex::new(());

pub struct Guest {
    pub name: String,
    /// target/guest/out/NAME/results: what the guest left in /results
    pub dir: PathBuf,
    /// the guest's status (the scenario's exit code), or the harness's own failure
    pub status: i32,
    /// scripts/guest's stderr: boot, status, the FAIL lines
    pub harness: String,
    /// what the scenario printed (results/scenario.log)
    pub log: String,
}

impl Guest {
    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    pub fn text(&self, file: &str) -> String {
        std::fs::read_to_string(self.path(file)).unwrap_or_else(|e| {
            panic!(
                "guest {}: no {file} in its results ({e})\n{}",
                self.name,
                self.context()
            )
        })
    }

    pub fn json(&self, file: &str) -> serde_json::Value {
        serde_json::from_str(&self.text(file))
            .unwrap_or_else(|e| panic!("guest {}: {file} is not JSON: {e}", self.name))
    }

    /// The harness's messages and the scenario log's end, for a failing assertion's message.
    pub fn context(&self) -> String {
        let tail: Vec<&str> = self.log.lines().rev().take(60).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        format!(
            "--- scripts/guest {}:\n{}\n--- scenario log (end):\n{}",
            self.name,
            self.harness,
            tail.join("\n")
        )
    }

    /// Fail the test unless the scenario ended with status 0.
    pub fn assert_ok(&self) {
        assert_eq!(
            self.status,
            0,
            "guest scenario {} failed\n{}",
            self.name,
            self.context()
        );
    }
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The readlab binary the guest carries (and its host side runs): `READLAB_GUEST_BIN` when set
/// (scripts/test sets it to a copy of the default build, so the MPI build it makes meanwhile
/// in the same target/ cannot swap the binary under a running scenario), else this build's.
pub fn readlab_bin() -> std::path::PathBuf {
    std::env::var_os("READLAB_GUEST_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_readlab").into())
}

/// Boot the guest for `tests/guest/NAME.sh` with this build of readlab and wait for it to end.
pub fn run(name: &str) -> Guest {
    let _one = ONE_GUEST.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new("bash")
        .arg(repo().join("scripts/guest"))
        .arg(name)
        .env("READLAB_BIN", readlab_bin())
        .output()
        .expect("start scripts/guest");
    let dir = repo().join("target/guest/out").join(name).join("results");
    let log = std::fs::read_to_string(dir.join("scenario.log")).unwrap_or_default();
    Guest {
        name: name.to_string(),
        dir,
        status: out.status.code().unwrap_or(-1),
        harness: String::from_utf8_lossy(&out.stderr).into_owned(),
        log,
    }
}
