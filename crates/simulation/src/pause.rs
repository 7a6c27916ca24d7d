//! Stop-the-world pauses on the network: a paused host neither reads nor
//! writes its sockets.
//!
//! A pause (a GC pause, SIGSTOP) stops the process, not the network: what
//! the host sent before it stopped is already on the wire and arrives on
//! time; what arrives for it waits in its socket buffers and is read, in
//! order, once it runs again; it sends nothing while stopped. Its timers
//! wait too (see [`SimClock`]). So the simulation wraps a host's streams in
//! [`Paused`], whose reads and writes wait out the host's pause windows,
//! through [`PausingConnector`] (outgoing connections) and
//! [`PausingListener`] (accepted ones). The node and client code stay as
//! they are on real TCP: the gate lives only in these wrappers.

use redlock_node::Listener;
use redlock_proto::clock::{sim_now, SimClock, SimSleep};
use redlock_proto::connection::{BoxStream, ConnectFuture, Connector};
use redlock_proto::gate::{Gate, Gated};
use std::io;

/// A simulated host's pause windows, on its clock.
pub(crate) struct Windows(SimClock);

impl Gate for Windows {
    type Wait = SimSleep;
    fn wait(&self) -> Option<SimSleep> {
        let now = sim_now();
        let until = self.0.paused_until(now)?;
        // A pause the host is in ends after now.
        assert!(until > now, "sim: paused at {now:?} until {until:?}");
        Some(self.0.timer(until - now))
    }
}

/// A stream of a simulated host that can be paused: the workspace's one
/// pause wrapper ([`redlock_proto::gate::Gated`]) on the host's windows.
pub(crate) type Paused<S> = Gated<S, Windows>;

/// Wraps `inner` in the pause windows of `clock`'s host.
pub(crate) fn paused<S>(inner: S, clock: SimClock) -> Paused<S> {
    Gated::new(inner, Windows(clock))
}

/// turmoil's TCP for a host that can be paused.
pub(crate) struct PausingConnector {
    pub(crate) clock: SimClock,
    /// The host's connector.
    pub(crate) net: super::sockets::Connector,
}

impl Connector for PausingConnector {
    fn connect<'a>(&'a self, addr: &'a str) -> ConnectFuture<'a> {
        Box::pin(async move {
            let s = self.net.connect(addr).await?;
            Ok(Box::new(paused(s, self.clock.clone())) as BoxStream)
        })
    }
}

/// A turmoil listener whose connections are [`Paused`]. Accepting goes on
/// during a pause: turmoil answers a connection's SYN only on `accept`, and
/// a real kernel completes the handshake of a stopped process (the
/// connection waits in its backlog); the process reads nothing from it
/// until it resumes.
pub(crate) struct PausingListener {
    pub(crate) inner: turmoil::net::TcpListener,
    pub(crate) clock: SimClock,
}

impl Listener for PausingListener {
    type Stream = Paused<turmoil::net::TcpStream>;
    async fn accept(&mut self) -> io::Result<Self::Stream> {
        let s = Listener::accept(&mut self.inner).await?;
        Ok(paused(s, self.clock.clone()))
    }
}
