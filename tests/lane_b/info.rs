//! End-to-end: `readlab info` prints the capability table on a file, a loop device and the root disk,
//! and explains what does not work instead of hanging or crashing.

use crate::common;
use common::*;

fn info(target: &str) -> (String, serde_json::Value) {
    let o = run(&["info", target]);
    assert!(o.status.success(), "info {target}: {}", stderr(&o));
    let table = stdout(&o);
    let o = run(&["info", "--output", "json", target]);
    assert!(
        o.status.success(),
        "info --output json {target}: {}",
        stderr(&o)
    );
    (table, json(&o))
}

fn check<'a>(j: &'a serde_json::Value, name: &str, direct: bool) -> &'a serde_json::Value {
    j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name && c["direct"] == direct)
        .unwrap_or_else(|| panic!("no check {name} (direct={direct}) in {j}"))
}

#[test]
fn info_on_a_prepared_file() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "16M");
    let (table, j) = info(f.to_str().unwrap());
    for s in [
        "regular file",
        "scheduler",
        "io_poll",
        "alignment",
        "prepared by readlab",
        "interface",
    ] {
        assert!(table.contains(s), "missing '{s}' in:\n{table}");
    }
    assert_eq!(check(&j, "psync", true)["status"], "works");
    assert_eq!(check(&j, "pvsync2", false)["status"], "works");
    // No device here polls: HIPRI is reported as ignored with the reason.
    let h = check(&j, "pvsync2 --hipri", true);
    assert_eq!(h["status"], "ignored", "{h}");
    assert!(h["detail"].as_str().unwrap().contains("no poll queues"));
    let s = check(&j, "uring SQPOLL + DEFER_TASKRUN", true);
    assert_eq!(s["status"], "fails");
}

#[test]
fn info_on_a_loop_device() {
    let lo = LoopDev::prepared("32M");
    let (table, j) = info(&lo.dev);
    assert!(
        table.contains("block device") && table.contains("backing file"),
        "{table}"
    );
    assert_eq!(j["target"]["kind"], "block");
    assert_eq!(j["device"]["loop_direct_io"], true);
    assert_eq!(check(&j, "psync", true)["status"], "works");
    assert!(j["target"]["prepared_id"].as_u64().is_some());
}

#[test]
fn info_on_the_root_disk() {
    let dev = readlab::env::device_of(std::path::Path::new("/"))
        .expect("the root filesystem lives on a block device here");
    let path = format!("/dev/{}", dev.name);
    let (table, j) = info(&path);
    assert!(table.contains(&dev.name), "{table}");
    assert_eq!(j["target"]["kind"], "block");
    assert!(
        table.contains("scheduler") && table.contains("logical block"),
        "{table}"
    );
    assert!(j["target"]["size"].as_u64().unwrap() > 0);
    // Either every interface was tried, or (in a sandbox that forbids opening the root disk) the
    // table says why none could be.
    match j["access"].as_str() {
        Some(why) => {
            assert!(why.contains("cannot open"), "{why}");
            assert!(table.contains("cannot open"), "{table}");
            eprintln!("note: {path} cannot be opened here; info reported: {why}");
        }
        None => assert_eq!(check(&j, "psync", true)["status"], "works"),
    }
}

#[test]
fn info_on_a_missing_target_is_bad_input() {
    let o = run(&["info", "/nonexistent/readlab"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no such file"));
}
