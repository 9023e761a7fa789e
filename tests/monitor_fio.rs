//! `readlab monitor` in one terminal, fio in another (two tmux windows on a private tmux
//! server): the monitor's lines fit the terminal it runs in, and the device reads it counted
//! while fio ran are fio's I/Os — fio's IOPS within 5 %.

mod common;

use common::{LoopDev, disk_dir};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn need(tool: &str) {
    let ok = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "{tool} is not installed; run scripts/test-deps");
}

/// A tmux server of this test's own, killed on drop.
struct Tmux(String);

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.0])
            .args(args)
            .output()
            .expect("tmux")
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

fn wait_for(path: &Path, what: &str, limit: Duration) {
    let t = Instant::now();
    while !path.exists() {
        assert!(
            t.elapsed() < limit,
            "{what} did not finish within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn monitor_beside_fio_in_tmux_sees_fio_iops() {
    need("tmux");
    need("fio");
    let l = LoopDev::prepared("256M");
    let dir = disk_dir();
    let (fio_json, mon_json) = (dir.path().join("fio.json"), dir.path().join("mon.json"));
    let (fio_done, mon_done) = (dir.path().join("fio.done"), dir.path().join("mon.done"));
    let bin = env!("CARGO_BIN_EXE_readlab");
    let t = Tmux(format!("readlab-test-{}", std::process::id()));
    // The monitor's terminal: 100 columns.
    let monitor = format!(
        "{bin} monitor {} --count 6 --json {}; touch {}; sleep 60",
        l.dev,
        mon_json.display(),
        mon_done.display()
    );
    let o = t.cmd(&[
        "new-session",
        "-d",
        "-x",
        "100",
        "-y",
        "30",
        "-s",
        "mon",
        &monitor,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::thread::sleep(Duration::from_millis(1200));
    // fio in another window, inside the monitor's six seconds.
    let fio = format!(
        "fio --name=beside --filename={} --direct=1 --rw=randread --bs=4k --ioengine=io_uring \
         --iodepth=32 --time_based --runtime=3 --output-format=json --output={}; touch {}",
        l.dev,
        fio_json.display(),
        fio_done.display()
    );
    let o = t.cmd(&["new-window", "-t", "mon", &fio]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    wait_for(&fio_done, "fio", Duration::from_secs(30));
    wait_for(&mon_done, "readlab monitor", Duration::from_secs(30));

    let screen = t.cmd(&["capture-pane", "-p", "-t", "mon:0"]);
    let screen = String::from_utf8_lossy(&screen.stdout).into_owned();
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        lines.len() >= 8,
        "two header lines and six samples: {screen}"
    );
    // The legend (what each column is) comes first; the header's second line names r/s.
    let header = lines
        .iter()
        .position(|l| l.contains("r/s") && l.contains('|'))
        .unwrap_or_else(|| panic!("no header: {screen}"));
    assert!(
        lines.len() >= header + 7,
        "a header and six samples: {screen}"
    );
    assert!(
        lines.iter().all(|l| l.chars().count() <= 100),
        "a line wider than the terminal: {screen}"
    );

    let fio: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fio_json).unwrap()).unwrap();
    let read = &fio["jobs"][0]["read"];
    let (fio_ios, fio_iops) = (
        read["total_ios"].as_u64().unwrap(),
        read["iops"].as_f64().unwrap(),
    );
    let runtime_s = read["runtime"].as_f64().unwrap() / 1000.0;
    let mon: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&mon_json).unwrap()).unwrap();
    let name = l.dev.trim_start_matches("/dev/");
    let samples = mon["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 6);
    let dev_reads: u64 = samples
        .iter()
        .map(|s| {
            s["devices"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["name"] == name)
                .unwrap()["reads"]
                .as_u64()
                .unwrap()
        })
        .sum();
    // Every read fio issued reached the device inside the monitor's window (and nothing else
    // reads this private loop device).
    let gap = (dev_reads as f64 / fio_ios as f64 - 1.0).abs();
    assert!(
        gap < 0.05,
        "device reads {dev_reads} vs fio's I/Os {fio_ios} ({:.1} %)",
        100.0 * gap
    );
    let dev_iops = dev_reads as f64 / runtime_s;
    let gap = (dev_iops / fio_iops - 1.0).abs();
    assert!(
        gap < 0.05,
        "device {dev_iops:.0} reads/s vs fio {fio_iops:.0} IOPS ({:.1} %)",
        100.0 * gap
    );
}
