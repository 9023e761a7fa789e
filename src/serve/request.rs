//! What the server does with each transmission request, decided alike by both server models:
//! read, answer block status, refuse with an error (per request, the connection goes on), skip a
//! write's payload and refuse it, end the connection on `NBD_CMD_DISC`, or hang up on a client
//! that broke the protocol in a way the stream cannot recover from. And how every reply is framed
//! for the connection's [`Session`]: simple replies, or structured ones once negotiated (a read is
//! one `OFFSET_DATA` chunk, an error one `ERROR` chunk), each header built into a small fixed
//! buffer ([`ReplyHeader`]) that the models send together with the payload.
//!
//! Block status (`base:allocation`): a file's holes (`SEEK_DATA`/`SEEK_HOLE` on the served file)
//! are `HOLE|ZERO`, the rest data; a block device or a filesystem without hole reporting is all
//! data; the `--null` back end, which stores nothing and reads as zeros, is all `HOLE|ZERO`.

use crate::nbd::handshake::{BASE_ALLOCATION_ID, Session};
use crate::nbd::proto::*;
use std::fs::File;

/// The limits a request is checked against.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub size: u64,
    /// Largest request (the advertised maximum block size).
    pub max_request: u32,
    /// Offsets and lengths must be multiples of this (the advertised minimum block size).
    pub min_block: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Read {
        cookie: u64,
        offset: u64,
        len: u32,
    },
    /// Answer with this error and no payload.
    Refuse {
        cookie: u64,
        error: u32,
    },
    /// A write: drop its `bytes` of payload, then refuse it.
    SkipThenRefuse {
        cookie: u64,
        bytes: u32,
        error: u32,
    },
    /// `NBD_CMD_BLOCK_STATUS` over a range inside the export: answer with [`block_status`].
    BlockStatus {
        cookie: u64,
        offset: u64,
        len: u32,
        flags: u16,
    },
    Disconnect,
    /// The stream cannot be followed any further: close the connection.
    HangUp(String),
}

/// Decide what to do with the request header in the first [`REQUEST_LEN`] bytes of `b`.
pub fn classify(b: &[u8], l: &Limits) -> Action {
    let r = match Request::decode(b) {
        Ok(r) => r,
        Err(m) => return Action::HangUp(format!("{m} where a request was due")),
    };
    let cookie = r.cookie;
    match r.kind {
        CMD_READ => {
            let aligned = r.offset % l.min_block as u64 == 0 && r.len % l.min_block == 0;
            let inside = r
                .offset
                .checked_add(r.len as u64)
                .is_some_and(|end| end <= l.size);
            if r.len == 0 || r.len > l.max_request || !inside || !aligned {
                Action::Refuse {
                    cookie,
                    error: EINVAL,
                }
            } else {
                Action::Read {
                    cookie,
                    offset: r.offset,
                    len: r.len,
                }
            }
        }
        CMD_WRITE if r.len <= l.max_request => Action::SkipThenRefuse {
            cookie,
            bytes: r.len,
            error: EPERM,
        },
        CMD_WRITE => Action::HangUp(format!(
            "a write of {} B, beyond the {} B maximum: its payload is not followed",
            r.len, l.max_request
        )),
        // No payload either way: any length inside the export, aligned or not.
        CMD_BLOCK_STATUS
            if r.len > 0
                && r.offset
                    .checked_add(r.len as u64)
                    .is_some_and(|end| end <= l.size) =>
        {
            Action::BlockStatus {
                cookie,
                offset: r.offset,
                len: r.len,
                flags: r.flags,
            }
        }
        CMD_TRIM | CMD_WRITE_ZEROES => Action::Refuse {
            cookie,
            error: EPERM,
        },
        CMD_DISC => Action::Disconnect,
        _ => Action::Refuse {
            cookie,
            error: EINVAL,
        },
    }
}

/// Extents one block-status reply carries at most; a client asks again from where it ends.
pub const MAX_EXTENTS: usize = 8;
/// Bytes of the largest reply header: a block-status chunk of [`MAX_EXTENTS`] extents.
pub const REPLY_HEADER_MAX: usize = STRUCTURED_REPLY_LEN + 4 + 8 * MAX_EXTENTS;
// Its length is kept in a byte.
const _: () = assert!(REPLY_HEADER_MAX <= u8::MAX as usize);

/// One reply's bytes before its payload (all of it when it has none), in a fixed buffer: a
/// simple reply, or a structured chunk header with its fixed fields (a read's offset, an error,
/// a block status).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ReplyHeader {
    bytes: [u8; REPLY_HEADER_MAX],
    len: u8,
}

impl ReplyHeader {
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn simple(cookie: u64, error: u32) -> ReplyHeader {
        let mut h = ReplyHeader {
            bytes: [0; REPLY_HEADER_MAX],
            len: SIMPLE_REPLY_LEN as u8,
        };
        h.bytes[..SIMPLE_REPLY_LEN].copy_from_slice(&SimpleReply { error, cookie }.encode());
        h
    }

    /// A chunk header whose first `fixed` payload bytes follow in the buffer (written by the
    /// caller) and `more` bytes after it (a read's data).
    fn chunk(flags: u16, kind: u16, cookie: u64, fixed: usize, more: u32) -> ReplyHeader {
        let mut h = ReplyHeader {
            bytes: [0; REPLY_HEADER_MAX],
            len: (STRUCTURED_REPLY_LEN + fixed) as u8,
        };
        ChunkHeader {
            flags,
            kind,
            cookie,
            len: fixed as u32 + more,
        }
        .encode_into(&mut h.bytes);
        h
    }

    fn payload(&mut self) -> &mut [u8] {
        &mut self.bytes[STRUCTURED_REPLY_LEN..]
    }
}

impl std::fmt::Debug for ReplyHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReplyHeader({:02x?})", self.as_bytes())
    }
}

/// What goes before `len` bytes of a read's data that start at `offset`. Simple replies: the
/// reply header before the first piece (`first`), nothing before the later ones. Structured
/// replies: one `OFFSET_DATA` chunk per piece, `DONE` on the `last` (a read sent as one piece is
/// one chunk).
pub fn data_header(
    s: Session,
    cookie: u64,
    offset: u64,
    len: u32,
    first: bool,
    last: bool,
) -> Option<ReplyHeader> {
    if !s.structured_replies {
        return first.then(|| ReplyHeader::simple(cookie, 0));
    }
    let flags = if last { REPLY_FLAG_DONE } else { 0 };
    let mut h = ReplyHeader::chunk(flags, REPLY_TYPE_OFFSET_DATA, cookie, 8, len);
    h.payload()[..8].copy_from_slice(&offset.to_be_bytes());
    Some(h)
}

/// A request's error: the simple reply, or an `ERROR` chunk ending the structured reply (after
/// any data chunks without `DONE` that went before it).
pub fn error_reply(s: Session, cookie: u64, error: u32) -> ReplyHeader {
    if !s.structured_replies {
        return ReplyHeader::simple(cookie, error);
    }
    let mut h = ReplyHeader::chunk(REPLY_FLAG_DONE, REPLY_TYPE_ERROR, cookie, 6, 0);
    h.payload()[..4].copy_from_slice(&error.to_be_bytes());
    // Message length 0: the error number says it.
    h
}

/// Whether an error found after part of a read's data went out can still be told to the client
/// (structured replies); without, the server must hang up.
pub fn can_fail_midway(s: Session) -> bool {
    s.structured_replies
}

/// The answer to [`Action::BlockStatus`]: one `BLOCK_STATUS` chunk for `base:allocation` (at most
/// [`MAX_EXTENTS`] extents, one with `NBD_CMD_FLAG_REQ_ONE`, none past the request), read from
/// `file`'s holes (None: the null back end, all zeros). EINVAL when the client selected no
/// context. Extent boundaries are rounded to `align` (the minimum block size), a partly
/// allocated block counting as data.
pub fn block_status(
    s: Session,
    cookie: u64,
    offset: u64,
    len: u32,
    flags: u16,
    file: Option<&File>,
    align: u32,
) -> ReplyHeader {
    if !s.base_allocation {
        return error_reply(s, cookie, EINVAL);
    }
    let max = if flags & CMD_FLAG_REQ_ONE != 0 {
        1
    } else {
        MAX_EXTENTS
    };
    let end = offset + len as u64;
    let align = align.max(1) as u64;
    let mut extents = [(0u32, 0u32); MAX_EXTENTS];
    let mut n = 0;
    let mut at = offset;
    while at < end {
        let (next, state) = next_extent(file, at, end, align);
        if n > 0 && extents[n - 1].1 == state {
            extents[n - 1].0 += (next - at) as u32;
        } else if n == max {
            break;
        } else {
            extents[n] = ((next - at) as u32, state);
            n += 1;
        }
        at = next;
    }
    let mut h = ReplyHeader::chunk(
        REPLY_FLAG_DONE,
        REPLY_TYPE_BLOCK_STATUS,
        cookie,
        4 + 8 * n,
        0,
    );
    let p = h.payload();
    p[..4].copy_from_slice(&BASE_ALLOCATION_ID.to_be_bytes());
    for (k, (l, f)) in extents[..n].iter().enumerate() {
        p[4 + 8 * k..8 + 8 * k].copy_from_slice(&l.to_be_bytes());
        p[8 + 8 * k..12 + 8 * k].copy_from_slice(&f.to_be_bytes());
    }
    h
}

/// Where the extent starting at `at` ends (at most `end`) and its `base:allocation` state.
fn next_extent(file: Option<&File>, at: u64, end: u64, align: u64) -> (u64, u32) {
    use rustix::fs::{SeekFrom, seek};
    const HOLE: u32 = STATE_HOLE | STATE_ZERO;
    let Some(f) = file else {
        return (end, HOLE);
    };
    let (next, state) = match seek(f, SeekFrom::Data(at)) {
        Ok(d) if d > at => (d, HOLE),
        Ok(_) => match seek(f, SeekFrom::Hole(at)) {
            Ok(h) if h > at => (h, 0),
            _ => (end, 0),
        },
        // No data from `at` on.
        Err(rustix::io::Errno::NXIO) => (end, HOLE),
        // Not known: data is always a safe answer.
        Err(_) => (end, 0),
    };
    let up = |x: u64| x.div_ceil(align).saturating_mul(align).min(end);
    match next.min(end) {
        e if e == end => (end, state),
        e if state == 0 => (up(e), 0),
        e if e / align * align > at => (e / align * align, HOLE),
        // A hole smaller than a block: its block has data.
        e => (up(e), 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Limits = Limits {
        size: 1 << 20,
        max_request: 32 << 20,
        min_block: 512,
    };

    fn req(kind: u16, offset: u64, len: u32) -> [u8; REQUEST_LEN] {
        Request {
            flags: 0,
            kind,
            cookie: 9,
            offset,
            len,
        }
        .encode()
    }

    #[test]
    fn reads_inside_the_export_are_served() {
        assert_eq!(
            classify(&req(CMD_READ, 4096, 4096), &L),
            Action::Read {
                cookie: 9,
                offset: 4096,
                len: 4096
            }
        );
        assert!(matches!(
            classify(&req(CMD_READ, (1 << 20) - 512, 512), &L),
            Action::Read { .. }
        ));
    }

    #[test]
    fn bad_reads_are_refused_one_by_one() {
        let einval = Action::Refuse {
            cookie: 9,
            error: EINVAL,
        };
        for (off, len) in [
            (1 << 20, 512), // past the end
            ((1 << 20) - 512, 1024),
            (u64::MAX - 100, 512), // offset + length overflows
            (0, 0),
            (0, 1 << 30), // 1 GiB
            (100, 512),   // unaligned
            (0, 100),
        ] {
            assert_eq!(
                classify(&req(CMD_READ, off, len), &L),
                einval,
                "{off} {len}"
            );
        }
    }

    #[test]
    fn writes_trims_and_the_rest() {
        assert_eq!(
            classify(&req(CMD_WRITE, 0, 4096), &L),
            Action::SkipThenRefuse {
                cookie: 9,
                bytes: 4096,
                error: EPERM
            }
        );
        assert!(matches!(
            classify(&req(CMD_WRITE, 0, 1 << 30), &L),
            Action::HangUp(_)
        ));
        assert_eq!(
            classify(&req(CMD_TRIM, 0, 4096), &L),
            Action::Refuse {
                cookie: 9,
                error: EPERM
            }
        );
        for k in [CMD_FLUSH, CMD_CACHE, 77] {
            assert_eq!(
                classify(&req(k, 0, 4096), &L),
                Action::Refuse {
                    cookie: 9,
                    error: EINVAL
                }
            );
        }
        assert_eq!(classify(&req(CMD_DISC, 0, 0), &L), Action::Disconnect);
        assert!(matches!(
            classify(b"GARBAGE-GARBAGE-GARBAGE-GARB", &L),
            Action::HangUp(_)
        ));
    }

    #[test]
    fn block_status_requests_inside_the_export_are_answered() {
        let mut r = Request {
            flags: CMD_FLAG_REQ_ONE,
            kind: CMD_BLOCK_STATUS,
            cookie: 9,
            offset: 100, // unaligned: no payload, so any range inside is fine
            len: 1 << 19,
        };
        assert_eq!(
            classify(&r.encode(), &L),
            Action::BlockStatus {
                cookie: 9,
                offset: 100,
                len: 1 << 19,
                flags: CMD_FLAG_REQ_ONE
            }
        );
        for (offset, len) in [(0, 0), ((1 << 20) - 512, 1024), (u64::MAX - 10, 512)] {
            (r.offset, r.len) = (offset, len);
            assert_eq!(
                classify(&r.encode(), &L),
                Action::Refuse {
                    cookie: 9,
                    error: EINVAL
                },
                "{offset} {len}"
            );
        }
    }

    const SIMPLE: Session = Session {
        structured_replies: false,
        base_allocation: false,
    };
    const STRUCTURED: Session = Session {
        structured_replies: true,
        base_allocation: false,
    };
    const ALLOCATION: Session = Session {
        structured_replies: true,
        base_allocation: true,
    };

    #[test]
    fn simple_replies_until_structured_ones_are_negotiated() {
        let h = data_header(SIMPLE, 7, 4096, 8192, true, false).unwrap();
        assert_eq!(
            h.as_bytes(),
            &SimpleReply {
                error: 0,
                cookie: 7
            }
            .encode()
        );
        assert_eq!(data_header(SIMPLE, 7, 4096, 8192, false, true), None);
        let e = error_reply(SIMPLE, 7, EIO);
        assert_eq!(
            e.as_bytes(),
            &SimpleReply {
                error: EIO,
                cookie: 7
            }
            .encode()
        );
        assert!(!can_fail_midway(SIMPLE) && can_fail_midway(STRUCTURED));
    }

    #[test]
    fn structured_reads_are_offset_data_chunks_and_errors_error_chunks() {
        for (first, last) in [(true, true), (true, false), (false, true)] {
            let h = data_header(STRUCTURED, 7, 1 << 33, 4096, first, last).unwrap();
            assert_eq!(h.len(), STRUCTURED_REPLY_LEN + 8);
            let c = ChunkHeader::decode(h.as_bytes()).unwrap();
            assert_eq!(
                (c.kind, c.cookie, c.len, c.done()),
                (REPLY_TYPE_OFFSET_DATA, 7, 8 + 4096, last)
            );
            assert_eq!(be64(&h.as_bytes()[20..]), 1 << 33);
        }
        let e = error_reply(STRUCTURED, 7, EINVAL);
        assert_eq!(e.len(), STRUCTURED_REPLY_LEN + 6);
        let c = ChunkHeader::decode(e.as_bytes()).unwrap();
        assert_eq!(
            (c.kind, c.cookie, c.len, c.done()),
            (REPLY_TYPE_ERROR, 7, 6, true)
        );
        assert_eq!(be32(&e.as_bytes()[20..]), EINVAL);
        assert_eq!(be16(&e.as_bytes()[24..]), 0);
    }

    /// The extents of a block-status reply, checked for framing.
    fn extents(h: &ReplyHeader) -> Vec<(u32, u32)> {
        let b = h.as_bytes();
        let c = ChunkHeader::decode(b).unwrap();
        assert_eq!(
            (c.kind, c.cookie, c.done()),
            (REPLY_TYPE_BLOCK_STATUS, 7, true)
        );
        assert_eq!(c.len as usize, b.len() - STRUCTURED_REPLY_LEN);
        assert_eq!(be32(&b[20..]), BASE_ALLOCATION_ID);
        b[24..]
            .chunks_exact(8)
            .map(|e| (be32(e), be32(&e[4..])))
            .collect()
    }

    const K: u32 = 1024;
    const HOLE: u32 = STATE_HOLE | STATE_ZERO;

    /// A 1 MiB sparse file with data at [256 KiB, 320 KiB).
    fn sparse() -> tempfile::NamedTempFile {
        use std::os::unix::fs::FileExt;
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(1 << 20).unwrap();
        f.as_file()
            .write_all_at(&[0xa5; 64 << 10], 256 << 10)
            .unwrap();
        f.as_file().sync_all().unwrap();
        f
    }

    #[test]
    fn block_status_reports_a_sparse_files_holes_and_data() {
        let f = sparse();
        let file = Some(f.as_file());
        let bs = |offset: u64, len: u32, flags: u16, align: u32| {
            extents(&block_status(
                ALLOCATION, 7, offset, len, flags, file, align,
            ))
        };
        assert_eq!(
            bs(0, 1 << 20, 0, 512),
            vec![(256 * K, HOLE), (64 * K, 0), (704 * K, HOLE)]
        );
        // The request's range bounds every extent; REQ_ONE gives one.
        assert_eq!(
            bs(300 * K as u64, 100 * K, 0, 512),
            vec![(20 * K, 0), (80 * K, HOLE)]
        );
        assert_eq!(bs(0, 1 << 20, CMD_FLAG_REQ_ONE, 512), vec![(256 * K, HOLE)]);
        assert_eq!(bs(0, 100 * K, CMD_FLAG_REQ_ONE, 512), vec![(100 * K, HOLE)]);
        assert_eq!(
            bs(260 * K as u64, 4 * K, CMD_FLAG_REQ_ONE, 1),
            vec![(4 * K, 0)]
        );
        // Boundaries on the minimum block size: the partly written block is data.
        assert_eq!(
            bs(0, 1 << 20, 0, 192 * K),
            vec![(192 * K, HOLE), (192 * K, 0), (640 * K, HOLE)]
        );
        // No context selected: EINVAL, as an error chunk.
        let e = block_status(STRUCTURED, 7, 0, 4096, 0, file, 512);
        assert_eq!(
            ChunkHeader::decode(e.as_bytes()).unwrap().kind,
            REPLY_TYPE_ERROR
        );
        assert_eq!(be32(&e.as_bytes()[20..]), EINVAL);
    }

    #[test]
    fn block_status_is_capped_at_its_extent_limit_and_null_is_all_zero() {
        use std::os::unix::fs::FileExt;
        // Data in every other 64 KiB of 2 MiB: 32 extents, more than one reply carries.
        let f = tempfile::NamedTempFile::new().unwrap();
        f.as_file().set_len(2 << 20).unwrap();
        for k in (0..32u64).step_by(2) {
            f.as_file().write_all_at(&[1; 64 << 10], k << 16).unwrap();
        }
        let e = extents(&block_status(
            ALLOCATION,
            7,
            0,
            2 << 20,
            0,
            Some(f.as_file()),
            4096,
        ));
        assert_eq!(e.len(), MAX_EXTENTS);
        assert!(
            e.iter()
                .enumerate()
                .all(|(k, x)| *x == (64 * K, if k % 2 == 0 { 0 } else { HOLE }))
        );
        // A fully written file is one data extent.
        let full = tempfile::NamedTempFile::new().unwrap();
        full.as_file().write_all_at(&[1; 256 << 10], 0).unwrap();
        let e = extents(&block_status(
            ALLOCATION,
            7,
            0,
            256 * K,
            0,
            Some(full.as_file()),
            4096,
        ));
        assert_eq!(e, vec![(256 * K, 0)]);
        // The null back end stores nothing and reads as zeros.
        let e = extents(&block_status(ALLOCATION, 7, 512, 3 * K, 0, None, 1));
        assert_eq!(e, vec![(3 * K, HOLE)]);
    }
}
