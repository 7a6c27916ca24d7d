//! `WAIT numreplicas timeout`: blocks the client until `numreplicas`
//! replicas have acknowledged every write this connection made, or the
//! timeout (milliseconds, 0: none) runs out; answers how many did. As in
//! Redis 7.0 (`waitCommand`): refused on a replica; a connection that wrote
//! nothing waits for nothing; the replicas are asked for their offsets
//! (`REPLCONF GETACK *`, [`super::replication`]) and each answer wakes the
//! waiter. Lock libraries use it to wait for their lock to reach the
//! replicas before they trust it (Redisson's `RLock`).

use super::errors::is;
use super::keyspace::{parse_i64, Role};
use super::replication::{acked_at_least, request_acks};
use super::Node;
use bytes::Bytes;
use redlock_proto::resp::{ConnError, Connection, Frame};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// Redis 7.0's refusal on a replica, word for word.
const ON_REPLICA: &str = "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.";

/// How often a waiter looks at its deadline.
const TICK: Duration = Duration::from_millis(100);

pub(crate) fn is_wait(args: &[Bytes]) -> bool {
    args.first().is_some_and(|n| is(n, "wait"))
}

/// Runs `WAIT` for a connection whose last write left the master at
/// offset `woff`; `None` when the client went away while it waited.
pub(crate) async fn wait<S>(
    node: &Node,
    conn: &mut Connection<S>,
    args: &[Bytes],
    woff: u64,
) -> Option<Frame>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (wanted, deadline) = match parse(node, args) {
        Ok(p) => p,
        Err(e) => return Some(Frame::err(e)),
    };
    let count = acked_at_least(node, woff);
    if count >= wanted {
        return Some(Frame::Integer(count));
    }
    request_acks(node);
    loop {
        let woken = node.repl.acked.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        let count = acked_at_least(node, woff);
        let left = deadline.map(|d| d.saturating_sub(node.clock().wall_ms()));
        if count >= wanted || left.is_some_and(|l| l <= 0) {
            return Some(Frame::Integer(count));
        }
        let step = left.map_or(TICK, |l| TICK.min(Duration::from_millis(l as u64)));
        tokio::select! {
            biased;
            _ = &mut woken => {}
            more = conn.read_more() => {
                if let Err(ConnError::Closed | ConnError::Io(_)) = more {
                    return None;
                }
            }
            _ = node.clock().sleep(step) => {}
        }
    }
}

/// The replicas wanted and the deadline (wall ms; none for 0), or Redis's
/// error.
fn parse(node: &Node, args: &[Bytes]) -> Result<(i64, Option<i64>), String> {
    if args.len() != 3 {
        return Err("ERR wrong number of arguments for 'wait' command".into());
    }
    if node.keyspace().role != Role::Master {
        return Err(ON_REPLICA.into());
    }
    let wanted = parse_i64(&args[1]).ok_or("ERR value is not an integer or out of range")?;
    let timeout = parse_i64(&args[2]).ok_or("ERR timeout is not an integer or out of range")?;
    if timeout < 0 {
        return Err("ERR timeout is negative".into());
    }
    let now = node.clock().wall_ms();
    Ok((wanted, (timeout > 0).then(|| now.saturating_add(timeout))))
}
