//! The client's side of the handshake: the greeting, optionally the server's list of exports,
//! then `NBD_OPT_GO` (falling back to `EXPORT_NAME` for old servers), recording everything the
//! server advertised for `readlab info`.

use super::shared::{
    BlockSizes, ExportInfo, invalid, read_option_reply, read_u16, read_u64, refusal, send_option,
    skip,
};
use crate::nbd::proto::*;
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};

/// Everything a server said during the client's negotiation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Advertised {
    pub handshake_flags: u16,
    pub export: ExportInfo,
    /// `NBD_OPT_GO`, or `NBD_OPT_EXPORT_NAME` for a server without GO.
    pub negotiated_with: String,
    /// The server's `NBD_OPT_LIST`, when asked for: (name, description) pairs, or why not.
    pub list: Option<Result<Vec<(String, String)>, String>>,
}

/// The client's side: negotiate `export` (optionally listing the exports first) and leave the
/// stream at the start of transmission.
pub fn client_handshake<S: Read + Write>(
    s: &mut S,
    export: &str,
    list: bool,
) -> io::Result<Advertised> {
    let hflags = greet(s)?;
    let fixed = hflags & FLAG_FIXED_NEWSTYLE != 0;
    let no_zeroes = hflags & FLAG_NO_ZEROES != 0;
    let listed = if list && fixed {
        Some(list_exports(s)?)
    } else {
        None
    };
    let mut info = ExportInfo {
        name: export.into(),
        description: None,
        size: 0,
        flags: 0,
        block_sizes: None,
    };
    let negotiated_with = if fixed && go(s, export, &mut info)? {
        "NBD_OPT_GO"
    } else {
        send_option(s, OPT_EXPORT_NAME, export.as_bytes())?;
        info.size = read_u64(s).map_err(|e| {
            if e.kind() != io::ErrorKind::UnexpectedEof {
                return e;
            }
            refusal(format!(
                "the server closed the connection on NBD_OPT_EXPORT_NAME '{export}' (an older \
                 server's way of refusing an export it does not have); name one of its exports \
                 in the URL (`nbdinfo --list URL` lists them)"
            ))
        })?;
        info.flags = read_u16(s)?;
        if !no_zeroes {
            skip(s, 124)?;
        }
        "NBD_OPT_EXPORT_NAME"
    };
    Ok(Advertised {
        handshake_flags: hflags,
        export: info,
        negotiated_with: negotiated_with.into(),
        list: listed,
    })
}

/// Read the server's greeting and answer with the client's flags: the server's handshake flags.
fn greet<S: Read + Write>(s: &mut S) -> io::Result<u16> {
    let magic = read_u64(s)?;
    if magic != NBDMAGIC {
        return Err(invalid(format!("not an NBD server (greeting {magic:#x})")));
    }
    let magic = read_u64(s)?;
    if magic == CLISERV_MAGIC {
        return Err(refusal(
            "the server speaks only the oldstyle handshake (dropped from the NBD protocol), \
             which readlab does not; serve the export with the newstyle handshake (nbdkit \
             without -o/--oldstyle, qemu-nbd, nbd-server)",
        ));
    }
    if magic != IHAVEOPT {
        return Err(invalid(format!("bad newstyle magic {magic:#x}")));
    }
    let hflags = read_u16(s)?;
    let mut cflags = 0u32;
    if hflags & FLAG_FIXED_NEWSTYLE != 0 {
        cflags |= FLAG_C_FIXED_NEWSTYLE;
    }
    if hflags & FLAG_NO_ZEROES != 0 {
        cflags |= FLAG_C_NO_ZEROES;
    }
    s.write_all(&cflags.to_be_bytes())?;
    Ok(hflags)
}

/// `NBD_OPT_LIST`: the server's (name, description) pairs, or the error it answered.
fn list_exports<S: Read + Write>(s: &mut S) -> io::Result<Result<Vec<(String, String)>, String>> {
    send_option(s, OPT_LIST, &[])?;
    let mut names = Vec::new();
    loop {
        let (kind, d) = read_option_reply(s, OPT_LIST)?;
        match kind {
            REP_SERVER if d.len() >= 4 => {
                let n = (be32(&d) as usize).min(d.len() - 4);
                names.push((
                    String::from_utf8_lossy(&d[4..4 + n]).into_owned(),
                    String::from_utf8_lossy(&d[4 + n..]).into_owned(),
                ));
            }
            REP_ACK => return Ok(Ok(names)),
            k if is_rep_err(k) => return Ok(Err(rep_name(k))),
            k => {
                return Err(invalid(format!(
                    "unexpected {} to NBD_OPT_LIST",
                    rep_name(k)
                )));
            }
        }
    }
}

/// `NBD_OPT_GO` for `export`, filling `info` with what the server says: false when the server
/// does not know GO (an older server: `EXPORT_NAME` then).
fn go<S: Read + Write>(s: &mut S, export: &str, info: &mut ExportInfo) -> io::Result<bool> {
    let mut d = (export.len() as u32).to_be_bytes().to_vec();
    d.extend_from_slice(export.as_bytes());
    let reqs = [INFO_BLOCK_SIZE, INFO_DESCRIPTION];
    d.extend_from_slice(&(reqs.len() as u16).to_be_bytes());
    for r in reqs {
        d.extend_from_slice(&r.to_be_bytes());
    }
    send_option(s, OPT_GO, &d)?;
    let mut have_export = false;
    loop {
        let (kind, d) = read_option_reply(s, OPT_GO)?;
        match kind {
            REP_INFO if d.len() >= 2 => match be16(&d) {
                INFO_EXPORT if d.len() == 12 => {
                    info.size = be64(&d[2..]);
                    info.flags = be16(&d[10..]);
                    have_export = true;
                }
                INFO_BLOCK_SIZE if d.len() == 14 => {
                    info.block_sizes = Some(BlockSizes {
                        minimum: be32(&d[2..]),
                        preferred: be32(&d[6..]),
                        maximum: be32(&d[10..]),
                    })
                }
                INFO_DESCRIPTION => {
                    info.description = Some(String::from_utf8_lossy(&d[2..]).into_owned())
                }
                _ => {} // other information: ignored, as the protocol asks
            },
            REP_ACK if have_export => return Ok(true),
            REP_ACK => {
                return Err(invalid(
                    "the server acknowledged NBD_OPT_GO without NBD_INFO_EXPORT",
                ));
            }
            REP_ERR_UNSUP => return Ok(false), // an older server: EXPORT_NAME then
            k if is_rep_err(k) => {
                return Err(refusal(go_refused(export, k, &String::from_utf8_lossy(&d))));
            }
            k => return Err(invalid(format!("unexpected {} to NBD_OPT_GO", rep_name(k)))),
        }
    }
}

/// What the server's error reply `kind` (with its message `msg`) to `NBD_OPT_GO` for `export`
/// means, and what to do about it.
fn go_refused(export: &str, kind: u32, msg: &str) -> String {
    let said = if msg.is_empty() {
        String::new()
    } else {
        format!(" (it said: {msg})")
    };
    let named = if export.is_empty() {
        "the default export (no name)".to_string()
    } else {
        format!("export '{export}'")
    };
    match kind {
        REP_ERR_TLS_REQD => format!(
            "the server requires TLS{said}, which readlab does not speak; serve the export \
             without TLS (nbdkit --tls=off, qemu-nbd without --tls-creds)"
        ),
        REP_ERR_UNKNOWN => format!(
            "the server has no {named}{said}; name one of its exports in the URL \
             (nbd://HOST:PORT/EXPORT; `nbdinfo --list URL` lists them)"
        ),
        REP_ERR_POLICY => format!(
            "the server's policy refuses {named} to this client{said}; allow it in the \
             server's configuration (e.g. its allowed addresses)"
        ),
        REP_ERR_SHUTDOWN => {
            format!("the server is shutting down{said}; try again once it is back")
        }
        REP_ERR_BLOCK_SIZE_REQD => format!(
            "the server requires clients that ask for block sizes before {named}{said}; \
             readlab asks, so this server does not follow the NBD protocol"
        ),
        k => format!(
            "the server refused {named}: NBD_REP_{}{said}; see the server's log",
            rep_name(k)
        ),
    }
}
