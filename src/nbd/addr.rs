//! Where NBD traffic goes: TCP `host:port` or a Unix socket, the `nbd://` and `nbd+unix://` URLs
//! that name an export (as libnbd writes them), and the connected stream with TCP_NODELAY set.

use crate::error::{Error, Result};
use std::io::{self, IoSlice, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;

/// The NBD port IANA reserved; the default of `nbd://host`.
pub const DEFAULT_PORT: u16 = 10809;

/// A socket address: TCP `host:port` or a Unix socket path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    Tcp(String),
    Unix(PathBuf),
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Tcp(a) => write!(f, "{a}"),
            Address::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

impl Address {
    /// A listen address: `host:port` (port 0 picks a free one), `unix:PATH`, or a path (with a `/`).
    pub fn parse_listen(s: &str) -> Result<Address> {
        if let Some(p) = s.strip_prefix("unix:") {
            if p.is_empty() {
                return Err(Error::invalid(
                    "unix: needs a socket path, e.g. unix:/tmp/readlab.sock",
                ));
            }
            return Ok(Address::Unix(p.into()));
        }
        if s.contains('/') {
            return Ok(Address::Unix(s.into()));
        }
        let (host, port) = s.rsplit_once(':').ok_or_else(|| {
            Error::invalid(format!(
                "'{s}' is not host:port (e.g. 127.0.0.1:10809) or unix:PATH"
            ))
        })?;
        port.parse::<u16>()
            .map_err(|_| Error::invalid(format!("'{port}' in '{s}' is not a port number")))?;
        if host.is_empty() {
            return Err(Error::invalid(format!(
                "'{s}' has no host; use e.g. 127.0.0.1:{port}"
            )));
        }
        Ok(Address::Tcp(s.into()))
    }

    /// Connect, with TCP_NODELAY on a TCP socket.
    pub fn connect(&self) -> io::Result<Stream> {
        self.connect_within(None)
    }

    /// Connect, giving up on each of the host's addresses after `timeout` (a host that drops
    /// the connection attempt would otherwise hold the caller for minutes).
    pub fn connect_within(&self, timeout: Option<std::time::Duration>) -> io::Result<Stream> {
        match self {
            Address::Tcp(a) => {
                let s = match timeout {
                    None => TcpStream::connect(a.as_str())?,
                    Some(t) => {
                        use std::net::ToSocketAddrs;
                        let mut last = None;
                        let mut got = None;
                        for sa in a.as_str().to_socket_addrs()? {
                            match TcpStream::connect_timeout(&sa, t) {
                                Ok(s) => {
                                    got = Some(s);
                                    break;
                                }
                                Err(e) => last = Some(e),
                            }
                        }
                        match (got, last) {
                            (Some(s), _) => s,
                            (None, Some(e)) => return Err(e),
                            (None, None) => {
                                return Err(io::Error::new(
                                    io::ErrorKind::NotFound,
                                    format!("{a}: the host name has no address"),
                                ));
                            }
                        }
                    }
                };
                s.set_nodelay(true)?;
                Ok(Stream::Tcp(s))
            }
            Address::Unix(p) => Ok(Stream::Unix(UnixStream::connect(p)?)),
        }
    }
}

/// An NBD URL: `nbd://HOST[:PORT][/EXPORT]` or `nbd+unix:///EXPORT?socket=PATH`, either with
/// `netns=NAME` in its query (readlab's own key): connect from inside network namespace NAME
/// (`ip netns`), e.g. to a server that runs in another namespace joined to it by a veth pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NbdUrl {
    pub address: Address,
    pub export: String,
    pub netns: Option<String>,
}

impl std::fmt::Display for NbdUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.address {
            Address::Tcp(a) => write!(f, "nbd://{a}/{}", self.export)?,
            Address::Unix(p) => write!(f, "nbd+unix:///{}?socket={}", self.export, p.display())?,
        }
        match (&self.netns, &self.address) {
            (Some(n), Address::Tcp(_)) => write!(f, "?netns={n}"),
            (Some(n), Address::Unix(_)) => write!(f, "&netns={n}"),
            (None, _) => Ok(()),
        }
    }
}

impl NbdUrl {
    /// Whether `s` is written as an NBD URL (then it is parsed as one, never as a path).
    pub fn is_url(s: &str) -> bool {
        ["nbd://", "nbd+unix://", "nbds://", "nbds+unix://"]
            .iter()
            .any(|p| s.starts_with(p))
    }

    /// The URL naming the server alone (`nbd://10.213.0.1:10809/disk`): how people see the
    /// target. The network namespace it is reached from is left out, a throwaway name that
    /// says nothing about what was read.
    pub fn server(&self) -> String {
        NbdUrl {
            netns: None,
            ..self.clone()
        }
        .to_string()
    }

    /// Connect to the server (from inside the URL's network namespace, if it names one).
    pub fn connect(&self) -> io::Result<Stream> {
        self.connect_timeout(None)
    }

    /// [`NbdUrl::connect`], giving up after `timeout` per address.
    pub fn connect_within(&self, timeout: std::time::Duration) -> io::Result<Stream> {
        self.connect_timeout(Some(timeout))
    }

    fn connect_timeout(&self, timeout: Option<std::time::Duration>) -> io::Result<Stream> {
        match &self.netns {
            Some(ns) => crate::netns::within(ns, || self.address.connect_within(timeout)),
            None => self.address.connect_within(timeout),
        }
    }

    /// The same URL connecting from inside network namespace `netns`.
    pub fn with_netns(mut self, netns: &str) -> Result<NbdUrl> {
        crate::netns::check_name(netns)?;
        self.netns = Some(netns.to_string());
        Ok(self)
    }

    pub fn parse(s: &str) -> Result<NbdUrl> {
        let bad = |why: &str| {
            Error::invalid(format!(
                "'{s}': {why}; write nbd://HOST[:PORT][/EXPORT] or nbd+unix:///EXPORT?socket=PATH \
                 (either may end with netns=NAME in its query)"
            ))
        };
        if s.starts_with("nbds://") || s.starts_with("nbds+unix://") {
            return Err(Error::invalid(format!(
                "'{s}': nbds:// is NBD over TLS, which readlab does not speak; {NO_TLS} and \
                 write the URL with nbd:// (nbd+unix://)"
            )));
        }
        let netns_of = |query: &str| -> Result<Option<String>> {
            match query.split('&').find_map(|kv| kv.strip_prefix("netns=")) {
                Some(n) => crate::netns::check_name(n)
                    .map(|()| Some(n.to_string()))
                    .map_err(|m| bad(&m.to_string())),
                None => Ok(None),
            }
        };
        if let Some(rest) = s.strip_prefix("nbd+unix://") {
            let (path, query) = rest.split_once('?').ok_or_else(|| bad("no ?socket=PATH"))?;
            check_query(s, query, true, &bad)?;
            let host_and_export = path;
            let export = match host_and_export.split_once('/') {
                Some(("", e)) => e.to_string(),
                Some(_) => return Err(bad("a Unix socket URL has no host")),
                None if host_and_export.is_empty() => String::new(),
                None => return Err(bad("a Unix socket URL has no host")),
            };
            let socket = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("socket="))
                .filter(|p| !p.is_empty())
                .ok_or_else(|| bad("no socket=PATH in the query"))?;
            check_export(&export).map_err(|m| bad(&m.to_string()))?;
            return Ok(NbdUrl {
                address: Address::Unix(socket.into()),
                export,
                netns: netns_of(query)?,
            });
        }
        let rest = s
            .strip_prefix("nbd://")
            .ok_or_else(|| bad("not an NBD URL"))?;
        let (rest, netns) = match rest.split_once('?') {
            Some((r, q)) => {
                check_query(s, q, false, &bad)?;
                (r, netns_of(q)?)
            }
            None => (rest, None),
        };
        let (authority, export) = match rest.split_once('/') {
            Some((a, e)) => (a, e.to_string()),
            None => (rest, String::new()),
        };
        if authority.is_empty() {
            return Err(bad("no host"));
        }
        check_export(&export).map_err(|m| bad(&m.to_string()))?;
        // A user name (or user:password) before the host: readlab speaks neither TLS nor
        // authentication, and the host must never be looked up with it attached.
        if let Some((user, _)) = authority.rsplit_once('@') {
            return Err(bad(&format!(
                "'{user}@' is a user name, which readlab does not use (it speaks neither TLS \
                 nor authentication); drop it"
            )));
        }
        // [v6]:port, [v6], host:port, host
        let has_port = if let Some(end) = authority.strip_prefix('[') {
            let close = end.find(']').ok_or_else(|| bad("unclosed [ in the host"))?;
            end[close + 1..].starts_with(':')
        } else {
            if authority.matches(':').count() > 1 {
                return Err(bad(&format!(
                    "an IPv6 address goes in brackets: nbd://[{authority}]/"
                )));
            }
            authority.contains(':')
        };
        let address = if has_port {
            let (_, port) = authority.rsplit_once(':').unwrap();
            let port = port
                .parse::<u16>()
                .map_err(|_| bad("the port is not a number"))?;
            if port == 0 {
                return Err(bad("port 0 is no server's port"));
            }
            authority.to_string()
        } else {
            format!("{authority}:{DEFAULT_PORT}")
        };
        Ok(NbdUrl {
            address: Address::Tcp(address),
            export,
            netns,
        })
    }
}

/// What readlab asks of a server that speaks TLS.
const NO_TLS: &str =
    "serve the export without TLS (nbdkit --tls=off, qemu-nbd without --tls-creds)";

/// The keys of a URL's query, the same for both forms: `socket` (Unix only) and `netns`; a TLS
/// key (`tls=require`, `tls-certificates=…`) is refused for what it asks, anything else as
/// unknown (in the URL's usual message, `bad`).
fn check_query(url: &str, query: &str, unix: bool, bad: &dyn Fn(&str) -> Error) -> Result<()> {
    for kv in query.split('&').filter(|kv| !kv.is_empty()) {
        let key = kv.split_once('=').map_or(kv, |(k, _)| k);
        match key {
            "netns" => {}
            "socket" if unix => {}
            k if k.starts_with("tls") => {
                return Err(Error::invalid(format!(
                    "'{url}': '{kv}' asks for TLS, which readlab does not speak; {NO_TLS} and \
                     drop the key"
                )));
            }
            k => {
                return Err(bad(&format!(
                    "'{k}' is not a query key readlab knows ({} takes {}netns=NAME)",
                    if unix { "nbd+unix://" } else { "nbd://" },
                    if unix { "socket=PATH and " } else { "" }
                )));
            }
        }
    }
    Ok(())
}

/// An export name as a URL writes it: every `%` starts an escape of two hex digits (a `%ZZ`
/// would reach the server as the three characters, naming an export nobody meant), and the
/// name fits the protocol's limit.
fn check_export(export: &str) -> Result<()> {
    let b = export.as_bytes();
    for (i, _) in export.match_indices('%') {
        let hex = b.get(i + 1..i + 3);
        if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
            let shown: String = export[i..].chars().take(3).collect();
            return Err(Error::invalid(format!(
                "'{shown}' in the export name is not a percent escape (% and two hex digits; \
                 %25 is a '%')"
            )));
        }
    }
    if export.len() > super::proto::MAX_EXPORT_NAME {
        return Err(Error::invalid(format!(
            "the export name is {} bytes long; NBD allows at most {}",
            export.len(),
            super::proto::MAX_EXPORT_NAME
        )));
    }
    Ok(())
}

/// A target as people see it: an NBD URL by its server ([`NbdUrl::server`]), anything else as
/// it is written.
pub fn shown(target: &str) -> String {
    match NbdUrl::is_url(target).then(|| NbdUrl::parse(target)) {
        Some(Ok(u)) => u.server(),
        _ => target.to_string(),
    }
}

/// A connected socket: TCP or Unix.
#[derive(Debug)]
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Stream {
    pub fn try_clone(&self) -> io::Result<Stream> {
        Ok(match self {
            Stream::Tcp(s) => Stream::Tcp(s.try_clone()?),
            Stream::Unix(s) => Stream::Unix(s.try_clone()?),
        })
    }

    /// End both directions: a thread blocked reading it wakes up.
    pub fn shutdown(&self) {
        let _ = match self {
            Stream::Tcp(s) => s.shutdown(std::net::Shutdown::Both),
            Stream::Unix(s) => s.shutdown(std::net::Shutdown::Both),
        };
    }

    pub fn set_read_timeout(&self, d: Option<std::time::Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(d),
            Stream::Unix(s) => s.set_read_timeout(d),
        }
    }

    pub fn set_write_timeout(&self, d: Option<std::time::Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(d),
            Stream::Unix(s) => s.set_write_timeout(d),
        }
    }

    /// Receive what has arrived without blocking: `WouldBlock` when nothing has.
    pub fn recv_nowait(&self, buf: &mut [u8]) -> io::Result<usize> {
        rustix::net::recv(self, buf, rustix::net::RecvFlags::DONTWAIT)
            .map(|(n, _)| n)
            .map_err(io::Error::from)
    }

    /// Receive by busy polling for up to `budget`: the thread spins on the socket instead of
    /// sleeping in the kernel, so neither the sleep nor the wake-up of an idle CPU is in the
    /// latency of an answer that comes within the budget; past it, the thread blocks as usual
    /// (a crowded machine, or a peer with nothing to say, does not get a spinning core); it
    /// yields between polls, so a peer waiting for this core runs first.
    pub fn recv_spinning(&self, buf: &mut [u8], budget: std::time::Duration) -> io::Result<usize> {
        let start = std::time::Instant::now();
        loop {
            match self.recv_nowait(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if start.elapsed() >= budget {
                        return (&*self).read(buf);
                    }
                    // Give the core to anything else runnable here (on a crowded machine, the
                    // peer this thread waits for); on an idle one this returns at once.
                    std::thread::yield_now()
                }
                r => return r,
            }
        }
    }

    /// TCP_NODELAY (nothing to do on a Unix socket).
    pub fn set_nodelay(&self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nodelay(true),
            Stream::Unix(_) => Ok(()),
        }
    }
}

impl Read for &Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => (&*s).read(buf),
            Stream::Unix(s) => (&*s).read(buf),
        }
    }
}

impl Write for &Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => (&*s).write(buf),
            Stream::Unix(s) => (&*s).write(buf),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => (&*s).write_vectored(bufs),
            Stream::Unix(s) => (&*s).write_vectored(bufs),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&*self).read(buf)
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self).write(buf)
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        (&*self).write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsFd for Stream {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Stream::Tcp(s) => s.as_fd(),
            Stream::Unix(s) => s.as_fd(),
        }
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        self.as_fd().as_raw_fd()
    }
}

/// A listening socket: TCP or Unix (the socket file is removed when it is dropped).
#[derive(Debug)]
pub enum Listener {
    Tcp(TcpListener),
    Unix(UnixListener, PathBuf),
}

impl Listener {
    /// Bind `addr`. A stale Unix socket file (nobody listening) is replaced; a live one is not.
    pub fn bind(addr: &Address) -> io::Result<Listener> {
        match addr {
            Address::Tcp(a) => Ok(Listener::Tcp(TcpListener::bind(a.as_str())?)),
            Address::Unix(p) => {
                if p.exists() {
                    use std::os::unix::fs::FileTypeExt;
                    let sock = std::fs::symlink_metadata(p)?.file_type().is_socket();
                    if !sock || UnixStream::connect(p).is_ok() {
                        return Err(io::Error::new(
                            io::ErrorKind::AddrInUse,
                            format!("{} exists (and is not a stale socket)", p.display()),
                        ));
                    }
                    std::fs::remove_file(p)?;
                }
                Ok(Listener::Unix(UnixListener::bind(p)?, p.clone()))
            }
        }
    }

    /// The address bound (with the real port when port 0 was asked for).
    pub fn local_addr(&self) -> Address {
        match self {
            Listener::Tcp(l) => Address::Tcp(
                l.local_addr()
                    .map(|a| a.to_string())
                    .unwrap_or_else(|_| "?".into()),
            ),
            Listener::Unix(_, p) => Address::Unix(p.clone()),
        }
    }

    /// Accept one connection (TCP_NODELAY set).
    pub fn accept(&self) -> io::Result<Stream> {
        match self {
            Listener::Tcp(l) => {
                let (s, _) = l.accept()?;
                s.set_nodelay(true)?;
                Ok(Stream::Tcp(s))
            }
            Listener::Unix(l, _) => Ok(Stream::Unix(l.accept()?.0)),
        }
    }

    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Listener::Tcp(l) => l.set_nonblocking(on),
            Listener::Unix(l, _) => l.set_nonblocking(on),
        }
    }
}

impl AsFd for Listener {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Listener::Tcp(l) => l.as_fd(),
            Listener::Unix(l, _) => l.as_fd(),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_like_libnbd_writes_them() {
        let u = NbdUrl::parse("nbd://127.0.0.1:10810/disk").unwrap();
        assert_eq!(u.address, Address::Tcp("127.0.0.1:10810".into()));
        assert_eq!(u.export, "disk");
        let u = NbdUrl::parse("nbd://localhost").unwrap();
        assert_eq!(u.address, Address::Tcp("localhost:10809".into()));
        assert_eq!(u.export, "");
        let u = NbdUrl::parse("nbd://[::1]:99/").unwrap();
        assert_eq!(u.address, Address::Tcp("[::1]:99".into()));
        let u = NbdUrl::parse("nbd://[::1]").unwrap();
        assert_eq!(u.address, Address::Tcp("[::1]:10809".into()));
        let u = NbdUrl::parse("nbd+unix:///e?socket=/tmp/s.sock").unwrap();
        assert_eq!(u.address, Address::Unix("/tmp/s.sock".into()));
        assert_eq!(u.export, "e");
        let u = NbdUrl::parse("nbd+unix://?socket=/tmp/s").unwrap();
        assert_eq!(u.export, "");
        assert_eq!(u.to_string(), "nbd+unix:///?socket=/tmp/s");
        assert_eq!(NbdUrl::parse("nbd://h/a%20b").unwrap().export, "a%20b");
        for bad in [
            "nbd://",
            "nbd://h:port/x",
            "nbd://127.0.0.1:0/",
            "nbd://::1/",
            "nbd://h/%ZZ",
            "nbd://h/x%2",
            "nbd+unix:///%g0?socket=/s",
            &format!("nbd://h/{}", "e".repeat(4097)),
            "nbd+unix:///e",
            "nbd+unix://host/e?socket=/s",
            "http://x",
        ] {
            assert!(NbdUrl::parse(bad).is_err(), "{bad}");
        }
        assert!(NbdUrl::is_url("nbd://x") && !NbdUrl::is_url("/tmp/nbd://x"));
    }

    /// A user name is refused, never looked up as part of the host (`user@127.0.0.1`).
    #[test]
    fn a_user_name_in_the_url_is_refused_never_resolved() {
        for url in [
            "nbd://user@127.0.0.1:1/",
            "nbd://user:secret@127.0.0.1/e",
            "nbd://@localhost/",
            "nbd://u@[::1]:99/",
        ] {
            let e = NbdUrl::parse(url).unwrap_err().to_string();
            assert!(
                e.contains("user name") && e.contains("drop it"),
                "{url}: {e}"
            );
        }
        // An '@' in the export name is the export's business.
        let u = NbdUrl::parse("nbd://127.0.0.1:1/a@b").unwrap();
        assert_eq!(u.address, Address::Tcp("127.0.0.1:1".into()));
        assert_eq!(u.export, "a@b");
    }

    #[test]
    fn a_target_is_shown_by_its_server_never_its_namespace() {
        assert_eq!(
            shown("nbd://10.213.0.1:99/e?netns=rl3445_0c"),
            "nbd://10.213.0.1:99/e"
        );
        assert_eq!(
            shown("nbd://10.213.0.1?netns=rl1_0c"),
            "nbd://10.213.0.1:10809/"
        );
        assert_eq!(
            shown("nbd+unix:///e?socket=/s&netns=c"),
            "nbd+unix:///e?socket=/s"
        );
        assert_eq!(shown("/dev/loop3"), "/dev/loop3");
        assert_eq!(shown("nbd://"), "nbd://");
    }

    #[test]
    fn a_url_names_the_network_namespace_it_connects_from() {
        let u = NbdUrl::parse("nbd://10.213.0.1:99/e?netns=rl1_0c").unwrap();
        assert_eq!(u.address, Address::Tcp("10.213.0.1:99".into()));
        assert_eq!(u.export, "e");
        assert_eq!(u.netns.as_deref(), Some("rl1_0c"));
        assert_eq!(u.to_string(), "nbd://10.213.0.1:99/e?netns=rl1_0c");
        let u = NbdUrl::parse("nbd://h:1?netns=c").unwrap();
        assert_eq!((u.export.as_str(), u.netns.as_deref()), ("", Some("c")));
        let u = NbdUrl::parse("nbd+unix:///e?socket=/s&netns=c").unwrap();
        assert_eq!(u.netns.as_deref(), Some("c"));
        assert_eq!(u.to_string(), "nbd+unix:///e?socket=/s&netns=c");
        let u = NbdUrl::parse("nbd://h:1/")
            .unwrap()
            .with_netns("n")
            .unwrap();
        assert_eq!(u.to_string(), "nbd://h:1/?netns=n");
        assert_eq!(NbdUrl::parse(&u.to_string()).unwrap(), u);
        for tls in [
            "nbd://h:1/?tls=require",
            "nbd+unix:///?socket=/s&tls=require",
            "nbd+unix:///e?tls-certificates=/c&socket=/s",
            "nbds://h:1/",
            "nbds+unix:///?socket=/s",
        ] {
            assert!(NbdUrl::is_url(tls), "{tls}");
            let e = NbdUrl::parse(tls).unwrap_err().to_string();
            assert!(e.contains("TLS") && e.contains("--tls=off"), "{tls}: {e}");
        }
        for bad in ["nbd+unix:///?socket=/s&x=1", "nbd://h:1/?socket=/s"] {
            let e = NbdUrl::parse(bad).unwrap_err().to_string();
            assert!(e.contains("not a query key"), "{bad}: {e}");
        }
        for bad in [
            "nbd://h:1/?tls=on",
            "nbd://h:1/?netns=",
            "nbd://h:1/?netns=a/b",
        ] {
            assert!(NbdUrl::parse(bad).is_err(), "{bad}");
        }
        assert!(
            NbdUrl::parse("nbd://h:1/")
                .unwrap()
                .with_netns("../x")
                .is_err()
        );
    }

    #[test]
    fn listen_addresses() {
        assert_eq!(
            Address::parse_listen("127.0.0.1:0").unwrap(),
            Address::Tcp("127.0.0.1:0".into())
        );
        assert_eq!(
            Address::parse_listen("unix:/tmp/x").unwrap(),
            Address::Unix("/tmp/x".into())
        );
        assert_eq!(
            Address::parse_listen("/tmp/y.sock").unwrap(),
            Address::Unix("/tmp/y.sock".into())
        );
        assert!(Address::parse_listen("10809").is_err());
        assert!(Address::parse_listen(":10809").is_err());
        assert!(Address::parse_listen("h:x").is_err());
    }

    #[test]
    fn a_stale_unix_socket_is_replaced_and_removed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.sock");
        drop(std::os::unix::net::UnixListener::bind(&p).unwrap());
        assert!(p.exists(), "a dropped std listener leaves its file");
        let l = Listener::bind(&Address::Unix(p.clone())).unwrap();
        assert!(
            Listener::bind(&Address::Unix(p.clone())).is_err(),
            "live socket"
        );
        drop(l);
        assert!(!p.exists());
    }
}
