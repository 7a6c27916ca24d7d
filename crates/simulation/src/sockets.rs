//! The simulated hosts' TCP: turmoil's, opened through the client's
//! [`Connector`] seam (`redlock_proto`'s `SimConnector`), and its listeners.
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

use std::io;

/// Opens turmoil streams from the current host: the protocol crate's,
/// the one turmoil connector of the workspace.
pub(crate) use redlock_proto::transport::SimConnector as Connector;

/// A listener on `port` of every address of the current host.
pub(crate) async fn bind(port: u16) -> io::Result<turmoil::net::TcpListener> {
    turmoil::net::TcpListener::bind(("0.0.0.0", port)).await
}
