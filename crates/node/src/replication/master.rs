//! The master's side of replication: a connection whose first request is
//! `SYNC` becomes a stream of the node's effects ([`serve_sync`]), with the
//! snapshot first and `REPLCONF GETACK` for `WAIT` (see the module above).

use super::{
    command_frame, frame_args, is_getack, lock, replication_delay, snapshot, Batch, HEARTBEAT,
    REPL_TIMEOUT,
};
use crate::errors::is;
use crate::keyspace::{parse_i64, Role};
use crate::Node;
use bytes::Bytes;
use redlock_proto::clock::Clock;
use redlock_proto::resp::{Connection, Frame};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

/// A stream's place among those that acknowledge; gone with the stream.
struct Acking {
    node: Node,
    id: u64,
}

impl Acking {
    fn new(node: &Node) -> Acking {
        let id = {
            let mut n = lock(&node.repl.streams);
            *n += 1;
            *n
        };
        node.keyspace().streaming.insert(id, 0);
        Acking {
            node: node.clone(),
            id,
        }
    }

    /// A frame from the replica: `REPLCONF ACK <offset>` is noted.
    fn heard(&self, f: Frame) {
        let Some(cmd) = frame_args(f) else { return };
        let ack = cmd.len() == 3 && is(&cmd[0], "replconf") && is(&cmd[1], "ack");
        let Some(offset) = cmd.get(2).and_then(|o| parse_i64(o)).filter(|_| ack) else {
            return;
        };
        let offset = u64::try_from(offset).unwrap_or(0);
        self.node.keyspace().streaming.insert(self.id, offset);
        self.node.repl.acked.notify_waiters();
    }
}

impl Drop for Acking {
    fn drop(&mut self) {
        self.node.keyspace().streaming.remove(&self.id);
        self.node.repl.acked.notify_waiters();
    }
}

/// Snapshot and subscription, atomically under the keyspace lock. `None`
/// when the node is not a master.
fn subscribe(node: &Node) -> Option<(Frame, mpsc::UnboundedReceiver<Batch>)> {
    let ks = node.keyspace();
    if ks.role != Role::Master {
        return None;
    }
    let now = node.clock().wall_ms();
    let snap = snapshot(&ks, Some(now));
    let first = Frame::Array(vec![
        Frame::Simple("FULLRESYNC".into()),
        Frame::Integer(ks.offset as i64),
        Frame::Array(snap.iter().map(|c| command_frame(c)).collect()),
    ]);
    let (tx, rx) = mpsc::unbounded_channel();
    let install = {
        let mut hub = lock(&node.repl.hub);
        hub.subscribers.push(tx);
        !std::mem::replace(&mut hub.installed, true)
    };
    if install {
        let shared = node.repl.clone();
        let clock = node.clock().clone();
        // Lock order everywhere: keyspace, then sinks, then hub.
        node.add_effects_sink(Arc::new(move |effects: &[Vec<Bytes>]| {
            let mut hub = lock(&shared.hub);
            if hub.subscribers.is_empty() {
                return;
            }
            let t = clock.now();
            hub.subscribers
                .retain(|s| s.send((t, effects.to_vec())).is_ok());
        }));
    }
    drop(ks);
    Some((first, rx))
}

async fn write_timed<S>(conn: &mut Connection<S>, clock: &dyn Clock, f: &Frame) -> bool
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let deadline = clock.sleep(REPL_TIMEOUT);
    tokio::select! {
        biased;
        r = conn.write_frame(f) => r.is_ok(),
        _ = deadline => false,
    }
}

/// Serves a replica on `conn` after it sent `SYNC`: the snapshot, then the
/// delayed stream of effects, until the replica goes, a write blocks for
/// [`REPL_TIMEOUT`], or this node stops being a master.
pub(crate) async fn serve_sync<S>(node: Node, mut conn: Connection<S>)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let clock = node.clock().clone();
    let Some((first, mut rx)) = subscribe(&node) else {
        let _ = conn
            .write_frame(&Frame::err(
                "ERR SYNC refused: this node is a replica, not a master",
            ))
            .await;
        return;
    };
    let ping = command_frame(&[Bytes::from_static(b"PING")]);
    let mut queue: VecDeque<(Duration, Vec<Bytes>)> = VecDeque::new();
    // The snapshot carries writes up to now: it is shipped no earlier than
    // the replication delay after it was taken, as each streamed write is.
    // Meanwhile the replica hears a `PING` every heartbeat (Redis sends
    // newlines while it prepares the RDB), and later writes queue up.
    let taken = clock.now();
    let mut last_write = taken;
    loop {
        while let Ok((t, batch)) = rx.try_recv() {
            queue.extend(batch.into_iter().map(|c| (t, c)));
        }
        if node.keyspace().role != Role::Master {
            return;
        }
        let ship_at = taken + replication_delay(&node);
        let now = clock.now();
        if now >= ship_at {
            break;
        }
        if now >= last_write + HEARTBEAT {
            if !write_timed(&mut conn, &*clock, &ping).await {
                return;
            }
            last_write = clock.now();
        }
        let wake = ship_at.min(last_write + HEARTBEAT);
        clock
            .sleep(
                wake.saturating_sub(clock.now())
                    .max(Duration::from_micros(1)),
            )
            .await;
    }
    if !write_timed(&mut conn, &*clock, &first).await {
        return;
    }
    last_write = clock.now();
    let acking = Acking::new(&node);
    // The replica is read only once asked for an acknowledgement: a stream
    // no client waits on behaves as before `WAIT` existed (the
    // simulation's traces keep).
    let mut asked = false;
    loop {
        while let Ok((t, batch)) = rx.try_recv() {
            queue.extend(batch.into_iter().map(|c| (t, c)));
        }
        if node.keyspace().role != Role::Master {
            return;
        }
        let delay = replication_delay(&node);
        while queue
            .front()
            .is_some_and(|(t, _)| clock.now() >= *t + delay)
        {
            let (_, cmd) = queue.pop_front().expect("checked");
            asked |= is_getack(&cmd);
            if !write_timed(&mut conn, &*clock, &command_frame(&cmd)).await {
                return;
            }
            last_write = clock.now();
        }
        let now = clock.now();
        if now >= last_write + HEARTBEAT {
            if !write_timed(&mut conn, &*clock, &ping).await {
                return;
            }
            last_write = clock.now();
        }
        let mut wake = last_write + HEARTBEAT;
        if let Some((t, _)) = queue.front() {
            wake = wake.min(*t + delay);
        }
        let wait = wake
            .saturating_sub(clock.now())
            .max(Duration::from_micros(1));
        tokio::select! {
            biased;
            m = rx.recv() => match m {
                Some((t, batch)) => queue.extend(batch.into_iter().map(|c| (t, c))),
                None => return,
            },
            f = conn.read_frame(), if asked => match f {
                Ok(f) => acking.heard(f),
                Err(_) => return,
            },
            _ = clock.sleep(wait) => {}
        }
    }
}
