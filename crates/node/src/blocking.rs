//! Blocked clients of `BLPOP` and `BRPOP`, served as Redis 7.0 serves them.
//!
//! A blocking pop that finds every list empty registers a waiter and its
//! connection waits ([`block`]), reading nothing more from the client but
//! noticing if it closes. After any command, the keys it pushed to become
//! ready, in the order pushed; each ready key serves its waiters first come
//! first served, one element each, while it has elements: the pop is the
//! served client's (its effect, `LPOP k 1`, follows the push), and the
//! pushing command's own reply was computed before. A waiter times out by
//! the node's wall clock (a jump moves its deadline, as in Redis), checked
//! at least every 100 ms; a timeout of 0 waits for ever. A master that
//! becomes a replica answers its waiters `UNBLOCKED` and closes their
//! connections, as Redis 7.0 does. Scripts may not call `BLPOP`.

use super::command;
use super::errors::is;
use super::keyspace::Keyspace;
use super::lists::{timeout_ms, try_blocking_pop};
use super::Node;
use bytes::Bytes;
use redlock_proto::resp::{ConnError, Connection, Frame};
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;

/// How often a waiter looks at the wall clock for its deadline.
const TICK_MS: i64 = 100;

struct Waiter {
    keys: Vec<Bytes>,
    left: bool,
    tx: oneshot::Sender<Frame>,
}

/// The waiters of one node, and each key's queue of them.
#[derive(Default)]
pub(crate) struct Blocked {
    next: u64,
    waiters: BTreeMap<u64, Waiter>,
    queues: BTreeMap<Bytes, VecDeque<u64>>,
}

impl Blocked {
    pub(crate) fn is_empty(&self) -> bool {
        self.waiters.is_empty()
    }

    fn add(&mut self, keys: Vec<Bytes>, left: bool) -> (u64, oneshot::Receiver<Frame>) {
        let (tx, rx) = oneshot::channel();
        self.next += 1;
        let id = self.next;
        for k in &keys {
            let q = self.queues.entry(k.clone()).or_default();
            if !q.contains(&id) {
                q.push_back(id);
            }
        }
        self.waiters.insert(id, Waiter { keys, left, tx });
        (id, rx)
    }

    /// Takes a waiter out of every queue; `None` if it was served already.
    fn take(&mut self, id: u64) -> Option<Waiter> {
        let w = self.waiters.remove(&id)?;
        for k in &w.keys {
            if let Some(q) = self.queues.get_mut(k) {
                q.retain(|i| *i != id);
                if q.is_empty() {
                    self.queues.remove(k);
                }
            }
        }
        Some(w)
    }

    /// Answers every waiter [`UNBLOCKED`] and forgets it.
    pub(crate) fn unblock_all(&mut self) {
        let ids: Vec<u64> = self.waiters.keys().copied().collect();
        for id in ids {
            if let Some(w) = self.take(id) {
                let _ = w.tx.send(Frame::err(UNBLOCKED));
            }
        }
    }

    /// Serves the waiters of each ready key, in order, while it has
    /// elements. A waiter whose connection is gone is dropped unserved.
    pub(crate) fn serve(&mut self, ks: &mut Keyspace, ready: &[Bytes], now: i64) {
        for key in ready {
            while let Some(&id) = self.queues.get(key).and_then(|q| q.front()) {
                let has = ks
                    .get_list(key, now)
                    .ok()
                    .flatten()
                    .is_some_and(|l| !l.is_empty());
                if !has {
                    break;
                }
                let w = self.take(id).expect("a queued waiter is registered");
                if w.tx.is_closed() {
                    continue;
                }
                let e = ks.pop(key, w.left, 1).pop().expect("a non-empty list pops");
                let reply = Frame::Array(vec![Frame::Bulk(key.clone()), Frame::Bulk(e)]);
                // The receiver is open: a waiter takes itself out, under
                // the same lock, before it lets go of it.
                let _ = w.tx.send(reply);
            }
        }
    }
}

/// What a waiter gets when its master becomes a replica (Redis 7.0's
/// words); its connection is closed after it.
pub(crate) const UNBLOCKED: &str =
    "UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)";

/// Whether `reply` is the [`UNBLOCKED`] error.
pub(crate) fn is_unblocked(reply: &Frame) -> bool {
    matches!(reply, Frame::Error(e) if e == UNBLOCKED)
}

/// The keys `effects` pushed to, in order, each once.
pub(crate) fn ready_keys(effects: &[Vec<Bytes>]) -> Vec<Bytes> {
    let mut keys: Vec<Bytes> = Vec::new();
    for e in effects {
        let push = e.first().is_some_and(|n| is(n, "lpush") || is(n, "rpush"));
        if push && e.len() > 1 && !keys.contains(&e[1]) {
            keys.push(e[1].clone());
        }
    }
    keys
}

/// Whether `args` is a blocking pop a connection must wait on.
pub(crate) fn is_blocking_pop(args: &[Bytes]) -> bool {
    args.first()
        .is_some_and(|n| is(n, "blpop") || is(n, "brpop"))
}

/// Runs a client's `BLPOP`/`BRPOP`: at once if a list has an element or
/// the command is refused, else blocked until served, timed out, or the
/// connection closes (`None`: nothing to answer).
pub(crate) async fn block<S>(node: &Node, conn: &mut Connection<S>, args: &[Bytes]) -> Option<Frame>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let left = is(&args[0], "blpop");
    let now = node.clock().wall_ms();
    // The first try and the registration under one lock of the keyspace:
    // no push can fall between them.
    let first = node.with_keyspace(|ks| {
        if let Some(refused) = command::refuse(ks, args) {
            return Err(refused);
        }
        match try_blocking_pop(ks, args, now, left) {
            Err(f) | Ok(Some(f)) => Err(f),
            Ok(None) => {
                let keys = args[1..args.len() - 1].to_vec();
                Ok(node.blocked().add(keys, left))
            }
        }
    });
    let (id, rx) = match first {
        Err(reply) => return Some(reply),
        Ok(w) => w,
    };
    let ms = timeout_ms(&args[args.len() - 1]).expect("checked by the first try");
    let deadline = (ms > 0).then(|| now.saturating_add(ms as i64));
    wait(node, conn, id, rx, deadline).await
}

async fn wait<S>(
    node: &Node,
    conn: &mut Connection<S>,
    id: u64,
    mut rx: oneshot::Receiver<Frame>,
    deadline: Option<i64>,
) -> Option<Frame>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    loop {
        let left = deadline.map_or(TICK_MS, |d| d.saturating_sub(node.clock().wall_ms()));
        if left < 0 {
            return Some(give_up(node, id, rx).unwrap_or(Frame::NullArray));
        }
        let step = Duration::from_millis(left.clamp(1, TICK_MS) as u64);
        tokio::select! {
            biased;
            served = &mut rx => return served.ok(),
            more = conn.read_more() => {
                if let Err(ConnError::Closed | ConnError::Io(_)) = more {
                    give_up(node, id, rx);
                    return None;
                }
            }
            _ = node.clock().sleep(step) => {}
        }
    }
}

/// Takes the waiter out; what it was served, if it was served meanwhile.
fn give_up(node: &Node, id: u64, mut rx: oneshot::Receiver<Frame>) -> Option<Frame> {
    let _ks = node.keyspace();
    if node.blocked().take(id).is_some() {
        return None;
    }
    rx.try_recv().ok()
}
