//! The networked studies' "remote" network: two network namespaces joined by a veth pair, made
//! with iproute2's `ip` (root only) and deleted by a guard however the study ends, optionally
//! delaying the server's packets with netem (iproute2's `tc`); and entering a
//! namespace for one socket, so that a client connects from inside the client namespace (an
//! address inside a namespace is never reached from the root namespace: it would be routed off the
//! machine).

use crate::error::{Error, Result};
use std::cell::Cell;
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

/// Where `ip netns` keeps its named namespaces.
pub const RUN_DIR: &str = "/var/run/netns";

/// The server's address in its namespace, and the client's in its own (one /30).
pub const SERVER_ADDR: &str = "10.213.0.1";
pub const CLIENT_ADDR: &str = "10.213.0.2";

/// The veth ends' name, the same in both namespaces (each namespace has its own links).
const LINK: &str = "rlveth0";

/// How a networked study's clients reach its servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// 127.0.0.1 in the root namespace.
    Loopback,
    /// Server and clients in two namespaces joined by a veth pair.
    Veth,
}

impl Network {
    /// The name results store (`NetTag.network`).
    pub fn tag(self) -> &'static str {
        match self {
            Network::Loopback => "loopback",
            Network::Veth => "netns-veth",
        }
    }

    /// `loopback` or `veth` (as on the command line; `netns-veth` too).
    pub fn parse(s: &str) -> Result<Network> {
        match s {
            "loopback" | "lo" => Ok(Network::Loopback),
            "veth" | "netns-veth" => Ok(Network::Veth),
            _ => Err(Error::invalid(format!(
                "unknown network '{s}'; use loopback or veth"
            ))),
        }
    }
}

/// A network namespace name `ip netns` accepts and readlab can open: letters, digits, `_.-`.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "'{name}' is not a network namespace name (letters, digits, '_', '.', '-'; \
             `ip netns list` shows them)"
        )))
    }
}

/// The file that names namespace `name`.
pub fn path(name: &str) -> PathBuf {
    Path::new(RUN_DIR).join(name)
}

/// Run `f` on a thread that has entered network namespace `name`: the sockets it creates belong
/// to that namespace for their whole life, whichever thread uses them later. The thread ends
/// with `f`, so no thread of the caller ever changes namespace.
pub fn within<T: Send>(name: &str, f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
    check_name(name).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let ns = std::fs::File::open(path(name)).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "network namespace '{name}' ({}): {e}; `ip netns list` shows the namespaces",
                path(name).display()
            ),
        )
    })?;
    std::thread::scope(|s| {
        s.spawn(move || {
            rustix::thread::move_into_link_name_space(
                ns.as_fd(),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )
            .map_err(|e| {
                let hint = if e == rustix::io::Errno::PERM {
                    " (entering a namespace needs root: CAP_SYS_ADMIN)"
                } else {
                    ""
                };
                io::Error::new(
                    io::Error::from(e).kind(),
                    format!("cannot enter network namespace '{name}': {e}{hint}"),
                )
            })?;
            f()
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// Run `ip ARGS`, its error output in the error.
fn ip(args: &[&str]) -> Result<()> {
    iproute2(
        "ip",
        args,
        "the veth network needs root and iproute2 (else use --network loopback)",
    )
}

/// Run `tc ARGS` (netem on the veth pair), its error output in the error.
fn tc(args: &[&str]) -> Result<()> {
    iproute2(
        "tc",
        args,
        "a netem delay needs root, iproute2's tc and the kernel's sch_netem",
    )
}

/// Run iproute2's `prog ARGS`; an error says what failed and `needs`.
fn iproute2(prog: &str, args: &[&str], needs: &str) -> Result<()> {
    let out = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| Error::Tool {
            message: format!("cannot run `{prog}` (iproute2): {e}"),
            needs: needs.into(),
        })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(Error::Tool {
            message: format!(
                "`{prog} {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
            needs: needs.into(),
        })
    }
}

/// The pid in a namespace name readlab made (`rl<pid>_<n>s`, `rl<pid>_<n>c`).
fn owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("rl")?;
    let (pid, rest) = rest.split_once('_')?;
    let n = rest.strip_suffix('s').or_else(|| rest.strip_suffix('c'))?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(pid) && digits(n))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Delete the namespaces an earlier readlab left behind (it crashed or was killed): those named
/// after a process that no longer runs.
fn clean_stale() {
    let Ok(dir) = std::fs::read_dir(RUN_DIR) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(pid) = owner(&name)
            && pid != std::process::id()
            && !Path::new("/proc").join(pid.to_string()).exists()
        {
            // Another run may be deleting it at the same moment: its failure is harmless.
            let _ = ip(&["netns", "del", &name]);
        }
    }
}

/// Two network namespaces joined by a veth pair: a server's (`SERVER_ADDR`) and its clients'
/// (`CLIENT_ADDR`), loopback up in both. Dropping it deletes both namespaces, and with them the
/// veth pair and its netem delay (a process still running inside keeps its namespace alive until
/// it exits).
#[derive(Debug)]
pub struct VethPair {
    pub server: String,
    pub client: String,
    made: Vec<String>,
    /// The netem delay on the server's end now, µs (0: no netem qdisc).
    netem_us: Cell<u64>,
}

impl VethPair {
    /// Make a pair named after this process (`rl<pid>_<n>s`, `rl<pid>_<n>c`), deleting stale
    /// ones of dead processes first. Needs root and `ip`.
    pub fn create() -> Result<VethPair> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        clean_stale();
        let base = format!(
            "rl{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut pair = VethPair {
            server: format!("{base}s"),
            client: format!("{base}c"),
            made: Vec::new(),
            netem_us: Cell::new(0),
        };
        for ns in [pair.server.clone(), pair.client.clone()] {
            ip(&["netns", "add", &ns])?;
            pair.made.push(ns);
        }
        let (s, c) = (pair.server.as_str(), pair.client.as_str());
        ip(&[
            "-n", s, "link", "add", LINK, "type", "veth", "peer", "name", LINK, "netns", c,
        ])?;
        for (ns, addr) in [(s, SERVER_ADDR), (c, CLIENT_ADDR)] {
            ip(&["-n", ns, "addr", "add", &format!("{addr}/30"), "dev", LINK])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
            ip(&["-n", ns, "link", "set", LINK, "up"])?;
        }
        Ok(pair)
    }

    /// Delay every packet the server sends by `us` µs with netem on the server's end of the pair
    /// (its replies: each request's round trip grows by `us`), or (0) remove the delay.
    pub fn set_netem(&self, us: u64) -> Result<()> {
        if us == self.netem_us.get() {
            return Ok(());
        }
        let s = self.server.as_str();
        if us == 0 {
            tc(&["-n", s, "qdisc", "del", "dev", LINK, "root"])?;
        } else {
            let delay = format!("{us}us");
            tc(&[
                "-n", s, "qdisc", "replace", "dev", LINK, "root", "netem", "delay", &delay,
            ])?;
        }
        self.netem_us.set(us);
        Ok(())
    }
}

impl Drop for VethPair {
    fn drop(&mut self) {
        for ns in self.made.drain(..) {
            let _ = ip(&["netns", "del", &ns]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(owner("rl123_0s"), Some(123));
        assert_eq!(owner("rl123_14c"), Some(123));
        for bad in [
            "rl123_0", "rl_0s", "rl12x_0s", "rlabc_1c", "xrl1_0s", "rl1_s",
        ] {
            assert_eq!(owner(bad), None, "{bad}");
        }
        assert!(check_name("rl1_0c").is_ok());
        for bad in ["", ".", "..", "a/b", "a b"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert_eq!(Network::parse("veth").unwrap().tag(), "netns-veth");
        assert_eq!(Network::parse("loopback").unwrap().tag(), "loopback");
        assert!(Network::parse("wifi").is_err());
    }

    /// Root and iproute2 are needed; without them the test fails, saying so.
    #[test]
    fn a_pair_is_made_reachable_from_inside_and_deleted_on_drop() {
        let pair = VethPair::create().expect("the veth network needs root and iproute2 here");
        let (s, c) = (pair.server.clone(), pair.client.clone());
        assert!(path(&s).exists() && path(&c).exists());
        // A listener in the server namespace, a connection from the client namespace.
        let l = within(&s, || std::net::TcpListener::bind((SERVER_ADDR, 0))).unwrap();
        let port = l.local_addr().unwrap().port();
        let conn = within(&c, || std::net::TcpStream::connect((SERVER_ADDR, port))).unwrap();
        let (_, peer) = l.accept().unwrap();
        assert_eq!(peer.ip().to_string(), CLIENT_ADDR);
        assert_eq!(conn.local_addr().unwrap().ip().to_string(), CLIENT_ADDR);
        // This thread never left its namespace: the server's address is not one of its own.
        assert!(std::net::TcpListener::bind((SERVER_ADDR, 0)).is_err());
        drop((conn, l));
        drop(pair);
        assert!(!path(&s).exists() && !path(&c).exists());
    }

    #[test]
    fn a_stale_pair_of_a_dead_process_is_deleted() {
        let mut child = Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = format!("rl{dead}_0s");
        ip(&["netns", "add", &stale]).expect("ip netns add needs root and iproute2 here");
        let pair = VethPair::create().unwrap();
        let left = path(&stale).exists();
        if left {
            let _ = ip(&["netns", "del", &stale]);
        }
        assert!(!left, "{stale} was left behind");
        drop(pair);
    }

    #[test]
    fn a_missing_namespace_is_an_error_naming_it() {
        let e = within("rl0_0c", || Ok(())).unwrap_err();
        assert!(e.to_string().contains("rl0_0c"), "{e}");
    }
}
