//! The simulated hosts' TCP: turmoil's, opened through the client's
//! [`Connector`] seam, and its listeners.
//!
//! Nothing is needed beyond turmoil's (as patched in `vendor/turmoil`, see
//! its PATCH.md): a connection's bytes arrive in order whatever the link's
//! latency does, a partition holds what was sent instead of losing it, a
//! connect across a cut link waits for its timeout and leaves no socket
//! behind when given up. So a closed connection's end always reaches the
//! server (at the latest when the link heals) and the server's socket goes
//! with it: no keepalive is needed to bound the sockets a run keeps. Only a
//! crashed node's links lose what is in flight, and a crash ends its
//! sockets anyway.

use redlock_proto::connection::{BoxStream, ConnectFuture};
use std::io;

/// Opens turmoil streams from the current host.
pub(crate) struct Connector;

impl redlock_client::Connector for Connector {
    fn connect<'a>(&'a self, addr: &'a str) -> ConnectFuture<'a> {
        Box::pin(async move {
            let s = turmoil::net::TcpStream::connect(addr).await?;
            Ok(Box::new(s) as BoxStream)
        })
    }
}

/// A listener on `port` of every address of the current host.
pub(crate) async fn bind(port: u16) -> io::Result<turmoil::net::TcpListener> {
    turmoil::net::TcpListener::bind(("0.0.0.0", port)).await
}
