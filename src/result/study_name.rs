//! A study's name as a type: what `StudyTag` stores and results files carry. Only the registry in
//! `study/mod.rs` makes one, so every `StudyName` names a registered study. Here with the results
//! that carry it, below the studies (`crate::study` re-exports it and reads it back against its
//! registry), so a result names no study module.

use std::fmt;

/// The name of a registered study (`latency`, `queue`, …); see [`crate::study::registry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StudyName(&'static str);

impl StudyName {
    /// Made by the registry from a registered spec's name.
    pub(crate) const fn registered(name: &'static str) -> StudyName {
        StudyName(name)
    }

    /// The name as on the command line and in results files.
    pub fn name(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for StudyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl serde::Serialize for StudyName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

impl PartialEq<str> for StudyName {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for StudyName {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}
