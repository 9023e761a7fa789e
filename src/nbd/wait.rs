//! Waiting on a socket without missing a signal: connecting, and reading or writing a handshake
//! or the reads before a run, in slices of at most [`crate::interrupt::SLICE`], each ended by a
//! look at the process's interrupt flag and at the deadline (a blocking read with a socket
//! timeout is restarted by the signal and waits its whole timeout again). A wait a signal cut
//! short fails with a [`Cut`] saying what it was waiting for: what the client last sent says
//! what it waits for ([`Deadline`]).

use super::addr::{Address, Stream};
use super::proto::{IHAVEOPT, REQUEST_MAGIC, opt_name};
use crate::interrupt;
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Instant;

/// A wait a signal (SIGINT, SIGTERM) cut short: what it was doing, e.g. "waiting for the
/// server's reply to NBD_OPT_GO".
#[derive(Debug)]
pub struct Cut(pub String);

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "interrupted while {}", self.0)
    }
}

impl std::error::Error for Cut {}

/// The [`Cut`] inside `e`, if a signal ended the wait.
pub fn cut_of(e: &io::Error) -> Option<&Cut> {
    e.get_ref().and_then(|r| r.downcast_ref::<Cut>())
}

/// An error saying the wait for `what` was cut short.
pub fn cut(what: impl Into<String>) -> io::Error {
    io::Error::other(Cut(what.into()))
}

/// Wait until `fd` is ready for `flags`, in slices: a [`Cut`] once a signal arrived (saying
/// `waiting`) and the socket is still not ready, `TimedOut` once `until` has passed.
fn ready(fd: impl AsFd, flags: PollFlags, until: Instant, waiting: &str) -> io::Result<()> {
    loop {
        if interrupt::requested() {
            // What is already there is taken (the wait was over): the signal cuts the next wait.
            return match poll(&fd, flags, std::time::Duration::ZERO)? {
                true => Ok(()),
                false => Err(cut(waiting)),
            };
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        if poll(&fd, flags, left.min(interrupt::SLICE))? {
            return Ok(());
        }
    }
}

/// Whether `fd` became ready for `flags` within `wait` (false when a signal interrupted).
fn poll(fd: impl AsFd, flags: PollFlags, wait: std::time::Duration) -> io::Result<bool> {
    let ts = Timespec {
        tv_sec: wait.as_secs() as _,
        tv_nsec: wait.subsec_nanos() as _,
    };
    let mut fds = [PollFd::new(&fd, flags)];
    match rustix::event::poll(&mut fds, Some(&ts)) {
        Ok(n) => Ok(n > 0),
        Err(Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Connect to `addr` by `until` (TCP_NODELAY on a TCP socket), giving up at once when a signal
/// arrives ([`Cut`]).
pub fn connect(addr: &Address, until: Instant) -> io::Result<Stream> {
    match addr {
        Address::Tcp(a) => {
            let mut last = None;
            for sa in a.as_str().to_socket_addrs()? {
                match connect_tcp(&sa, until) {
                    Ok(s) => return Ok(Stream::Tcp(s)),
                    Err(e) if cut_of(&e).is_some() => return Err(e),
                    Err(e) => last = Some(e),
                }
            }
            Err(last.unwrap_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{a}: the host name has no address"),
                )
            }))
        }
        Address::Unix(p) => connect_unix(p, until).map(Stream::Unix),
    }
}

fn connect_tcp(sa: &SocketAddr, until: Instant) -> io::Result<TcpStream> {
    let family = if sa.is_ipv4() {
        AddressFamily::INET
    } else {
        AddressFamily::INET6
    };
    let flags = SocketFlags::NONBLOCK | SocketFlags::CLOEXEC;
    let fd = rustix::net::socket_with(family, SocketType::STREAM, flags, None)?;
    match rustix::net::connect(&fd, sa) {
        Ok(()) => {}
        Err(Errno::INPROGRESS | Errno::INTR) => {
            let waiting = "no answer to the TCP connection yet";
            ready(&fd, PollFlags::OUT, until, waiting).map_err(|e| {
                if e.kind() == io::ErrorKind::TimedOut {
                    io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("{sa}: no answer to the TCP connection (the connection timed out)"),
                    )
                } else {
                    e
                }
            })?;
            rustix::net::sockopt::socket_error(&fd)??;
        }
        Err(e) => return Err(e.into()),
    }
    let s = TcpStream::from(blocking(fd)?);
    s.set_nodelay(true)?;
    Ok(s)
}

/// A Unix socket whose server's accept queue is full refuses a non-blocking connect with
/// EAGAIN: tried again every slice until `until`.
fn connect_unix(p: &Path, until: Instant) -> io::Result<UnixStream> {
    let flags = SocketFlags::NONBLOCK | SocketFlags::CLOEXEC;
    let fd = rustix::net::socket_with(AddressFamily::UNIX, SocketType::STREAM, flags, None)?;
    let addr = rustix::net::SocketAddrUnix::new(p)?;
    let waiting = "the server's queue of connections is full";
    loop {
        match rustix::net::connect(&fd, &addr) {
            Ok(()) => break,
            Err(Errno::AGAIN | Errno::INTR) => {
                if interrupt::requested() {
                    return Err(cut(waiting));
                }
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("{}: {waiting} (the connection timed out)", p.display()),
                    ));
                }
                std::thread::sleep(left.min(interrupt::SLICE));
            }
            Err(Errno::INPROGRESS) => {
                ready(&fd, PollFlags::OUT, until, waiting)?;
                rustix::net::sockopt::socket_error(&fd)??;
                break;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(UnixStream::from(blocking(fd)?))
}

fn blocking(fd: OwnedFd) -> io::Result<OwnedFd> {
    rustix::io::ioctl_fionbio(&fd, false)?;
    Ok(fd)
}

/// The stream with one deadline for everything read and written through it (a handshake, on
/// either side; a read before a run): a peer that drips a byte now and then cannot hold the
/// other past it, and a signal ends the wait within a slice ([`Cut`]). Past the deadline, reads
/// and writes fail with `TimedOut`.
pub struct Deadline<'a> {
    stream: &'a Stream,
    until: Instant,
    /// Bytes received so far.
    got: u64,
    /// What a read now waits for (from what was last sent).
    waiting: String,
}

impl<'a> Deadline<'a> {
    pub fn new(stream: &'a Stream, until: Instant) -> Deadline<'a> {
        Deadline {
            stream,
            until,
            got: 0,
            waiting: "waiting for the server's greeting".into(),
        }
    }

    /// Bytes read through it so far (none: the peer never said anything).
    pub fn received(&self) -> u64 {
        self.got
    }

    /// What a read now waits for, e.g. "waiting for the server's reply to NBD_OPT_GO".
    pub fn waiting(&self) -> &str {
        &self.waiting
    }

    /// What the last write asks of the peer, for [`Cut`]: an option's reply, a read's.
    fn sent(&mut self, buf: &[u8]) {
        let be64 = |b: &[u8]| u64::from_be_bytes(b[..8].try_into().unwrap());
        let be32 = |b: &[u8]| u32::from_be_bytes(b[..4].try_into().unwrap());
        self.waiting = if buf.len() >= 12 && be64(buf) == IHAVEOPT {
            format!(
                "waiting for the server's reply to {}",
                opt_name(be32(&buf[8..]))
            )
        } else if buf.len() >= 4 && be32(buf) == REQUEST_MAGIC {
            "waiting for the server's reply to a read".into()
        } else {
            return;
        };
    }
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            ready(self.stream, PollFlags::IN, self.until, &self.waiting)?;
            match rustix::net::recv(self.stream, &mut *buf, RecvFlags::DONTWAIT) {
                Ok((n, _)) => {
                    self.got += n as u64;
                    return Ok(n);
                }
                Err(Errno::AGAIN | Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Write for Deadline<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.sent(buf);
        loop {
            let waiting = "sending to a server that takes nothing";
            ready(self.stream, PollFlags::OUT, self.until, waiting)?;
            let flags = SendFlags::DONTWAIT | SendFlags::NOSIGNAL;
            match rustix::net::send(self.stream, buf, flags) {
                Ok(n) => return Ok(n),
                Err(Errno::AGAIN | Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A peer that accepts and says nothing: the read waits out the deadline, in slices.
    #[test]
    fn a_silent_peer_times_out_and_the_wait_says_what_it_waited_for() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = Address::Tcp(l.local_addr().unwrap().to_string());
        let until = Instant::now() + Duration::from_millis(200);
        let s = connect(&addr, until).unwrap();
        let mut d = Deadline::new(&s, until);
        assert_eq!(d.waiting, "waiting for the server's greeting");
        let mut b = [0u8; 8];
        let e = d.read(&mut b).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert_eq!(d.received(), 0);
        let mut opt = IHAVEOPT.to_be_bytes().to_vec();
        opt.extend_from_slice(&7u32.to_be_bytes());
        opt.extend_from_slice(&0u32.to_be_bytes());
        d.sent(&opt);
        assert_eq!(d.waiting, "waiting for the server's reply to NBD_OPT_GO");
        assert!(cut_of(&cut("x")).is_some_and(|c| c.to_string() == "interrupted while x"));
    }

    #[test]
    fn nobody_listening_is_refused_at_once() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = Address::Tcp(l.local_addr().unwrap().to_string());
        drop(l);
        let e = connect(&addr, Instant::now() + Duration::from_secs(5)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
        let dir = tempfile::tempdir().unwrap();
        let e = connect(
            &Address::Unix(dir.path().join("none")),
            Instant::now() + Duration::from_secs(5),
        )
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
