//! Where readlab's own CPU per I/O goes, for runs already made: for each `readlab run --json`
//! document given, each part of the worker's loop timed alone (`readlab::runner::breakdown`) and
//! weighted by how often a run of that shape does it, beside the run's own CPU per I/O.
//!
//! `cargo bench --bench breakdown -- RUN.json [RUN.json …]` (a document may hold an array of
//! runs). With no document: the shapes of a synchronous run and of a queued one at 1M IOPS.

use readlab::runner::breakdown::{Shape, measure};
use serde_json::Value;

fn shape_of(run: &Value) -> Option<(String, Shape, f64)> {
    let cfg = &run["config"];
    let res = &run["result"];
    let engine = cfg["engine"].as_str()?;
    let asynchronous = readlab::engine::EngineKind::parse(engine)
        .map(|k| k.capabilities().asynchronous)
        .unwrap_or(false);
    let threads = cfg["threads"].as_f64().unwrap_or(1.0).max(1.0);
    let shape = Shape {
        clock_reads_per_io: res["timer"]["clock_reads_per_io"].as_f64()?,
        ios_per_batch: if asynchronous {
            cfg["batch"].as_f64().unwrap_or(1.0)
        } else {
            1.0
        },
        iops: res["iops"].as_f64()? / threads,
        bs: cfg["bs"].as_u64().unwrap_or(4096) as usize,
    };
    let label = format!(
        "{} ({engine}, {} reads/s per thread)",
        res["label"].as_str().unwrap_or("?"),
        shape.iops.round()
    );
    // readlab's own threads (as vs_fio.sh holds them against fio's job thread), not the kernel's
    // io-wq or SQPOLL threads working for it.
    let ios = res["ios"].as_f64().unwrap_or(0.0);
    let own = res["cpu"]["app"]["total_s"]
        .as_f64()
        .filter(|_| ios > 0.0)
        .map(|s| s * 1e6 / ios);
    let cpu = own.unwrap_or_else(|| res["cpu_us_per_io"].as_f64().unwrap_or(f64::NAN));
    Some((label, shape, cpu))
}

fn print(label: &str, shape: &Shape, cpu_us: f64) {
    let parts = measure(shape, 1_000_000);
    println!("breakdown {label}: ns of CPU per I/O");
    let mut sum = 0.0;
    for c in &parts {
        if c.counted {
            sum += c.ns_per_io;
        }
        let how_often = if c.per_io >= 0.01 {
            format!("{:.2} per I/O", c.per_io)
        } else {
            format!("once every {:.0} I/Os", 1.0 / c.per_io)
        };
        println!(
            "  {:<34} {:>8.1}   ({:.1} ns, {how_often}){}",
            c.name,
            c.ns_per_io,
            c.ns_each,
            if c.counted { "" } else { "  not in this run" }
        );
    }
    println!("  {:<34} {:>8.1}", "sum of the parts", sum);
    if cpu_us.is_finite() {
        println!(
            "  {:<34} {:>8.1}   (the parts are {:.1} % of it; the rest: the loop around them, the system call, the kernel's work)",
            "the run's CPU per I/O (own threads)",
            cpu_us * 1000.0,
            100.0 * sum / (cpu_us * 1000.0)
        );
    }
}

/// A few lines per run (`benches/vs_fio.sh`), none wider than 100 columns: `NAME: 76.6 of 1039 ns
/// per I/O … (7.4 %); --verify would add 342`, then the parts, four to a line.
fn brief(name: &str, shape: &Shape, cpu_us: f64) {
    let parts = measure(shape, 300_000);
    let counted: Vec<_> = parts.iter().filter(|c| c.counted).collect();
    let sum: f64 = counted.iter().map(|c| c.ns_per_io).sum();
    let list: Vec<String> = counted
        .iter()
        .map(|c| format!("{} {:.1}", short(c.name), c.ns_per_io))
        .collect();
    let verify = parts
        .iter()
        .find(|c| !c.counted)
        .map_or(0.0, |c| c.ns_per_io);
    println!(
        "  {name}: {sum:.1} of {:.0} ns per I/O of its threads ({:.1} %); --verify would add {verify:.0}",
        cpu_us * 1000.0,
        100.0 * sum / (cpu_us * 1000.0)
    );
    for line in list.chunks(4) {
        println!("    {}", line.join(" · "));
    }
}

/// A part's name in one word, for the brief form.
fn short(name: &str) -> &str {
    match name {
        "clock reads" => "clock",
        "latency histogram" => "histogram",
        "per-second timeline" => "timeline",
        "depth accounting" => "depth",
        "random offsets" => "offsets",
        "engine calls (null)" => "engine-calls",
        "completion counter" => "counter",
        "observer ticks" => "observer",
        other => other,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; everything else is a document.
    let brief_form = std::env::args().any(|a| a == "--brief");
    let files: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if files.is_empty() {
        for (label, reads, batch) in [("synchronous", 2.0, 1.0), ("queued, batch 1", 1.0, 1.0)] {
            let shape = Shape {
                clock_reads_per_io: reads,
                ios_per_batch: batch,
                iops: 1e6,
                bs: 4096,
            };
            print(&format!("{label} at 1M IOPS"), &shape, f64::NAN);
        }
        return;
    }
    for f in files {
        let text = match std::fs::read_to_string(&f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("breakdown: cannot read {f}: {e}");
                std::process::exit(2);
            }
        };
        let doc: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("breakdown: {f} is not JSON: {e}");
                std::process::exit(2);
            }
        };
        let runs = match doc {
            Value::Array(a) => a,
            v => vec![v],
        };
        for run in &runs {
            match shape_of(run) {
                Some((_, shape, cpu)) if brief_form => {
                    let name = std::path::Path::new(&f)
                        .file_stem()
                        .map_or(f.clone(), |s| s.to_string_lossy().into_owned());
                    brief(&name, &shape, cpu)
                }
                Some((label, shape, cpu)) => print(&label, &shape, cpu),
                None => eprintln!("breakdown: {f}: not a readlab run document"),
            }
        }
    }
}
