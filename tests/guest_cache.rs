//! Scenario 2e, a page cache smaller than the data: `study cache --allow-device-changes` on a
//! 3 GiB NVMe drive in a guest with 512 MiB of RAM runs to the end; the whole-target buffered pass
//! covers the drive with its throughput by offset beside the page cache (bounded below the guest's
//! RAM while more than it was read) and the reclaim the monitor saw; readahead on and off are both
//! measured and readahead is put back; the report draws it. Under QEMU's emulation no saw-tooth is
//! asserted (copies are emulated, so throughput hardly changes as the cache fills): only the
//! cache's bound and the reclaim, which the kernel shows whatever the speed.
mod guest_common;

use readlab::result::Document;
use std::process::Command;

fn kib(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in {text}"))
}

fn vm_sum(text: &str, prefix: &str) -> u64 {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum()
}

#[test]
fn the_cache_study_on_a_drive_larger_than_the_guests_memory() {
    let g = guest_common::run("cache");
    g.assert_ok();
    let ctx = g.context();
    let docs = readlab::store::load(&g.path("study/results.jsonl"))
        .unwrap_or_else(|e| panic!("study/results.jsonl: {e}\n{ctx}"));
    let setting = |d: &Document| {
        d.study
            .as_ref()
            .and_then(|t| t.setting.clone())
            .unwrap_or_default()
    };
    let find = |name: &str| -> &Document {
        docs.iter()
            .find(|d| setting(d).starts_with(name))
            .unwrap_or_else(|| {
                let all: Vec<String> = docs.iter().map(setting).collect();
                panic!("no point '{name}…' among {all:?}\n{ctx}")
            })
    };
    let ra_before = g.text("read_ahead_kb-before.txt").trim().to_string();
    assert_eq!(
        g.text("read_ahead_kb-after.txt").trim(),
        ra_before,
        "readahead not put back\n{ctx}"
    );

    // Readahead on and off, both measured: off reads a buffered file page by page, so the drive
    // sees 4 KiB reads where readahead on sends it large ones. Told by what the drive saw (the
    // monitor's size per completed read, weighted by reads), not by throughput: under QEMU's
    // emulation the copy into the guest's page cache bounds both points alike, and which one is
    // faster is a coin toss (seen: on 15.5 MB/s with 512 KiB reads, off 25.2 MB/s with 4 KiB).
    let on = find(&format!("buffered, read_ahead_kb={ra_before}"));
    let off = find("buffered, read_ahead_kb=0");
    assert_eq!(
        off.environment.device.read_ahead_kb,
        Some(0),
        "the readahead-off point ran with readahead on\n{ctx}"
    );
    assert!(
        on.result.mb_s > 0.0 && off.result.mb_s > 0.0,
        "buffered random 1 MiB reads: readahead on {:.1} MB/s, off {:.1} MB/s\n{ctx}",
        on.result.mb_s,
        off.result.mb_s
    );
    let kib_per_read = |d: &Document| {
        let (mut kib, mut reads) = (0.0, 0u64);
        for x in d.monitor.iter().flat_map(|m| &m.samples) {
            for dev in &x.devices {
                kib += dev.read_kib_per_io * dev.reads as f64;
                reads += dev.reads;
            }
        }
        assert!(reads > 0, "the drive saw no reads during the point\n{ctx}");
        kib / reads as f64
    };
    let (kib_on, kib_off) = (kib_per_read(on), kib_per_read(off));
    assert!(
        kib_off < 8.0 && kib_on >= 8.0 * kib_off,
        "buffered random 1 MiB reads: the drive's reads should be single pages with \
         readahead off ({kib_off:.1} KiB) and far larger with it on ({kib_on:.1} KiB)\n{ctx}"
    );

    // The whole drive, read once buffered: throughput by offset from 0 to its end.
    let mem_total = kib(&g.text("meminfo-before.txt"), "MemTotal:") * 1024;
    let w = find(&format!(
        "whole target, buffered, read_ahead_kb={ra_before}"
    ));
    let size = w.environment.target.size;
    assert!(
        size > 4 * mem_total,
        "the drive ({size} B) should be more than 4× the guest's RAM ({mem_total} B)\n{ctx}"
    );
    let offs = &w.result.offset_samples;
    assert!(offs.len() >= 32, "{} stretches\n{ctx}", offs.len());
    assert_eq!(offs[0].offset, 0, "{ctx}");
    let covered: u64 = offs.iter().map(|o| o.bytes).sum();
    assert_eq!(
        covered, size,
        "the buffered pass covers {covered} of {size} bytes (ended by {})\n{ctx}",
        w.result.ended_by
    );
    assert!(find("whole target, direct").result.offset_samples.len() >= 32);

    // Beside each stretch, the page cache and reclaim the monitor saw (readlab's one computation).
    let rows = readlab::study::cache_by_offset(offs, w.monitor.as_ref());
    let cache: Vec<u64> = rows.iter().filter_map(|r| r.page_cache).collect();
    assert_eq!(
        cache.len(),
        rows.len(),
        "stretches without a monitor sample\n{ctx}"
    );
    let peak = *cache.iter().max().unwrap();
    assert!(
        peak >= mem_total / 2 && peak < mem_total,
        "page cache peaked at {} MiB: should fill to near the guest's {} MiB of RAM and stay below it\n{ctx}",
        peak >> 20,
        mem_total >> 20
    );
    let reclaimed = rows.last().and_then(|r| r.reclaimed_pages).unwrap_or(0.0) * 4096.0;
    let must = (size - mem_total) as f64 / 2.0;
    assert!(
        reclaimed >= must,
        "{} MiB reclaimed during the pass; reading {} MiB through {} MiB of RAM needs at least {} MiB\n{ctx}",
        reclaimed as u64 >> 20,
        size >> 20,
        mem_total >> 20,
        must as u64 >> 20
    );
    let (before, after) = (g.text("vmstat-before.txt"), g.text("vmstat-after.txt"));
    assert!(
        vm_sum(&after, "pgsteal_") > vm_sum(&before, "pgsteal_")
            && vm_sum(&after, "pgscan_") > vm_sum(&before, "pgscan_"),
        "pgsteal/pgscan did not rise:\n{before}\n{after}\n{ctx}"
    );

    // The report draws throughput by offset above the page cache and reclaim.
    let html = g.path("report.html");
    let o = Command::new(guest_common::readlab_bin())
        .arg("report")
        .arg(g.path("study"))
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(html).unwrap();
    for what in [
        "cache-offset",
        "page reclaim",
        "cache-throughput",
        "cache-monitor-1",
    ] {
        assert!(html.contains(what), "the report has no '{what}'\n{ctx}");
    }
    let summary = g.text("study/summary.md");
    assert!(summary.contains("reclaimed since start"), "{summary}");
}
