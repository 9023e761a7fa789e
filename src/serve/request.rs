//! What the server does with each transmission request, decided alike by both server models:
//! read, refuse with an error (per request, the connection goes on), skip a write's payload and
//! refuse it, end the connection on `NBD_CMD_DISC`, or hang up on a client that broke the
//! protocol in a way the stream cannot recover from.

use crate::nbd::proto::*;

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

/// The reply header for `cookie`.
pub fn reply(cookie: u64, error: u32) -> [u8; SIMPLE_REPLY_LEN] {
    SimpleReply { error, cookie }.encode()
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
        for k in [CMD_FLUSH, CMD_CACHE, CMD_BLOCK_STATUS, 77] {
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
}
