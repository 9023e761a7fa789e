//! A remote source: one export of an NBD server, named by a URL (`nbd://HOST:PORT/EXPORT`,
//! `nbd+unix:///EXPORT?socket=PATH`). Its size and block sizes are what the server advertised;
//! the identity of a readlab-prepared image is learned from the data itself (the first sector's
//! header), so `--verify` works on an export that serves a prepared file. The connection that
//! learned all this becomes the first worker's, and each other worker opens its own: a run
//! holds exactly one connection per worker, nothing idle beside them (a server that takes one
//! client at a time, like qemu-nbd by default, serves a one-worker run). `readlab info` learns
//! the same way ([`NbdSource::open_listing`]). Requests outside the advertised block sizes are
//! refused before a run, and the source can close its workers' connections under them
//! ([`Source::abort`]).

use super::{Alignment, Handle, Source, Target, TargetKind, WorkerOpen};
use crate::data;
use crate::error::{Error, Result};
use crate::nbd::client::is_no_greeting;
use crate::nbd::handshake::is_refusal;
use crate::nbd::wait::cut_of;
use crate::nbd::{Advertised, Connection, NbdUrl};
use std::sync::{Arc, Mutex, Weak};

/// Largest read a client should send a server that advertised no block sizes (the protocol's
/// advice for interoperability).
pub const DEFAULT_MAXIMUM: u64 = 32 << 20;

/// An NBD export, negotiated once to learn what it is.
pub struct NbdSource {
    url: NbdUrl,
    advertised: Advertised,
    /// The connection that negotiated and read the identity, until the first worker takes it.
    first: Mutex<Option<Connection>>,
    /// Every connection handed to a worker, so [`Source::abort`] can close them.
    live: Mutex<Vec<Weak<Connection>>>,
    prepared_id: Option<u64>,
}

/// Why connecting and negotiating failed: a signal ([`Error::InterruptedWhile`]), the server's
/// own answer, or the server could not be reached (the address is then in question).
fn connect_error(url: &NbdUrl, e: std::io::Error) -> Error {
    if let Some(c) = cut_of(&e) {
        return Error::InterruptedWhile(c.0.clone());
    }
    if is_no_greeting(&e) || is_refusal(&e) {
        return Error::Engine(format!("{url}: {e}"));
    }
    Error::Engine(format!(
        "{url}: cannot reach the NBD export: {e}; check that the server runs and the address is right"
    ))
}

impl NbdSource {
    /// Connect to `url`, negotiate, and read the first sector to learn whether readlab prepared it.
    pub fn open(url: &str) -> Result<NbdSource> {
        Self::open_listing(url, false)
    }

    /// [`NbdSource::open`], asking the server for its list of exports first when `list`
    /// (`readlab info`).
    pub fn open_listing(url: &str, list: bool) -> Result<NbdSource> {
        let url = NbdUrl::parse(url)?;
        if let Some(ns) = &url.netns
            && !crate::netns::path(ns).exists()
        {
            return Err(Error::invalid(format!(
                "{url}: network namespace '{ns}' does not exist ({} has no such name); \
                 `ip netns list` shows them",
                crate::netns::RUN_DIR
            )));
        }
        let conn = Connection::open(&url, list).map_err(|e| connect_error(&url, e))?;
        if !list {
            check_block_sizes(&url, &conn.advertised)?;
        }
        let prepared_id = read_id(&conn, 0).map_err(|e| match cut_of(&e) {
            Some(c) => Error::InterruptedWhile(c.0.clone()),
            None => Error::Engine(format!("{url}: reading the first sector: {e}")),
        })?;
        Ok(NbdSource {
            advertised: conn.advertised.clone(),
            url,
            first: Mutex::new(Some(conn)),
            live: Mutex::new(Vec::new()),
            prepared_id,
        })
    }

    /// Everything the server advertised.
    pub fn advertised(&self) -> &Advertised {
        &self.advertised
    }

    /// Close the connection this source negotiated on, if no worker took it.
    pub fn close(&self) {
        if let Some(c) = self.first.lock().unwrap_or_else(|p| p.into_inner()).take() {
            c.disconnect();
        }
    }

    /// Why a worker's connection could not be opened, with what the first connection learned.
    fn worker_error(&self, nth: usize, e: std::io::Error) -> Error {
        if !is_no_greeting(&e) {
            return connect_error(&self.url, e);
        }
        let multi = if self.advertised.export.multi_conn() {
            "it advertised multi-conn (several connections to this export are consistent), so \
             it is its connection limit that holds"
        } else {
            "it did not advertise multi-conn"
        };
        Error::Engine(format!(
            "{}: connection {} of the run (one per worker): {e}; {multi}; run with --numjobs {} \
             or raise the server's limit (qemu-nbd -e N)",
            self.url,
            nth + 1,
            nth.max(1)
        ))
    }
}

/// A server whose block size constraints break the protocol's rules cannot be read from by
/// them: refused, naming them.
fn check_block_sizes(url: &NbdUrl, a: &Advertised) -> Result<()> {
    let Some(b) = a.export.block_sizes else {
        return Ok(());
    };
    match b.problem() {
        None => Ok(()),
        Some(why) => Err(Error::Engine(format!(
            "{}: the server advertised block sizes no NBD client can follow (minimum {} B, \
             preferred {} B, maximum {} B): {why}; fix the server's block size settings",
            url.server(),
            b.minimum,
            b.preferred,
            b.maximum
        ))),
    }
}

/// What `readlab info nbd://…` learns: everything the server advertised (its exports too) and
/// the identity of a readlab-prepared image on it, over one connection, closed after.
pub fn describe(url: &str) -> Result<(Advertised, Option<u64>)> {
    let s = NbdSource::open_listing(url, true)?;
    s.close();
    Ok((s.advertised.clone(), s.prepared_id))
}

/// The file id of the readlab sector at `offset`, if there is one. An error reply says there is
/// none; an error of the connection (a timeout, a broken reply) is returned: it cannot be used.
fn read_id(conn: &Connection, offset: u64) -> std::io::Result<Option<u64>> {
    if offset + data::SECTOR as u64 > conn.size() {
        return Ok(None);
    }
    let mut buf = vec![0u8; data::SECTOR];
    match conn.read_at(offset, &mut buf) {
        Ok(()) => Ok(data::sector_file_id(&buf, offset)),
        Err(e) if e.raw_os_error().is_some() => Ok(None),
        Err(e) => Err(e),
    }
}

impl Drop for NbdSource {
    fn drop(&mut self) {
        self.close();
    }
}

impl Source for NbdSource {
    fn name(&self) -> String {
        self.url.to_string()
    }

    fn size(&self) -> u64 {
        self.advertised.export.size
    }

    /// The client keeps no cache: every read goes to the server, whichever of --direct or
    /// --buffered was asked for (what the server caches is its business). Offsets and lengths
    /// follow the export's minimum block size.
    fn direct(&self) -> Option<Alignment> {
        let min = self
            .advertised
            .export
            .block_sizes
            .map_or(1, |b| b.minimum.max(1)) as u64;
        Some(Alignment {
            offset: min,
            memory: 1,
        })
    }

    fn prepared_id(&self) -> Option<u64> {
        self.prepared_id
    }

    fn prepared_at(&self, offset: u64) -> bool {
        let Some(id) = self.prepared_id else {
            return false;
        };
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        let r = match first.as_ref() {
            Some(c) => read_id(c, offset),
            // The first worker took it: a connection of its own, closed after.
            None => match Connection::open(&self.url, false) {
                Ok(c) => {
                    let r = read_id(&c, offset);
                    c.disconnect();
                    r
                }
                Err(_) => return false,
            },
        };
        match r {
            Ok(got) => got == Some(id),
            Err(_) => {
                // The connection is broken: no worker gets it.
                if let Some(c) = first.take() {
                    c.disconnect();
                }
                false
            }
        }
    }

    fn open_worker(&self, _how: &WorkerOpen) -> Result<Handle> {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        let taken = self.first.lock().unwrap_or_else(|p| p.into_inner()).take();
        let conn = match taken {
            Some(c) => c,
            None => {
                Connection::open(&self.url, false).map_err(|e| self.worker_error(live.len(), e))?
            }
        };
        let conn = Arc::new(conn);
        live.push(Arc::downgrade(&conn));
        Ok(Handle::Nbd(conn))
    }

    /// Requests the server said it would not take are refused: larger than its maximum,
    /// smaller than its minimum or not a multiple of it (an offset too). Below its preferred
    /// size, a warning. A server that advertised nothing is held to the protocol's advice.
    fn check_requests(&self, bs: u64, offset: u64) -> Result<Vec<String>> {
        let mut warnings = Vec::new();
        let name = self.url.server();
        let Some(b) = self.advertised.export.block_sizes else {
            if bs > DEFAULT_MAXIMUM {
                warnings.push(format!(
                    "{name}: --bs {bs} B is above {DEFAULT_MAXIMUM} B, the largest read the NBD \
                     protocol advises when a server advertises no block sizes (this one did \
                     not); it may refuse such reads"
                ));
            }
            return Ok(warnings);
        };
        let (min, pref, max) = (
            b.minimum.max(1) as u64,
            b.preferred as u64,
            b.maximum as u64,
        );
        let sizes = format!(
            "the server's block sizes: minimum {min} B, preferred {pref} B, maximum {max} B"
        );
        if bs > max {
            return Err(Error::invalid(format!(
                "{name}: --bs {bs} B is larger than the server accepts ({sizes}); use --bs {} \
                 or less",
                max / min * min
            )));
        }
        if bs < min || !bs.is_multiple_of(min) {
            return Err(Error::invalid(format!(
                "{name}: --bs {bs} B is not a multiple of the server's minimum block size \
                 ({sizes}); use a multiple of {min} B"
            )));
        }
        if !offset.is_multiple_of(min) {
            return Err(Error::invalid(format!(
                "{name}: --offset {offset} is not a multiple of the server's minimum block size \
                 ({sizes}); use a multiple of {min} B"
            )));
        }
        if bs < pref {
            warnings.push(format!(
                "{name}: --bs {bs} B is below the server's preferred block size {pref} B: it may \
                 serve each read with more work than the read needs"
            ));
        }
        Ok(warnings)
    }

    fn abort(&self, why: &str) -> bool {
        for c in self
            .live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter_map(Weak::upgrade)
        {
            c.abort(why);
        }
        true
    }

    fn describe(&self) -> Target {
        Target {
            path: self.url.to_string().into(),
            kind: TargetKind::Nbd,
            size: self.size(),
            dio_offset_align: self.direct().map_or(1, |a| a.offset),
            dio_mem_align: 1,
            direct_supported: true,
            prepared_id: self.prepared_id,
        }
    }
}

/// What `readlab info nbd://…` prints.
pub fn render(url: &str, a: &Advertised, prepared_id: Option<u64>) -> String {
    use crate::nbd::proto::{FLAG_FIXED_NEWSTYLE, FLAG_NO_ZEROES, flag_names};
    let e = &a.export;
    let mut s = format!("{url}: NBD export '{}'\n", e.name);
    s += &format!("  size            {} B\n", e.size);
    s += &format!(
        "  handshake       {}{}{}\n",
        if a.handshake_flags & FLAG_FIXED_NEWSTYLE != 0 {
            "fixed newstyle"
        } else {
            "newstyle"
        },
        if a.handshake_flags & FLAG_NO_ZEROES != 0 {
            ", no-zeroes"
        } else {
            ""
        },
        format_args!(", negotiated with {}", a.negotiated_with)
    );
    s += &format!(
        "  flags           {} ({:#06x})\n",
        flag_names(e.flags),
        e.flags
    );
    s += &format!("  read-only       {}\n", e.read_only());
    s += &format!("  multi-conn      {}\n", e.multi_conn());
    match e.block_sizes {
        Some(b) => {
            s += &format!(
                "  block sizes     minimum {} B, preferred {} B, maximum {} B\n",
                b.minimum, b.preferred, b.maximum
            )
        }
        None => s += "  block sizes     not advertised\n",
    }
    if let Some(why) = e.block_sizes.and_then(|b| b.problem()) {
        s += &format!("  block sizes     invalid: {why} (readlab refuses to run on them)\n");
    }
    if let Some(d) = &e.description {
        s += &format!("  description     {d}\n");
    }
    s += &match prepared_id {
        Some(id) => format!("  prepared        by readlab (file id {id:#018x}): --verify works\n"),
        None => "  prepared        no (not readlab's data): --verify cannot be used\n".into(),
    };
    match &a.list {
        Some(Ok(l)) => {
            let names: Vec<String> = l.iter().map(|(n, _)| format!("'{n}'")).collect();
            s += &format!("  exports listed  {}\n", names.join(", "));
        }
        Some(Err(why)) => s += &format!("  exports listed  refused: {why}\n"),
        None => {}
    }
    s
}
