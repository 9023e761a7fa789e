//! Device profiles: the tuner's pick for one block size saved as JSON
//! (`profile-<bs>.json`), replayable with `readlab run --profile`.

use super::{Candidate, Goal, Recommendation};
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::units::{Style, format_bytes};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A device profile: the recommended configuration, replayable with `readlab run --profile`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Profile {
    pub schema: String,
    pub goal: Goal,
    pub label: String,
    pub config: RunConfig,
    pub expected: Candidate,
}

pub const PROFILE_SCHEMA: &str = "readlab.profile/1";

impl Profile {
    /// The profile of a recommendation's pick; None when no point met the constraints.
    pub fn of(rec: &Recommendation) -> Option<Profile> {
        rec.pick.as_ref().map(|p| Profile {
            schema: PROFILE_SCHEMA.into(),
            goal: rec.goal,
            label: p.label.clone(),
            config: p.config.clone(),
            expected: p.clone(),
        })
    }

    /// The file name [`Profile::save`] uses: `profile-<block size>.json` (e.g. `profile-4k.json`).
    pub fn file_name(&self) -> String {
        format!(
            "profile-{}.json",
            format_bytes(self.config.bs as f64, Style::Table).to_lowercase()
        )
    }

    /// Write the profile into `dir` (see [`Profile::file_name`]); returns the file written.
    pub fn save(&self, dir: &Path) -> Result<PathBuf> {
        let path = dir.join(self.file_name());
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| Error::io(&path, "cannot encode the profile", e.into()))?;
        crate::fsio::write_file(&path, &text)?;
        Ok(path)
    }
}

/// The largest profile read: one is a few kilobytes of JSON.
pub const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// Read a profile written by `readlab tune`: a regular file of at most [`MAX_PROFILE_BYTES`]
/// (a FIFO would block and /dev/zero never end).
pub fn load_profile(path: &Path) -> Result<Profile> {
    let text = crate::input::read_text(
        path,
        MAX_PROFILE_BYTES,
        "profile (a JSON file written by `readlab tune`)",
    )?;
    let p: Profile = serde_json::from_str(&text)
        .map_err(|e| Error::invalid(format!("{}: not a readlab profile ({e})", path.display())))?;
    if p.schema != PROFILE_SCHEMA {
        return Err(Error::invalid(format!(
            "{}: profile schema {} is not {PROFILE_SCHEMA}",
            path.display(),
            p.schema
        )));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_profile_loads_back() {
        let mut config = RunConfig::new("/dev/x");
        config.bs = 1 << 20;
        let pick = Candidate {
            config,
            label: "U32B4".into(),
            iops: 1000.0,
            mb_s: 1048.6,
            p999_ns: 900_000,
            p50_ns: 300_000,
            cpu_cores: 0.5,
            spread: None,
            requests: 0,
        };
        let rec = Recommendation {
            bs: 1 << 20,
            goal: Goal::Balanced,
            pick: Some(pick),
            per_goal: Vec::new(),
            frontier: Vec::new(),
            trade_offs: Vec::new(),
            closest: Vec::new(),
            points_measured: 1,
            finalists: Vec::new(),
        };
        let p = Profile::of(&rec).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = p.save(dir.path()).unwrap();
        assert_eq!(path, dir.path().join("profile-1m.json"));
        let back = load_profile(&path).unwrap();
        assert_eq!(back.schema, PROFILE_SCHEMA);
        assert_eq!(back.label, "U32B4");
        assert_eq!(back.config, p.config);
        assert!(
            Profile::of(&Recommendation { pick: None, ..rec }).is_none(),
            "no pick, no profile"
        );
    }
}
