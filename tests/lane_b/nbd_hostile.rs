//! A hostile client against `readlab serve` (both models): garbage magic, a truncated header, a
//! read past the end, a 1 GiB read, a write, garbage in the handshake and a client that vanishes
//! mid-reply each get their error or their connection closed — while a second client is served,
//! verified, throughout.

use crate::common;
use crate::nbd_common;

use nbd_common::readlab_serve;
use readlab::nbd::proto::{
    CMD_READ, CMD_WRITE, EINVAL, EPERM, Request, SIMPLE_REPLY_LEN, SimpleReply,
};
use readlab::nbd::{Connection, NbdUrl};
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const SIZE: u64 = 8 << 20;

fn connect(url: &NbdUrl) -> Connection {
    let c = Connection::open(url, false).expect("negotiate");
    c.stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    c
}

fn send(c: &Connection, kind: u16, cookie: u64, offset: u64, len: u32) {
    let r = Request {
        flags: 0,
        kind,
        cookie,
        offset,
        len,
    };
    (&c.stream).write_all(&r.encode()).unwrap();
}

fn reply(c: &Connection) -> SimpleReply {
    let mut h = [0u8; SIMPLE_REPLY_LEN];
    (&c.stream).read_exact(&mut h).expect("a reply");
    SimpleReply::decode(&h).unwrap()
}

/// The server closes the connection: a read ends (EOF or reset) within the timeout.
fn closed(c: &Connection) -> bool {
    let mut b = [0u8; 64];
    loop {
        match (&c.stream).read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// Still in transmission: a good read on the same connection works.
fn still_serves(c: &Connection, id: u64) {
    let mut b = vec![0u8; 4096];
    c.read_at(8192, &mut b).expect("the connection goes on");
    assert!(readlab::data::verify(id, 8192, &b).is_none());
}

#[test]
fn hostile_clients_get_errors_or_are_closed_and_others_are_served_throughout() {
    let dir = common::disk_dir();
    let f = common::prepare(dir.path(), "p.dat", "8M");
    let id = {
        let mut b = vec![0u8; 4096];
        use std::os::unix::fs::FileExt;
        std::fs::File::open(&f)
            .unwrap()
            .read_exact_at(&mut b, 0)
            .unwrap();
        readlab::data::sector_file_id(&b, 0).unwrap()
    };
    let json = dir.path().join("serve.json");
    for model in [&["--model", "thread"][..], &["--model", "uring"]] {
        let mut args = vec![f.to_str().unwrap(), "--json", json.to_str().unwrap()];
        args.extend_from_slice(model);
        let s = readlab_serve(&args);
        let url = NbdUrl::parse(&s.url).unwrap();

        // The good client: reads and verifies until told to stop.
        let stop = Arc::new(AtomicBool::new(false));
        let good = Arc::new(AtomicU64::new(0));
        let reader = {
            let (url, stop, good) = (url.clone(), stop.clone(), good.clone());
            std::thread::spawn(move || {
                let c = connect(&url);
                let mut b = vec![0u8; 4096];
                let mut off = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    c.read_at(off, &mut b).expect("the good client is served");
                    assert!(
                        readlab::data::verify(id, off, &b).is_none(),
                        "bad data at {off}"
                    );
                    good.fetch_add(1, Ordering::Relaxed);
                    off = (off + 4096 * 7) % SIZE;
                }
            })
        };
        let progress = |what: &str| {
            let before = good.load(Ordering::Relaxed);
            let t = std::time::Instant::now();
            while good.load(Ordering::Relaxed) < before + 20 {
                assert!(
                    t.elapsed() < Duration::from_secs(10),
                    "{model:?}: the good client stalled after {what}"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
        };
        progress("start");

        // Garbage magic: the stream cannot be followed, the connection is closed.
        let c = connect(&url);
        (&c.stream)
            .write_all(b"GARBAGE-GARBAGE-GARBAGE-GARB")
            .unwrap();
        assert!(closed(&c), "{model:?}: garbage magic");
        progress("garbage magic");

        // A truncated header, then the client goes away.
        let c = connect(&url);
        (&c.stream)
            .write_all(&Request::read(1, 0, 4096).encode()[..10])
            .unwrap();
        if let readlab::nbd::Stream::Tcp(t) = &c.stream {
            t.shutdown(std::net::Shutdown::Write).unwrap();
        }
        assert!(closed(&c), "{model:?}: truncated header");
        progress("truncated header");

        // A read past the end, a 1 GiB read, a write: each refused, the connection goes on.
        let c = connect(&url);
        send(&c, CMD_READ, 7, SIZE, 4096);
        assert_eq!(
            reply(&c),
            SimpleReply {
                error: EINVAL,
                cookie: 7
            },
            "{model:?}: past the end"
        );
        send(&c, CMD_READ, 8, 0, 1 << 30);
        assert_eq!(
            reply(&c),
            SimpleReply {
                error: EINVAL,
                cookie: 8
            },
            "{model:?}: 1 GiB"
        );
        send(&c, CMD_WRITE, 9, 0, 4096);
        (&c.stream).write_all(&[0xAB; 4096]).unwrap();
        assert_eq!(
            reply(&c),
            SimpleReply {
                error: EPERM,
                cookie: 9
            },
            "{model:?}: a write"
        );
        still_serves(&c, id);
        progress("refused requests");

        // A 1 GiB write: its payload cannot be followed; the connection is closed.
        send(&c, CMD_WRITE, 10, 0, 1 << 30);
        assert!(closed(&c), "{model:?}: a 1 GiB write");
        progress("huge write");

        // Garbage instead of the client flags.
        let mut raw = url.address.connect().unwrap();
        raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut greet = [0u8; 18];
        raw.read_exact(&mut greet).unwrap();
        raw.write_all(&[0xff; 64]).unwrap();
        let mut rest = Vec::new();
        let _ = raw.read_to_end(&mut rest);
        assert!(
            rest.is_empty(),
            "{model:?}: handshake garbage gets nothing but a close"
        );
        progress("handshake garbage");

        // A client that asks for 32 MiB and vanishes before the reply is read.
        for _ in 0..3 {
            let c = connect(&url);
            send(&c, CMD_READ, 11, 0, 8 << 20);
            drop(c);
        }
        progress("vanished clients");

        stop.store(true, Ordering::Relaxed);
        reader.join().expect("the good client saw only good data");
        assert_eq!(s.terminate(), Some(0));
        let j: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert!(
            j["connections_hung_up"].as_u64().unwrap() >= 3,
            "{model:?}: {j}"
        );
        assert!(j["refused"].as_u64().unwrap() >= 3, "{model:?}: {j}");
    }
}
