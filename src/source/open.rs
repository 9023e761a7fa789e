//! Which kind of source a path names: an NBD URL or a local file or device. Apart from
//! `source/mod.rs`, whose trait every kind of source implements, so that the sources and the
//! module choosing among them do not name each other.

use super::{Source, Target, nbd};
use crate::error::Result;
use std::path::Path;

/// Open what `spec` names as a source: an NBD URL, or a local file or device.
pub fn open(spec: &Path) -> Result<Box<dyn Source>> {
    if let Some(url) = spec.to_str().filter(|s| crate::nbd::NbdUrl::is_url(s)) {
        return Ok(Box::new(nbd::NbdSource::open(url)?));
    }
    Ok(Box::new(Target::inspect(spec)?))
}
