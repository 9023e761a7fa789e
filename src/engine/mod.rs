//! Read interfaces behind one small trait, like fio's `ioengine_ops` but typed: queue I/Os carrying a
//! token, submit them, reap completions. Timing and counting live in the runner, never here.
//!
//! Synchronous interfaces implement the tiny [`SyncRead`] trait; [`SyncEngine`] adapts them. Each
//! engine lives in its own file; its [`Capabilities`] are plain data.

#[cfg(test)]
mod conformance;
#[cfg(test)]
pub(crate) mod fake;
mod libaio;
mod nbd;
mod null;
pub mod option;
mod options;
mod pool;
mod posixaio;
mod psync;
mod pvsync2;
mod spec;
mod stored;
mod sync;
mod uring;

pub use nbd::NbdOptions;
pub use options::EngineOptions;
pub use pool::PoolOptions;
pub use pvsync2::Pvsync2Options;
#[cfg(test)]
pub(crate) use spec::with;
pub use spec::{
    Capabilities, Completion, Engine, EngineSetup, EngineSpec, Io, MAX_THREADS, Workload,
};
pub use sync::{SyncEngine, SyncRead};
pub use uring::{DEFAULT_SQPOLL_IDLE, UringOptions, sqpoll_idle_ms};

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Every engine readlab knows, in the order tables list them. Adding an engine is one file with
/// its [`EngineSpec`] and one line here.
pub fn registry() -> &'static [&'static EngineSpec] {
    static ALL: &[&EngineSpec] = &[
        &psync::SPEC,
        &pvsync2::SPEC,
        &libaio::SPEC,
        &uring::SPEC,
        &pool::SPEC,
        &posixaio::SPEC,
        &null::SPEC,
        &nbd::SPEC,
        #[cfg(test)]
        &fake::SPEC,
    ];
    ALL
}

/// An engine, by name: a typed handle on its [`EngineSpec`], stored in results as the name.
#[derive(Clone, Copy)]
pub struct EngineKind(&'static EngineSpec);

#[allow(non_upper_case_globals)]
impl EngineKind {
    pub const Psync: EngineKind = EngineKind(&psync::SPEC);
    pub const Pvsync2: EngineKind = EngineKind(&pvsync2::SPEC);
    pub const Libaio: EngineKind = EngineKind(&libaio::SPEC);
    pub const Uring: EngineKind = EngineKind(&uring::SPEC);
    pub const Pool: EngineKind = EngineKind(&pool::SPEC);
    pub const Posixaio: EngineKind = EngineKind(&posixaio::SPEC);
    pub const Null: EngineKind = EngineKind(&null::SPEC);
}

impl EngineKind {
    /// Every registered engine.
    pub fn all() -> impl Iterator<Item = EngineKind> {
        registry().iter().map(|s| EngineKind(s))
    }

    /// Its place in the registry, for tables that list engines in the registry's order.
    pub fn index(self) -> usize {
        registry()
            .iter()
            .position(|s| s.name == self.0.name)
            .unwrap_or(usize::MAX)
    }

    pub fn spec(self) -> &'static EngineSpec {
        self.0
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn parse(name: &str) -> Result<EngineKind> {
        EngineKind::all()
            .find(|k| k.name() == name)
            .ok_or_else(|| Error::UnknownEngine {
                name: name.into(),
                known: EngineKind::all()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    pub fn capabilities(self) -> Capabilities {
        self.0.capabilities
    }

    /// The report's label letter for this interface.
    pub fn label_prefix(self) -> &'static str {
        self.0.label
    }

    /// fio's name for the same interface.
    pub fn fio_name(self) -> &'static str {
        self.0.fio_name
    }

    /// The interface in words (`io_uring`, `thread pool`).
    pub fn words(self) -> &'static str {
        self.0.words
    }
}

impl PartialEq for EngineKind {
    fn eq(&self, other: &EngineKind) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for EngineKind {}

impl std::hash::Hash for EngineKind {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.name.hash(h)
    }
}

impl std::fmt::Debug for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EngineKind({})", self.0.name)
    }
}

impl Serialize for EngineKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.0.name)
    }
}

/// In the JSON reference: one of the registered engines' names.
impl schemars::JsonSchema for EngineKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EngineKind".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = registry().iter().map(|e| e.name).collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

impl<'de> Deserialize<'de> for EngineKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<EngineKind, D::Error> {
        let name = String::deserialize(d)?;
        EngineKind::parse(&name).map_err(serde::de::Error::custom)
    }
}

/// Create an engine of `kind` for one worker thread.
pub fn open(kind: EngineKind, setup: EngineSetup) -> Result<Box<dyn Engine>> {
    (kind.0.open)(setup)
}
