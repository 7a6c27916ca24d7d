//! Redisson's reentrant lock ([`LockKind::Reentrant`]) in the [`Redlock`]
//! client: a hash `{owner: count}` per node, taken and re-entered by
//! [`REENTRANT_TAKE`], released one level at a time by [`REENTRANT_RELEASE`]
//! and renewed by the watchdog with [`REENTRANT_RENEW`] (the scripts of
//! Redisson's `RedissonLock`, see [`super::scripts`]). The owner is the lock
//! call's token (Redisson's `UUID:threadId`).
//!
//! The quorum, validity, drift and retry logic is the client's own: the lock
//! call succeeds on a majority of the nodes (one node: the single-instance
//! lock) with a positive validity, and the watchdog's renewal is an extension
//! like any other. What is particular to the reentrant lock is here:
//!
//! - [`Redlock::reenter`]: runs the take script again, with the same owner, on
//!   the nodes that hold the lock; it succeeds on a majority while the lock is
//!   still valid, and counts one more level. A re-entry renews the lease on
//!   the nodes (as Redisson's does) but the client does not take it as an
//!   extension: the lock's validity stays that of the lock call or of the
//!   watchdog's last renewal, which can only make the client give the lock up
//!   earlier. A failed re-entry undoes its count on the nodes where it
//!   succeeded.
//! - [`Redlock::leave`]: releases one level (the release script on the nodes
//!   that hold it); the last level is the ordinary release, on every node.
//!
//! Redisson publishes an unlock message for its waiting threads; these
//! clients retry after `retry_delay` instead, so the release script has no
//! `PUBLISH`.

use super::redlock::{
    count_acquired, outcome, taken, Lock, LockError, LockKind, NodeOutcome, Redlock,
};
use super::scripts::{REENTRANT_RELEASE, REENTRANT_RENEW, REENTRANT_TAKE};
use redlock_proto::connection::RequestError;
use redlock_proto::resp::Frame;
use std::time::Duration;

/// Redisson's unlock message (`LockPubSub.UNLOCK_MESSAGE`), `ARGV[1]` of the
/// release script; unused there without the `PUBLISH`.
const UNLOCK_MESSAGE: &str = "0";

fn ttl_millis_arg(d: Duration) -> String {
    d.as_millis().max(1).to_string()
}

impl Redlock {
    /// The take script on every node (or on those in `only`): acquired where
    /// it replies nil, refused where it replies the holder's pttl.
    pub(super) async fn take_reentrant(
        &self,
        resource: &str,
        token: &str,
        ttl_ms: &str,
        only: Option<&[bool]>,
    ) -> Vec<NodeOutcome> {
        let sha = &self.reentrant.take;
        let args = [resource, ttl_ms, token];
        self.script(sha, REENTRANT_TAKE, &args, only, |r| r == &Frame::Null)
            .await
    }

    /// The release script on every node (or on those in `only`), the
    /// replies as they came (`None`: not asked).
    pub(super) async fn leave_reentrant(
        &self,
        resource: &str,
        token: &str,
        ttl: Duration,
        only: Option<&[bool]>,
    ) -> Vec<Option<Result<Frame, RequestError>>> {
        let sha = &self.reentrant.release;
        let lease = ttl_millis_arg(ttl);
        let args = [resource, UNLOCK_MESSAGE, lease.as_str(), token];
        self.script_replies(sha, REENTRANT_RELEASE, &args, only)
            .await
    }

    /// The renew script on every node: extended where it replies 1.
    pub(super) async fn renew_reentrant(&self, lock: &Lock, ttl_ms: &str) -> Vec<NodeOutcome> {
        let sha = &self.reentrant.renew;
        let args = [lock.resource.as_str(), ttl_ms, lock.token.as_str()];
        self.script(sha, REENTRANT_RENEW, &args, None, |r| {
            r == &Frame::Integer(1)
        })
        .await
    }

    /// Re-enters `lock` (held by this client): the take script again, with
    /// the lock's owner, on the nodes that hold it. Succeeds on a majority of
    /// all the nodes, within the lock's validity; the returned lock is one
    /// level deeper and held on the nodes that took the re-entry, with the
    /// validity of `lock`. Fails with [`LockError::Lost`] when the validity
    /// is over or a majority refused (someone else holds the key there:
    /// the take script answered its pttl), with [`LockError::NoQuorum`] or
    /// [`LockError::Io`] when too few answered; then the count it added is
    /// taken back where it was added.
    pub async fn reenter(&self, lock: &Lock) -> Result<Lock, LockError> {
        if self.config.lock != LockKind::Reentrant {
            return Err(LockError::NotReentrant);
        }
        let lost = || LockError::Lost {
            resource: lock.resource.clone(),
        };
        if self.clock.now() >= lock.valid_until {
            return Err(lost());
        }
        let ttl_ms = ttl_millis_arg(lock.ttl);
        let outcomes = self
            .take_reentrant(&lock.resource, &lock.token, &ttl_ms, Some(&lock.taken))
            .await;
        let now = self.clock.now();
        let acquired = count_acquired(&outcomes);
        let needed = self.needed(&outcomes);
        let refused = outcomes
            .iter()
            .filter(|o| **o == NodeOutcome::Refused)
            .count();
        let result = if now >= lock.valid_until || self.majority_refused(refused, needed) {
            Err(lost())
        } else if acquired < needed {
            Err(self.no_quorum(acquired, outcomes.clone()))
        } else {
            Ok(Lock {
                nodes_locked: acquired,
                taken: taken(&outcomes),
                depth: lock.depth + 1,
                ..lock.clone()
            })
        };
        if result.is_err() && acquired > 0 {
            let added = taken(&outcomes);
            self.leave_reentrant(&lock.resource, &lock.token, lock.ttl, Some(&added))
                .await;
        }
        result
    }

    /// Releases one level of `lock`: the release script on the nodes that
    /// hold it. Returns the lock one level up (held where the count went
    /// down) and on how many nodes it went down. At depth 1 this is
    /// [`Redlock::unlock`], on every node (then the lock's depth is 0 and the
    /// count is of the nodes where the key was deleted).
    pub async fn leave(&self, lock: &Lock) -> (Lock, usize) {
        if lock.depth <= 1 || self.config.lock != LockKind::Reentrant {
            let n = self.unlock(lock).await;
            let gone = Lock {
                depth: 0,
                nodes_locked: 0,
                taken: vec![false; lock.taken.len()],
                ..lock.clone()
            };
            return (gone, n);
        }
        let replies = self
            .leave_reentrant(&lock.resource, &lock.token, lock.ttl, Some(&lock.taken))
            .await;
        let outcomes: Vec<NodeOutcome> = replies
            .into_iter()
            .map(|r| {
                r.map_or(NodeOutcome::Refused, |r| {
                    outcome(r, |f| matches!(f, Frame::Integer(_)))
                })
            })
            .collect();
        let n = count_acquired(&outcomes);
        let up = Lock {
            nodes_locked: n,
            taken: taken(&outcomes),
            depth: lock.depth - 1,
            ..lock.clone()
        };
        (up, n)
    }
}
