//! The Network Block Device protocol, readlab's own implementation (no maintained crate offers a
//! pipelined client and a server that can be driven by io_uring): numbers and frames (`proto`),
//! both sides of the fixed newstyle handshake (`handshake`), addresses, URLs and streams
//! (`addr`), and a negotiated client connection (`client`). The server lives in `crate::serve`,
//! the client engine in `crate::engine` and the remote source in `crate::source`.

pub mod addr;
pub mod client;
pub mod handshake;
pub mod proto;
pub mod wait;

pub use addr::{Address, Listener, NbdUrl, Stream, shown};
pub use client::Connection;
pub use handshake::{Advertised, BlockSizes, ExportInfo};
