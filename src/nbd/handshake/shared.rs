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
    if len > 1 << 20 {
        return Err(invalid(format!("option reply of {len} B")));
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
