//! What both sides of the handshake share: the export as a server offers it or a client learned
//! it, the session negotiated, and the framing of options and their replies.

use crate::nbd::proto::*;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};

/// Block size constraints (`NBD_INFO_BLOCK_SIZE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockSizes {
    pub minimum: u32,
    pub preferred: u32,
    pub maximum: u32,
}

impl BlockSizes {
    /// What breaks the protocol's rules for block size constraints, if anything: the minimum is
    /// a power of two of at most 64 KiB, the preferred size a power of two, the maximum at least
    /// the minimum and a multiple of it (or 0xffffffff, "no limit").
    pub fn problem(&self) -> Option<String> {
        let (min, pref, max) = (self.minimum, self.preferred, self.maximum);
        if !min.is_power_of_two() || min > 64 << 10 {
            return Some(format!(
                "its minimum block size {min} B is not a power of two between 1 B and 64 KiB"
            ));
        }
        if !pref.is_power_of_two() {
            return Some(format!(
                "its preferred block size {pref} B is not a power of two"
            ));
        }
        if max < min {
            return Some(format!(
                "its maximum block size {max} B is below its minimum {min} B"
            ));
        }
        if max != u32::MAX && !max.is_multiple_of(min) {
            return Some(format!(
                "its maximum block size {max} B is not a multiple of its minimum {min} B"
            ));
        }
        None
    }
}

/// One export, as a server offers it or a client learned it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportInfo {
    pub name: String,
    pub description: Option<String>,
    pub size: u64,
    /// Transmission flags.
    pub flags: u16,
    pub block_sizes: Option<BlockSizes>,
}

impl ExportInfo {
    pub fn read_only(&self) -> bool {
        self.flags & FLAG_READ_ONLY != 0
    }

    pub fn multi_conn(&self) -> bool {
        self.flags & FLAG_CAN_MULTI_CONN != 0
    }
}

/// What the server answered stops the negotiation, and the message says what is wrong and what to
/// do (the export is unknown, TLS is required, the server speaks another protocol): nothing
/// about reaching the server is in question.
#[derive(Debug)]
pub struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

/// A [`Refusal`] saying `msg`.
pub(super) fn refusal(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, Refusal(msg.into()))
}

/// Whether `e` is a [`Refusal`].
pub fn is_refusal(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|r| r.is::<Refusal>())
}

pub(super) fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

pub(super) fn read_u16(r: &mut impl Read) -> io::Result<u16> {
    let mut b = [0u8; 2];
    r.read_exact(&mut b)?;
    Ok(u16::from_be_bytes(b))
}

pub(super) fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

pub(super) fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

/// Read and drop `n` bytes in bounded pieces.
pub(super) fn skip(r: &mut impl Read, mut n: u64) -> io::Result<()> {
    let mut buf = [0u8; 4096];
    while n > 0 {
        let k = n.min(buf.len() as u64) as usize;
        r.read_exact(&mut buf[..k])?;
        n -= k as u64;
    }
    Ok(())
}

/// What a client negotiated for the transmission phase besides the export: how replies are
/// framed and whether block status is answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Session {
    /// `NBD_OPT_STRUCTURED_REPLY` was acknowledged: reads (and errors) get structured replies.
    pub structured_replies: bool,
    /// `base:allocation` was selected (`NBD_OPT_SET_META_CONTEXT`) for the export chosen:
    /// `NBD_CMD_BLOCK_STATUS` is answered.
    pub base_allocation: bool,
}

/// One option reply: header and data in one write.
pub(super) fn option_reply(w: &mut impl Write, opt: u32, kind: u32, data: &[u8]) -> io::Result<()> {
    let mut b = Vec::with_capacity(20 + data.len());
    b.extend_from_slice(&REPLY_MAGIC.to_be_bytes());
    b.extend_from_slice(&opt.to_be_bytes());
    b.extend_from_slice(&kind.to_be_bytes());
    b.extend_from_slice(&(data.len() as u32).to_be_bytes());
    b.extend_from_slice(data);
    w.write_all(&b)
}

/// The largest option reply read (the protocol's own are a few KiB at most).
pub const MAX_OPTION_REPLY: u32 = 1 << 20;

/// Read one option reply: (option, type, data), checking magic and option.
pub(super) fn read_option_reply(r: &mut impl Read, opt: u32) -> io::Result<(u32, Vec<u8>)> {
    let magic = read_u64(r)?;
    if magic != REPLY_MAGIC {
        return Err(invalid(format!("bad option reply magic {magic:#x}")));
    }
    let got = read_u32(r)?;
    let kind = read_u32(r)?;
    let len = read_u32(r)?;
    if got != opt {
        return Err(invalid(format!("reply to option {got}, expected {opt}")));
    }
    if len > MAX_OPTION_REPLY {
        return Err(refusal(format!(
            "the server sent a {len} B reply to {} (an NBD server's replies are small; readlab \
             takes at most {MAX_OPTION_REPLY} B): it does not follow the NBD protocol; check \
             what listens at this address (nbdinfo URL)",
            opt_name(opt)
        )));
    }
    let mut data = vec![0u8; len as usize];
    r.read_exact(&mut data)?;
    Ok((kind, data))
}

/// One option request: header and data in one write.
pub(super) fn send_option(w: &mut impl Write, opt: u32, data: &[u8]) -> io::Result<()> {
    let mut b = Vec::with_capacity(16 + data.len());
    b.extend_from_slice(&IHAVEOPT.to_be_bytes());
    b.extend_from_slice(&opt.to_be_bytes());
    b.extend_from_slice(&(data.len() as u32).to_be_bytes());
    b.extend_from_slice(data);
    w.write_all(&b)
}
