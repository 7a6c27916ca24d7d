//! [`Variant::LegacySetnx`]: the `SETNX` + `GETSET` timestamp lock of the Redis
//! `SETNX` page, as a configuration of the [`Redlock`] client (acquire,
//! release, extend). Never used by the correct client.

#[allow(unused_imports)]
use super::flaw::Variant;
use super::redlock::{count_acquired, outcome, taken, Lock, LockError, NodeOutcome, Redlock};
use redlock_proto::resp::Frame;
use std::time::Duration;

/// [`Variant::LegacySetnx`]: the timestamp lock of the Redis `SETNX` page
/// ("Locking with SETNX"), on every node, needing a majority (with one node,
/// exactly the page's single-instance algorithm).
impl Redlock {
    /// One attempt: on each node `SETNX key <ts>` where ts = the client's
    /// wall clock + ttl + 1 (ms); if the key is held, `GET` it, and if its
    /// timestamp is in the past by our wall clock, `GETSET key <ts>`: the
    /// lock is ours if the old value was still expired (or gone). The token
    /// of the lock is ts (the value stored); its validity is ts − the wall
    /// clock when the attempt ends. On failure, the nodes taken are released
    /// (by [`Self::release_legacy`]).
    pub(super) async fn try_lock_legacy(
        &self,
        resource: &str,
        ttl: Duration,
    ) -> Result<Lock, LockError> {
        let ttl_ms = i64::try_from(ttl.as_millis().max(1)).unwrap_or(i64::MAX);
        let start = self.clock.now();
        let ts = self
            .clock
            .wall_ms()
            .saturating_add(ttl_ms)
            .saturating_add(1);
        let value = ts.to_string();
        let timeout = self.config.request_timeout;
        let (value_ref, key) = (&value, resource.as_bytes());
        let futs = self.nodes.iter().map(|node| async move {
            let (conn, clock) = (self.connector.as_ref(), self.clock.as_ref());
            let ask = |cmd: Frame| async move { node.request(conn, clock, &cmd, timeout).await };
            match ask(Frame::command([b"SETNX", key, value_ref.as_bytes()])).await {
                Ok(Frame::Integer(1)) => return NodeOutcome::Acquired,
                Ok(Frame::Integer(_)) => {}
                other => return outcome(other, |_| false),
            }
            let current = match ask(Frame::command([b"GET", key])).await {
                Ok(Frame::Bulk(v)) => v,
                // Released in between: the next attempt's SETNX may win.
                Ok(Frame::Null) => return NodeOutcome::Refused,
                other => return outcome(other, |_| false),
            };
            if !legacy_expired(&current, clock.wall_ms()) {
                return NodeOutcome::Refused;
            }
            match ask(Frame::command([b"GETSET", key, value_ref.as_bytes()])).await {
                Ok(Frame::Null) => NodeOutcome::Acquired,
                Ok(Frame::Bulk(old)) if legacy_expired(&old, clock.wall_ms()) => {
                    NodeOutcome::Acquired
                }
                other => outcome(other, |_| false),
            }
        });
        let outcomes = self.each(futs.collect()).await;
        let now = self.clock.now();
        let acquired = count_acquired(&outcomes);
        let needed = self.needed(&outcomes);
        let left_ms = ts.saturating_sub(self.clock.wall_ms());
        if acquired >= needed && left_ms > 0 {
            let v = Duration::from_millis(left_ms as u64);
            return Ok(Lock {
                resource: resource.to_string(),
                token: value,
                ttl,
                validity: v,
                acquired_at: now,
                valid_until: now.saturating_add(v),
                nodes_locked: acquired,
                taken: taken(&outcomes),
                depth: 1,
            });
        }
        let mine = taken(&outcomes);
        self.release_legacy(resource, &value, Some(&mine)).await;
        if acquired < needed {
            Err(self.no_quorum(acquired, outcomes))
        } else {
            Err(LockError::ValidityExhausted {
                acquired,
                elapsed: now.saturating_sub(start),
                ttl,
            })
        }
    }

    /// The page's release: `DEL`, but only while the lock's timestamp is
    /// still in the future by our wall clock (else someone may have taken it
    /// over). On every node, or on the nodes marked in `only`.
    pub(super) async fn release_legacy(
        &self,
        resource: &str,
        value: &str,
        only: Option<&[bool]>,
    ) -> usize {
        if legacy_expired(value.as_bytes(), self.clock.wall_ms()) {
            return 0;
        }
        let del = Frame::command([b"DEL", resource.as_bytes()]);
        let del = &del;
        let timeout = self.config.request_timeout;
        let futs = self.nodes.iter().enumerate().map(|(i, node)| async move {
            if only.is_some_and(|m| !m.get(i).copied().unwrap_or(false)) {
                return NodeOutcome::Refused;
            }
            let reply = node
                .request(self.connector.as_ref(), self.clock.as_ref(), del, timeout)
                .await;
            outcome(reply, |r| r == &Frame::Integer(1))
        });
        count_acquired(&self.each(futs.collect()).await)
    }

    /// Not on the page (it has no extension): where `GET` still shows our
    /// timestamp, `GETSET` a new one (the lock's token becomes the new
    /// timestamp). Succeeds on a majority; refused by a majority is lost.
    pub(super) async fn extend_legacy(
        &self,
        lock: &Lock,
        ttl: Duration,
        start: Duration,
    ) -> Result<Lock, LockError> {
        let ttl_ms = i64::try_from(ttl.as_millis().max(1)).unwrap_or(i64::MAX);
        let ts = self
            .clock
            .wall_ms()
            .saturating_add(ttl_ms)
            .saturating_add(1);
        let value = ts.to_string();
        let timeout = self.config.request_timeout;
        let (value_ref, key, ours) = (&value, lock.resource.as_bytes(), lock.token.as_bytes());
        let futs = self.nodes.iter().map(|node| async move {
            let (conn, clock) = (self.connector.as_ref(), self.clock.as_ref());
            let ask = |cmd: Frame| async move { node.request(conn, clock, &cmd, timeout).await };
            match ask(Frame::command([b"GET", key])).await {
                Ok(Frame::Bulk(v)) if v == ours => {}
                other => return outcome(other, |_| false),
            }
            let reply = ask(Frame::command([b"GETSET", key, value_ref.as_bytes()])).await;
            outcome(reply, |r| matches!(r, Frame::Bulk(v) if v == ours))
        });
        let outcomes = self.each(futs.collect()).await;
        let now = self.clock.now();
        let acquired = count_acquired(&outcomes);
        let needed = self.needed(&outcomes);
        let refused = outcomes
            .iter()
            .filter(|o| **o == NodeOutcome::Refused)
            .count();
        if now >= lock.valid_until || self.majority_refused(refused, needed) {
            return Err(LockError::Lost {
                resource: lock.resource.clone(),
            });
        }
        if acquired < needed {
            return Err(self.no_quorum(acquired, outcomes));
        }
        let left_ms = ts.saturating_sub(self.clock.wall_ms());
        if left_ms <= 0 {
            return Err(LockError::ValidityExhausted {
                acquired,
                elapsed: now.saturating_sub(start),
                ttl,
            });
        }
        let v = Duration::from_millis(left_ms as u64);
        Ok(Lock {
            token: value,
            ttl,
            validity: v,
            acquired_at: now,
            valid_until: now.saturating_add(v),
            nodes_locked: acquired,
            taken: taken(&outcomes),
            ..lock.clone()
        })
    }
}

/// Is a `SETNX`-page lock value (a wall-clock timestamp in ms) in the past
/// at `now`? A value that is not a timestamp is taken as not expired.
fn legacy_expired(value: &[u8], now: i64) -> bool {
    std::str::from_utf8(value)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .is_some_and(|ts| ts < now)
}
