//! readlab's NBD client interrupted and refused at every stage, against real servers (nbdkit
//! with its filters, `readlab serve`) where they can stall or refuse at that stage, and a few
//! lines of a server written here where none can (a full accept queue, a server that stops after
//! an option, constraints no real server advertises). A signal at any moment (TCP connect,
//! greeting, options, the first read, mid-run) ends `run` and `info` with 130 (SIGINT) or 143
//! (SIGTERM) within a second, saying where it was; block sizes are checked against the server
//! before anything runs; TLS and the server's refusals are said as what they are.

mod common;
mod nbd_common;

use nbd_common::{nbdkit, need, readlab_serve};
use readlab::nbd::handshake::server_handshake;
use readlab::nbd::proto::*;
use readlab::nbd::{BlockSizes, ExportInfo};
use rustix::process::{Pid, Signal, kill_process};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How soon a signal must end readlab: the issue's bound. The client looks at the interrupt flag
/// every 50 ms and gives a stalled run 0.5 s to finish its reads in flight.
const PROMPTLY: Duration = Duration::from_secs(1);

const SIGNALS: [(Signal, i32); 2] = [(Signal::INT, 130), (Signal::TERM, 143)];

fn spawn(args: &[&str]) -> Child {
    common::bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start readlab")
}

/// Send `sig` to `child` and wait for it (killed and failed past 10 s): its output and how
/// long it took after the signal.
fn signal(child: Child, sig: Signal, what: &str) -> (Output, Duration) {
    kill_process(Pid::from_raw(child.id() as i32).unwrap(), sig).unwrap();
    common::wait_within(child, Duration::from_secs(10), what)
}

/// The lines of stderr, continuation lines joined.
fn lines(o: &Output) -> Vec<String> {
    common::unwrapped(&common::stderr(o))
        .lines()
        .map(str::to_string)
        .collect()
}

/// Exit `code` within [`PROMPTLY`] of the signal, one line on stderr saying `phrase`, nothing on
/// stdout.
fn assert_interrupted(o: &Output, took: Duration, code: i32, phrase: &str, what: &str) {
    let l = lines(o);
    assert_eq!(o.status.code(), Some(code), "{what}: {l:?}");
    assert!(took < PROMPTLY, "{what}: {took:?} after the signal; {l:?}");
    assert_eq!(l.len(), 1, "{what}: one line: {l:?}");
    assert!(
        l[0].starts_with("readlab: interrupted while ") && l[0].contains(phrase),
        "{what}: {l:?}"
    );
    assert!(o.stdout.is_empty(), "{what}: {}", common::stdout(o));
}

/// `run` (with the nbd engine, long enough never to end alone) and `info` of `url`.
fn commands(url: &str) -> [Vec<String>; 2] {
    let run = ["run", "--engine", "nbd", "--runtime", "60s", "-q", url];
    [
        run.iter().map(|s| s.to_string()).collect(),
        vec!["info".to_string(), url.to_string()],
    ]
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A TCP listener with an accept queue of one, already full: a connection attempt gets no answer
/// (its SYN is dropped) until it gives up. Returns the listener, the connection filling the
/// queue and the port.
fn full_queue() -> (std::os::fd::OwnedFd, TcpStream, u16) {
    use rustix::net::{AddressFamily, SocketType, ipproto};
    let fd =
        rustix::net::socket(AddressFamily::INET, SocketType::STREAM, Some(ipproto::TCP)).unwrap();
    let any: std::net::SocketAddr = "127.0.0.1:0".parse().unwrap();
    rustix::net::bind(&fd, &any).unwrap();
    rustix::net::listen(&fd, 0).unwrap();
    let port = match rustix::net::getsockname(&fd).unwrap().try_into() {
        Ok(std::net::SocketAddr::V4(a)) => a.port(),
        other => panic!("not an IPv4 address: {other:?}"),
    };
    let filler = TcpStream::connect(("127.0.0.1", port)).unwrap();
    (fd, filler, port)
}

/// Wait until some socket tries to connect to `port` (SYN_SENT in /proc/net/tcp).
fn wait_for_syn_sent(port: u16) {
    let start = Instant::now();
    let tail = format!(":{port:04X}");
    loop {
        let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
        let sent = tcp.lines().skip(1).any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[2].ends_with(&tail) && f[3] == "02"
        });
        if sent {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no SYN to {port}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_signal_while_connecting_ends_run_and_info_at_once() {
    let _one = common::one_at_a_time();
    let (_listener, _filler, port) = full_queue();
    let url = format!("nbd://127.0.0.1:{port}/");
    for cmd in commands(&url) {
        for (sig, code) in SIGNALS {
            let child = spawn(&args(&cmd));
            wait_for_syn_sent(port);
            let (o, took) = signal(child, sig, &cmd[0]);
            let what = format!("{} {sig:?} while connecting", cmd[0]);
            let phrase = format!("connecting to {url} (no answer to the TCP connection yet)");
            assert_interrupted(&o, took, code, &phrase, &what);
        }
    }
}

#[test]
fn a_signal_while_waiting_for_the_greeting_ends_run_and_info_at_once() {
    let _one = common::one_at_a_time();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("nbd://{}/", l.local_addr().unwrap());
    for cmd in commands(&url) {
        for (sig, code) in SIGNALS {
            let child = spawn(&args(&cmd));
            // Connected: readlab now waits for a greeting that never comes.
            let (_s, _) = l.accept().unwrap();
            let (o, took) = signal(child, sig, &cmd[0]);
            let what = format!("{} {sig:?} before the greeting", cmd[0]);
            let phrase = format!("negotiating with {url} (waiting for the server's greeting)");
            assert_interrupted(&o, took, code, &phrase, &what);
        }
    }
}

/// Greet as a fixed newstyle server, take the client's flags and its first option's header:
/// the option it asked.
fn greet_and_take_an_option(s: &mut TcpStream) -> u32 {
    let mut g = NBDMAGIC.to_be_bytes().to_vec();
    g.extend_from_slice(&IHAVEOPT.to_be_bytes());
    g.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    s.write_all(&g).unwrap();
    let mut flags = [0u8; 4];
    s.read_exact(&mut flags).unwrap();
    let mut h = [0u8; 16];
    s.read_exact(&mut h).unwrap();
    assert_eq!(be64(&h), IHAVEOPT);
    be32(&h[8..])
}

#[test]
fn a_signal_while_negotiating_ends_run_and_info_at_once() {
    let _one = common::one_at_a_time();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("nbd://{}/", l.local_addr().unwrap());
    for cmd in commands(&url) {
        for (sig, code) in SIGNALS {
            let child = spawn(&args(&cmd));
            let (mut s, _) = l.accept().unwrap();
            // The option arrived: readlab now waits for its reply, which never comes.
            let opt = greet_and_take_an_option(&mut s);
            let (o, took) = signal(child, sig, &cmd[0]);
            let what = format!("{} {sig:?} during the options", cmd[0]);
            let name = if cmd[0] == "info" {
                "NBD_OPT_LIST"
            } else {
                "NBD_OPT_GO"
            };
            assert_eq!(opt_name(opt), name, "{what}");
            let phrase =
                format!("negotiating with {url} (waiting for the server's reply to {name})");
            assert_interrupted(&o, took, code, &phrase, &what);
        }
    }
}

/// Lines of nbdkit's log filter naming a read.
fn reads_logged(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(" Read id="))
        .count()
}

fn wait_for_reads(log: &Path, n: usize) {
    let start = Instant::now();
    while reads_logged(log) < n {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "nbdkit logged fewer than {n} reads"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_signal_during_the_first_read_ends_run_and_info_at_once() {
    let _one = common::one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let logfile = format!("logfile={}", log.display());
    // Every read waits 60 s; the log filter says when one arrived.
    let s = nbdkit(
        dir.path(),
        &[
            "--filter=log",
            "--filter=delay",
            "memory",
            "1M",
            "delay-read=60",
            &logfile,
        ],
    );
    let mut seen = 0;
    for cmd in commands(&s.url) {
        for (sig, code) in SIGNALS {
            let child = spawn(&args(&cmd));
            seen += 1;
            wait_for_reads(&log, seen);
            let (o, took) = signal(child, sig, &cmd[0]);
            let what = format!("{} {sig:?} during the first read", cmd[0]);
            let phrase = format!(
                "reading 4096 B at offset 0 of {} before the run (waiting for the server's reply \
                 to a read)",
                s.url
            );
            assert_interrupted(&o, took, code, &phrase, &what);
        }
    }
}

/// Ask nbdkit's pause filter to pause: once it answers, requests wait.
fn pause(ctl: &Path) {
    let mut c = std::os::unix::net::UnixStream::connect(ctl).unwrap();
    c.write_all(b"p").unwrap();
    let mut b = [0u8; 1];
    c.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"P");
}

fn resume(ctl: &Path) {
    let mut c = std::os::unix::net::UnixStream::connect(ctl).unwrap();
    c.write_all(b"r").unwrap();
    let mut b = [0u8; 1];
    c.read_exact(&mut b).unwrap();
}

#[test]
fn a_signal_mid_run_on_a_stalled_server_ends_the_run_at_once() {
    let _one = common::one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let ctl = dir.path().join("ctl");
    let (logfile, control) = (
        format!("logfile={}", log.display()),
        format!("pause-control={}", ctl.display()),
    );
    let s = nbdkit(
        dir.path(),
        &[
            "--filter=log",
            "--filter=pause",
            "memory",
            "16M",
            &logfile,
            &control,
        ],
    );
    for (sig, code) in SIGNALS {
        let before = reads_logged(&log);
        let child = spawn(&args(&commands(&s.url)[0]));
        // Well into the run (the reads before it are a handful), then the server stops answering.
        wait_for_reads(&log, before + 200);
        pause(&ctl);
        let (o, took) = signal(child, sig, "run");
        resume(&ctl);
        let l = lines(&o);
        assert_eq!(o.status.code(), Some(code), "{sig:?}: {l:?}");
        assert!(took < PROMPTLY, "{sig:?}: {took:?} after the signal; {l:?}");
        assert!(
            l.iter().any(|l| l
                == "readlab: interrupted; the figures cover only the part of the run measured"),
            "{sig:?}: {l:?}"
        );
        assert!(
            common::stdout(&o).contains("IOPS"),
            "{sig:?}: the part measured"
        );
    }
}

#[test]
fn block_sizes_are_checked_against_the_server_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let s = nbdkit(
        dir.path(),
        &[
            "--filter=blocksize-policy",
            "memory",
            "64M",
            "blocksize-maximum=32M",
        ],
    );
    let o = common::run(&[
        "run",
        "--engine",
        "nbd",
        "--bs",
        "4k,64k,48m",
        "--runtime",
        "1s",
        "-q",
        &s.url,
    ]);
    let l = lines(&o);
    assert_eq!(o.status.code(), Some(2), "{l:?}");
    assert!(o.stdout.is_empty(), "nothing ran: {}", common::stdout(&o));
    assert_eq!(l.len(), 1, "{l:?}");
    assert!(
        l[0].contains("--bs 50331648 B is larger than the server accepts")
            && l[0].contains("maximum 33554432 B"),
        "{l:?}"
    );
}

/// A server that negotiates `sizes` with readlab's own handshake (a real one, but willing to
/// advertise anything), then hangs up: (URL, its thread).
fn advertising(sizes: BlockSizes) -> (String, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("nbd://{}/", l.local_addr().unwrap());
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let export = ExportInfo {
            name: String::new(),
            description: None,
            size: 1 << 20,
            flags: FLAG_HAS_FLAGS | FLAG_READ_ONLY,
            block_sizes: Some(sizes),
        };
        let _ = server_handshake(&mut s, &export);
    });
    (url, t)
}

#[test]
fn a_server_advertising_impossible_block_sizes_is_refused_naming_them() {
    for (sizes, why) in [
        (
            BlockSizes {
                minimum: 4096,
                preferred: 4096,
                maximum: 512,
            },
            "its maximum block size 512 B is below its minimum 4096 B",
        ),
        (
            BlockSizes {
                minimum: 3000,
                preferred: 4096,
                maximum: 30000,
            },
            "its minimum block size 3000 B is not a power of two",
        ),
    ] {
        let (url, t) = advertising(sizes);
        let o = common::run(&["run", "--engine", "nbd", "--runtime", "1s", "-q", &url]);
        t.join().unwrap();
        let l = lines(&o);
        assert_eq!(o.status.code(), Some(1), "{l:?}");
        assert_eq!(l.len(), 1, "{l:?}");
        assert!(
            l[0].contains(why)
                && l[0].contains(&format!(
                    "minimum {} B, preferred {} B, maximum {} B",
                    sizes.minimum, sizes.preferred, sizes.maximum
                )),
            "{l:?}"
        );
    }
}

/// One line, exit `code`, saying every one of `says` and never blaming the address.
fn assert_says(o: &Output, code: i32, says: &[&str], what: &str) {
    let l = lines(o);
    assert_eq!(o.status.code(), Some(code), "{what}: {l:?}");
    assert_eq!(l.len(), 1, "{what}: {l:?}");
    for s in says {
        assert!(l[0].contains(s), "{what}: no '{s}' in {l:?}");
    }
    assert!(
        !l[0].contains("check that the server runs"),
        "{what}: {l:?}"
    );
}

#[test]
fn tls_in_the_url_is_refused_the_same_for_both_forms() {
    for url in [
        "nbd+unix:///?socket=/nonexistent/s&tls=require",
        "nbd://127.0.0.1:1/?tls=require",
        "nbds://127.0.0.1/",
        "nbds+unix:///?socket=/nonexistent/s",
    ] {
        for cmd in [&["run", "--engine", "nbd", "-q", url][..], &["info", url]] {
            let o = common::run(cmd);
            assert_says(&o, 2, &["TLS", "does not speak", "--tls=off"], url);
        }
    }
}

#[test]
fn a_server_requiring_tls_is_said_to() {
    need("nbdkit");
    let dir = tempfile::tempdir().unwrap();
    let psk = dir.path().join("keys.psk");
    std::fs::write(&psk, "readlab:0123456789abcdef0123456789abcdef\n").unwrap();
    let psk = format!("--tls-psk={}", psk.display());
    let s = nbdkit(dir.path(), &["--tls=require", &psk, "memory", "1M"]);
    for cmd in commands(&s.url) {
        let o = Command::new(env!("CARGO_BIN_EXE_readlab"))
            .args(args(&cmd))
            .output()
            .unwrap();
        let says = ["the server requires TLS", "does not speak", "--tls=off"];
        assert_says(&o, 1, &says, &cmd[0]);
    }
}

#[test]
fn an_oldstyle_server_and_an_unknown_export_are_said_to() {
    let dir = tempfile::tempdir().unwrap();
    let s = nbdkit(dir.path(), &["-o", "memory", "1M"]);
    let o = common::run(&["run", "--engine", "nbd", "-q", "--runtime", "1s", &s.url]);
    assert_says(&o, 1, &["oldstyle", "newstyle"], "oldstyle");
    let s = readlab_serve(&["--null", "1M", "--export", "disk"]);
    let url = format!("{}nope", s.url);
    for cmd in commands(&url) {
        let o = common::run(&args(&cmd));
        let says = ["no export 'nope'", "nbdinfo --list"];
        assert_says(&o, 1, &says, &cmd[0]);
    }
}

#[test]
fn an_oversized_option_reply_is_said_to() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("nbd://{}/", l.local_addr().unwrap());
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let opt = greet_and_take_an_option(&mut s);
        let mut r = REPLY_MAGIC.to_be_bytes().to_vec();
        r.extend_from_slice(&opt.to_be_bytes());
        r.extend_from_slice(&REP_INFO.to_be_bytes());
        r.extend_from_slice(&(64u32 << 20).to_be_bytes());
        let _ = s.write_all(&r);
        let _ = s.read(&mut [0u8; 64]);
    });
    let o = common::run(&["run", "--engine", "nbd", "-q", "--runtime", "1s", &url]);
    t.join().unwrap();
    assert_says(
        &o,
        1,
        &[
            "67108864 B reply to NBD_OPT_GO",
            "does not follow the NBD protocol",
        ],
        "oversized",
    );
}
