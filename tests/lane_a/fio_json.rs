//! `readlab run --output-format json` writes fio's JSON: `report --fio` of it gives the figures the
//! native document gives, and fio-plot (PyPI, installed by scripts/test-deps) draws a directory of
//! such files as it draws fio's own, reading the same values readlab measured. The same fio-plot
//! comparison on fio's own JSON of the same jobs shows the comparison itself works.

use crate::common;

use common::{disk_dir, one_at_a_time, prepare, run, stderr, stdout};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const DEPTHS: [usize; 3] = [1, 2, 4];

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `report --format json` of one input (native, or fio's JSON with --fio): its one point.
fn report_point(arg: &[&str]) -> Value {
    let mut args = vec!["report", "--format", "json", "-o", "-"];
    args.extend_from_slice(arg);
    let o = run(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "{args:?}: {points:?}");
    points[0].clone()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

/// One run writes readlab's document and fio's; the report reads the same figures from both.
#[test]
fn report_of_fio_json_gives_the_native_figures() {
    let _one = one_at_a_time();
    let dir = disk_dir();
    let data = prepare(dir.path(), "data", "64M");
    let (native, fio) = (dir.path().join("run.json"), dir.path().join("run.fio.json"));
    let o = run(&[
        "run",
        data.to_str().unwrap(),
        "--rw",
        "randread",
        "--runtime",
        "300ms",
        "--json",
        native.to_str().unwrap(),
        "--output-format",
        "json",
        "--output",
        fio.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).is_empty(), "fio's --output: nothing on stdout");
    let doc = read_json(&fio);
    assert!(doc["fio version"].as_str().unwrap().starts_with("readlab-"));
    let job = &doc["jobs"][0];
    let opts = &job["job options"];
    assert_eq!(
        (
            opts["rw"].as_str(),
            opts["bs"].as_str(),
            opts["numjobs"].as_str()
        ),
        (Some("randread"), Some("4096"), Some("1"))
    );
    assert!(job["read"]["lat_ns"]["percentile"]["99.000000"].is_u64());

    let (n, f) = (
        report_point(&[native.to_str().unwrap()]),
        report_point(&["--fio", fio.to_str().unwrap()]),
    );
    assert_eq!(f["source"], "fio");
    assert_eq!(f["label"], format!("fio:{}", n["label"].as_str().unwrap()));
    for k in [
        "iops", "ios", "bs", "threads", "iodepth", "latency", "cpu_pct",
    ] {
        assert_eq!(f[k], n[k], "{k}");
    }
    let num = |p: &Value, k: &str| p[k].as_f64().unwrap();
    assert!(close(num(&f, "mb_s"), num(&n, "mb_s"), 1e-6));
    assert!((num(&f, "seconds") - num(&n, "seconds")).abs() <= 0.0005);
    assert!(n["latency"]["p50_ns"].as_u64().unwrap() > 0);

    // Without --output, fio's JSON alone on stdout, as fio prints it.
    let o = run(&[
        "run",
        data.to_str().unwrap(),
        "--rw",
        "read",
        "--runtime",
        "100ms",
        "--output-format=json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("stdout is fio's JSON alone");
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(v["jobs"][0]["job options"]["rw"], "read");
}

/// What fio-plot loads from a directory, by importing its own loader (the one `fio-plot -l`
/// draws from): per file, iodepth, IOPS, mean latency (ns), bandwidth and CPU.
const LOADER: &str = r#"
import json, sys
import fio_plot
from fio_plot.fiolib import getdata
sys.argv = ["fio-plot", "-i", sys.argv[1], "-T", "t", "-l", "-r", "randread"]
parser, settings = fio_plot.get_settings()
routing = getdata.get_routing_dict()
settings = getdata.configure_default_settings(settings, routing, settings["graphtype"])
data = routing[settings["graphtype"]]["get_data"](settings)
rows = [{"iodepth": int(r["iodepth"]), "numjobs": int(r["numjobs"]), "iops": r["iops"],
         "lat": r["lat"], "bw": r["bw"], "cpu": r["cpu_usr"] + r["cpu_sys"]}
        for d in data for r in d["data"]]
print(json.dumps(rows))
"#;

/// fio-plot must be there: scripts/test-deps installs it; a machine that cannot is a failure.
fn require_fio_plot() {
    let ok = Command::new("python3")
        .args(["-c", "import fio_plot"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "fio-plot is not installed for python3: run scripts/test-deps (it installs fio-plot \
         from PyPI with pip); without it, readlab's fio JSON is not checked against fio-plot"
    );
}

/// fio-plot draws DIR (`fio-plot -i DIR -T … -l -r randread -o PNG` exits 0 and writes the
/// chart) and loads, per iodepth, the values `want` gives for it.
fn fio_plot_reads(dir: &Path, want: impl Fn(usize) -> (f64, f64, f64)) {
    let png = dir.join("chart.png");
    let o = Command::new("fio-plot")
        .args([
            "-i",
            dir.to_str().unwrap(),
            "-T",
            "readlab",
            "-l",
            "-r",
            "randread",
        ])
        .args(["-o", png.to_str().unwrap()])
        .output()
        .expect("start fio-plot");
    assert!(
        o.status.success(),
        "fio-plot: {}\n{}",
        stdout(&o),
        stderr(&o)
    );
    assert!(std::fs::metadata(&png).is_ok_and(|m| m.len() > 1000));
    std::fs::remove_file(&png).unwrap();
    let o = Command::new("python3")
        .args(["-c", LOADER, dir.to_str().unwrap()])
        .output()
        .expect("start python3");
    assert!(o.status.success(), "fio-plot's loader: {}", stderr(&o));
    let rows: Vec<Value> = serde_json::from_str(stdout(&o).trim()).unwrap();
    let depths: Vec<u64> = rows
        .iter()
        .map(|r| r["iodepth"].as_u64().unwrap())
        .collect();
    assert_eq!(depths, [1, 2, 4], "{rows:?}");
    for r in &rows {
        let (iops, lat_ns, cpu) = want(r["iodepth"].as_u64().unwrap() as usize);
        assert_eq!(r["numjobs"], 1);
        assert_eq!(r["iops"].as_f64().unwrap(), iops, "{r}");
        assert_eq!(r["lat"].as_f64().unwrap(), lat_ns, "{r}");
        assert!(close(r["cpu"].as_f64().unwrap(), cpu, 1e-9), "{r} {cpu}");
    }
}

/// readlab's runs at iodepth 1, 2 and 4, in fio's JSON under bench-fio's names
/// (`randread-<iodepth>-<numjobs>.json`; fio-plot reads every *.json and sorts them by their
/// job options), drawn by fio-plot with the IOPS, mean latency and CPU readlab measured.
#[test]
fn fio_plot_draws_readlabs_fio_json() {
    require_fio_plot();
    let _one = one_at_a_time();
    let dir = disk_dir();
    let data = prepare(dir.path(), "data", "64M");
    let plots = dir.path().join("plots");
    std::fs::create_dir(&plots).unwrap();
    let mut native = Vec::new();
    for qd in DEPTHS {
        let own = dir.path().join(format!("native-{qd}.json"));
        let fio = plots.join(format!("randread-{qd}-1.json"));
        let o = run(&[
            "run",
            data.to_str().unwrap(),
            "--engine",
            "libaio",
            "--iodepth",
            &qd.to_string(),
            "--rw",
            "randread",
            "--runtime",
            "300ms",
            "--quiet",
            "--json",
            own.to_str().unwrap(),
            "--output-format",
            "json",
            "--output",
            fio.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        native.push(read_json(&own));
    }
    fio_plot_reads(&plots, |qd| {
        let r = &native[DEPTHS.iter().position(|&d| d == qd).unwrap()]["result"];
        let cpu = ["app", "sqpoll", "io_worker"]
            .iter()
            .map(|k| r["cpu"][k]["pct_of_core"].as_f64().unwrap())
            .sum();
        (
            r["iops"].as_f64().unwrap(),
            r["latency"]["mean_ns"].as_f64().unwrap(),
            cpu,
        )
    });
}

/// The reference: fio's own JSON of the same jobs goes through the same comparison, against
/// the values in fio's files.
#[test]
fn fio_plot_draws_fios_own_json_of_the_same_jobs() {
    require_fio_plot();
    let _one = one_at_a_time();
    let dir = disk_dir();
    let data = prepare(dir.path(), "data", "64M");
    let plots = dir.path().join("plots");
    std::fs::create_dir(&plots).unwrap();
    for qd in DEPTHS {
        let out = plots.join(format!("randread-{qd}-1.json"));
        let o = Command::new("fio")
            .args([
                "--name=readlab",
                "--ioengine=libaio",
                "--rw=randread",
                "--bs=4096",
            ])
            .args([
                "--direct=1",
                "--numjobs=1",
                "--time_based",
                "--runtime=300ms",
            ])
            .arg(format!("--filename={}", data.display()))
            .arg(format!("--iodepth={qd}"))
            .args([
                "--output-format=json",
                &format!("--output={}", out.display()),
            ])
            .output()
            .expect("start fio");
        assert!(o.status.success(), "fio: {}", stderr(&o));
    }
    fio_plot_reads(&plots, |qd| {
        let doc = read_json(&plots.join(format!("randread-{qd}-1.json")));
        let job = &doc["jobs"][0];
        let cpu = job["usr_cpu"].as_f64().unwrap() + job["sys_cpu"].as_f64().unwrap();
        (
            job["read"]["iops"].as_f64().unwrap(),
            job["read"]["lat_ns"]["mean"].as_f64().unwrap(),
            cpu,
        )
    });
}
