//! The pause of an in-process lab host (a node, the store): a stream whose
//! reads and writes wait while the host is paused, as those of a stopped
//! process do. What arrives meanwhile waits in the kernel's buffers and is
//! read, in order, once it runs again; the clocks keep running.

use redlock_proto::gate::Gate;
use std::future::Future;
use std::pin::Pin;
use tokio::sync::watch;

type Wait = Pin<Box<dyn Future<Output = ()> + Send>>;

/// An in-process host's pause: `true` on the watch while paused.
pub(crate) struct Flag(pub(crate) watch::Receiver<bool>);

impl Gate for Flag {
    type Wait = Wait;
    fn wait(&self) -> Option<Wait> {
        if !*self.0.borrow() {
            return None;
        }
        let mut rx = self.0.clone();
        Some(Box::pin(async move {
            let _ = rx.wait_for(|p| !*p).await;
        }))
    }
}

/// A stream of an in-process host that can be paused (the workspace's one
/// pause wrapper, [`redlock_proto::gate::Gated`], on the watch's flag).
pub(crate) type Gated<S> = redlock_proto::gate::Gated<S, Flag>;

/// Wraps `inner` in the pause that `paused` tells.
pub(crate) fn gated<S>(inner: S, paused: watch::Receiver<bool>) -> Gated<S> {
    redlock_proto::gate::Gated::new(inner, Flag(paused))
}

/// Waits until the host runs (at once if it does).
pub(crate) async fn running(paused: &mut watch::Receiver<bool>) {
    let _ = paused.wait_for(|p| !*p).await;
}
