//! What the simulated hosts' TCP needs beyond turmoil's: keepalive on the
//! servers, and connects that leave nothing behind when they fail.
//!
//! **Keepalive.** A client that drops a connection while a partition cuts it
//! off sends a FIN that turmoil loses, and turmoil's TCP does not
//! retransmit: the server side would wait for a request forever. A real
//! server learns of it from TCP keepalive (Redis probes every 300 s; the
//! peer's kernel answers a probe for a socket it no longer has with a
//! reset). Here every connection a simulated host opens goes through
//! [`Connector`], which notes the client sockets it closed; every accepted
//! connection goes through [`KeepAliveListener`], whose streams end (read
//! end of file, as after a reset) once they have been idle for [`PROBE`] and
//! their client socket is known to be closed. A live client (or one this
//! module did not open) is never cut off, however long it is idle, so what a
//! lock client sees is unchanged;
//! only dead connections go, sooner than Redis's 300 s, which nobody on the
//! other end can tell.
//!
//! **Connects over a cut link.** turmoil registers a client socket before
//! its SYN leaves and never removes it when the SYN is dropped (the connect
//! fails with "connection refused" at once): every connect attempted across
//! a partition would hold memory for the rest of the run. [`Connector`]
//! fails such a connect the same way, at once, without asking turmoil. The
//! driver publishes which directed links are cut ([`set_cut`]).
//!
//! The state is per thread: a simulation runs all its hosts on its own
//! thread, and [`reset`] clears it when a run starts.

use crate::client::connection::{BoxStream, ConnectFuture};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// How long an accepted connection is idle before its client is probed.
pub const PROBE: Duration = Duration::from_secs(10);

thread_local! {
    static CLOSED: RefCell<BTreeSet<SocketAddr>> = const { RefCell::new(BTreeSet::new()) };
    static CUT: RefCell<BTreeSet<(String, String)>> = const { RefCell::new(BTreeSet::new()) };
}

/// Forgets every client socket and cut link: a new run starts on this thread.
pub fn reset() {
    CLOSED.with(|o| o.borrow_mut().clear());
    CUT.with(|c| c.borrow_mut().clear());
}

/// The directed links (`from`, `to`) that are cut now.
pub fn set_cut(cut: BTreeSet<(String, String)>) {
    CUT.with(|c| *c.borrow_mut() = cut);
}

fn is_cut(from: &str, to: &str) -> bool {
    CUT.with(|c| c.borrow().contains(&(from.to_string(), to.to_string())))
}

fn is_closed(addr: &SocketAddr) -> bool {
    CLOSED.with(|o| o.borrow().contains(addr))
}

/// Writes go straight to the turmoil stream inside (`inner`).
macro_rules! forward_write {
    ($t:ty) => {
        impl AsyncWrite for $t {
            fn poll_write(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                Pin::new(&mut self.inner).poll_write(cx, buf)
            }
            fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Pin::new(&mut self.inner).poll_flush(cx)
            }
            fn poll_shutdown(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<io::Result<()>> {
                Pin::new(&mut self.inner).poll_shutdown(cx)
            }
        }
    };
}

/// Opens turmoil streams from host `0` and notes those it closes; refuses
/// at once a connect across a cut link, as turmoil would.
pub struct Connector(pub String);

impl crate::client::Connector for Connector {
    fn connect<'a>(&'a self, addr: &'a str) -> ConnectFuture<'a> {
        Box::pin(async move {
            let to = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
            if is_cut(&self.0, to) {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionRefused,
                    addr.to_string(),
                ));
            }
            let s = turmoil::net::TcpStream::connect(addr).await?;
            let local = s.local_addr()?;
            // A port used again is open again.
            CLOSED.with(|o| o.borrow_mut().remove(&local));
            Ok(Box::new(Tracked { inner: s, local }) as BoxStream)
        })
    }
}

/// A client's stream: noted as closed when dropped.
struct Tracked {
    inner: turmoil::net::TcpStream,
    local: SocketAddr,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        CLOSED.with(|o| o.borrow_mut().insert(self.local));
    }
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

forward_write!(Tracked);

/// A listener whose connections end once idle with their client gone.
pub struct KeepAliveListener(pub turmoil::net::TcpListener);

impl KeepAliveListener {
    pub async fn bind(port: u16) -> io::Result<Self> {
        Ok(KeepAliveListener(
            turmoil::net::TcpListener::bind(("0.0.0.0", port)).await?,
        ))
    }

    /// The next connection.
    pub async fn accept(&self) -> io::Result<KeepAlive> {
        let (inner, peer) = self.0.accept().await?;
        Ok(KeepAlive {
            inner,
            peer,
            probe: Box::pin(tokio::time::sleep(PROBE)),
        })
    }
}

impl crate::node::Listener for KeepAliveListener {
    type Stream = KeepAlive;
    async fn accept(&mut self) -> io::Result<KeepAlive> {
        KeepAliveListener::accept(self).await
    }
}

/// An accepted stream with keepalive: reads end of file once it has been
/// idle for [`PROBE`] and its client socket is known to be closed.
pub struct KeepAlive {
    inner: turmoil::net::TcpStream,
    peer: SocketAddr,
    probe: Pin<Box<tokio::time::Sleep>>,
}

impl AsyncRead for KeepAlive {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                if buf.filled().len() > before {
                    let next = tokio::time::Instant::now() + PROBE;
                    this.probe.as_mut().reset(next);
                }
                Poll::Ready(r)
            }
            Poll::Pending => loop {
                if this.probe.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                if is_closed(&this.peer) {
                    return Poll::Ready(Ok(())); // end of file: the peer is gone
                }
                let next = tokio::time::Instant::now() + PROBE;
                this.probe.as_mut().reset(next);
            },
        }
    }
}

forward_write!(KeepAlive);
