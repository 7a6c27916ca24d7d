//! The pause of an in-process lab host (a node, the store): a stream whose
//! reads and writes wait while the host is paused, as those of a stopped
//! process do. What arrives meanwhile waits in the kernel's buffers and is
//! read, in order, once it runs again; the clocks keep running.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::watch;

type Wait = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A stream of a host that can be paused (`true` on the watch: paused).
/// Reads and writes wait apart, so that a stream split between two tasks
/// wakes both when the pause ends.
pub(crate) struct Gated<S> {
    inner: S,
    paused: watch::Receiver<bool>,
    read_wait: Option<Wait>,
    write_wait: Option<Wait>,
}

impl<S> Gated<S> {
    pub(crate) fn new(inner: S, paused: watch::Receiver<bool>) -> Self {
        Gated {
            inner,
            paused,
            read_wait: None,
            write_wait: None,
        }
    }
}

/// Ready once the host runs; `slot` keeps the wait between polls.
fn poll_running(
    paused: &watch::Receiver<bool>,
    slot: &mut Option<Wait>,
    cx: &mut Context<'_>,
) -> Poll<()> {
    if slot.is_none() && !*paused.borrow() {
        return Poll::Ready(());
    }
    let wait = slot.get_or_insert_with(|| {
        let mut rx = paused.clone();
        Box::pin(async move {
            let _ = rx.wait_for(|p| !*p).await;
        })
    });
    ready!(wait.as_mut().poll(cx));
    *slot = None;
    Poll::Ready(())
}

/// Waits until the host runs (at once if it does).
pub(crate) async fn running(paused: &mut watch::Receiver<bool>) {
    let _ = paused.wait_for(|p| !*p).await;
}

impl<S: AsyncRead + Unpin> AsyncRead for Gated<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(poll_running(&this.paused, &mut this.read_wait, cx));
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Gated<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(poll_running(&this.paused, &mut this.write_wait, cx));
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(poll_running(&this.paused, &mut this.write_wait, cx));
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(poll_running(&this.paused, &mut this.write_wait, cx));
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}
