//! The NBD protocol's numbers and its fixed-size frames (NetworkBlockDevice/nbd `doc/proto.md`):
//! magics, flags, option and reply types, commands, errors, the 28-byte request, the 16-byte
//! simple reply and the 20-byte header of a structured reply chunk, all big-endian on the wire.

/// `NBDMAGIC`, the first 8 bytes a server sends.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// `IHAVEOPT`: newstyle negotiation, and the magic of every option the client sends.
pub const IHAVEOPT: u64 = 0x4948_4156_454F_5054;
/// Oldstyle negotiation's second magic (readlab does not speak oldstyle).
pub const CLISERV_MAGIC: u64 = 0x0000_4202_8186_1253;
/// Magic of every option reply.
pub const REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
pub const STRUCTURED_REPLY_MAGIC: u32 = 0x668e_33ef;

// Handshake flags (server) and client flags.
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1 << 0;
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

// Transmission flags.
pub const FLAG_HAS_FLAGS: u16 = 1 << 0;
pub const FLAG_READ_ONLY: u16 = 1 << 1;
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
pub const FLAG_SEND_FUA: u16 = 1 << 3;
pub const FLAG_ROTATIONAL: u16 = 1 << 4;
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
pub const FLAG_SEND_DF: u16 = 1 << 7;
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;
pub const FLAG_SEND_RESIZE: u16 = 1 << 9;
pub const FLAG_SEND_CACHE: u16 = 1 << 10;
pub const FLAG_SEND_FAST_ZERO: u16 = 1 << 11;

/// Names of the transmission flags, for `readlab info`.
pub const TRANSMISSION_FLAGS: &[(u16, &str)] = &[
    (FLAG_HAS_FLAGS, "has-flags"),
    (FLAG_READ_ONLY, "read-only"),
    (FLAG_SEND_FLUSH, "flush"),
    (FLAG_SEND_FUA, "fua"),
    (FLAG_ROTATIONAL, "rotational"),
    (FLAG_SEND_TRIM, "trim"),
    (FLAG_SEND_WRITE_ZEROES, "write-zeroes"),
    (FLAG_SEND_DF, "df"),
    (FLAG_CAN_MULTI_CONN, "multi-conn"),
    (FLAG_SEND_RESIZE, "resize"),
    (FLAG_SEND_CACHE, "cache"),
    (FLAG_SEND_FAST_ZERO, "fast-zero"),
];

// Options.
/// The longest export name the protocol allows (its string limit), in bytes.
pub const MAX_EXPORT_NAME: usize = 4096;

pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_STARTTLS: u32 = 5;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;
pub const OPT_STRUCTURED_REPLY: u32 = 8;
pub const OPT_LIST_META_CONTEXT: u32 = 9;
pub const OPT_SET_META_CONTEXT: u32 = 10;

// Option reply types.
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_META_CONTEXT: u32 = 4;
const REP_ERR: u32 = 1 << 31;
pub const REP_ERR_UNSUP: u32 = REP_ERR | 1;
pub const REP_ERR_POLICY: u32 = REP_ERR | 2;
pub const REP_ERR_INVALID: u32 = REP_ERR | 3;
pub const REP_ERR_PLATFORM: u32 = REP_ERR | 4;
pub const REP_ERR_TLS_REQD: u32 = REP_ERR | 5;
pub const REP_ERR_UNKNOWN: u32 = REP_ERR | 6;
pub const REP_ERR_SHUTDOWN: u32 = REP_ERR | 7;
pub const REP_ERR_BLOCK_SIZE_REQD: u32 = REP_ERR | 8;
pub const REP_ERR_TOO_BIG: u32 = REP_ERR | 9;

/// Whether an option reply type is an error.
pub fn is_rep_err(t: u32) -> bool {
    t & REP_ERR != 0
}

/// An option's name, for messages.
pub fn opt_name(o: u32) -> String {
    match o {
        OPT_EXPORT_NAME => "NBD_OPT_EXPORT_NAME".into(),
        OPT_ABORT => "NBD_OPT_ABORT".into(),
        OPT_LIST => "NBD_OPT_LIST".into(),
        OPT_STARTTLS => "NBD_OPT_STARTTLS".into(),
        OPT_INFO => "NBD_OPT_INFO".into(),
        OPT_GO => "NBD_OPT_GO".into(),
        OPT_STRUCTURED_REPLY => "NBD_OPT_STRUCTURED_REPLY".into(),
        OPT_LIST_META_CONTEXT => "NBD_OPT_LIST_META_CONTEXT".into(),
        OPT_SET_META_CONTEXT => "NBD_OPT_SET_META_CONTEXT".into(),
        o => format!("option {o}"),
    }
}

/// An option reply type's name, for messages.
pub fn rep_name(t: u32) -> String {
    match t {
        REP_ACK => "ACK".into(),
        REP_SERVER => "SERVER".into(),
        REP_INFO => "INFO".into(),
        REP_META_CONTEXT => "META_CONTEXT".into(),
        REP_ERR_UNSUP => "ERR_UNSUP".into(),
        REP_ERR_POLICY => "ERR_POLICY".into(),
        REP_ERR_INVALID => "ERR_INVALID".into(),
        REP_ERR_PLATFORM => "ERR_PLATFORM".into(),
        REP_ERR_TLS_REQD => {
            "ERR_TLS_REQD (the server requires TLS, which readlab does not speak)".into()
        }
        REP_ERR_UNKNOWN => "ERR_UNKNOWN (no such export)".into(),
        REP_ERR_SHUTDOWN => "ERR_SHUTDOWN".into(),
        REP_ERR_BLOCK_SIZE_REQD => "ERR_BLOCK_SIZE_REQD".into(),
        REP_ERR_TOO_BIG => "ERR_TOO_BIG".into(),
        t => format!("reply type {t:#x}"),
    }
}

// Information types of NBD_OPT_INFO / NBD_OPT_GO.
pub const INFO_EXPORT: u16 = 0;
pub const INFO_NAME: u16 = 1;
pub const INFO_DESCRIPTION: u16 = 2;
pub const INFO_BLOCK_SIZE: u16 = 3;

// Commands and command flags.
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_CACHE: u16 = 5;
pub const CMD_WRITE_ZEROES: u16 = 6;
pub const CMD_BLOCK_STATUS: u16 = 7;
pub const CMD_FLAG_FUA: u16 = 1 << 0;
pub const CMD_FLAG_DF: u16 = 1 << 2;
/// `NBD_CMD_BLOCK_STATUS`: exactly one extent per context, no longer than the request.
pub const CMD_FLAG_REQ_ONE: u16 = 1 << 3;

// Structured replies: the chunk flag, the chunk types, and `base:allocation`'s status flags.
pub const REPLY_FLAG_DONE: u16 = 1 << 0;
pub const REPLY_TYPE_NONE: u16 = 0;
pub const REPLY_TYPE_OFFSET_DATA: u16 = 1;
pub const REPLY_TYPE_OFFSET_HOLE: u16 = 2;
pub const REPLY_TYPE_BLOCK_STATUS: u16 = 5;
pub const REPLY_TYPE_ERROR: u16 = (1 << 15) + 1;
pub const REPLY_TYPE_ERROR_OFFSET: u16 = (1 << 15) + 2;
/// The one metadata context readlab serves.
pub const CONTEXT_BASE_ALLOCATION: &str = "base:allocation";
pub const STATE_HOLE: u32 = 1 << 0;
pub const STATE_ZERO: u32 = 1 << 1;

// Errors of replies: the protocol's own numbers (equal to Linux's errno values).
pub const EPERM: u32 = 1;
pub const EIO: u32 = 5;
pub const ENOMEM: u32 = 12;
pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const EOVERFLOW: u32 = 75;
pub const ENOTSUP: u32 = 95;
pub const ESHUTDOWN: u32 = 108;

/// The protocol error for a local errno: the ones the protocol defines pass, the rest are EIO.
pub fn error_of_errno(errno: i32) -> u32 {
    match errno {
        libc::EPERM => EPERM,
        libc::ENOMEM => ENOMEM,
        libc::EINVAL => EINVAL,
        libc::ENOSPC => ENOSPC,
        libc::EOVERFLOW => EOVERFLOW,
        libc::EOPNOTSUPP => ENOTSUP,
        libc::ESHUTDOWN => ESHUTDOWN,
        _ => EIO,
    }
}

/// The local errno for a protocol error (they are the same numbers on Linux; unknown ones are EIO).
pub fn errno_of_error(e: u32) -> i32 {
    match e {
        EPERM | EIO | ENOMEM | EINVAL | ENOSPC | EOVERFLOW | ENOTSUP | ESHUTDOWN => e as i32,
        _ => libc::EIO,
    }
}

/// Bytes of a request header.
pub const REQUEST_LEN: usize = 28;
/// Bytes of a simple reply header.
pub const SIMPLE_REPLY_LEN: usize = 16;
/// Bytes of a structured reply chunk's header (its payload follows).
pub const STRUCTURED_REPLY_LEN: usize = 20;

/// One transmission request (without the payload a write carries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub flags: u16,
    pub kind: u16,
    pub cookie: u64,
    pub offset: u64,
    pub len: u32,
}

/// Why bytes are not a frame: the stream cannot be followed any further.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadMagic(pub u32);

impl std::fmt::Display for BadMagic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bad magic {:#010x}", self.0)
    }
}

impl Request {
    pub fn read(cookie: u64, offset: u64, len: u32) -> Request {
        Request {
            flags: 0,
            kind: CMD_READ,
            cookie,
            offset,
            len,
        }
    }

    pub fn encode(&self) -> [u8; REQUEST_LEN] {
        let mut b = [0u8; REQUEST_LEN];
        self.encode_into(&mut b);
        b
    }

    pub fn encode_into(&self, b: &mut [u8]) {
        b[0..4].copy_from_slice(&REQUEST_MAGIC.to_be_bytes());
        b[4..6].copy_from_slice(&self.flags.to_be_bytes());
        b[6..8].copy_from_slice(&self.kind.to_be_bytes());
        b[8..16].copy_from_slice(&self.cookie.to_be_bytes());
        b[16..24].copy_from_slice(&self.offset.to_be_bytes());
        b[24..28].copy_from_slice(&self.len.to_be_bytes());
    }

    /// Decode the first [`REQUEST_LEN`] bytes of `b`.
    pub fn decode(b: &[u8]) -> Result<Request, BadMagic> {
        let magic = be32(&b[0..4]);
        if magic != REQUEST_MAGIC {
            return Err(BadMagic(magic));
        }
        Ok(Request {
            flags: be16(&b[4..6]),
            kind: be16(&b[6..8]),
            cookie: be64(&b[8..16]),
            offset: be64(&b[16..24]),
            len: be32(&b[24..28]),
        })
    }
}

/// A simple reply header: its error (0 on success) and the request's cookie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimpleReply {
    pub error: u32,
    pub cookie: u64,
}

impl SimpleReply {
    pub fn encode(&self) -> [u8; SIMPLE_REPLY_LEN] {
        let mut b = [0u8; SIMPLE_REPLY_LEN];
        b[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
        b[4..8].copy_from_slice(&self.error.to_be_bytes());
        b[8..16].copy_from_slice(&self.cookie.to_be_bytes());
        b
    }

    /// Decode the first [`SIMPLE_REPLY_LEN`] bytes of `b`.
    pub fn decode(b: &[u8]) -> Result<SimpleReply, BadMagic> {
        let magic = be32(&b[0..4]);
        if magic != SIMPLE_REPLY_MAGIC {
            return Err(BadMagic(magic));
        }
        Ok(SimpleReply {
            error: be32(&b[4..8]),
            cookie: be64(&b[8..16]),
        })
    }
}

/// The header of one structured reply chunk: `len` bytes of payload follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    pub flags: u16,
    pub kind: u16,
    pub cookie: u64,
    pub len: u32,
}

impl ChunkHeader {
    /// Write the header into the first [`STRUCTURED_REPLY_LEN`] bytes of `b`.
    pub fn encode_into(&self, b: &mut [u8]) {
        b[0..4].copy_from_slice(&STRUCTURED_REPLY_MAGIC.to_be_bytes());
        b[4..6].copy_from_slice(&self.flags.to_be_bytes());
        b[6..8].copy_from_slice(&self.kind.to_be_bytes());
        b[8..16].copy_from_slice(&self.cookie.to_be_bytes());
        b[16..20].copy_from_slice(&self.len.to_be_bytes());
    }

    /// Decode the first [`STRUCTURED_REPLY_LEN`] bytes of `b`.
    pub fn decode(b: &[u8]) -> Result<ChunkHeader, BadMagic> {
        let magic = be32(&b[0..4]);
        if magic != STRUCTURED_REPLY_MAGIC {
            return Err(BadMagic(magic));
        }
        Ok(ChunkHeader {
            flags: be16(&b[4..6]),
            kind: be16(&b[6..8]),
            cookie: be64(&b[8..16]),
            len: be32(&b[16..20]),
        })
    }

    pub fn done(&self) -> bool {
        self.flags & REPLY_FLAG_DONE != 0
    }
}

pub fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes(b[..2].try_into().unwrap())
}

pub fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().unwrap())
}

pub fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b[..8].try_into().unwrap())
}

/// Names of the set transmission flags, comma-separated.
pub fn flag_names(flags: u16) -> String {
    let mut v: Vec<String> = TRANSMISSION_FLAGS
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, n)| n.to_string())
        .collect();
    let known: u16 = TRANSMISSION_FLAGS
        .iter()
        .map(|(b, _)| b)
        .fold(0, |a, b| a | b);
    if flags & !known != 0 {
        v.push(format!("unknown {:#06x}", flags & !known));
    }
    v.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_round_trips_in_network_order() {
        let r = Request {
            flags: CMD_FLAG_FUA,
            kind: CMD_WRITE,
            cookie: 0x0102_0304_0506_0708,
            offset: 1 << 40,
            len: 4096,
        };
        let b = r.encode();
        assert_eq!(&b[0..4], &[0x25, 0x60, 0x95, 0x13]);
        assert_eq!(&b[6..8], &[0, 1]);
        assert_eq!(&b[8..16], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&b[24..28], &[0, 0, 0x10, 0]);
        assert_eq!(Request::decode(&b), Ok(r));
        let mut bad = b;
        bad[0] ^= 1;
        assert_eq!(Request::decode(&bad), Err(BadMagic(0x2460_9513)));
    }

    #[test]
    fn simple_reply_round_trips() {
        let r = SimpleReply {
            error: EINVAL,
            cookie: 77,
        };
        let b = r.encode();
        assert_eq!(&b[0..4], &[0x67, 0x44, 0x66, 0x98]);
        assert_eq!(SimpleReply::decode(&b), Ok(r));
        assert!(SimpleReply::decode(&[0u8; 16]).is_err());
    }

    #[test]
    fn chunk_header_round_trips() {
        let h = ChunkHeader {
            flags: REPLY_FLAG_DONE,
            kind: REPLY_TYPE_OFFSET_DATA,
            cookie: 0x0102_0304_0506_0708,
            len: 8 + 4096,
        };
        let mut b = [0u8; STRUCTURED_REPLY_LEN];
        h.encode_into(&mut b);
        assert_eq!(&b[0..4], &[0x66, 0x8e, 0x33, 0xef]);
        assert_eq!(&b[4..8], &[0, 1, 0, 1]);
        assert_eq!(&b[16..20], &[0, 0, 0x10, 0x08]);
        assert_eq!(ChunkHeader::decode(&b), Ok(h));
        assert!(h.done());
        assert!(ChunkHeader::decode(&[0u8; 20]).is_err());
        assert_eq!(REPLY_TYPE_ERROR, 0x8001);
    }

    #[test]
    fn magics_spell_their_names() {
        assert_eq!(&NBDMAGIC.to_be_bytes(), b"NBDMAGIC");
        assert_eq!(&IHAVEOPT.to_be_bytes(), b"IHAVEOPT");
    }

    #[test]
    fn errors_map_both_ways() {
        assert_eq!(error_of_errno(libc::EINVAL), EINVAL);
        assert_eq!(error_of_errno(libc::ENOENT), EIO);
        assert_eq!(errno_of_error(EPERM), libc::EPERM);
        assert_eq!(errno_of_error(9999), libc::EIO);
        assert!(is_rep_err(REP_ERR_UNSUP) && !is_rep_err(REP_ACK));
    }

    #[test]
    fn flags_are_named() {
        let f = FLAG_HAS_FLAGS | FLAG_READ_ONLY | FLAG_CAN_MULTI_CONN;
        assert_eq!(flag_names(f), "has-flags,read-only,multi-conn");
        assert!(flag_names(1 << 15).contains("unknown"));
    }
}
