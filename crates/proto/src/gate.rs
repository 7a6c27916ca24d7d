//! A paused host's streams, for both worlds: a stream whose reads and
//! writes wait while its host is paused, as those of a stopped process do
//! (a GC pause, SIGSTOP). What arrives meanwhile waits in the socket's
//! buffers and is read, in order, once the host runs again; the host sends
//! nothing while paused. What "paused" means is the world's [`Gate`]: the
//! simulation's pause windows on the simulated clock, the lab's flag on a
//! watch.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Whether a host runs, and a wait for when it might again.
pub trait Gate {
    /// A wait in progress; the host is asked again when it ends.
    type Wait: Future<Output = ()> + Unpin;
    /// `None` when the host runs now; else a wait that ends no later than
    /// its pause does.
    fn wait(&self) -> Option<Self::Wait>;
}

/// A stream of a host that can be paused. Reads and writes wait apart, so
/// that a stream split between two tasks wakes both when the pause ends.
pub struct Gated<S, G: Gate> {
    inner: S,
    gate: G,
    read_wait: Option<G::Wait>,
    write_wait: Option<G::Wait>,
}

impl<S, G: Gate> Gated<S, G> {
    pub fn new(inner: S, gate: G) -> Self {
        Gated {
            inner,
            gate,
            read_wait: None,
            write_wait: None,
        }
    }
}

/// Ready once the host runs; `slot` keeps the wait between polls.
fn poll_running<G: Gate>(gate: &G, slot: &mut Option<G::Wait>, cx: &mut Context<'_>) -> Poll<()> {
    loop {
        if let Some(w) = slot {
            ready!(Pin::new(w).poll(cx));
            *slot = None;
        }
        match gate.wait() {
            Some(w) => *slot = Some(w),
            None => return Poll::Ready(()),
        }
    }
}

impl<S: AsyncRead + Unpin, G: Gate + Unpin> AsyncRead for Gated<S, G> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(poll_running(&this.gate, &mut this.read_wait, cx));
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin, G: Gate + Unpin> AsyncWrite for Gated<S, G> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(poll_running(&this.gate, &mut this.write_wait, cx));
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(poll_running(&this.gate, &mut this.write_wait, cx));
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(poll_running(&this.gate, &mut this.write_wait, cx));
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}
