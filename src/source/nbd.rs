//! A remote source: one export of an NBD server, named by a URL (`nbd://HOST:PORT/EXPORT`,
//! `nbd+unix:///EXPORT?socket=PATH`). Its size and block sizes are what the server advertised;
//! the identity of a readlab-prepared image is learned from the data itself (the first sector's
//! header), so `--verify` works on an export that serves a prepared file. Each worker gets its
//! own connection.

use super::{Alignment, Handle, Source, Target, TargetKind, WorkerOpen};
use crate::data;
use crate::error::{Error, Result};
use crate::nbd::{Advertised, Connection, NbdUrl};
use std::sync::{Arc, Mutex};

/// An NBD export, negotiated once to learn what it is; a control connection stays open for the
/// few identity reads made before a run.
pub struct NbdSource {
    url: NbdUrl,
    advertised: Advertised,
    control: Mutex<Connection>,
    prepared_id: Option<u64>,
}

fn connect_error(url: &NbdUrl, e: std::io::Error) -> Error {
    Error::Engine(format!(
        "{url}: cannot reach the NBD export: {e}; check that the server runs and the address is right"
    ))
}

impl NbdSource {
    /// Connect to `url`, negotiate, and read the first sector to learn whether readlab prepared it.
    pub fn open(url: &str) -> Result<NbdSource> {
        let url = NbdUrl::parse(url).map_err(Error::InvalidArgument)?;
        let conn = Connection::open(&url, false).map_err(|e| connect_error(&url, e))?;
        let prepared_id = read_id(&conn, 0);
        Ok(NbdSource {
            advertised: conn.advertised.clone(),
            url,
            control: Mutex::new(conn),
            prepared_id,
        })
    }

    /// Everything the server advertised.
    pub fn advertised(&self) -> &Advertised {
        &self.advertised
    }
}

/// What the server says when asked everything (`readlab info nbd://…`): its exports too.
pub fn describe(url: &str) -> Result<Advertised> {
    let url = NbdUrl::parse(url).map_err(Error::InvalidArgument)?;
    let conn = Connection::open(&url, true).map_err(|e| connect_error(&url, e))?;
    conn.disconnect();
    Ok(conn.advertised)
}

/// The file id of the readlab sector at `offset`, if there is one.
fn read_id(conn: &Connection, offset: u64) -> Option<u64> {
    if offset + data::SECTOR as u64 > conn.size() {
        return None;
    }
    let mut buf = vec![0u8; data::SECTOR];
    conn.read_at(offset, &mut buf).ok()?;
    data::sector_file_id(&buf, offset)
}

impl Drop for NbdSource {
    fn drop(&mut self) {
        if let Ok(c) = self.control.lock() {
            c.disconnect();
        }
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
        let conn = self.control.lock().unwrap();
        read_id(&conn, offset) == Some(id)
    }

    fn open_worker(&self, _how: &WorkerOpen) -> Result<Handle> {
        let conn = Connection::open(&self.url, false).map_err(|e| connect_error(&self.url, e))?;
        Ok(Handle::Nbd(Arc::new(conn)))
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
pub fn render(url: &str, a: &Advertised) -> String {
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
    if let Some(d) = &e.description {
        s += &format!("  description     {d}\n");
    }
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
