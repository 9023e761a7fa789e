//! readlab's NBD server and client against the other common implementations, on both server
//! models: libnbd (`nbdinfo --map`, `nbdsh` block status and structured reads, `nbdcopy`) and
//! QEMU (`qemu-img map`, `qemu-img compare`) read `readlab serve` — a prepared file is all data,
//! a sparse file's holes are holes, reads are byte-exact, a read failing partway is an error and
//! the connection goes on; an unknown export name is refused when `--export` names the export;
//! and readlab's client reads Debian's reference `nbd-server`, verified.

use crate::common;
use crate::nbd_common;

use nbd_common::{Server, readlab_serve};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const MODELS: [&[&str]; 2] = [&["--model", "thread"], &["--model", "uring"]];

const M: u64 = 1 << 20;
/// The sparse file: 8 MiB with data at [1 MiB, 1.25 MiB), holes around it.
const SPARSE_SIZE: u64 = 8 * M;
const DATA_AT: u64 = M;
const DATA_LEN: u64 = 256 << 10;
/// `base:allocation` states as nbdinfo prints them.
const HOLE: u64 = 3;
const DATA: u64 = 0;

/// The tool must be installed: a missing one fails the test, naming the Debian package.
fn need(tool: &str, package: &str) {
    let ok = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{tool} is not installed; run scripts/test-deps (Debian package {package})"
    );
}

/// `tool ARGS`, bounded to 60 s.
fn tool(tool: &str, args: &[&str]) -> Output {
    Command::new("timeout")
        .arg("60")
        .arg(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"))
}

fn ok(o: Output, what: &str) -> Output {
    assert!(
        o.status.success(),
        "{what} failed ({:?}): {}{}",
        o.status,
        common::stdout(&o),
        common::stderr(&o)
    );
    o
}

/// `truncate -s 8M`, then 256 KiB of non-zero bytes written at 1 MiB.
fn sparse(dir: &Path) -> PathBuf {
    need("truncate", "coreutils");
    let p = dir.join("sparse.img");
    ok(
        tool("truncate", &["-s", "8M", p.to_str().unwrap()]),
        "truncate",
    );
    let data: Vec<u8> = (0..DATA_LEN).map(|i| (i % 251) as u8 + 1).collect();
    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
    f.write_all_at(&data, DATA_AT).unwrap();
    f.sync_all().unwrap();
    p
}

fn sparse_map() -> Vec<(u64, u64, u64)> {
    let end = DATA_AT + DATA_LEN;
    vec![
        (0, DATA_AT, HOLE),
        (DATA_AT, DATA_LEN, DATA),
        (end, SPARSE_SIZE - end, HOLE),
    ]
}

fn serve(file: &Path, model: &[&str], extra: &[&str]) -> Server {
    let mut args = vec![file.to_str().unwrap()];
    args.extend_from_slice(model);
    args.extend_from_slice(extra);
    readlab_serve(&args)
}

/// `nbdinfo --map --json`: (offset, length, type) of every extent.
fn nbdinfo_map(url: &str) -> Vec<(u64, u64, u64)> {
    let o = ok(tool("nbdinfo", &["--map", "--json", url]), "nbdinfo --map");
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    j.as_array()
        .unwrap_or_else(|| panic!("not a list: {j}"))
        .iter()
        .map(|e| {
            let n = |k: &str| e[k].as_u64().unwrap_or_else(|| panic!("no {k} in {e}"));
            (n("offset"), n("length"), n("type"))
        })
        .collect()
}

#[test]
fn nbdinfo_map_sees_a_prepared_file_as_data_and_a_sparse_files_holes() {
    need("nbdinfo", "libnbd-bin");
    let dir = common::disk_dir();
    let prepared = common::prepare(dir.path(), "p.dat", "8M");
    let sparse = sparse(dir.path());
    for model in MODELS {
        let s = serve(&prepared, model, &[]);
        assert_eq!(nbdinfo_map(&s.url), vec![(0, 8 * M, DATA)], "{model:?}");
        let s = serve(&sparse, model, &[]);
        assert_eq!(nbdinfo_map(&s.url), sparse_map(), "{model:?}");
        // Through the page cache too.
        let s = serve(&sparse, model, &["--buffered"]);
        assert_eq!(nbdinfo_map(&s.url), sparse_map(), "{model:?} --buffered");
    }
    // The null back end stores nothing and reads as zeros: one hole, all zero.
    let s = readlab_serve(&["--null", "5m"]);
    assert_eq!(nbdinfo_map(&s.url), vec![(0, 5 * M, HOLE)]);
}

/// `qemu-img map --output=json`: (start, length, data, zero) of every extent.
fn qemu_map(url: &str) -> Vec<(u64, u64, bool, bool)> {
    let o = ok(
        tool("qemu-img", &["map", "--output=json", "-f", "raw", url]),
        "qemu-img map",
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    j.as_array()
        .unwrap_or_else(|| panic!("not a list: {j}"))
        .iter()
        .map(|e| {
            let n = |k: &str| e[k].as_u64().unwrap_or_else(|| panic!("no {k} in {e}"));
            let b = |k: &str| e[k].as_bool().unwrap_or_else(|| panic!("no {k} in {e}"));
            (n("start"), n("length"), b("data"), b("zero"))
        })
        .collect()
}

#[test]
fn qemu_img_map_sees_a_prepared_file_as_data_and_a_sparse_files_holes() {
    need("qemu-img", "qemu-utils");
    let dir = common::disk_dir();
    let prepared = common::prepare(dir.path(), "p.dat", "8M");
    let sparse = sparse(dir.path());
    let end = DATA_AT + DATA_LEN;
    for model in MODELS {
        let s = serve(&prepared, model, &[]);
        assert_eq!(qemu_map(&s.url), vec![(0, 8 * M, true, false)], "{model:?}");
        let s = serve(&sparse, model, &[]);
        assert_eq!(
            qemu_map(&s.url),
            vec![
                (0, DATA_AT, false, true),
                (DATA_AT, DATA_LEN, true, false),
                (end, SPARSE_SIZE - end, false, true),
            ],
            "{model:?}"
        );
    }
}

/// Run a Python script in `nbdsh --base-allocation -u URL` (the system Python, which has the
/// `nbd` module); its last line of output as JSON.
fn nbdsh(url: &str, script: &str) -> serde_json::Value {
    need("nbdsh", "python3-libnbd");
    let path = format!("/usr/bin:{}", std::env::var("PATH").unwrap_or_default());
    let o = Command::new("timeout")
        .args(["60", "nbdsh", "--base-allocation", "-u", url, "-c", script])
        .env("PATH", path)
        .output()
        .expect("run nbdsh");
    let err = common::stderr(&o);
    assert!(
        !err.contains("No module named"),
        "python3-libnbd is not installed; run scripts/test-deps: {err}"
    );
    let o = ok(o, "nbdsh");
    let out = common::stdout(&o);
    let last = out.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"))
}

/// What the nbdsh checks print: structured replies and the context negotiated, block status
/// with and without REQ_ONE, a 4 MiB read (several chunks in the thread model) and a small one
/// compared with the file, a read past the end (strict mode off, so the server answers it) and
/// a read after it.
const NBDSH_CHECKS: &str = r#"
import json
h.set_strict_mode(0)
f = open(PATH, "rb").read()
out = {"structured": h.get_structured_replies_negotiated(),
       "context": h.can_meta_context("base:allocation")}
for key, flags in (("all", 0), ("one", nbd.CMD_FLAG_REQ_ONE)):
    got = []
    h.block_status(len(f), 0, lambda m, off, e, err: got.append([m, off, list(e)]) or 0, flags)
    out[key] = got
got = []
h.block_status(8192, (1 << 20) - 4096, lambda m, off, e, err: got.append(list(e)) or 0)
out["edge"] = got
out["big_read"] = h.pread(4 << 20, 0) == f[:4 << 20]
out["small_read"] = h.pread(4096, (1 << 20) + 4096) == f[(1 << 20) + 4096:(1 << 20) + 8192]
try:
    h.pread(4096, len(f))
    out["beyond"] = "served"
except nbd.Error as e:
    out["beyond"] = e.errno
out["after"] = h.pread(512, 0) == f[:512]
print(json.dumps(out))
"#;

#[test]
fn nbdsh_sees_structured_reads_block_status_and_errors() {
    let dir = common::disk_dir();
    let sparse = sparse(dir.path());
    let script = format!("PATH = {:?}\n{NBDSH_CHECKS}", sparse.to_str().unwrap());
    for model in MODELS {
        let s = serve(&sparse, model, &[]);
        let j = nbdsh(&s.url, &script);
        let ctx = "base:allocation";
        let all: Vec<u64> = sparse_map()
            .iter()
            .flat_map(|&(_, len, t)| [len, t])
            .collect();
        assert_eq!(j["structured"], true, "{model:?}: {j}");
        assert_eq!(j["context"], true, "{model:?}: {j}");
        assert_eq!(j["all"], serde_json::json!([[ctx, 0, all]]), "{model:?}");
        assert_eq!(
            j["one"],
            serde_json::json!([[ctx, 0, [DATA_AT, HOLE]]]),
            "{model:?}"
        );
        // Bounded by the request: 4 KiB of hole, then 4 KiB of data.
        assert_eq!(
            j["edge"],
            serde_json::json!([[4096, HOLE, 4096, DATA]]),
            "{model:?}"
        );
        assert_eq!(j["big_read"], true, "{model:?}: {j}");
        assert_eq!(j["small_read"], true, "{model:?}: {j}");
        assert_eq!(j["beyond"], "EINVAL", "{model:?}: {j}");
        assert_eq!(j["after"], true, "{model:?}: {j}");
    }
}

/// A read that fails partway (the file shrank under the server) ends in an error chunk after
/// the data that was read: the client gets EIO and the connection goes on. With simple replies
/// the thread model had to hang up once a reply's header had gone out.
#[test]
fn a_read_failing_partway_is_an_error_and_the_connection_goes_on() {
    let dir = common::disk_dir();
    let f = common::prepare(dir.path(), "shrinks.dat", "8M");
    let script = r#"
import json, os
out = {"first": h.pread(4096, 0) is not None}
os.truncate(PATH, 1 << 20)
try:
    h.pread(4 << 20, 0)
    out["partway"] = "served"
except nbd.Error as e:
    out["partway"] = e.errno
out["after"] = len(h.pread(4096, 0)) == 4096
print(json.dumps(out))
"#;
    let script = format!("PATH = {:?}\n{script}", f.to_str().unwrap());
    for model in MODELS {
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .open(&f)
            .unwrap()
            .set_len(8 * M);
        // The thread model reads 256 KiB pieces one at a time: the first ones go out.
        let s = serve(&f, model, &["--iodepth", "1"]);
        let j = nbdsh(&s.url, &script);
        assert_eq!(j["partway"], "EIO", "{model:?}: {j}");
        assert_eq!(j["after"], true, "{model:?}: {j}");
    }
}

#[test]
fn nbdcopy_and_qemu_img_compare_read_byte_exact() {
    need("nbdcopy", "libnbd-bin");
    need("qemu-img", "qemu-utils");
    let dir = common::disk_dir();
    let prepared = common::prepare(dir.path(), "p.dat", "8M");
    let sparse = sparse(dir.path());
    for model in MODELS {
        for file in [&prepared, &sparse] {
            let s = serve(file, model, &[]);
            // nbdcopy asks for block status and skips the holes it is told of.
            let copy = dir.path().join("copy.img");
            let _ = std::fs::remove_file(&copy);
            ok(
                tool("nbdcopy", &[&s.url, copy.to_str().unwrap()]),
                "nbdcopy",
            );
            assert!(
                std::fs::read(&copy).unwrap() == std::fs::read(file).unwrap(),
                "{model:?} {}: the copy differs",
                file.display()
            );
            let o = ok(
                tool(
                    "qemu-img",
                    &[
                        "compare",
                        "-f",
                        "raw",
                        "-F",
                        "raw",
                        &s.url,
                        file.to_str().unwrap(),
                    ],
                ),
                "qemu-img compare",
            );
            assert!(common::stdout(&o).contains("identical"), "{model:?}");
        }
    }
}

#[test]
fn an_unknown_export_name_is_refused_when_export_is_set() {
    need("nbdinfo", "libnbd-bin");
    need("qemu-img", "qemu-utils");
    let dir = common::disk_dir();
    let f = common::prepare(dir.path(), "p.dat", "1M");
    for model in MODELS {
        let s = serve(&f, model, &["--export", "disk"]);
        let other = format!("{}other", s.url);
        let o = tool("nbdinfo", &[&other]);
        assert!(!o.status.success(), "{model:?}: nbdinfo reached 'other'");
        assert!(
            common::stderr(&o).contains("other"),
            "{}",
            common::stderr(&o)
        );
        let o = tool("qemu-img", &["info", &other]);
        assert!(!o.status.success(), "{model:?}: qemu-img reached 'other'");
        assert!(
            common::stderr(&o).contains("no export named 'other' here; this server exports 'disk'"),
            "{}",
            common::stderr(&o)
        );
        let o = common::run(&["info", &other]);
        assert!(
            !o.status.success(),
            "{model:?}: readlab info reached 'other'"
        );
        assert!(
            common::unwrapped(&common::stderr(&o)).contains("no export named 'other'"),
            "{}",
            common::stderr(&o)
        );
        // The default name is no exception; the export's own name works.
        assert!(!tool("nbdinfo", &[&s.url]).status.success(), "{model:?}");
        ok(
            tool("nbdinfo", &[&format!("{}disk", s.url)]),
            "nbdinfo disk",
        );
    }
    // Without --export, any name reaches the export.
    let s = serve(&f, MODELS[0], &[]);
    ok(
        tool("nbdinfo", &[&format!("{}anything", s.url)]),
        "nbdinfo anything",
    );
}

/// Debian's `nbd-server`, daemonized on 127.0.0.1 (it forks a process per client), stopped by
/// the PID it wrote when dropped.
struct NbdServer {
    pidfile: PathBuf,
    port: u16,
}

impl NbdServer {
    fn start(dir: &Path, file: &Path) -> NbdServer {
        need("nbd-server", "nbd-server");
        // A free port: bound, then released for nbd-server.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let conf = dir.join("nbd-server.conf");
        std::fs::write(
            &conf,
            format!(
                "[generic]\n    port = {port}\n    listenaddr = 127.0.0.1\n    allowlist = true\n\
                 [disk]\n    exportname = {}\n    readonly = true\n",
                file.display()
            ),
        )
        .unwrap();
        let pidfile = dir.join("nbd-server.pid");
        let o = tool(
            "nbd-server",
            &[
                "-C",
                conf.to_str().unwrap(),
                "-p",
                pidfile.to_str().unwrap(),
            ],
        );
        let s = NbdServer { pidfile, port };
        ok(o, "nbd-server");
        let t = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() || s.pid().is_none() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "nbd-server did not listen on port {port} within 10 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        s
    }

    fn pid(&self) -> Option<i32> {
        std::fs::read_to_string(&self.pidfile)
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    fn url(&self) -> String {
        format!("nbd://127.0.0.1:{}/disk", self.port)
    }
}

impl Drop for NbdServer {
    fn drop(&mut self) {
        let Some(pid) = self.pid().and_then(rustix::process::Pid::from_raw) else {
            return;
        };
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(5)
            && rustix::process::test_kill_process(pid).is_ok()
        {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn readlab_reads_debians_nbd_server_verified() {
    let dir = common::disk_dir();
    let f = common::prepare(dir.path(), "p.dat", "16M");
    let srv = NbdServer::start(dir.path(), &f);
    let o = ok(common::run(&["info", &srv.url()]), "readlab info");
    assert!(
        common::stdout(&o).contains(&(16 * M).to_string()),
        "{}",
        common::stdout(&o)
    );
    for extra in [&[][..], &["--iodepth", "4", "--numjobs", "2"][..]] {
        let mut args = vec![
            "run",
            "--engine",
            "nbd",
            "--runtime",
            "1s",
            "--verify",
            "--output",
            "json",
        ];
        let url = srv.url();
        args.push(&url);
        args.extend_from_slice(extra);
        let o = ok(common::run(&args), "readlab run");
        let j = common::json(&o);
        let doc = if j.is_array() { &j[0] } else { &j };
        let v = &doc["result"]["verify"];
        assert!(v["checked_ios"].as_u64().unwrap() > 100, "{extra:?}: {v}");
        assert_eq!(v["mismatches"], 0, "{extra:?}: {v}");
    }
}
