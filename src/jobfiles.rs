//! A run's configuration over several files (fio's `filename=a:b`, `directory=` with `nrfiles=`):
//! which files the job reads, what part of each, how people see them, and what such a job
//! cannot take. Apart from `config.rs`, which is the one-file configuration every run has; the
//! file choice itself is `fileset`'s.

use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::fileset::FileService;
use std::path::PathBuf;

impl RunConfig {
    /// Every file the job reads: `target`, then `files`.
    pub fn job_files(&self) -> Vec<&std::path::Path> {
        std::iter::once(self.target.as_path())
            .chain(self.files.iter().map(PathBuf::as_path))
            .collect()
    }

    /// What the job reads, for people: its one target as it is, or its files in fio's words
    /// with how many and how a read picks among them (`a:b (2 files, roundrobin)`; beyond three,
    /// the first and last: `a:…:z (16 files, random)`).
    pub fn target_words(&self) -> String {
        if self.files.is_empty() {
            return self.target.display().to_string();
        }
        let all = self.job_files();
        let n = all.len();
        let shown = if n <= 3 {
            crate::fileset::join(&all)
        } else {
            format!(
                "{}:…:{}",
                crate::fileset::join(&all[..1]),
                crate::fileset::join(&all[n - 1..])
            )
        };
        format!("{shown} ({n} files, {})", self.file_service.word())
    }

    /// The configuration of each file of the job as one job of its own reads it (the one rule
    /// for what part of each file a job over several reads): fio's `size` is the job's total,
    /// each file's share `size / files`; `offset` is into each file.
    pub fn per_file(&self) -> Vec<RunConfig> {
        let n = self.files.len() as u64 + 1;
        self.job_files()
            .into_iter()
            .map(|f| RunConfig {
                target: f.into(),
                files: Vec::new(),
                file_service: FileService::Roundrobin,
                size: self.size.map(|s| s / n),
                ..self.clone()
            })
            .collect()
    }

    /// The one rule for several files in one job: what a run of them cannot take, in words.
    pub fn files_problem(&self) -> Option<String> {
        if self.files.is_empty() {
            return (!self.file_service.is_default()).then(|| {
                format!(
                    "file_service_type {} picks among a job's files (filename=a:b); this job reads one",
                    self.file_service.word()
                )
            });
        }
        if let Err(e) = crate::fileset::check_count(self.files.len() + 1, "target and files") {
            return Some(e.to_string());
        }
        let all = self.job_files();
        if let Some(f) = (1..all.len()).find_map(|i| all[..i].contains(&all[i]).then_some(all[i])) {
            return Some(format!(
                "{} is named twice in one job's files; name each file once",
                f.display()
            ));
        }
        if self.sample_bytes.is_some() {
            return Some(
                "--sample-every follows the offsets of one file; a job over several files cannot take it"
                    .into(),
            );
        }
        None
    }

    /// The job-level checks of several files, which the checks of each file's own
    /// configuration ([`per_file`](RunConfig::per_file)) cannot see: its files, and the engine's
    /// word on reading that many.
    pub fn check_files(&self) -> Result<()> {
        if let Some(p) = self.files_problem() {
            return Err(Error::invalid(p));
        }
        if self.files.is_empty() {
            return Ok(());
        }
        (self.engine.spec().check)(&self.options, &self.workload())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_gets_its_share_of_the_size_and_the_job_its_words() {
        let mut c = RunConfig::new("/a");
        assert_eq!(c.target_words(), "/a");
        assert_eq!(c.per_file(), [c.clone()]);
        c.files = vec!["/b".into(), "/c:d".into()];
        c.size = Some(3 << 20);
        c.file_service = FileService::Random;
        let parts = c.per_file();
        let targets: Vec<_> = parts.iter().map(|p| p.target.clone()).collect();
        assert_eq!(targets, [PathBuf::from("/a"), "/b".into(), "/c:d".into()]);
        assert!(
            parts
                .iter()
                .all(|p| p.size == Some(1 << 20) && p.files.is_empty())
        );
        assert!(parts.iter().all(|p| p.file_service.is_default()));
        assert_eq!(c.target_words(), "/a:/b:/c\\:d (3 files, random)");
        c.files = (0..15).map(|i| format!("/f{i}").into()).collect();
        assert_eq!(c.target_words(), "/a:…:/f14 (16 files, random)");
    }

    #[test]
    fn what_a_job_over_several_files_cannot_take() {
        let mut c = RunConfig::new("/a");
        assert!(c.check_files().is_ok());
        c.file_service = FileService::Sequential;
        assert!(c.files_problem().unwrap().contains("this job reads one"));
        c.files = vec!["/b".into()];
        assert!(c.check_files().is_ok());
        c.files = vec!["/b".into(), "/a".into()];
        assert!(c.files_problem().unwrap().contains("/a is named twice"));
        c.files = vec!["/b".into()];
        c.sample_bytes = Some(1 << 20);
        assert!(c.files_problem().unwrap().contains("--sample-every"));
        c.sample_bytes = None;
        c.files = (0..crate::fileset::MAX_FILES)
            .map(|i| format!("/f{i}").into())
            .collect();
        let p = c.files_problem().unwrap();
        assert!(
            p.starts_with("target and files: 4097 files in one job"),
            "{p}"
        );
        c.files = vec!["/b".into()];
        c.engine = crate::engine::EngineKind::parse("nbd").unwrap();
        let e = c.check_files().unwrap_err().to_string();
        assert!(e.contains("nbd reads one export per job"), "{e}");
    }
}
