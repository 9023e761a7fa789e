//! End-to-end: `--random-distribution` skews what is actually read. readlab and fio, given the
//! same skew on the same prepared file, put the same share of their reads on their hottest 1 %
//! and 10 % of blocks (each counted from the offsets it logged: readlab's `--log-offsets`, fio's
//! `write_iolog`); and under a memory cgroup holding half the file, zipf:1.2 hits the page cache
//! as often as an LRU cache of the blocks the cgroup holds does (Che's approximation; below the
//! ideal cache of the hottest blocks), uniform about as often as the cache holds of the file.

use crate::common;
use common::*;
use readlab::distribution::RandomDistribution;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The share of `offsets` that land on the `frac` most-read of `blocks` blocks (most-read as
/// counted in `offsets` themselves, so both tools' shares carry the same sampling bias).
fn hottest_share(offsets: &[u64], blocks: u64, frac: f64) -> f64 {
    let mut counts: HashMap<u64, u64> = HashMap::new();
    for &o in offsets {
        *counts.entry(o).or_default() += 1;
    }
    let mut c: Vec<u64> = counts.into_values().collect();
    c.sort_unstable_by(|a, b| b.cmp(a));
    let k = (blocks as f64 * frac) as usize;
    c.iter().take(k).sum::<u64>() as f64 / offsets.len() as f64
}

/// The offsets readlab read for `dist`: `ios` 4 KiB reads, logged with --log-offsets.
fn readlab_offsets(dir: &Path, f: &Path, dist: &str, ios: u64) -> Vec<u64> {
    let log = dir.join(format!("readlab-{dist}.log").replace([':', '/'], "_"));
    let o = run(&[
        "run",
        s(f),
        "--random-distribution",
        dist,
        "--io-limit",
        &(ios * 4096).to_string(),
        "--runtime",
        "60s",
        "--log-offsets",
        s(&log),
        "-q",
    ]);
    assert!(o.status.success(), "readlab {dist}: {}", stderr(&o));
    let text = std::fs::read_to_string(&log).unwrap();
    let v: Vec<u64> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(v.len() as u64, ios, "one offset per read");
    v
}

/// fio's reads, as (offset, length) from its write_iolog (named after `tag`), of a psync O_DIRECT
/// randread job of at most `ios` reads on `f` with the options `extra` on top (fewer when the
/// file's size in bytes is read first).
fn fio_reads(dir: &Path, f: &Path, tag: &str, extra: &[String], ios: u64) -> Vec<(u64, u64)> {
    let log = dir.join(format!("fio-{tag}.log").replace([':', '/'], "_"));
    let o = Command::new("fio")
        .args([
            "--name=reads".to_string(),
            format!("--filename={}", s(f)),
            "--rw=randread".into(),
            "--direct=1".into(),
            "--ioengine=psync".into(),
            format!("--number_ios={ios}"),
            format!("--write_iolog={}", s(&log)),
            "--output-format=terse".into(),
        ])
        .args(extra)
        .output()
        .expect("fio is installed (scripts/test-deps)");
    assert!(
        o.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // fio 3's iolog: "fio version 3 iolog", then "TIME FILE ACTION [OFFSET LENGTH]".
    let v: Vec<(u64, u64)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 5 && w[2] == "read").then(|| (w[3].parse().unwrap(), w[4].parse().unwrap()))
        })
        .collect();
    assert!(!v.is_empty(), "fio's log holds no read");
    v
}

/// The offsets fio read for `dist`: `ios` 4 KiB reads.
fn fio_offsets(dir: &Path, f: &Path, dist: &str, ios: u64) -> Vec<u64> {
    let extra = [
        "--bs=4k".to_string(),
        format!("--random_distribution={dist}"),
    ];
    fio_reads(dir, f, dist, &extra, ios)
        .into_iter()
        .map(|r| r.0)
        .collect()
}

#[test]
fn readlab_and_fio_read_the_same_skew() {
    let _one = one_at_a_time();
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    let blocks = (64 << 20) / 4096;
    let ios = 8000;
    // Each share's standard error is below 0.006 at 8,000 reads; the two draw with different
    // generators (and zipf with fio's own approximation in both): 0.03 apart at most.
    for dist in ["zipf:1.2", "pareto:0.2"] {
        let ours = readlab_offsets(d.path(), &f, dist, ios);
        let theirs = fio_offsets(d.path(), &f, dist, ios);
        for frac in [0.001, 0.01, 0.1] {
            let (a, b) = (
                hottest_share(&ours, blocks, frac),
                hottest_share(&theirs, blocks, frac),
            );
            eprintln!("{dist}: hottest {frac}: readlab {a:.3}, fio {b:.3}");
            assert!(
                (a - b).abs() < 0.03,
                "{dist}: the hottest {frac} of the blocks take {a:.3} of readlab's reads but {b:.3} of fio's"
            );
        }
        // Skewed, not uniform: uniform would put 1 % of the reads on 1 % of the blocks.
        assert!(hottest_share(&ours, blocks, 0.01) > 0.3, "{dist} is skewed");
    }
    // Zoned zones lie in file order in both: 60 % of the reads in the first 10 % of the file.
    let first_tenth =
        |v: &[u64]| v.iter().filter(|&&o| o < (64 << 20) / 10).count() as f64 / v.len() as f64;
    let dist = "zoned:60/10:30/20:10/70";
    let (a, b) = (
        first_tenth(&readlab_offsets(d.path(), &f, dist, ios)),
        first_tenth(&fio_offsets(d.path(), &f, dist, ios)),
    );
    eprintln!("{dist}: first tenth: readlab {a:.3}, fio {b:.3}");
    assert!((a - 0.6).abs() < 0.03 && (b - 0.6).abs() < 0.03, "{a} {b}");
}

/// Each size's share of `sizes` (one per request), in the order of `of`.
fn shares(sizes: &[u64], of: &[u64]) -> Vec<f64> {
    of.iter()
        .map(|&b| sizes.iter().filter(|&&x| x == b).count() as f64 / sizes.len() as f64)
        .collect()
}

#[test]
fn readlab_and_fio_read_the_same_mix_of_sizes() {
    let _one = one_at_a_time();
    let d = disk_dir();
    let size = 64u64 << 20;
    let f = prepare(d.path(), "f", "64M");
    let (mix, of, asked) = ("4k/60:16k/30:64k/10", [4096, 16384, 65536], [0.6, 0.3, 0.1]);
    let n = 6000u64;
    // --io-limit counts a mix's requests at its mean size (13,926 B here): n requests.
    let mean = (4096 * 60 + 16384 * 30 + 65536 * 10) / 100;
    let (log, json) = (d.path().join("mix.log"), d.path().join("mix.json"));
    let o = run(&[
        "run",
        s(&f),
        "--bssplit",
        mix,
        "--verify",
        "--io-limit",
        &(n * mean).to_string(),
        "--runtime",
        "60s",
        "--log-offsets",
        s(&log),
        "--json",
        s(&json),
        "-q",
    ]);
    assert!(o.status.success(), "readlab: {}", stderr(&o));
    let lines: Vec<(u64, u64)> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| {
            let (a, b) = l.split_once(' ').expect("a mix logs each read's length");
            (a.parse().unwrap(), b.parse().unwrap())
        })
        .collect();
    assert_eq!(lines.len() as u64, n, "one line per read");
    for &(off, len) in &lines {
        assert!(
            off % 4096 == 0 && off + len <= size,
            "{off} {len}: aligned, inside the file"
        );
    }
    let ours: Vec<u64> = lines.iter().map(|l| l.1).collect();
    // The run's own figures per size count the same reads, and every byte was verified.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let doc = if doc.is_array() { &doc[0] } else { &doc };
    let r = &doc["result"];
    assert_eq!(r["verify"]["mismatches"], 0);
    assert_eq!(r["verify"]["checked_ios"].as_u64(), Some(n));
    let by: Vec<u64> = (0..3)
        .map(|i| r["by_size"][i]["requests"].as_u64().unwrap())
        .collect();
    assert_eq!(by.iter().sum::<u64>(), r["requests"].as_u64().unwrap());
    let bytes: u64 = by.iter().zip(of).map(|(c, b)| c * b).sum();
    assert_eq!(
        bytes,
        r["bytes"].as_u64().unwrap(),
        "the sizes' bytes are the run's"
    );

    let extra = [
        format!("--bssplit={mix}"),
        // Without it fio's random map shortens a read that would overlap blocks already read
        // (8 KiB, 12 KiB, … appear); readlab keeps no map, as fio with norandommap.
        "--norandommap".to_string(),
    ];
    let theirs: Vec<u64> = fio_reads(d.path(), &f, "mix", &extra, n)
        .into_iter()
        .map(|r| r.1)
        .collect();
    // Each share's standard error is at most 0.0065 at 6,000 reads: 0.03 is beyond 4 of them.
    let (a, b) = (shares(&ours, &of), shares(&theirs, &of));
    eprintln!("{mix}: readlab {a:.3?}, fio {b:.3?}");
    for i in 0..3 {
        assert!(
            (a[i] - asked[i]).abs() < 0.03,
            "readlab {a:?} against {asked:?}"
        );
        assert!(
            (b[i] - asked[i]).abs() < 0.03,
            "fio {b:?} against {asked:?}"
        );
    }
}

/// A cgroup v1 memory cgroup, removed when dropped.
struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    fn new(name: &str, memory_limit: u64) -> Cgroup {
        let dir = Path::new("/sys/fs/cgroup/memory").join(name);
        std::fs::create_dir(&dir).unwrap_or_else(|e| {
            panic!(
                "cannot make the cgroup {} ({e}): this test needs root and cgroup v1's memory controller",
                dir.display()
            )
        });
        let cg = Cgroup { dir };
        std::fs::write(
            cg.dir.join("memory.limit_in_bytes"),
            memory_limit.to_string(),
        )
        .expect("set the cgroup's memory limit");
        cg
    }

    /// `readlab ARGS` run inside the cgroup, and the bytes it had read from devices (its
    /// /proc/PID/io read_bytes, which its parent shell counts once it has waited for it).
    fn readlab(&self, args: &[&str]) -> (std::process::Output, u64) {
        let script = format!(
            "echo $$ > {}/cgroup.procs && \"$@\" && grep '^read_bytes:' /proc/$$/io",
            s(&self.dir)
        );
        let o = Command::new("sh")
            .args(["-c", &script, "sh", env!("CARGO_BIN_EXE_readlab")])
            .args(args)
            .output()
            .expect("start sh");
        let read = stdout(&o)
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("read_bytes:"))
            .map_or(0, |n| n.trim().parse().unwrap());
        (o, read)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Drop the file's pages from the page cache.
fn drop_pages(f: &Path) {
    let file = std::fs::File::open(f).unwrap();
    // SAFETY: posix_fadvise on a descriptor this function owns, over the whole file; no memory.
    let rc = unsafe {
        libc::posix_fadvise(
            std::os::fd::AsRawFd::as_raw_fd(&file),
            0,
            0,
            libc::POSIX_FADV_DONTNEED,
        )
    };
    assert_eq!(rc, 0, "posix_fadvise DONTNEED");
}

/// The page-cache hit ratio of `ios` buffered 4 KiB reads of `dist` inside `cg`, the cache
/// warmed first by five times as many reads of the same kind with another seed (another sequence
/// over the same hot blocks): 1 − bytes read from the device / bytes asked.
fn hit_ratio(cg: &Cgroup, f: &Path, dist: &str, ios: u64) -> f64 {
    drop_pages(f);
    let run = |seed: &str, ios: u64| {
        let limit = (ios * BS).to_string();
        let (o, read) = cg.readlab(&[
            "run",
            s(f),
            "--buffered",
            "--bs",
            "64k",
            "--fadvise",
            "random",
            "--random-distribution",
            dist,
            "--io-limit",
            &limit,
            "--runtime",
            "120s",
            "-q",
            "--seed",
            seed,
        ]);
        assert!(o.status.success(), "{dist}: {}", stderr(&o));
        read
    };
    run("1", 5 * ios);
    1.0 - run("2", ios) as f64 / (ios * BS) as f64
}

/// The cache test's block: large enough that a few tens of thousands of skewed reads touch more
/// blocks than the cache holds (the cache fills, and the ratio measures its size, not the reads
/// never made yet).
const BS: u64 = 64 << 10;

impl Cgroup {
    /// The page cache charged to the cgroup now, bytes (memory.stat's `cache`).
    fn cache(&self) -> u64 {
        let stat = std::fs::read_to_string(self.dir.join("memory.stat")).unwrap();
        stat.lines()
            .find_map(|l| l.strip_prefix("cache "))
            .map_or(0, |n| n.trim().parse().unwrap())
    }
}

#[test]
fn the_page_cache_hit_ratio_follows_the_distribution() {
    let _one = one_at_a_time();
    // On the real disk (in tmpfs the file's pages are the cache).
    let d = tempfile::Builder::new()
        .prefix("readlab-test-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let (cache, size) = (64u64 << 20, 128u64 << 20);
    let f = prepare(d.path(), "f", "128M");
    let cg = Cgroup::new(&format!("readlab-test-{}", std::process::id()), cache);
    let (blocks, cached) = (size / BS, cache / BS);
    let ios = 20_000;
    // The model: the page cache as an LRU cache (Che's approximation) of the pages the cgroup
    // held at the end (its limit less readlab's own pages), against the ideal cache of the C
    // hottest blocks as an upper bound. The kernel's two lists keep pages roughly by recency,
    // so the measured ratio lies near the LRU's: within 0.04 for zipf, 0.06 for uniform.
    let zipf: RandomDistribution = "zipf:1.2".parse().unwrap();
    let got = hit_ratio(&cg, &f, "zipf:1.2", ios);
    let held = (cg.cache() / BS).min(cached);
    let (want, ideal) = (
        zipf.lru_hit_ratio(blocks, held),
        zipf.hot_share(blocks, held),
    );
    eprintln!(
        "zipf:1.2: hit ratio {got:.3}; {held} blocks of 64 KiB cached: LRU model {want:.3}, ideal {ideal:.3}"
    );
    assert!(
        (got - want).abs() < 0.04 && got < ideal + 0.01,
        "zipf:1.2 hit the cache {got:.3} of the time; the LRU model says {want:.3} (ideal {ideal:.3})"
    );
    let got = hit_ratio(&cg, &f, "random", ios);
    let held = (cg.cache() / BS).min(cached);
    let want = RandomDistribution::Uniform.lru_hit_ratio(blocks, held);
    eprintln!("uniform: hit ratio {got:.3}; {held} blocks of 64 KiB cached: model {want:.3}");
    assert!(
        (got - want).abs() < 0.06,
        "uniform reads hit the cache {got:.3} of the time; a cache of {held} of {blocks} blocks holds {want:.3}"
    );
    drop_pages(&f);
}
