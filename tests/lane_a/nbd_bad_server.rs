//! A misbehaving NBD server against readlab's client: a small server written here negotiates
//! (its own few lines of the fixed newstyle handshake, so it depends on nothing it tests) and
//! then misbehaves: a wrong cookie, a short reply then a close, a stall after some replies, EIO
//! replies, a reply with bad magic, exports of odd sizes, a server that accepts and never
//! greets. `readlab run nbd://… --runtime 2s` and `readlab info` must end within their time
//! limit every time, with a clear message and a non-zero exit (or a result saying what failed).

use crate::common;

use readlab::nbd::proto::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How the server misbehaves once it has answered `good` reads (all connections together).
#[derive(Clone, Copy, Debug)]
enum Misbehaviour {
    /// Never: a well-behaved server (for the odd sizes).
    Nothing,
    WrongCookie,
    /// Half a reply's payload, then the connection closed.
    ShortThenClose,
    /// Stops reading and answering; the connection stays open.
    Stall,
    Eio,
    BadMagic,
    /// Accepts connections and never says a word.
    NeverGreet,
}

struct BadServer {
    url: String,
    stop: Arc<AtomicBool>,
}

impl Drop for BadServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn bad_server(bad: Misbehaviour, good: u64, size: u64) -> BadServer {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("nbd://{}/", l.local_addr().unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicU64::new(0));
    l.set_nonblocking(true).unwrap();
    let st = stop.clone();
    std::thread::spawn(move || {
        while !st.load(Ordering::Relaxed) {
            match l.accept() {
                Ok((s, _)) => {
                    let (st, answered) = (st.clone(), answered.clone());
                    std::thread::spawn(move || {
                        let _ = serve(s, bad, good, size, &answered, &st);
                    });
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    BadServer { url, stop }
}

/// Hold the connection open, saying nothing, until the test ends.
fn hold(st: &AtomicBool) -> std::io::Result<()> {
    while !st.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

fn u32_of(s: &mut TcpStream) -> std::io::Result<u32> {
    let mut b = [0u8; 4];
    s.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

fn option_reply(s: &mut TcpStream, opt: u32, kind: u32, data: &[u8]) -> std::io::Result<()> {
    let mut b = REPLY_MAGIC.to_be_bytes().to_vec();
    b.extend_from_slice(&opt.to_be_bytes());
    b.extend_from_slice(&kind.to_be_bytes());
    b.extend_from_slice(&(data.len() as u32).to_be_bytes());
    b.extend_from_slice(data);
    s.write_all(&b)
}

fn serve(
    mut s: TcpStream,
    bad: Misbehaviour,
    good: u64,
    size: u64,
    answered: &AtomicU64,
    st: &AtomicBool,
) -> std::io::Result<()> {
    s.set_nodelay(true)?;
    s.set_read_timeout(Some(Duration::from_secs(60)))?;
    if let Misbehaviour::NeverGreet = bad {
        return hold(st);
    }
    let mut greet = NBDMAGIC.to_be_bytes().to_vec();
    greet.extend_from_slice(&IHAVEOPT.to_be_bytes());
    greet.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    s.write_all(&greet)?;
    u32_of(&mut s)?;
    let flags = FLAG_HAS_FLAGS | FLAG_READ_ONLY;
    loop {
        let mut h = [0u8; 16];
        s.read_exact(&mut h)?;
        let opt = be32(&h[8..]);
        let mut data = vec![0u8; be32(&h[12..]) as usize];
        s.read_exact(&mut data)?;
        match opt {
            OPT_EXPORT_NAME => {
                let mut b = size.to_be_bytes().to_vec();
                b.extend_from_slice(&flags.to_be_bytes());
                s.write_all(&b)?;
                break;
            }
            OPT_GO | OPT_INFO => {
                let mut d = INFO_EXPORT.to_be_bytes().to_vec();
                d.extend_from_slice(&size.to_be_bytes());
                d.extend_from_slice(&flags.to_be_bytes());
                option_reply(&mut s, opt, REP_INFO, &d)?;
                option_reply(&mut s, opt, REP_ACK, &[])?;
                if opt == OPT_GO {
                    break;
                }
            }
            OPT_LIST => {
                option_reply(&mut s, opt, REP_SERVER, &0u32.to_be_bytes())?;
                option_reply(&mut s, opt, REP_ACK, &[])?;
            }
            OPT_ABORT => return option_reply(&mut s, opt, REP_ACK, &[]),
            _ => option_reply(&mut s, opt, REP_ERR_UNSUP, &[])?,
        }
    }
    let mut req = [0u8; REQUEST_LEN];
    loop {
        s.read_exact(&mut req)?;
        let r = Request::decode(&req).expect("a request");
        if r.kind == CMD_DISC {
            return Ok(());
        }
        let payload = vec![0u8; r.len as usize];
        let ok = SimpleReply {
            error: 0,
            cookie: r.cookie,
        };
        if answered.fetch_add(1, Ordering::Relaxed) < good {
            s.write_all(&ok.encode())?;
            s.write_all(&payload)?;
            continue;
        }
        match bad {
            Misbehaviour::Nothing | Misbehaviour::NeverGreet => {
                s.write_all(&ok.encode())?;
                s.write_all(&payload)?;
            }
            Misbehaviour::WrongCookie => {
                let wrong = SimpleReply {
                    error: 0,
                    cookie: r.cookie + 1000,
                };
                s.write_all(&wrong.encode())?;
                s.write_all(&payload)?;
            }
            Misbehaviour::ShortThenClose => {
                s.write_all(&ok.encode())?;
                s.write_all(&payload[..payload.len() / 2])?;
                return Ok(());
            }
            Misbehaviour::Stall => return hold(st),
            Misbehaviour::Eio => s.write_all(
                &SimpleReply {
                    error: EIO,
                    cookie: r.cookie,
                }
                .encode(),
            )?,
            Misbehaviour::BadMagic => {
                let mut b = ok.encode();
                b[0..4].copy_from_slice(b"JUNK");
                s.write_all(&b)?;
                s.write_all(&payload)?;
            }
        }
    }
}

/// Run the binary, killing it past `limit`; its output and how long it took.
fn run_within(args: &[&str], limit: Duration) -> (Output, Duration) {
    let child = Command::new(env!("CARGO_BIN_EXE_readlab"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start readlab");
    common::wait_within(child, limit, &format!("readlab {args:?}"))
}

fn run_2s(url: &str, extra: &[&str], limit: Duration) -> (Output, Duration) {
    let mut args = vec![
        "run",
        "--engine",
        "nbd",
        "--runtime",
        "2s",
        "-q",
        "--iodepth",
        "4",
    ];
    args.extend_from_slice(extra);
    args.push(url);
    run_within(&args, limit)
}

/// Failed (non-zero exit) with every phrase of `want` in its error output.
fn failed_saying(o: &Output, code: i32, want: &[&str]) {
    let err = common::unwrapped(&common::stderr(o));
    assert_eq!(o.status.code(), Some(code), "{err}");
    for w in want {
        assert!(err.contains(w), "no {w:?} in: {err}");
    }
}

const QUICK: Duration = Duration::from_secs(8);

#[test]
fn a_wrong_cookie_ends_the_run_at_once_naming_it() {
    let s = bad_server(Misbehaviour::WrongCookie, 3, 64 << 20);
    let (o, took) = run_2s(&s.url, &[], QUICK);
    failed_saying(&o, 1, &["reply to cookie", "not in flight", &s.url]);
    assert!(took < QUICK, "{took:?}");
}

#[test]
fn a_short_reply_then_a_close_ends_the_run_naming_it() {
    let s = bad_server(Misbehaviour::ShortThenClose, 3, 64 << 20);
    let (o, _) = run_2s(&s.url, &[], QUICK);
    failed_saying(&o, 1, &["the server closed it", "reads in flight"]);
}

#[test]
fn a_reply_with_bad_magic_ends_the_run_naming_it() {
    let s = bad_server(Misbehaviour::BadMagic, 3, 64 << 20);
    let (o, _) = run_2s(&s.url, &[], QUICK);
    failed_saying(&o, 1, &["not a simple reply", "bad magic"]);
}

#[test]
fn eio_replies_fail_the_run_with_the_servers_word_not_o_direct_advice() {
    let s = bad_server(Misbehaviour::Eio, 1, 64 << 20);
    let (o, _) = run_2s(&s.url, &[], QUICK);
    failed_saying(
        &o,
        1,
        &[
            "every read failed",
            "Input/output error",
            "NBD server answered every read with an error",
        ],
    );
    assert!(!common::stderr(&o).contains("O_DIRECT"));
}

/// The hang: a server that stops answering mid-run. The run ends at its runtime plus
/// the grace period, with a result that says what failed, and a non-zero exit.
#[test]
fn a_server_that_stalls_mid_run_ends_the_run_at_runtime_plus_grace() {
    let s = bad_server(Misbehaviour::Stall, 200, 64 << 20);
    let limit = Duration::from_secs(2 + 5 + 5);
    let (o, took) = run_2s(&s.url, &["--numjobs", "2"], limit);
    failed_saying(
        &o,
        1,
        &[
            "run failed",
            "no reply within 5 s after the run's end: the server stopped answering",
            "reads in flight",
        ],
    );
    assert!(took >= Duration::from_secs(7) && took < limit, "{took:?}");
}

/// The first SIGINT ends a run whose server stopped answering (it used to take a second one).
#[test]
fn the_first_sigint_ends_a_run_whose_server_stopped_answering() {
    let s = bad_server(Misbehaviour::Stall, 50, 64 << 20);
    let t = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_readlab"))
        .args(["run", "--engine", "nbd", "--runtime", "60s", "-q", &s.url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let sent = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let o = match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            panic!("readlab still running 10 s after SIGINT");
        }
    };
    assert!(sent.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    failed_saying(&o, 130, &["interrupted", "the server stopped answering"]);
}

/// Stalled from the very first read (the identity read before the run): a bounded wait and a
/// message, from run and info alike.
#[test]
fn a_server_that_never_answers_a_read_is_given_up_on_before_the_run() {
    let s = bad_server(Misbehaviour::Stall, 0, 64 << 20);
    let limit = Duration::from_secs(16);
    let (o, took) = run_2s(&s.url, &[], limit);
    let want = [
        "no reply to a",
        "B read at offset 0 within 10 s",
        "stopped answering",
    ];
    failed_saying(&o, 1, &want);
    assert!(took < limit, "{took:?}");
    let (o, _) = run_within(&["info", &s.url], limit);
    failed_saying(&o, 1, &want);
}

#[test]
fn a_server_that_never_greets_may_be_at_its_client_limit() {
    let s = bad_server(Misbehaviour::NeverGreet, 0, 0);
    let limit = Duration::from_secs(16);
    for args in [
        vec!["run", "--engine", "nbd", "--runtime", "2s", "-q", &s.url],
        vec!["info", &s.url],
    ] {
        let (o, took) = run_within(&args, limit);
        failed_saying(
            &o,
            1,
            &["sent no greeting within 10 s", "client limit", "-e N"],
        );
        assert!(took < limit, "{took:?}");
    }
}

/// Exports whose size is not a multiple of 512 or 4096: whole blocks are read, the tail left;
/// one smaller than a block is refused as bad input.
#[test]
fn exports_of_odd_sizes_are_read_in_whole_blocks_or_refused() {
    let s = bad_server(Misbehaviour::Nothing, 0, (1 << 20) + 100);
    let (o, _) = run_within(
        &[
            "run",
            "--engine",
            "nbd",
            "--runtime",
            "1s",
            "-q",
            "--output",
            "json",
            &s.url,
        ],
        QUICK,
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let j = common::json(&o);
    let j = if j.is_array() { &j[0] } else { &j };
    assert!(
        j["result"]["latency"]["count"].as_u64().unwrap() > 10,
        "{j}"
    );
    assert_eq!(j["result"]["errors"]["count"], 0);
    let (o, _) = run_within(&["info", &s.url], QUICK);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(common::stdout(&o).contains("1048676 B"));

    let s = bad_server(Misbehaviour::Nothing, 0, 4095);
    let (o, _) = run_2s(&s.url, &["--bs", "4k"], QUICK);
    failed_saying(&o, 2, &["larger than the range"]);
    let (o, _) = run_2s(&s.url, &["--bs", "512", "--rw", "read"], QUICK);
    assert!(o.status.success(), "{}", common::stderr(&o));
}

/// `readlab info` makes one read (the identity sector): whatever the server does with it, info
/// ends in time, failing with the server's fault named, or saying what it learned.
#[test]
fn info_ends_in_time_whatever_the_server_does_with_its_read() {
    let limit = Duration::from_secs(8);
    for (bad, code, want) in [
        (
            Misbehaviour::WrongCookie,
            1,
            "reply to cookie 1000 when 0 was asked",
        ),
        (
            Misbehaviour::ShortThenClose,
            1,
            "closed the connection before its reply was whole",
        ),
        (Misbehaviour::BadMagic, 1, "not a simple reply"),
        (Misbehaviour::Eio, 0, "prepared        no"),
    ] {
        let s = bad_server(bad, 0, 64 << 20);
        let (o, took) = run_within(&["info", &s.url], limit);
        let all = common::stderr(&o) + &common::stdout(&o);
        assert_eq!(o.status.code(), Some(code), "{bad:?}: {all}");
        assert!(all.contains(want), "{bad:?}: no {want:?} in {all}");
        assert!(took < limit, "{bad:?}: {took:?}");
    }
}
