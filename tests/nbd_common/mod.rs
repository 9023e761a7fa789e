//! Helpers of the NBD end-to-end tests: real servers (readlab serve, nbdkit) on 127.0.0.1 or a
//! Unix socket, each stopped by its PID when dropped, and the tools they are checked with.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The tool must be installed (scripts/test-deps installs it): a missing one fails the test.
pub fn need(tool: &str) {
    let ok = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{tool} is not installed; run scripts/test-deps (Debian: nbdkit, libnbd-bin, fio)"
    );
}

/// A server process, killed by PID and reaped when dropped.
pub struct Server {
    pub child: Child,
    /// `nbd://127.0.0.1:PORT/` or `nbd+unix:///?socket=PATH`.
    pub url: String,
    pub out: Vec<String>,
}

impl Server {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Send SIGTERM and wait (bounded) for the exit code.
    pub fn terminate(mut self) -> Option<i32> {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(st)) = self.child.try_wait() {
                return st.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `readlab serve ARGS --listen 127.0.0.1:0`: waits for the line naming the bound address.
pub fn readlab_serve(args: &[&str]) -> Server {
    serve_under(&[], args)
}

/// `[PREFIX…] readlab serve ARGS --listen 127.0.0.1:0 -q` (PREFIX: e.g. `prlimit --nofile=64`),
/// killed when dropped.
#[allow(dead_code)]
pub fn serve_under(prefix: &[&str], args: &[&str]) -> Server {
    let (program, pre): (&str, &[&str]) = match prefix.split_first() {
        Some((p, rest)) => (p, rest),
        None => (env!("CARGO_BIN_EXE_readlab"), &[]),
    };
    let mut cmd = Command::new(program);
    cmd.args(pre);
    if !prefix.is_empty() {
        cmd.arg(env!("CARGO_BIN_EXE_readlab"));
    }
    let mut child = cmd
        .arg("serve")
        .args(args)
        .args(["--listen", "127.0.0.1:0", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start readlab serve");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("readlab serve printed its address within 10 s");
    let addr = line
        .split_whitespace()
        .find(|w| w.starts_with("127.0.0.1:"))
        .unwrap_or_else(|| panic!("no address in: {line}"))
        .to_string();
    Server {
        child,
        url: format!("nbd://{addr}/"),
        out: vec![line],
    }
}

/// `nbdkit -f -U SOCKET PLUGIN ARGS`: waits for the socket to appear.
pub fn nbdkit(dir: &Path, plugin_args: &[&str]) -> Server {
    need("nbdkit");
    let sock: PathBuf = dir.join(format!("nbdkit-{}.sock", plugin_args[0]));
    let child = Command::new("nbdkit")
        .args(["-f", "--exit-with-parent", "-U"])
        .arg(&sock)
        .args(plugin_args)
        .stdout(Stdio::null())
        .spawn()
        .expect("start nbdkit");
    let t = Instant::now();
    while !sock.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "nbdkit did not create {}",
            sock.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Server {
        child,
        url: format!("nbd+unix:///?socket={}", sock.display()),
        out: Vec::new(),
    }
}

/// `host:port` of an `nbd://host:port/` URL.
pub fn host_port(url: &str) -> String {
    url.trim_start_matches("nbd://")
        .trim_end_matches('/')
        .to_string()
}
