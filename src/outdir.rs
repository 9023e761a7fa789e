//! Where a command writes when the user names no directory: `readlab-<command>-<target name>` in
//! the current directory, so runs on different targets never mix their results.

use std::path::{Path, PathBuf};

/// The target's file name as the default directories and the tune table show it (`target` when
/// the path has none, e.g. `/`).
pub fn target_name(target: &Path) -> String {
    let t = target.to_string_lossy();
    if crate::nbd::NbdUrl::is_url(&t) {
        // A remote target by its server, never by the namespace it was reached from.
        return crate::nbd::shown(&t);
    }
    target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "target".into())
}

/// `readlab-<command>-<target name>`: the default results directory of `study` and `tune` (a
/// remote target's `/` and `:` written `_`).
pub fn for_target(command: &str, target: &Path) -> PathBuf {
    let name: String = target_name(target)
        .trim_start_matches("nbd://")
        .trim_start_matches("nbd+unix://")
        .trim_end_matches('/')
        .chars()
        .map(|c| if "/:?&=".contains(c) { '_' } else { c })
        .collect();
    PathBuf::from(format!("readlab-{command}-{name}"))
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
        // A remote target by its server, not by `?netns=…` (its last path component).
        let url = Path::new("nbd://10.213.0.1:10809/?netns=rl3445_0c");
        assert_eq!(target_name(url), "nbd://10.213.0.1:10809/");
        assert_eq!(
            for_target("study", url),
            PathBuf::from("readlab-study-10.213.0.1_10809")
        );
    }
}
