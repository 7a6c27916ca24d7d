//! Redis-style asynchronous replication: `REPLICAOF`, the master's stream of
//! effects, and the replica's task that follows it.
//!
//! **Roles.** `REPLICAOF host port` makes a node a replica of `host:port`
//! (stored as [`Role::Replica`] with `master = "host:port"`), `REPLICAOF NO
//! ONE` makes it a master again, keeping its data and offset. `SLAVEOF` is an
//! alias. Replicas refuse client writes with `-READONLY` (see
//! [`super::command`]); the replication stream is applied with
//! [`apply_effect`], which bypasses that check.
//!
//! **Master side.** A connection whose first request is `SYNC` becomes a
//! replication stream ([`serve_sync`], called from
//! [`super::handle_connection`]). Under the keyspace lock the master takes a
//! snapshot and subscribes to its effects, then sends one frame
//! `[+FULLRESYNC, :offset, [snapshot commands...]]` (the snapshot is
//! `FLUSHALL` then `SET k v [PXAT t]` per live key), then every later effect
//! as a RESP array, each no earlier than the node's replication delay (on the
//! node's monotonic clock) after it happened ([`set_replication_delay`]).
//! The snapshot too is sent no earlier than the delay after it was taken
//! (with a `PING` every [`HEARTBEAT`] meanwhile), so no path, a first sync,
//! a resync after a restart or a failover, carries a write to a replica
//! sooner than the stream would.
//! When it has nothing to send for [`HEARTBEAT`] it sends `PING`. A write
//! that cannot complete within [`REPL_TIMEOUT`] (turmoil's TCP does not
//! retransmit: a segment lost to a partition stalls the stream) ends the
//! stream, as does the node ceasing to be a master.
//!
//! **Replica side.** [`replica_task`] runs on every node for its whole life.
//! While the node is a replica it keeps one connection to its master, sends
//! `SYNC`, skips the `PING`s that come before the snapshot, applies the
//! snapshot atomically, then each streamed effect, and sets `link_up`.
//! [`attach_synced`] starts a replica of an empty master with its link up. Hearing nothing for [`REPL_TIMEOUT`] (heartbeats included)
//! or any error drops the link (a full resync follows, after a backoff from
//! [`MIN_BACKOFF`] doubling to [`MAX_BACKOFF`]); a role change drops it at
//! once and follows the new master.
//!
//! **Acknowledgements.** For `WAIT` ([`super::wait`]) the master puts
//! `REPLCONF GETACK *` into each stream; a replica answers `REPLCONF ACK
//! <offset>` on the same connection, and the master notes it per stream.
//! Nothing else travels from a replica to its master, so a run without
//! `WAIT` sends what it sent before.
//!
//! **Offsets.** `Keyspace.offset` counts a master's effects. A replica sets
//! its offset to the snapshot's master offset, then to that plus the number
//! of stream entries applied since, so replicas of one master compare (and a
//! caught-up replica equals its master).

mod master;
mod replica;

use super::errors::is;
use super::keyspace::{parse_i64, Keyspace, Role, Value};
use super::Node;
use bytes::Bytes;
use redlock_proto::resp::Frame;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::mpsc;

pub(crate) use master::serve_sync;
pub use replica::replica_task;
/// A master with nothing to ship sends `PING` this often.
pub(crate) const HEARTBEAT: Duration = Duration::from_millis(100);
/// A replica that hears nothing for this long drops the link; a master whose
/// write to a replica blocks this long drops the stream; connecting to a
/// master and waiting for the snapshot are bounded by it too.
pub(crate) const REPL_TIMEOUT: Duration = Duration::from_secs(1);
/// How often the replica task looks at the node's role.
pub(crate) const ROLE_CHECK: Duration = Duration::from_millis(10);
/// First wait after a failed link; doubles up to [`MAX_BACKOFF`].
pub(crate) const MIN_BACKOFF: Duration = Duration::from_millis(10);
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// One batch of effects with the node's monotonic time they happened at.
type Batch = (Duration, Vec<Vec<Bytes>>);

/// A node's replication state beside its keyspace (kept in [`Node`]).
#[derive(Default)]
pub(crate) struct Shared {
    delay: Mutex<Duration>,
    hub: Mutex<Hub>,
    /// Numbers the streams, for the keyspace's `streaming` (what each
    /// replica acknowledged); `acked` wakes `WAIT`'s waiters at each
    /// acknowledgement ([`super::wait`]).
    streams: Mutex<u64>,
    pub(crate) acked: tokio::sync::Notify,
}

/// How many streaming replicas acknowledged `offset` or more.
pub(crate) fn acked_at_least(node: &Node, offset: u64) -> i64 {
    let ks = node.keyspace();
    ks.streaming.values().filter(|o| **o >= offset).count() as i64
}

/// Asks every streaming replica for its offset: `REPLCONF GETACK *` in
/// each stream, behind what it already carries (and no sooner than the
/// replication delay, as any entry).
pub(crate) fn request_acks(node: &Node) {
    let t = node.clock().now();
    let getack: Vec<Bytes> = ["REPLCONF", "GETACK", "*"]
        .iter()
        .map(|w| Bytes::from_static(w.as_bytes()))
        .collect();
    let mut hub = lock(&node.repl.hub);
    hub.subscribers
        .retain(|s| s.send((t, vec![getack.clone()])).is_ok());
}

/// Is this stream entry `REPLCONF GETACK *` (the master asking for an
/// acknowledgement)?
fn is_getack(cmd: &[Bytes]) -> bool {
    cmd.len() == 3 && is(&cmd[0], "replconf") && is(&cmd[1], "getack")
}

#[derive(Default)]
struct Hub {
    /// Whether the fan-out sink is registered with the node yet.
    installed: bool,
    /// One sender per streaming replica; closed ones are pruned on send.
    subscribers: Vec<mpsc::UnboundedSender<Batch>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sets how long the master holds each write before shipping it to its
/// replicas (the scenario's `replication_delay`), on the node's monotonic
/// clock. Applies to writes still queued, too. Default: zero.
pub fn set_replication_delay(node: &Node, d: Duration) {
    *lock(&node.repl.delay) = d;
}

pub(crate) fn replication_delay(node: &Node) -> Duration {
    *lock(&node.repl.delay)
}

// ---------------------------------------------------------------------------
// REPLICAOF and applying effects

/// `REPLICAOF host port` / `REPLICAOF NO ONE` (and `SLAVEOF`).
pub(crate) fn replicaof(ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
    if is(&args[1], "no") && is(&args[2], "one") {
        ks.role = Role::Master;
        return Frame::ok();
    }
    // Redis 7.0: `getRangeLongFromObjectOrReply(..., 0, 65535, "Invalid
    // master port")`, one message for junk and for out of range.
    let Some(port) = parse_i64(&args[2]).filter(|p| (0..=65535).contains(p)) else {
        return Frame::err("ERR Invalid master port");
    };
    let master = format!("{}:{port}", String::from_utf8_lossy(&args[1]));
    if matches!(&ks.role, Role::Replica { master: m, .. } if *m == master) {
        return Frame::Simple("OK Already connected to specified master".into());
    }
    ks.role = Role::Replica {
        master,
        link_up: false,
    };
    Frame::ok()
}

/// Makes `node` a replica of `master` (`host:port`) whose initial sync is
/// already done: the state of a deployment that is ready before its clients
/// start. Both must be empty (offset 0, as at the start of a run); the link
/// counts as up, and the replica task's first `SYNC` brings what the master
/// wrote since, no earlier than the replication delay after each write.
pub fn attach_synced(node: &Node, master: &str) {
    node.with_keyspace(|ks| {
        ks.role = Role::Replica {
            master: master.to_string(),
            link_up: true,
        };
    });
}

/// Applies one effect (`SET k v [PXAT t]`, `PEXPIREAT k t`, `DEL k...`,
/// `FLUSHALL`, `HSET k f v...`, `HDEL k f...`, `LPUSH`/`RPUSH k e...`,
/// `LPOP`/`RPOP k n`, `LREM k n e`, `LTRIM k a b`, `ZADD k s m...`, `ZREM k
/// m...`) as it was recorded: no role check, no expiry check (an expired
/// key on a replica stays until its master's `DEL`). Used for the replication
/// stream and for replaying the append-only file.
pub(crate) fn apply_effect(ks: &mut Keyspace, cmd: &[Bytes]) -> Result<(), String> {
    let bad = || {
        let words: Vec<String> = cmd
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect();
        format!("not an effect: {}", words.join(" "))
    };
    let name = cmd.first().ok_or_else(bad)?;
    let int = |b: &Bytes| parse_i64(b).ok_or_else(bad);
    if is(name, "set") && cmd.len() == 3 {
        ks.set(cmd[1].clone(), cmd[2].clone(), None, false);
    } else if is(name, "set") && cmd.len() == 5 && is(&cmd[3], "pxat") {
        ks.set(cmd[1].clone(), cmd[2].clone(), Some(int(&cmd[4])?), false);
    } else if is(name, "pexpireat") && cmd.len() == 3 {
        ks.set_expiry(&cmd[1], int(&cmd[2])?);
    } else if is(name, "del") && cmd.len() >= 2 {
        for k in &cmd[1..] {
            ks.remove(k);
        }
    } else if is(name, "flushall") && cmd.len() == 1 {
        ks.flush();
    } else if is(name, "hset") && cmd.len() >= 4 && cmd.len().is_multiple_of(2) {
        let pairs: Vec<(Bytes, Bytes)> = cmd[2..]
            .chunks(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect();
        ks.hset(&cmd[1], &pairs);
    } else if is(name, "hdel") && cmd.len() >= 3 {
        ks.hdel(&cmd[1], &cmd[2..]);
    } else if (is(name, "lpush") || is(name, "rpush")) && cmd.len() >= 3 {
        ks.push(&cmd[1], is(name, "lpush"), &cmd[2..]);
    } else if (is(name, "lpop") || is(name, "rpop")) && cmd.len() == 3 {
        let n = usize::try_from(int(&cmd[2])?).map_err(|_| bad())?;
        ks.pop(&cmd[1], is(name, "lpop"), n);
    } else if is(name, "lrem") && cmd.len() == 4 {
        ks.lrem(&cmd[1], int(&cmd[2])?, &cmd[3]);
    } else if is(name, "ltrim") && cmd.len() == 4 {
        ks.ltrim(&cmd[1], int(&cmd[2])?, int(&cmd[3])?);
    } else if is(name, "zadd") && cmd.len() >= 4 && cmd.len().is_multiple_of(2) {
        let mut pairs = Vec::new();
        for p in cmd[2..].chunks(2) {
            let s = std::str::from_utf8(&p[0])
                .ok()
                .and_then(|s| s.parse::<f64>().ok());
            pairs.push((s.filter(|s| !s.is_nan()).ok_or_else(bad)?, p[1].clone()));
        }
        ks.zadd(&cmd[1], &pairs);
    } else if is(name, "zrem") && cmd.len() >= 3 {
        ks.zrem(&cmd[1], &cmd[2..]);
    } else {
        return Err(bad());
    }
    Ok(())
}

/// The keyspace as commands: `FLUSHALL`, then for every key not expired at
/// `now` (all keys when `now` is `None`), in key order, `SET k v [PXAT t]`
/// for a string; `HSET k f v...` (fields in the hash's order), `RPUSH k
/// e...` or `ZADD k s m...`, then `PEXPIREAT k t` if it has an expiry, for
/// the other types.
pub fn snapshot(ks: &Keyspace, now: Option<i64>) -> Vec<Vec<Bytes>> {
    let mut out = vec![vec![Bytes::from_static(b"FLUSHALL")]];
    for (k, e) in ks.entries() {
        if matches!((now, e.expires_at), (Some(n), Some(t)) if n > t) {
            continue;
        }
        let at = e.expires_at.map(|t| Bytes::from(t.to_string()));
        match &e.value {
            Value::Str(v) => {
                let mut cmd = vec![Bytes::from_static(b"SET"), k.clone(), v.clone()];
                if let Some(t) = at.clone() {
                    cmd.push(Bytes::from_static(b"PXAT"));
                    cmd.push(t);
                }
                out.push(cmd);
            }
            Value::Hash(h) => {
                let mut cmd = vec![Bytes::from_static(b"HSET"), k.clone()];
                for (f, v) in h.iter() {
                    cmd.push(f.clone());
                    cmd.push(v.clone());
                }
                out.push(cmd);
            }
            Value::List(l) => {
                let mut cmd = vec![Bytes::from_static(b"RPUSH"), k.clone()];
                cmd.extend(l.iter().cloned());
                out.push(cmd);
            }
            Value::ZSet(z) => {
                let mut cmd = vec![Bytes::from_static(b"ZADD"), k.clone()];
                for (m, s) in z.iter() {
                    cmd.push(Bytes::from(s.to_string()));
                    cmd.push(m.clone());
                }
                out.push(cmd);
            }
        }
        if let (Some(t), false) = (at, matches!(e.value, Value::Str(_))) {
            out.push(vec![Bytes::from_static(b"PEXPIREAT"), k.clone(), t]);
        }
    }
    out
}

fn command_frame(cmd: &[Bytes]) -> Frame {
    Frame::Array(cmd.iter().map(|b| Frame::Bulk(b.clone())).collect())
}

fn frame_args(f: Frame) -> Option<Vec<Bytes>> {
    match f {
        Frame::Array(items) => items
            .into_iter()
            .map(|i| match i {
                Frame::Bulk(b) => Some(b),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Is this request `SYNC` (a replica asking for the stream)?
pub(crate) fn is_sync(args: &[Bytes]) -> bool {
    args.len() == 1 && is(&args[0], "sync")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn cmd(s: &str) -> Vec<Bytes> {
        s.split(' ').map(b).collect()
    }

    #[test]
    fn replicaof_sets_the_role() {
        let mut ks = Keyspace::default();
        assert_eq!(
            replicaof(&mut ks, &cmd("REPLICAOF n1 6379"), 0),
            Frame::ok()
        );
        assert_eq!(
            ks.role,
            Role::Replica {
                master: "n1:6379".into(),
                link_up: false
            }
        );
        assert_eq!(
            replicaof(&mut ks, &cmd("REPLICAOF n1 6379"), 0),
            Frame::Simple("OK Already connected to specified master".into())
        );
        for bad in ["REPLICAOF n1 x", "REPLICAOF n1 70000", "REPLICAOF n1 -1"] {
            assert_eq!(
                replicaof(&mut ks, &cmd(bad), 0),
                Frame::err("ERR Invalid master port")
            );
        }
        assert_eq!(replicaof(&mut ks, &cmd("SLAVEOF no one"), 0), Frame::ok());
        assert_eq!(ks.role, Role::Master);
    }

    #[test]
    fn effects_replay_to_the_same_keyspace() {
        let mut a = Keyspace::default();
        a.set(b("k"), b("v"), Some(5000), false);
        a.set(b("j"), b("w"), None, false);
        a.set_expiry(b"j", 7000);
        a.set(b("gone"), b("x"), None, false);
        a.remove(b"gone");
        a.hset(&b("h"), &[(b("f2"), b("1")), (b("f1"), b("2"))]);
        a.hset(&b("h"), &[(b("f3"), b("3"))]);
        a.hdel(b"h", &[b("f2")]);
        a.set_expiry(b"h", 8000);
        a.hset(&b("h2"), &[(b("f"), b("1"))]);
        a.hdel(b"h2", &[b("f")]);
        let mut r = Keyspace::default();
        r.role = Role::Replica {
            master: "n1:6379".into(),
            link_up: true,
        };
        for e in a.take_effects() {
            apply_effect(&mut r, &e).unwrap();
        }
        let ea: Vec<_> = a.entries().collect();
        let er: Vec<_> = r.entries().collect();
        assert_eq!(ea, er);
        assert!(apply_effect(&mut r, &cmd("INCR k")).is_err());
        // The snapshot, replayed, gives the same entries; expired keys skipped.
        let mut s = Keyspace::default();
        for e in snapshot(&a, Some(6000)) {
            apply_effect(&mut s, &e).unwrap();
        }
        assert_eq!(s.entries().count(), 2);
        assert_eq!(s.get(b"j", 6000).unwrap().expires_at, Some(7000));
        assert_eq!(s.get(b"h", 6000), a.get(b"h", 6000));
        assert_eq!(snapshot(&a, None)[1], cmd("HSET h f1 2 f3 3"));
        assert_eq!(snapshot(&a, None)[2], cmd("PEXPIREAT h 8000"));
    }

    #[test]
    fn list_and_zset_effects_and_snapshots_replay_to_the_same_keyspace() {
        let mut a = Keyspace::default();
        a.push(&b("l"), false, &cmd("a b c d e f"));
        a.push(&b("l"), true, &[b("z")]);
        assert_eq!(a.pop(b"l", true, 2), cmd("z a"));
        assert_eq!(a.pop(b"l", false, 1), cmd("f"));
        assert_eq!(a.lrem(b"l", -1, b"c"), 1);
        a.ltrim(b"l", 0, 1);
        a.push(&b("l2"), false, &[b("x")]);
        a.pop(b"l2", true, 1);
        a.zadd(
            &b("z"),
            &[(3.0, b("c")), (1.0, b("a")), (2.0, b("b")), (0.1, b("d"))],
        );
        a.zadd(&b("z"), &[(6.0, b("a"))]);
        assert_eq!(a.zrem(b"z", &cmd("c d")), 2);
        a.set_expiry(b"z", 100000);
        a.zadd(&b("z2"), &[(1.0, b("x"))]);
        a.zrem(b"z2", &[b("x")]);
        let mut r = Keyspace::default();
        r.role = Role::Replica {
            master: "n1:6379".into(),
            link_up: true,
        };
        for e in a.take_effects() {
            apply_effect(&mut r, &e).unwrap();
        }
        let ea: Vec<_> = a.entries().collect();
        assert_eq!(ea, r.entries().collect::<Vec<_>>());
        assert_eq!(ea.len(), 2, "l and z; l2 and z2 emptied and deleted");
        let mut s = Keyspace::default();
        for e in snapshot(&a, None) {
            apply_effect(&mut s, &e).unwrap();
        }
        assert_eq!(ea, s.entries().collect::<Vec<_>>());
        assert_eq!(snapshot(&a, None)[1], cmd("RPUSH l b d"));
        assert_eq!(snapshot(&a, None)[2], cmd("ZADD z 2 b 6 a"));
        assert_eq!(snapshot(&a, None)[3], cmd("PEXPIREAT z 100000"));
    }
}
