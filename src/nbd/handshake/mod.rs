//! Both sides of the fixed newstyle handshake: the server's option haggling (`server`), the
//! client's negotiation that also records everything the server advertised for `readlab info`
//! (`client`), and what they share (`shared`): the export as offered or learned, the session
//! negotiated, and the framing of options and their replies. The tests here drive one side
//! against the other.

mod client;
mod server;
mod shared;

pub use client::{Advertised, client_handshake};
pub use server::{
    BASE_ALLOCATION_ID, MAX_OPTION_DATA, MAX_OPTIONS, ServerOutcome, server_handshake,
};
pub use shared::{BlockSizes, ExportInfo, MAX_OPTION_REPLY, Refusal, Session, is_refusal};

#[cfg(test)]
mod tests {
    use super::shared::{option_reply, read_option_reply, read_u32, read_u64, send_option, skip};
    use super::*;
    use crate::nbd::proto::*;
    use std::io::{self, Read, Write};
    use std::os::unix::net::UnixStream;

    fn export() -> ExportInfo {
        ExportInfo {
            name: "disk".into(),
            description: Some("a test".into()),
            size: 1 << 20,
            flags: FLAG_HAS_FLAGS | FLAG_READ_ONLY | FLAG_CAN_MULTI_CONN,
            block_sizes: Some(BlockSizes {
                minimum: 512,
                preferred: 4096,
                maximum: 32 << 20,
            }),
        }
    }

    fn pair() -> (UnixStream, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        a.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        b.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        (a, b)
    }

    #[test]
    fn go_negotiates_size_flags_block_sizes_and_the_list() {
        let (mut c, mut s) = pair();
        let server = std::thread::spawn(move || server_handshake(&mut s, &export()).unwrap());
        let a = client_handshake(&mut c, "disk", true).unwrap();
        assert_eq!(
            server.join().unwrap(),
            ServerOutcome::Transmission {
                export: "disk".into(),
                session: Session::default(),
            }
        );
        assert_eq!(a.export, export());
        assert_eq!(a.negotiated_with, "NBD_OPT_GO");
        assert_eq!(
            a.list,
            Some(Ok(vec![("disk".to_string(), "a test".to_string())]))
        );
        assert!(a.export.read_only() && a.export.multi_conn());
    }

    /// A scripted old server that answers GO with ERR_UNSUP: the client falls back to EXPORT_NAME.
    #[test]
    fn export_name_is_the_fallback() {
        let (mut c, mut s) = pair();
        let server = std::thread::spawn(move || {
            s.write_all(&NBDMAGIC.to_be_bytes()).unwrap();
            s.write_all(&IHAVEOPT.to_be_bytes()).unwrap();
            s.write_all(&FLAG_FIXED_NEWSTYLE.to_be_bytes()).unwrap();
            assert_eq!(read_u32(&mut s).unwrap(), FLAG_C_FIXED_NEWSTYLE);
            assert_eq!(read_u64(&mut s).unwrap(), IHAVEOPT);
            assert_eq!(read_u32(&mut s).unwrap(), OPT_GO);
            let n = read_u32(&mut s).unwrap();
            skip(&mut s, n as u64).unwrap();
            option_reply(&mut s, OPT_GO, REP_ERR_UNSUP, &[]).unwrap();
            // The server's own code answers EXPORT_NAME from here on.
            assert_eq!(read_u64(&mut s).unwrap(), IHAVEOPT);
            assert_eq!(read_u32(&mut s).unwrap(), OPT_EXPORT_NAME);
            let n = read_u32(&mut s).unwrap();
            let mut name = vec![0; n as usize];
            s.read_exact(&mut name).unwrap();
            s.write_all(&(5u64 << 20).to_be_bytes()).unwrap();
            s.write_all(&(FLAG_HAS_FLAGS | FLAG_READ_ONLY).to_be_bytes())
                .unwrap();
            s.write_all(&[0u8; 124]).unwrap();
            name
        });
        let a = client_handshake(&mut c, "x", false).unwrap();
        assert_eq!(server.join().unwrap(), b"x");
        assert_eq!(a.export.size, 5 << 20);
        assert_eq!(a.negotiated_with, "NBD_OPT_EXPORT_NAME");
        assert_eq!(a.export.block_sizes, None);
    }

    fn raw_option(s: &mut UnixStream, opt: u32, data: &[u8]) -> (u32, Vec<u8>) {
        send_option(s, opt, data).unwrap();
        read_option_reply(s, opt).unwrap()
    }

    #[test]
    fn the_server_answers_unknown_bad_and_oversized_options_and_abort() {
        let (mut c, mut s) = pair();
        let server = std::thread::spawn(move || server_handshake(&mut s, &export()));
        let mut greet = [0u8; 18];
        c.read_exact(&mut greet).unwrap();
        assert_eq!(be16(&greet[16..]), FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES);
        c.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes())
            .unwrap();
        assert_eq!(
            raw_option(&mut c, OPT_STRUCTURED_REPLY, b"x").0,
            REP_ERR_INVALID
        );
        assert_eq!(raw_option(&mut c, OPT_STARTTLS, &[]).0, REP_ERR_UNSUP);
        assert_eq!(raw_option(&mut c, 999, b"abc").0, REP_ERR_UNSUP);
        assert_eq!(raw_option(&mut c, OPT_LIST, b"x").0, REP_ERR_INVALID);
        assert_eq!(
            raw_option(&mut c, OPT_GO, &[0, 0, 0, 9, 1]).0,
            REP_ERR_INVALID
        );
        let big = vec![7u8; MAX_OPTION_DATA as usize + 1];
        assert_eq!(raw_option(&mut c, OPT_INFO, &big).0, REP_ERR_TOO_BIG);
        // INFO answers and negotiation goes on.
        let d = info_request("disk");
        let (k, info) = raw_option(&mut c, OPT_INFO, &d);
        assert_eq!((k, be16(&info)), (REP_INFO, INFO_EXPORT));
        assert_eq!(be64(&info[2..]), 1 << 20);
        let (k, bs) = read_option_reply(&mut c, OPT_INFO).unwrap();
        assert_eq!(
            (k, be16(&bs), be32(&bs[2..])),
            (REP_INFO, INFO_BLOCK_SIZE, 512)
        );
        assert_eq!(read_option_reply(&mut c, OPT_INFO).unwrap().0, REP_ACK);
        assert_eq!(raw_option(&mut c, OPT_ABORT, &[]).0, REP_ACK);
        assert_eq!(server.join().unwrap().unwrap(), ServerOutcome::Aborted);
    }

    #[test]
    fn the_server_hangs_up_on_bad_magic_and_unknown_client_flags() {
        let (mut c, mut s) = pair();
        let server = std::thread::spawn(move || server_handshake(&mut s, &export()));
        let mut greet = [0u8; 18];
        c.read_exact(&mut greet).unwrap();
        c.write_all(&0x80u32.to_be_bytes()).unwrap();
        assert!(server.join().unwrap().is_err());

        let (mut c, mut s) = pair();
        let server = std::thread::spawn(move || server_handshake(&mut s, &export()));
        c.read_exact(&mut greet).unwrap();
        c.write_all(&1u32.to_be_bytes()).unwrap();
        c.write_all(b"GARBAGE!garbage!").unwrap();
        assert!(server.join().unwrap().is_err());
    }

    #[test]
    fn export_name_ends_negotiation_with_zeroes_unless_declined() {
        for no_zeroes in [false, true] {
            let (mut c, mut s) = pair();
            let server = std::thread::spawn(move || server_handshake(&mut s, &export()));
            let mut greet = [0u8; 18];
            c.read_exact(&mut greet).unwrap();
            let f = FLAG_C_FIXED_NEWSTYLE | if no_zeroes { FLAG_C_NO_ZEROES } else { 0 };
            c.write_all(&f.to_be_bytes()).unwrap();
            send_option(&mut c, OPT_EXPORT_NAME, b"disk").unwrap();
            assert!(matches!(
                server.join().unwrap().unwrap(),
                ServerOutcome::Transmission { .. }
            ));
            let mut rest = Vec::new();
            c.read_to_end(&mut rest).unwrap();
            assert_eq!(rest.len(), if no_zeroes { 10 } else { 134 });
        }
    }

    /// NBD_OPT_INFO/GO data asking for no information.
    fn info_request(name: &str) -> Vec<u8> {
        let mut d = (name.len() as u32).to_be_bytes().to_vec();
        d.extend_from_slice(name.as_bytes());
        d.extend_from_slice(&0u16.to_be_bytes());
        d
    }

    /// NBD_OPT_LIST/SET_META_CONTEXT data.
    fn meta_request(name: &str, queries: &[&str]) -> Vec<u8> {
        let mut d = (name.len() as u32).to_be_bytes().to_vec();
        d.extend_from_slice(name.as_bytes());
        d.extend_from_slice(&(queries.len() as u32).to_be_bytes());
        for q in queries {
            d.extend_from_slice(&(q.len() as u32).to_be_bytes());
            d.extend_from_slice(q.as_bytes());
        }
        d
    }

    /// A server negotiating `export` on a thread, and the client's end after the greeting.
    fn greeted(
        export: ExportInfo,
    ) -> (
        UnixStream,
        std::thread::JoinHandle<io::Result<ServerOutcome>>,
    ) {
        let (mut c, mut s) = pair();
        let server = std::thread::spawn(move || server_handshake(&mut s, &export));
        let mut greet = [0u8; 18];
        c.read_exact(&mut greet).unwrap();
        c.write_all(&(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes())
            .unwrap();
        (c, server)
    }

    /// Replies to `opt` until the final one: (META_CONTEXT replies as (id, name), final type).
    fn meta_replies(c: &mut UnixStream, opt: u32) -> (Vec<(u32, String)>, u32) {
        let mut got = Vec::new();
        loop {
            let (k, d) = read_option_reply(c, opt).unwrap();
            if k != REP_META_CONTEXT {
                return (got, k);
            }
            got.push((be32(&d), String::from_utf8(d[4..].to_vec()).unwrap()));
        }
    }

    /// GO for `name`: the final reply type (after the INFO replies).
    fn go(c: &mut UnixStream, name: &str) -> u32 {
        send_option(c, OPT_GO, &info_request(name)).unwrap();
        loop {
            let (k, _) = read_option_reply(c, OPT_GO).unwrap();
            if k != REP_INFO {
                return k;
            }
        }
    }

    #[test]
    fn structured_replies_and_base_allocation_are_negotiated() {
        let (mut c, server) = greeted(export());
        assert_eq!(raw_option(&mut c, OPT_STRUCTURED_REPLY, &[]).0, REP_ACK);
        let base = (0, CONTEXT_BASE_ALLOCATION.to_string());
        // Listing: everything with no query, the namespace with `base:`, nothing for others.
        for (queries, want) in [
            (&[][..], vec![base.clone()]),
            (&["base:"][..], vec![base.clone()]),
            (&["base:allocation"][..], vec![base.clone()]),
            (&["qemu:dirty-bitmap:x", "base:nothing"][..], vec![]),
        ] {
            send_option(
                &mut c,
                OPT_LIST_META_CONTEXT,
                &meta_request("disk", queries),
            )
            .unwrap();
            assert_eq!(
                meta_replies(&mut c, OPT_LIST_META_CONTEXT),
                (want, REP_ACK),
                "{queries:?}"
            );
        }
        // Selecting: only the full name, once, with its ID; `base:` selects nothing.
        for (queries, want) in [
            (&["base:"][..], vec![]),
            (
                &[
                    "qemu:allocation-depth",
                    "base:allocation",
                    "base:allocation",
                ][..],
                vec![(BASE_ALLOCATION_ID, CONTEXT_BASE_ALLOCATION.to_string())],
            ),
        ] {
            send_option(&mut c, OPT_SET_META_CONTEXT, &meta_request("disk", queries)).unwrap();
            assert_eq!(
                meta_replies(&mut c, OPT_SET_META_CONTEXT),
                (want, REP_ACK),
                "{queries:?}"
            );
        }
        // A request whose query length runs past the data is invalid.
        let mut bad = meta_request("disk", &["base:allocation"]);
        bad.truncate(bad.len() - 1);
        assert_eq!(
            raw_option(&mut c, OPT_LIST_META_CONTEXT, &bad).0,
            REP_ERR_INVALID
        );
        let mut huge = meta_request("disk", &[]);
        huge[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(
            raw_option(&mut c, OPT_LIST_META_CONTEXT, &huge).0,
            REP_ERR_INVALID
        );
        assert_eq!(go(&mut c, "disk"), REP_ACK);
        assert_eq!(
            server.join().unwrap().unwrap(),
            ServerOutcome::Transmission {
                export: "disk".into(),
                session: Session {
                    structured_replies: true,
                    base_allocation: true
                }
            }
        );
    }

    #[test]
    fn a_context_needs_structured_replies_first_and_the_same_export() {
        // SET_META_CONTEXT before STRUCTURED_REPLY: refused, nothing selected.
        let (mut c, server) = greeted(export());
        let d = meta_request("disk", &["base:allocation"]);
        send_option(&mut c, OPT_SET_META_CONTEXT, &d).unwrap();
        assert_eq!(
            meta_replies(&mut c, OPT_SET_META_CONTEXT),
            (vec![], REP_ERR_INVALID)
        );
        assert_eq!(go(&mut c, "disk"), REP_ACK);
        let ServerOutcome::Transmission { session, .. } = server.join().unwrap().unwrap() else {
            panic!("no transmission");
        };
        assert_eq!(session, Session::default());

        // Selected for one name, then GO for another (an unnamed export takes any name).
        let mut anon = export();
        anon.name = String::new();
        let (mut c, server) = greeted(anon);
        assert_eq!(raw_option(&mut c, OPT_STRUCTURED_REPLY, &[]).0, REP_ACK);
        let d = meta_request("a", &["base:allocation"]);
        send_option(&mut c, OPT_SET_META_CONTEXT, &d).unwrap();
        assert_eq!(meta_replies(&mut c, OPT_SET_META_CONTEXT).0.len(), 1);
        assert_eq!(go(&mut c, "b"), REP_ACK);
        let ServerOutcome::Transmission { export, session } = server.join().unwrap().unwrap()
        else {
            panic!("no transmission");
        };
        assert_eq!(export, "b");
        assert!(session.structured_replies && !session.base_allocation);
    }

    #[test]
    fn unknown_export_names_are_refused_when_the_export_is_named() {
        let (mut c, server) = greeted(export());
        assert_eq!(raw_option(&mut c, OPT_STRUCTURED_REPLY, &[]).0, REP_ACK);
        let (k, msg) = raw_option(&mut c, OPT_INFO, &info_request("other"));
        assert_eq!(k, REP_ERR_UNKNOWN);
        let msg = String::from_utf8(msg).unwrap();
        assert!(msg.contains("'other'") && msg.contains("'disk'"), "{msg}");
        assert_eq!(go(&mut c, ""), REP_ERR_UNKNOWN);
        for opt in [OPT_LIST_META_CONTEXT, OPT_SET_META_CONTEXT] {
            let d = meta_request("other", &["base:allocation"]);
            send_option(&mut c, opt, &d).unwrap();
            assert_eq!(meta_replies(&mut c, opt), (vec![], REP_ERR_UNKNOWN));
        }
        // Negotiation goes on after a refusal: the right name works.
        assert_eq!(go(&mut c, "disk"), REP_ACK);
        assert!(matches!(
            server.join().unwrap().unwrap(),
            ServerOutcome::Transmission { .. }
        ));

        // EXPORT_NAME cannot carry an error: the server hangs up.
        let (mut c, server) = greeted(export());
        send_option(&mut c, OPT_EXPORT_NAME, b"other").unwrap();
        let e = server.join().unwrap().unwrap_err();
        assert!(e.to_string().contains("'other'"), "{e}");
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty(), "{rest:?}");

        // Without a name (no --export), any name reaches the export.
        let mut anon = export();
        anon.name = String::new();
        let (mut c, server) = greeted(anon);
        assert_eq!(go(&mut c, "whatever"), REP_ACK);
        assert!(matches!(
            server.join().unwrap().unwrap(),
            ServerOutcome::Transmission { export, .. } if export == "whatever"
        ));
    }
}
