//! The results store: `results.jsonl`, one run per line, appended and fsynced after every point so
//! a crash or Ctrl-C loses nothing but the point in flight; `--resume` skips what is already there.

use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::result::{Document, StudyTag};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

pub const RESULTS: &str = "results.jsonl";

/// The identity of a point: its study tag and its full configuration.
pub fn key(tag: Option<&StudyTag>, cfg: &RunConfig) -> String {
    serde_json::to_string(&(tag, cfg)).expect("configs serialise")
}

/// Read every document of a results file; a torn last line (a crash mid-write) is ignored.
pub fn load(path: &Path) -> Result<Vec<Document>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "cannot read", e))?;
    let mut docs = Vec::new();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    for (i, line) in lines.iter().enumerate() {
        match serde_json::from_str::<Document>(line) {
            Ok(d) => docs.push(d),
            Err(_) if i + 1 == lines.len() && !text.ends_with('\n') => {}
            Err(e) => {
                return Err(Error::invalid(format!(
                    "{}: line {} is not a readlab result ({e})",
                    path.display(),
                    i + 1
                )));
            }
        }
    }
    Ok(docs)
}

/// An open results file.
pub struct Store {
    path: PathBuf,
    file: File,
    done: HashSet<String>,
    docs: Vec<Document>,
}

impl Store {
    /// Open `dir/results.jsonl`. Without `resume` an existing non-empty file is refused, so no
    /// earlier study is mixed in by accident.
    pub fn open(dir: &Path, resume: bool) -> Result<Store> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "cannot create", e))?;
        let path = dir.join(RESULTS);
        let exists = std::fs::metadata(&path).is_ok_and(|m| m.len() > 0);
        if exists && !resume {
            return Err(Error::invalid(format!(
                "{} already holds results; pass --resume to continue it, or choose another --out",
                path.display()
            )));
        }
        let docs = if exists { load(&path)? } else { Vec::new() };
        // Rewrite without a torn last line before appending.
        if exists {
            let mut clean = String::new();
            for d in &docs {
                clean.push_str(&serde_json::to_string(d).expect("documents serialise"));
                clean.push('\n');
            }
            crate::fsio::write_file(&path, &clean)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| Error::io(&path, "cannot open", e))?;
        let done = docs
            .iter()
            .map(|d| key(d.study.as_ref(), &d.config))
            .collect();
        Ok(Store {
            path,
            file,
            done,
            docs,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn contains(&self, tag: Option<&StudyTag>, cfg: &RunConfig) -> bool {
        self.done.contains(&key(tag, cfg))
    }

    /// Every document in the file, earlier ones first.
    pub fn docs(&self) -> &[Document] {
        &self.docs
    }

    /// Append one finished point and make it durable before returning.
    pub fn append(&mut self, doc: Document) -> Result<()> {
        let mut line = serde_json::to_string(&doc)
            .map_err(|e| Error::Engine(format!("cannot serialise a result: {e}")))?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.sync_data())
            .map_err(|e| Error::io(&self.path, "cannot append", e))?;
        self.done.insert(key(doc.study.as_ref(), &doc.config));
        self.docs.push(doc);
        Ok(())
    }
}
