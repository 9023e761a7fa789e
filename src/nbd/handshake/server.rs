//! The server's side of the handshake: the greeting, then each option answered in turn
//! (`NBD_OPT_GO`/`INFO` with `NBD_INFO_EXPORT` and `NBD_INFO_BLOCK_SIZE`, `EXPORT_NAME`, `LIST`,
//! `ABORT`, `STRUCTURED_REPLY`, `LIST_META_CONTEXT`/`SET_META_CONTEXT` for `base:allocation`,
//! `ERR_UNSUP` for the rest) until the client chooses the export or leaves.

use super::shared::{ExportInfo, Session, invalid, option_reply, read_u32, read_u64, skip};
use crate::nbd::proto::*;
use std::io::{self, Read, Write};

/// Largest option payload the server reads into memory; a longer one is skipped unread and
/// answered `NBD_REP_ERR_TOO_BIG` (strings are at most 4 KiB by the protocol).
pub const MAX_OPTION_DATA: u32 = 16 << 10;
/// Options one negotiation may send before the server gives up on the client.
pub const MAX_OPTIONS: usize = 256;

/// The metadata context ID the server gives `base:allocation`.
pub const BASE_ALLOCATION_ID: u32 = 1;

/// How a server's negotiation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerOutcome {
    /// Transmission starts; the client asked for this export name and negotiated `session`.
    Transmission { export: String, session: Session },
    /// The client sent `NBD_OPT_ABORT` (answered) or left.
    Aborted,
}

fn info_export(e: &ExportInfo) -> Vec<u8> {
    let mut d = INFO_EXPORT.to_be_bytes().to_vec();
    d.extend_from_slice(&e.size.to_be_bytes());
    d.extend_from_slice(&e.flags.to_be_bytes());
    d
}

/// Whether a client may have `name`: the export's own name, or any name when it has none (no
/// `--export`).
fn known_name(export: &ExportInfo, name: &str) -> bool {
    export.name.is_empty() || export.name == name
}

/// The `NBD_REP_ERR_UNKNOWN` message for a name the server does not export.
fn unknown_name(export: &ExportInfo, name: &str) -> String {
    let shown: String = name.chars().take(64).collect();
    format!(
        "no export named '{shown}' here; this server exports '{}'",
        export.name
    )
}

/// The server's side: send the greeting, answer options until the client chooses the export
/// (its name, or any name when the export has none) or leaves. A client breaking the protocol
/// (bad magic, unknown client flags, endless options, an unknown name with `EXPORT_NAME`) ends
/// it with an error: hang up.
pub fn server_handshake<S: Read + Write>(
    s: &mut S,
    export: &ExportInfo,
) -> io::Result<ServerOutcome> {
    let no_zeroes = greet(s)?;
    let mut n = Negotiation {
        export,
        no_zeroes,
        structured: false,
        allocation_for: None,
    };
    for _ in 0..MAX_OPTIONS {
        let magic = match read_u64(s) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                return Ok(ServerOutcome::Aborted);
            }
            Err(e) => return Err(e),
        };
        if magic != IHAVEOPT {
            return Err(invalid(format!("bad option magic {magic:#x}")));
        }
        let opt = read_u32(s)?;
        let len = read_u32(s)?;
        if len > MAX_OPTION_DATA {
            skip(s, len as u64)?;
            if opt == OPT_EXPORT_NAME {
                return Err(invalid("export name longer than the protocol allows"));
            }
            option_reply(s, opt, REP_ERR_TOO_BIG, b"option data too long")?;
            continue;
        }
        let mut data = vec![0u8; len as usize];
        s.read_exact(&mut data)?;
        if let Some(outcome) = n.answer(s, opt, data)? {
            return Ok(outcome);
        }
    }
    Err(invalid(format!("more than {MAX_OPTIONS} options")))
}

/// Send the greeting and read the client's flags: whether it declined the 124 zero bytes.
fn greet<S: Read + Write>(s: &mut S) -> io::Result<bool> {
    let mut greet = Vec::with_capacity(18);
    greet.extend_from_slice(&NBDMAGIC.to_be_bytes());
    greet.extend_from_slice(&IHAVEOPT.to_be_bytes());
    greet.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    s.write_all(&greet)?;
    let cflags = read_u32(s)?;
    if cflags & !(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES) != 0 {
        return Err(invalid(format!("unknown client flags {cflags:#x}")));
    }
    Ok(cflags & FLAG_C_NO_ZEROES != 0)
}

/// What the server's negotiation keeps from one option to the next.
struct Negotiation<'a> {
    export: &'a ExportInfo,
    /// The client declined the 124 zero bytes after `EXPORT_NAME`.
    no_zeroes: bool,
    /// `NBD_OPT_STRUCTURED_REPLY` was acknowledged.
    structured: bool,
    /// The export name `base:allocation` was last selected for.
    allocation_for: Option<String>,
}

impl Negotiation<'_> {
    /// What the client negotiated, for export `name`.
    fn session(&self, name: &str) -> Session {
        Session {
            structured_replies: self.structured,
            base_allocation: self.allocation_for.as_deref() == Some(name),
        }
    }

    /// Answer option `opt`; Some when negotiation ends with it.
    fn answer(
        &mut self,
        s: &mut impl Write,
        opt: u32,
        data: Vec<u8>,
    ) -> io::Result<Option<ServerOutcome>> {
        match opt {
            OPT_EXPORT_NAME => return self.export_name(s, data).map(Some),
            OPT_ABORT => {
                let _ = option_reply(s, opt, REP_ACK, &[]);
                return Ok(Some(ServerOutcome::Aborted));
            }
            OPT_LIST => self.list(s, opt, &data)?,
            OPT_STRUCTURED_REPLY => {
                if !data.is_empty() {
                    option_reply(
                        s,
                        opt,
                        REP_ERR_INVALID,
                        b"NBD_OPT_STRUCTURED_REPLY takes no data",
                    )?;
                    return Ok(None);
                }
                self.structured = true;
                option_reply(s, opt, REP_ACK, &[])?;
            }
            OPT_LIST_META_CONTEXT | OPT_SET_META_CONTEXT => self.meta_context(s, opt, &data)?,
            OPT_INFO | OPT_GO => return self.info(s, opt, &data),
            _ => option_reply(s, opt, REP_ERR_UNSUP, &[])?,
        }
        Ok(None)
    }

    /// `NBD_OPT_EXPORT_NAME`: the export's size and flags, and transmission starts; an unknown
    /// name is an error (hang up).
    fn export_name(&self, s: &mut impl Write, data: Vec<u8>) -> io::Result<ServerOutcome> {
        let export = self.export;
        let name = String::from_utf8_lossy(&data).into_owned();
        if !known_name(export, &name) {
            // EXPORT_NAME cannot carry an error: the protocol says close.
            return Err(invalid(unknown_name(export, &name)));
        }
        let mut b = Vec::with_capacity(10 + 124);
        b.extend_from_slice(&export.size.to_be_bytes());
        b.extend_from_slice(&export.flags.to_be_bytes());
        if !self.no_zeroes {
            b.extend_from_slice(&[0u8; 124]);
        }
        s.write_all(&b)?;
        let session = self.session(&name);
        Ok(ServerOutcome::Transmission {
            export: name,
            session,
        })
    }

    /// `NBD_OPT_LIST`: the one export, with its description.
    fn list(&self, s: &mut impl Write, opt: u32, data: &[u8]) -> io::Result<()> {
        let export = self.export;
        if !data.is_empty() {
            return option_reply(s, opt, REP_ERR_INVALID, b"NBD_OPT_LIST takes no data");
        }
        let mut d = (export.name.len() as u32).to_be_bytes().to_vec();
        d.extend_from_slice(export.name.as_bytes());
        if let Some(desc) = &export.description {
            d.extend_from_slice(desc.as_bytes());
        }
        option_reply(s, opt, REP_SERVER, &d)?;
        option_reply(s, opt, REP_ACK, &[])
    }

    /// `NBD_OPT_LIST_META_CONTEXT`/`SET_META_CONTEXT`: `base:allocation` is the one context.
    fn meta_context(&mut self, s: &mut impl Write, opt: u32, data: &[u8]) -> io::Result<()> {
        let export = self.export;
        let set = opt == OPT_SET_META_CONTEXT;
        if set {
            // Replaced by this option, even when it fails.
            self.allocation_for = None;
            if !self.structured {
                return option_reply(
                    s,
                    opt,
                    REP_ERR_INVALID,
                    b"negotiate NBD_OPT_STRUCTURED_REPLY before NBD_OPT_SET_META_CONTEXT",
                );
            }
        }
        let Some((name, queries)) = parse_meta_request(data) else {
            return option_reply(s, opt, REP_ERR_INVALID, b"malformed meta context request");
        };
        if !known_name(export, &name) {
            return option_reply(
                s,
                opt,
                REP_ERR_UNKNOWN,
                unknown_name(export, &name).as_bytes(),
            );
        }
        // `base:` lists the namespace; only the full name selects the context.
        let matches = |q: &[u8]| q == CONTEXT_BASE_ALLOCATION.as_bytes() || (!set && q == b"base:");
        let chosen = (!set && queries.is_empty()) || queries.iter().any(|q| matches(q));
        if chosen {
            let id = if set { BASE_ALLOCATION_ID } else { 0 };
            let mut d = id.to_be_bytes().to_vec();
            d.extend_from_slice(CONTEXT_BASE_ALLOCATION.as_bytes());
            option_reply(s, opt, REP_META_CONTEXT, &d)?;
            if set {
                self.allocation_for = Some(name);
            }
        }
        option_reply(s, opt, REP_ACK, &[])
    }

    /// `NBD_OPT_INFO`/`GO`: the export's information; Some when GO starts transmission.
    fn info(&self, s: &mut impl Write, opt: u32, data: &[u8]) -> io::Result<Option<ServerOutcome>> {
        let export = self.export;
        let Some((name, requests)) = parse_info_request(data) else {
            option_reply(s, opt, REP_ERR_INVALID, b"malformed NBD_OPT_INFO/GO data")?;
            return Ok(None);
        };
        if !known_name(export, &name) {
            option_reply(
                s,
                opt,
                REP_ERR_UNKNOWN,
                unknown_name(export, &name).as_bytes(),
            )?;
            return Ok(None);
        }
        option_reply(s, opt, REP_INFO, &info_export(export))?;
        if let Some(bs) = export.block_sizes {
            // Sent whether asked or not: clients that did not ask ignore it.
            let mut d = INFO_BLOCK_SIZE.to_be_bytes().to_vec();
            d.extend_from_slice(&bs.minimum.to_be_bytes());
            d.extend_from_slice(&bs.preferred.to_be_bytes());
            d.extend_from_slice(&bs.maximum.to_be_bytes());
            option_reply(s, opt, REP_INFO, &d)?;
        }
        if requests.contains(&INFO_NAME) {
            let mut d = INFO_NAME.to_be_bytes().to_vec();
            d.extend_from_slice(export.name.as_bytes());
            option_reply(s, opt, REP_INFO, &d)?;
        }
        if let (true, Some(desc)) = (requests.contains(&INFO_DESCRIPTION), &export.description) {
            let mut d = INFO_DESCRIPTION.to_be_bytes().to_vec();
            d.extend_from_slice(desc.as_bytes());
            option_reply(s, opt, REP_INFO, &d)?;
        }
        option_reply(s, opt, REP_ACK, &[])?;
        if opt != OPT_GO {
            return Ok(None);
        }
        let session = self.session(&name);
        Ok(Some(ServerOutcome::Transmission {
            export: name,
            session,
        }))
    }
}

/// The export name and queries of NBD_OPT_LIST_META_CONTEXT/SET_META_CONTEXT data; None when a
/// length runs past the data or bytes are left over.
fn parse_meta_request(d: &[u8]) -> Option<(String, Vec<&[u8]>)> {
    let n = be32(d.get(0..4)?) as usize;
    let name = d.get(4..4usize.checked_add(n)?)?;
    let mut rest = d.get(4 + n..)?;
    let count = be32(rest.get(0..4)?) as usize;
    rest = &rest[4..];
    // Each query takes at least its 4-byte length: a larger count cannot be honest.
    if count > rest.len() / 4 {
        return None;
    }
    let mut queries = Vec::with_capacity(count);
    for _ in 0..count {
        let k = be32(rest.get(0..4)?) as usize;
        queries.push(rest.get(4..4usize.checked_add(k)?)?);
        rest = &rest[4 + k..];
    }
    if !rest.is_empty() {
        return None;
    }
    Some((String::from_utf8_lossy(name).into_owned(), queries))
}

/// The export name and information requests of NBD_OPT_INFO/GO data.
fn parse_info_request(d: &[u8]) -> Option<(String, Vec<u16>)> {
    let n = be32(d.get(0..4)?) as usize;
    let name = d.get(4..4usize.checked_add(n)?)?;
    let rest = d.get(4 + n..)?;
    let count = be16(rest.get(0..2)?) as usize;
    let reqs = rest.get(2..)?;
    if reqs.len() != 2 * count {
        return None;
    }
    Some((
        String::from_utf8_lossy(name).into_owned(),
        reqs.chunks_exact(2).map(be16).collect(),
    ))
}
