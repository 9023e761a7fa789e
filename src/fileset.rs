//! One job over several files, as fio has it: `filename=a:b` (`\:` a colon in a name) or
//! `directory=D` with `nrfiles=N` (fio's `JOB.0.F` names), and `file_service_type`, which picks
//! the file of each successive read. A leaf: the configuration, the job files and the runner's
//! workers all name it, and it names none of them.

use crate::error::{Error, Result};
use rand::RngExt;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The most files one job may read (each worker opens every one of them).
pub const MAX_FILES: usize = 4096;

/// How a job's successive reads pick their file (fio's `file_service_type`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FileService {
    /// Each read goes to the next file in turn (fio's default).
    #[default]
    Roundrobin,
    /// Each read goes to a file picked at random.
    Random,
    /// A file is read through (one pass of the worker's share of it) before the next.
    Sequential,
}

impl FileService {
    /// fio's word for it.
    pub fn word(self) -> &'static str {
        match self {
            FileService::Roundrobin => "roundrobin",
            FileService::Random => "random",
            FileService::Sequential => "sequential",
        }
    }

    /// Whether it is fio's default (results and job files leave it out).
    pub fn is_default(&self) -> bool {
        *self == FileService::Roundrobin
    }
}

impl std::str::FromStr for FileService {
    type Err = Error;

    /// fio's words: `roundrobin`, `random`, `sequential`.
    fn from_str(s: &str) -> Result<FileService> {
        match s.trim() {
            "roundrobin" => Ok(FileService::Roundrobin),
            "random" => Ok(FileService::Random),
            "sequential" => Ok(FileService::Sequential),
            other => Err(Error::invalid(format!(
                "file_service_type {other}: readlab picks files by roundrobin, random or \
                 sequential (without fio's :N, and none of its zipf/pareto/normal)"
            ))),
        }
    }
}

/// fio's `a:b` names two files (`\:` is a colon in a name).
pub fn split(value: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                out.last_mut().expect("one").push(':');
                chars.next();
            }
            ':' => out.push(String::new()),
            c => out.last_mut().expect("one").push(c),
        }
    }
    out
}

/// The files fio's `a:b` names, each a non-empty path: bad input otherwise.
pub fn parse(value: &str) -> Result<Vec<PathBuf>> {
    let names = split(value);
    if names.iter().any(String::is_empty) {
        return Err(Error::invalid(format!(
            "{value}: an empty file name between colons; write a:b (\\: for a colon in a name)"
        )));
    }
    check_count(names.len(), value)?;
    Ok(names.into_iter().map(PathBuf::from).collect())
}

/// The one rule for how many files one job may read: at most [`MAX_FILES`]. `what` is what the
/// user named them with (`a:b:…`, `nrfiles=N`, a profile's target and files), which the
/// message begins with.
pub fn check_count(n: usize, what: &str) -> Result<()> {
    if n > MAX_FILES {
        return Err(Error::invalid(format!(
            "{what}: {n} files in one job; readlab reads at most {MAX_FILES}"
        )));
    }
    Ok(())
}

/// The files written back in fio's words: `a:b`, a colon in a name as `\:`.
pub fn join(files: &[&Path]) -> String {
    files
        .iter()
        .map(|p| p.to_string_lossy().replace(':', "\\:"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The files fio reads for `directory=dir` and `nrfiles=n` in job `job` (its first of
/// `numjobs`): `dir/job.0.0` … `dir/job.0.{n-1}`, fio's default `filename_format`.
pub fn in_directory(dir: &Path, job: &str, n: usize) -> Vec<PathBuf> {
    (0..n).map(|f| dir.join(format!("{job}.0.{f}"))).collect()
}

/// The first of `files` that is not there: readlab reads files, it never makes them.
pub fn check_exist(files: &[PathBuf]) -> Result<()> {
    match files.iter().find(|f| std::fs::symlink_metadata(f).is_err()) {
        Some(f) => Err(Error::invalid(format!(
            "{}: no such file; readlab reads the job's files and never creates them: write it \
             first with `readlab prepare {} --size SIZE`",
            f.display(),
            f.display()
        ))),
        None => Ok(()),
    }
}

/// One worker's choice of file for each successive read.
#[derive(Debug, Clone)]
pub struct Chooser {
    service: FileService,
    /// Blocks of each file one pass reads.
    pass: Vec<u64>,
    /// Blocks left of each file's pass: a file read through waits for the others (fio marks it
    /// done until every file is) when `passes` is on; sequential service moves on after it.
    left: Vec<u64>,
    passes: bool,
    current: usize,
}

impl Chooser {
    /// A chooser over files whose passes are `pass[f]` blocks each; it starts on the first.
    /// With `passes` (sequential reads: fio's file is done at its end), a file read through is
    /// left out until every file is, so each pass reads every file once, whatever the service;
    /// without (random reads, which fio starts again on the same file), only the sequential
    /// service moves on at a file's pass.
    pub fn new(service: FileService, pass: Vec<u64>, passes: bool) -> Chooser {
        Chooser {
            service,
            left: pass.clone(),
            pass,
            passes,
            current: 0,
        }
    }

    /// The file of the next read, of `blocks` blocks (the rng draws a random service's file).
    #[inline]
    pub fn next(&mut self, blocks: u64, rng: &mut rand::rngs::Xoshiro256PlusPlus) -> usize {
        let n = self.pass.len();
        if n <= 1 {
            return 0;
        }
        let open = |left: &[u64], f: usize| left[f] >= blocks;
        if self.passes
            && self.service != FileService::Sequential
            && !(0..n).any(|f| open(&self.left, f))
        {
            self.left.clone_from(&self.pass);
        }
        let f = match self.service {
            FileService::Roundrobin if self.passes => {
                let f = (0..n)
                    .map(|i| (self.current + i) % n)
                    .find(|&f| open(&self.left, f))
                    .unwrap_or(self.current);
                self.current = (f + 1) % n;
                f
            }
            FileService::Roundrobin => {
                let f = self.current;
                self.current = (f + 1) % n;
                f
            }
            FileService::Random if self.passes => {
                let candidates = (0..n).filter(|&f| open(&self.left, f)).count();
                let k = rng.random_range(0..candidates.max(1));
                (0..n).filter(|&f| open(&self.left, f)).nth(k).unwrap_or(0)
            }
            FileService::Random => rng.random_range(0..n),
            FileService::Sequential => {
                if !open(&self.left, self.current) {
                    self.current = (self.current + 1) % n;
                    self.left[self.current] = self.pass[self.current];
                }
                self.current
            }
        };
        self.left[f] = self.left[f].saturating_sub(blocks);
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn picks(service: FileService, pass: Vec<u64>, n: usize) -> Vec<usize> {
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(1);
        let mut c = Chooser::new(service, pass, false);
        (0..n).map(|_| c.next(1, &mut rng)).collect()
    }

    #[test]
    fn round_robin_takes_each_file_in_turn() {
        assert_eq!(
            picks(FileService::Roundrobin, vec![8, 2, 4], 7),
            [0, 1, 2, 0, 1, 2, 0]
        );
        assert_eq!(picks(FileService::Roundrobin, vec![8], 3), [0, 0, 0]);
    }

    #[test]
    fn sequential_reads_a_file_through_before_the_next() {
        assert_eq!(
            picks(FileService::Sequential, vec![3, 2], 8),
            [0, 0, 0, 1, 1, 0, 0, 0]
        );
        // A read of two blocks that does not fit in what is left of a pass starts the next file.
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(1);
        let mut c = Chooser::new(FileService::Sequential, vec![3, 4], false);
        let got: Vec<usize> = (0..4).map(|_| c.next(2, &mut rng)).collect();
        assert_eq!(got, [0, 1, 1, 0]);
    }

    /// Sequential reads (fio's file done at its end) read each file through once per pass,
    /// whatever the service: a larger file gets its larger share.
    #[test]
    fn with_passes_each_file_is_read_through_once_per_pass() {
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(1);
        let mut c = Chooser::new(FileService::Roundrobin, vec![2, 4], true);
        let got: Vec<usize> = (0..12).map(|_| c.next(1, &mut rng)).collect();
        assert_eq!(got, [0, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1, 1]);
        let mut c = Chooser::new(FileService::Random, vec![100, 300], true);
        let got: Vec<usize> = (0..4000).map(|_| c.next(1, &mut rng)).collect();
        assert_eq!(got.iter().filter(|&&f| f == 0).count(), 1000);
        // Each pass of 400 reads holds 100 of the first file.
        for pass in got.chunks(400) {
            assert_eq!(pass.iter().filter(|&&f| f == 0).count(), 100);
        }
    }

    #[test]
    fn random_spreads_reads_evenly_over_the_files() {
        let p = picks(FileService::Random, vec![1, 1000], 10_000);
        let first = p.iter().filter(|&&f| f == 0).count();
        assert!((4_700..5_300).contains(&first), "{first} of 10000");
        assert!(p.iter().all(|&f| f < 2));
        // Not round robin in disguise.
        assert!(p.windows(2).any(|w| w[0] == w[1]));
    }

    #[test]
    fn fio_file_names_with_escaped_colons() {
        assert_eq!(split("/a:/b"), ["/a", "/b"]);
        assert_eq!(split("/c\\:d:e"), ["/c:d", "e"]);
        assert_eq!(split("x"), ["x"]);
        assert!(parse("a::b").is_err());
        assert!(parse(":a").is_err());
        let files = parse("/c\\:d:/e").unwrap();
        assert_eq!(files, [PathBuf::from("/c:d"), PathBuf::from("/e")]);
        let back: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
        assert_eq!(join(&back), "/c\\:d:/e");
    }

    #[test]
    fn one_job_reads_at_most_max_files() {
        assert!(check_count(MAX_FILES, "nrfiles=4096").is_ok());
        let e = check_count(MAX_FILES + 1, "nrfiles=4097").unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!("nrfiles=4097: 4097 files in one job; readlab reads at most {MAX_FILES}")
        );
        // fio's a:b names as many files as it has names.
        let names = vec!["f"; MAX_FILES + 1].join(":");
        let e = parse(&names).unwrap_err().to_string();
        assert!(
            e.starts_with("f:f:") && e.contains("4097 files in one job"),
            "{e}"
        );
        assert_eq!(
            parse(&vec!["f"; MAX_FILES].join(":")).unwrap().len(),
            MAX_FILES
        );
    }

    #[test]
    fn directory_and_nrfiles_name_fio_s_files() {
        assert_eq!(
            in_directory(Path::new("/d"), "job", 3),
            [
                PathBuf::from("/d/job.0.0"),
                PathBuf::from("/d/job.0.1"),
                PathBuf::from("/d/job.0.2")
            ]
        );
        let d = tempfile::tempdir().unwrap();
        let files = in_directory(d.path(), "j", 2);
        std::fs::write(&files[0], b"x").unwrap();
        let e = check_exist(&files).unwrap_err().to_string();
        assert!(
            e.contains("j.0.1") && e.contains("readlab prepare") && !e.contains('\n'),
            "{e}"
        );
        std::fs::write(&files[1], b"x").unwrap();
        assert!(check_exist(&files).is_ok());
    }

    #[test]
    fn file_service_words() {
        for s in [
            FileService::Roundrobin,
            FileService::Random,
            FileService::Sequential,
        ] {
            assert_eq!(s.word().parse::<FileService>().unwrap(), s);
        }
        let e = "zipf:1.2".parse::<FileService>().unwrap_err().to_string();
        assert!(e.contains("roundrobin, random or sequential"), "{e}");
        assert!("random:4".parse::<FileService>().is_err());
    }
}
