//! The `readlab serve` child process a networked study starts for each remote point: started on
//! port 0 (inside the server's network namespace when there is one) and its printed address read
//! back, stopped by PID with SIGTERM (killed if it lingers or is dropped), its JSON summary read.

use crate::error::{Error, Result};
use crate::netns::VethPair;
use crate::serve::ServeSummary;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Size of the null back end's export.
pub const NULL_SIZE: u64 = 1 << 30;

/// What a remote point's server serves and how.
#[derive(Debug, Clone)]
pub struct Served {
    /// A file or device, or None for zeros (`--null`).
    pub target: Option<PathBuf>,
    /// Read the target through the page cache (it takes no O_DIRECT).
    pub buffered: bool,
    pub model: &'static str,
    pub delay_us: u64,
    /// Server and client spin on their sockets for up to this many µs before sleeping.
    pub busy_poll_us: u32,
    /// Delay netem adds on the veth pair to every packet from the server, µs (veth only).
    pub netem_us: u64,
}

/// A `readlab serve` child process; killed if dropped without [`ServerProcess::stop`].
pub struct ServerProcess {
    child: Child,
    json: PathBuf,
    pub url: String,
}

/// How long a server may take to print its address, and to stop.
const START_TIMEOUT: Duration = Duration::from_secs(10);
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

impl ServerProcess {
    /// Start `readlab serve` on port 0 and wait for the address it prints: on 127.0.0.1, or
    /// inside the pair's server namespace (`ip netns exec`), its URL then connecting from inside
    /// the client namespace.
    pub fn start(s: &Served, pair: Option<&VethPair>) -> Result<ServerProcess> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let exe = std::env::current_exe()
            .map_err(|e| Error::invalid(format!("cannot find readlab's own executable: {e}")))?;
        let json = std::env::temp_dir().join(format!(
            "readlab-serve-{}-{}.json",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let mut cmd = match pair {
            Some(p) => {
                // `ip netns exec` execs readlab in place: the child's PID is the server's.
                let mut c = Command::new("ip");
                c.args(["netns", "exec", &p.server]).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        let listen = match pair {
            Some(_) => format!("{}:0", crate::netns::SERVER_ADDR),
            None => "127.0.0.1:0".into(),
        };
        cmd.arg("serve");
        match &s.target {
            Some(t) => {
                cmd.arg(t);
                if s.buffered {
                    cmd.arg("--buffered");
                }
            }
            None => {
                cmd.arg("--null").arg(NULL_SIZE.to_string());
            }
        }
        cmd.args(["--listen", &listen, "--model", s.model, "-q"])
            .arg("--delay")
            .arg(format!("{}us", s.delay_us))
            .arg("--json")
            .arg(&json);
        if s.busy_poll_us > 0 {
            cmd.arg(format!("--busy-poll={}us", s.busy_poll_us));
        }
        if s.model == "uring" {
            cmd.arg("--threads").arg(crate::env::cpus().to_string());
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::io(&exe, "cannot start readlab serve", e))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut line = String::new();
            let _ = r.read_line(&mut line);
            let _ = tx.send(line);
            // Keep reading so the server never blocks on a full pipe.
            let _ = std::io::copy(&mut r, &mut std::io::sink());
        });
        let mut srv = ServerProcess {
            child,
            json,
            url: String::new(),
        };
        let line = rx.recv_timeout(START_TIMEOUT).unwrap_or_default();
        match address_of(&line) {
            Some(a) => {
                srv.url = match pair {
                    Some(p) => format!("nbd://{a}/?netns={}", p.client),
                    None => format!("nbd://{a}/"),
                };
                Ok(srv)
            }
            None => {
                srv.kill();
                let mut err = String::new();
                if let Some(mut e) = srv.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                Err(Error::invalid(format!(
                    "readlab serve did not start: {}",
                    err.trim().lines().last().unwrap_or("no address printed")
                )))
            }
        }
    }

    /// Stop it with SIGTERM (SIGKILL if it lingers) and read its summary.
    pub fn stop(mut self) -> Result<ServeSummary> {
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let end = Instant::now() + STOP_TIMEOUT;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(5)),
                _ => {
                    self.kill();
                    return Err(Error::invalid("readlab serve did not stop on SIGTERM"));
                }
            }
        }
        let text = std::fs::read_to_string(&self.json)
            .map_err(|e| Error::io(&self.json, "cannot read the server's summary", e))?;
        serde_json::from_str(&text)
            .map_err(|e| Error::invalid(format!("the server's summary is not readable: {e}")))
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
        let _ = std::fs::remove_file(&self.json);
    }
}

/// The address in `readlab serve: listening on ADDR — …`.
fn address_of(line: &str) -> Option<&str> {
    let rest = line.split("listening on ").nth(1)?;
    rest.split_whitespace().next().filter(|a| a.contains(':'))
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_the_printed_address() {
        let l = "readlab serve: listening on 127.0.0.1:40123 — export '', 1 B, read-only\n";
        assert_eq!(super::address_of(l), Some("127.0.0.1:40123"));
        assert_eq!(super::address_of("error: no\n"), None);
        assert_eq!(super::address_of(""), None);
    }
}
