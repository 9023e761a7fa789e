//! One client connection in transmission: connect and negotiate an export, then either the
//! engine pipelines requests on its stream, or [`Connection::read_at`] reads one range at a time
//! (for the few reads a source makes before a run: the prepared image's identity).

use super::addr::{NbdUrl, Stream};
use super::handshake::{Advertised, client_handshake};
use super::proto::*;
use std::io::{self, Read, Write};
use std::time::Duration;

/// How long negotiation may take before the server is given up on.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A negotiated connection to one export.
#[derive(Debug)]
pub struct Connection {
    pub url: NbdUrl,
    pub stream: Stream,
    pub advertised: Advertised,
}

impl Connection {
    /// Connect to `url` and negotiate its export (listing the server's exports first when `list`).
    pub fn open(url: &NbdUrl, list: bool) -> io::Result<Connection> {
        let mut stream = url.connect()?;
        stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT))?;
        let advertised = client_handshake(&mut stream, &url.export, list)?;
        stream.set_read_timeout(None)?;
        Ok(Connection {
            url: url.clone(),
            stream,
            advertised,
        })
    }

    pub fn size(&self) -> u64 {
        self.advertised.export.size
    }

    /// Read `buf.len()` bytes at `offset` with one request (nothing else may be in flight).
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut s = &self.stream;
        s.write_all(&Request::read(0, offset, buf.len() as u32).encode())?;
        let mut h = [0u8; SIMPLE_REPLY_LEN];
        s.read_exact(&mut h)?;
        let r = SimpleReply::decode(&h)
            .map_err(|m| io::Error::new(io::ErrorKind::InvalidData, m.to_string()))?;
        if r.cookie != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("reply to cookie {} when 0 was asked", r.cookie),
            ));
        }
        if r.error != 0 {
            return Err(io::Error::from_raw_os_error(errno_of_error(r.error)));
        }
        s.read_exact(buf)
    }

    /// Say goodbye (`NBD_CMD_DISC`); the server closes the connection.
    pub fn disconnect(&self) {
        let mut s = &self.stream;
        let r = Request {
            flags: 0,
            kind: CMD_DISC,
            cookie: 0,
            offset: 0,
            len: 0,
        };
        let _ = s.write_all(&r.encode());
        self.stream.shutdown();
    }
}
