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
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A stream of a host that can be paused: every operation first waits until
/// the host is not paused.
pub(crate) struct Paused<S> {
    inner: S,
    clock: SimClock,
    wait: Option<SimSleep>,
}

impl<S> Paused<S> {
    pub(crate) fn new(inner: S, clock: SimClock) -> Self {
        Paused {
            inner,
            clock,
            wait: None,
        }
    }

    fn poll_resumed(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            if let Some(w) = &mut self.wait {
                ready!(Pin::new(w).poll(cx));
                self.wait = None;
            }
            let now = sim_now();
            match self.clock.paused_until(now) {
                Some(until) => {
                    // A pause the host is in ends after now.
                    assert!(until > now, "sim: paused at {now:?} until {until:?}");
                    self.wait = Some(self.clock.timer(until - now));
                }
                None => return Poll::Ready(()),
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Paused<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_resumed(cx));
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Paused<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_resumed(cx));
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_resumed(cx));
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_resumed(cx));
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
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
            Ok(Box::new(Paused::new(s, self.clock.clone())) as BoxStream)
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
        Ok(Paused::new(s, self.clock.clone()))
    }
}
