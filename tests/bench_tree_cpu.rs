//! benches/tree_cpu.py is the one instrument behind vs_fio.sh's CPU-per-I/O ratio: these tests hold
//! it to known loads (a busy grandchild, a sleeper) and to readlab's own CPU figure for one run.
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/tree_cpu.py")
}

/// Runs `tree_cpu.py FROM TO OUT -- cmd…`; returns its exit code and the JSON it wrote.
fn tree_cpu(from: f64, to: f64, cmd: &[&str]) -> (i32, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cpu.json");
    let st = Command::new("python3")
        .arg(script())
        .args([from.to_string(), to.to_string()])
        .arg(&out)
        .arg("--")
        .args(cmd)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("run python3 benches/tree_cpu.py");
    let doc = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    (st.code().unwrap_or(-1), doc)
}

fn cores(doc: &serde_json::Value) -> f64 {
    doc["cpu_s"].as_f64().expect("cpu_s") / doc["window_s"].as_f64().expect("window_s")
}

#[test]
fn a_busy_grandchild_counts_a_sleeper_does_not_and_the_status_passes_through() {
    // The busy loop runs in a grandchild: a tree walk that stops at the child would see ~0.
    let (code, busy) = tree_cpu(
        0.4,
        1.4,
        &[
            "sh",
            "-c",
            "sh -c 'while :; do :; done' & sleep 1.8; kill $!; exit 3",
        ],
    );
    assert_eq!(code, 3, "{busy}");
    let c = cores(&busy);
    assert!(
        (0.5..=1.1).contains(&c),
        "a busy loop measured as {c:.2} cores: {busy}"
    );
    // The whole machine's figure holds the tree's busy core, and no more CPUs than there are.
    let m = &busy["machine"];
    let mb = m["busy_cpus"].as_f64().expect("busy_cpus");
    let steal = m["steal_cpus"].as_f64().expect("steal_cpus");
    let cpus = m["cpus"].as_u64().expect("cpus") as f64;
    let online = Command::new("getconf")
        .arg("_NPROCESSORS_ONLN")
        .output()
        .unwrap();
    let online: f64 = String::from_utf8_lossy(&online.stdout)
        .trim()
        .parse()
        .unwrap();
    assert_eq!(cpus, online, "{busy}");
    assert!(
        mb >= c - 0.1 && mb + steal <= cpus + 0.1 && steal >= 0.0,
        "the machine measured {mb:.2} busy + {steal:.2} stolen of {cpus} CPUs around a tree busy \
         {c:.2} cores: {busy}"
    );
    let (code, idle) = tree_cpu(0.3, 1.0, &["sleep", "1.3"]);
    assert_eq!(code, 0);
    assert!(cores(&idle) < 0.05, "a sleeper measured as busy: {idle}");
}

#[test]
fn it_agrees_with_readlabs_own_cpu_on_the_null_engine() {
    let dir = common::disk_dir();
    let json = dir.path().join("run.json");
    let target = common::prepare(dir.path(), "t.dat", "1M");
    let (code, doc) = tree_cpu(
        0.5,
        1.8,
        &[
            env!("CARGO_BIN_EXE_readlab"),
            "run",
            "--engine",
            "null",
            "--runtime",
            "2s",
            "--json",
            json.to_str().unwrap(),
            "-q",
            target.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{doc}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let run = if run.is_array() { &run[0] } else { &run };
    let own = run["result"]["cpu"]["process_pct_of_core"]
        .as_f64()
        .unwrap()
        / 100.0;
    let outside = cores(&doc);
    assert!(
        (outside - own).abs() < 0.15,
        "readlab says its process used {own:.3} cores, /proc says {outside:.3}: {doc}"
    );
}
