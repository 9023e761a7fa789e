//! One client connection in transmission: connect and negotiate an export within one deadline,
//! then either the engine pipelines requests on its stream, or [`Connection::read_at`] reads one
//! range at a time (for the few reads a source makes before a run: the prepared image's
//! identity). A connection can be aborted from another thread ([`Connection::abort`]): its
//! socket is shut down, so a worker blocked on it wakes up and says why. Until transmission, a
//! signal ends every wait within a fraction of a second, saying where it was
//! ([`super::wait::Cut`]: "connecting to …", "negotiating with … (waiting for …)").

use super::addr::{NbdUrl, Stream};
use super::handshake::{Advertised, Refusal, client_handshake};
use super::proto::*;
use super::wait::{Deadline, cut, cut_of};
use std::io::{self, Read, Write};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long connecting and the whole negotiation may take before the server is given up on; also
/// the bound on each of the few reads made before a run (the prepared image's identity).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A negotiated connection to one export.
#[derive(Debug)]
pub struct Connection {
    pub url: NbdUrl,
    pub stream: Stream,
    pub advertised: Advertised,
    /// Why readlab closed it under its user ([`Connection::abort`]), if it did.
    aborted: OnceLock<String>,
}

/// The server accepted the connection but sent nothing (no greeting) before the deadline: the
/// usual sign of a server at its client limit, which leaves new connections in its accept queue.
#[derive(Debug)]
pub struct NoGreeting(pub Duration);

impl std::fmt::Display for NoGreeting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the server accepted the connection but sent no greeting within {} s: it may be at \
             its client limit (qemu-nbd serves one client at a time unless started with -e N)",
            self.0.as_secs()
        )
    }
}

impl std::error::Error for NoGreeting {}

/// Whether `e` is a [`NoGreeting`].
pub fn is_no_greeting(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|r| r.is::<NoGreeting>())
}

impl Connection {
    /// Connect to `url` and negotiate its export (listing the server's exports first when
    /// `list`), all within [`HANDSHAKE_TIMEOUT`]. A server that accepts but never greets fails
    /// with a [`NoGreeting`] inside the error ([`is_no_greeting`]).
    pub fn open(url: &NbdUrl, list: bool) -> io::Result<Connection> {
        let until = Instant::now() + HANDSHAKE_TIMEOUT;
        let server = url.server();
        // From inside the URL's network namespace, if it names one.
        let connect = || super::wait::connect(&url.address, until);
        let stream = match &url.netns {
            Some(ns) => crate::netns::within(ns, connect),
            None => connect(),
        }
        .map_err(|e| match cut_of(&e) {
            Some(c) => cut(format!("connecting to {server} ({})", c.0)),
            None => e,
        })?;
        let mut d = Deadline::new(&stream, until);
        let advertised = match client_handshake(&mut d, &url.export, list) {
            Ok(a) => a,
            Err(e) if cut_of(&e).is_some() => {
                let c = cut_of(&e).unwrap();
                return Err(cut(format!("negotiating with {server} ({})", c.0)));
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut && d.received() == 0 => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    NoGreeting(HANDSHAKE_TIMEOUT),
                ));
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    Refusal(format!(
                        "the server did not finish the negotiation within {} s (readlab was {}); \
                         see the server's log",
                        HANDSHAKE_TIMEOUT.as_secs(),
                        d.waiting()
                    )),
                ));
            }
            Err(e) => return Err(e),
        };
        // The engine sets its own bounds in transmission.
        stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT))?;
        stream.set_write_timeout(Some(HANDSHAKE_TIMEOUT))?;
        Ok(Connection {
            url: url.clone(),
            stream,
            advertised,
            aborted: OnceLock::new(),
        })
    }

    /// A connection already negotiated by other means (tests drive a scripted server).
    pub fn new(url: NbdUrl, stream: Stream, advertised: Advertised) -> Connection {
        Connection {
            url,
            stream,
            advertised,
            aborted: OnceLock::new(),
        }
    }

    pub fn size(&self) -> u64 {
        self.advertised.export.size
    }

    /// Read `buf.len()` bytes at `offset` with one request (nothing else may be in flight),
    /// waiting at most [`HANDSHAKE_TIMEOUT`] for each part of the reply. An error reply is an
    /// OS error of its errno (the connection goes on); anything else (a timeout, a broken
    /// reply) leaves the connection unusable.
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut s = Deadline::new(&self.stream, Instant::now() + HANDSHAKE_TIMEOUT);
        let len = buf.len();
        let server = self.url.server();
        let timeout = |e: io::Error| {
            if let Some(c) = cut_of(&e) {
                cut(format!(
                    "reading {len} B at offset {offset} of {server} before the run ({})",
                    c.0
                ))
            } else if e.kind() == io::ErrorKind::UnexpectedEof {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection before its reply was whole",
                )
            } else if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::TimedOut {
                io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "no reply to a {len} B read at offset {offset} within {} s: the server \
                         stopped answering",
                        HANDSHAKE_TIMEOUT.as_secs()
                    ),
                )
            } else {
                e
            }
        };
        s.write_all(&Request::read(0, offset, len as u32).encode())
            .map_err(&timeout)?;
        let mut h = [0u8; SIMPLE_REPLY_LEN];
        s.read_exact(&mut h).map_err(&timeout)?;
        let r = SimpleReply::decode(&h).map_err(|m| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("not a simple reply ({m})"),
            )
        })?;
        if r.cookie != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("reply to cookie {} when 0 was asked", r.cookie),
            ));
        }
        if r.error != 0 {
            return Err(io::Error::from_raw_os_error(errno_of_error(r.error)));
        }
        s.read_exact(buf).map_err(timeout)
    }

    /// Say goodbye (`NBD_CMD_DISC`, never waiting for room to send it) and close the
    /// connection.
    pub fn disconnect(&self) {
        let r = Request {
            flags: 0,
            kind: CMD_DISC,
            cookie: 0,
            offset: 0,
            len: 0,
        };
        let _ = rustix::net::send(&self.stream, &r.encode(), rustix::net::SendFlags::DONTWAIT);
        self.stream.shutdown();
    }

    /// Close the connection under whoever uses it, saying `why`: a thread blocked on it wakes
    /// up with an error ([`Connection::aborted`] tells it why). The first reason stays.
    pub fn abort(&self, why: &str) {
        let _ = self.aborted.set(why.to_string());
        self.stream.shutdown();
    }

    /// Why readlab aborted the connection, if it did.
    pub fn aborted(&self) -> Option<&str> {
        self.aborted.get().map(String::as_str)
    }
}
