//! The node's connected clients, as pub/sub ([`super::pubsub`]) and
//! client-side caching ([`super::tracking`]) see them: each one's outbox
//! (the frames the node sends it unasked: messages, invalidations), its
//! protocol, and which client's command is running now.
//!
//! [`super::handle_connection`] attaches a client for each connection
//! ([`Attached`]) and detaches it when the connection ends: its
//! subscriptions and its tracking go with it. It writes what the outbox
//! holds while it waits for the next request; what a client's own command
//! pushed to it is written before the command's reply, as Redis writes a
//! message into the reply buffer while the command runs, except
//! invalidations the command caused itself, which follow the reply (Redis
//! 7.0 keeps them pending until the command is done).

use super::Node;
use bytes::Bytes;
use redlock_proto::resp::{ConnError, Connection, Frame, Protocol};
use std::collections::BTreeMap;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};

/// A frame for a client, sent unasked.
#[derive(Debug)]
pub(crate) struct Pushed {
    pub(crate) frame: Frame,
    /// Made by the client's own command, to follow its reply.
    pub(crate) after_reply: bool,
    /// Not a frame: the connection is to be closed (`CLIENT KILL`), once
    /// what was pushed before is written.
    pub(crate) close: bool,
}

#[derive(Debug)]
struct Conn {
    outbox: UnboundedSender<Pushed>,
    resp3: bool,
}

/// The connected clients of one node, by id.
#[derive(Debug, Default)]
pub(crate) struct Clients {
    conns: BTreeMap<u64, Conn>,
    /// The client whose command runs now (none: the node's own work, as
    /// the expiry sweep or a replica applying its master's writes).
    pub(crate) current: Option<u64>,
}

impl Clients {
    fn attach(&mut self, id: u64) -> UnboundedReceiver<Pushed> {
        let (tx, rx) = unbounded_channel();
        let conn = Conn {
            outbox: tx,
            resp3: false,
        };
        self.conns.insert(id, conn);
        rx
    }

    pub(crate) fn exists(&self, id: u64) -> bool {
        self.conns.contains_key(&id)
    }

    pub(crate) fn resp3(&self, id: u64) -> bool {
        self.conns.get(&id).is_some_and(|c| c.resp3)
    }

    pub(crate) fn set_resp3(&mut self, id: u64, resp3: bool) {
        if let Some(c) = self.conns.get_mut(&id) {
            c.resp3 = resp3;
        }
    }

    /// Sends `frame` to client `id` (if it is still there); a frame for
    /// the client whose command runs follows its reply if `after_reply`.
    pub(crate) fn push(&self, id: u64, frame: Frame, after_reply: bool) {
        if let Some(c) = self.conns.get(&id) {
            let after_reply = after_reply && self.current == Some(id);
            let _ = c.outbox.send(Pushed {
                frame,
                after_reply,
                close: false,
            });
        }
    }

    /// `CLIENT KILL`: closes every connection `kill` picks (by id, and
    /// whether it is subscribed), as soon as it has written what it was
    /// sent before; returns how many.
    pub(crate) fn kill(&self, kill: impl Fn(u64) -> bool) -> i64 {
        let mut killed = 0;
        for (id, c) in &self.conns {
            if kill(*id) {
                let close = Pushed {
                    frame: Frame::Null,
                    after_reply: false,
                    close: true,
                };
                killed += i64::from(c.outbox.send(close).is_ok());
            }
        }
        killed
    }
}

/// A connection's place among the node's clients: its outbox, and its
/// departure (subscriptions and tracking dropped) when it is dropped.
pub(crate) struct Attached {
    node: Node,
    id: u64,
    pub(crate) outbox: UnboundedReceiver<Pushed>,
}

impl Attached {
    pub(crate) fn new(node: &Node, id: u64) -> Self {
        let outbox = node.keyspace().clients.attach(id);
        Attached {
            node: node.clone(),
            id,
            outbox,
        }
    }

    /// The connection's next request, writing what the node pushes while
    /// it waits; `None` when the connection is done: the peer closed it,
    /// it failed, or it broke the protocol (answered with an error first,
    /// as Redis does).
    pub(crate) async fn next_request<S: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        conn: &mut Connection<S>,
        protocol: Protocol,
    ) -> Option<Vec<Bytes>> {
        loop {
            let request = tokio::select! {
                biased;
                Some(pushed) = self.outbox.recv() => {
                    if pushed.close {
                        return None;
                    }
                    conn.write_frame_as(&pushed.frame, protocol).await.ok()?;
                    continue;
                }
                request = conn.read_request() => request,
            };
            match request {
                Ok(Some(args)) if args.is_empty() => continue,
                Ok(Some(args)) => return Some(args),
                Ok(None) | Err(ConnError::Io(_)) | Err(ConnError::Closed) => return None,
                Err(ConnError::Protocol(e)) => {
                    let _ = conn.write_frame(&Frame::err(format!("ERR {e}"))).await;
                    return None;
                }
            }
        }
    }

    /// Writes a request's replies, with what the node pushed meanwhile
    /// before and after them; false when the connection failed.
    pub(crate) async fn write_replies<S: AsyncRead + AsyncWrite + Unpin>(
        &mut self,
        conn: &mut Connection<S>,
        replies: &[Frame],
        protocol: Protocol,
    ) -> bool {
        let (before, after, killed) = self.drain();
        for f in before.iter().chain(replies).chain(&after) {
            if conn.write_frame_as(f, protocol).await.is_err() {
                return false;
            }
        }
        !killed
    }

    /// What the outbox holds now: the frames to write before a reply,
    /// those to write after it, and whether the connection was killed.
    fn drain(&mut self) -> (Vec<Frame>, Vec<Frame>, bool) {
        let (mut before, mut after, mut killed) = (Vec::new(), Vec::new(), false);
        while let Ok(p) = self.outbox.try_recv() {
            if p.close {
                killed = true;
            } else if p.after_reply {
                after.push(p.frame);
            } else {
                before.push(p.frame);
            }
        }
        (before, after, killed)
    }
}

impl Drop for Attached {
    fn drop(&mut self) {
        let mut ks = self.node.keyspace();
        ks.pubsub.forget(self.id);
        ks.tracking.forget(self.id);
        ks.clients.conns.remove(&self.id);
    }
}
