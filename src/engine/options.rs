//! The options engines take, as plain data: [`EngineOptions`], a store of the options that are
//! set, by column. Opaque to the core, as fio's engine options are: each engine declares its
//! options as rows of its table ([`EngineOption`](super::spec::EngineOption), which say what a
//! value means) and reads them through a typed view of its own (`UringOptions::of(&o)`). A leaf:
//! it names no engine, so the engines, the engine table and the core types can all name it.
//! How results store it (flat, `"fixed_files": true`, as readlab has always written them) is in
//! [`stored`](super::stored), which walks the engines' tables.

use std::collections::BTreeMap;

/// Engine options that only some engines understand: the value of each option set, by its
/// row's column (`fixed_files` → 1), absent when off or unset; and the SQ poll thread's idle
/// time, a setting every configuration carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineOptions {
    /// The options set, each by its row's column: what a value means is the row's to say (a
    /// switch on is 1; a setting whose 0 means off is never stored as 0).
    set: BTreeMap<&'static str, u64>,
    /// Milliseconds the SQ poll thread spins before it sleeps.
    pub sqpoll_idle_ms: u32,
}

impl EngineOptions {
    /// The column results store [`sqpoll_idle_ms`](EngineOptions::sqpoll_idle_ms) in.
    pub const SQPOLL_IDLE_MS: &'static str = "sqpoll_idle_ms";

    /// The value of the option in `column`, none when it is not set.
    pub fn get(&self, column: &str) -> Option<u64> {
        self.set.get(column).copied()
    }

    /// Whether the option in `column` is set.
    pub fn on(&self, column: &str) -> bool {
        self.set.contains_key(column)
    }

    /// Store `n` as the option in `column`, as it is: its row's
    /// [`set`](super::spec::EngineOption::set) says what a value means and is the way to set one.
    pub fn set(&mut self, column: &'static str, n: u64) {
        self.set.insert(column, n);
    }

    /// Unset the option in `column`.
    pub fn clear(&mut self, column: &str) {
        self.set.remove(column);
    }
}
