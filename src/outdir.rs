//! Where a command writes when the user names no directory: `readlab-<command>-<target name>` in
//! the current directory, so runs on different targets never mix their results.

use std::path::{Path, PathBuf};

/// The target's file name as the default directories and the tune table show it (`target` when
/// the path has none, e.g. `/`).
pub fn target_name(target: &Path) -> String {
    target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "target".into())
}

/// `readlab-<command>-<target name>`: the default results directory of `study` and `tune`.
pub fn for_target(command: &str, target: &Path) -> PathBuf {
    PathBuf::from(format!("readlab-{command}-{}", target_name(target)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_target() {
        assert_eq!(
            for_target("study", Path::new("/dev/nvme0n1")),
            PathBuf::from("readlab-study-nvme0n1")
        );
        assert_eq!(
            for_target("tune", Path::new("/")),
            PathBuf::from("readlab-tune-target")
        );
        assert_eq!(target_name(Path::new("data/f.dat")), "f.dat");
    }
}
