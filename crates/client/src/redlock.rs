//! The Redlock algorithm, as the Redis distributed-locks page specifies it.
//!
//! One random token (20 bytes, hex) per lock call; `SET key token NX PX ttl`
//! on every node concurrently, each under `request_timeout`; success needs a
//! majority (N/2+1) and a positive validity = ttl − elapsed − (ttl ×
//! drift_factor + 2ms), elapsed measured on the monotonic clock. A failed
//! attempt releases the key on every node (also those that said no) and the
//! next attempt waits a random delay in [d/2, d]. With one node this is the
//! single-instance lock. Extension runs compare-and-pexpire on every node and
//! succeeds only on a majority within the lock's validity; it never re-creates
//! a key that has expired.
//!
//! With `Config::lock = LockKind::Reentrant` the same rules hold for
//! Redisson's reentrant lock: its take, release-by-count and renew scripts
//! replace `SET NX`, compare-and-delete and compare-and-pexpire
//! ([`super::reentrant`]).
//!
//! `Config::variant` selects one deliberate deviation ([`Variant`]) for the
//! simulation to show what it costs; each is a branch marked `Variant::…`
//! below, and with `Variant::Spec` (the default) none of them is taken.

use super::flaw::Variant;
use super::scripts::{sha1_hex, EXTEND, EXTEND_RESURRECT, RELEASE};
pub(crate) use super::validity::{
    quorum, validity, validity_unsigned, validity_wall, validity_without_drift,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use redlock_proto::clock::Clock;
use redlock_proto::connection::{Connector, NodeConn, RequestError};
use redlock_proto::resp::Frame;
use std::fmt;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::Duration;

/// The client's settings (the defaults are the scenario format's).
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Acquisition attempts per lock call.
    pub retry_count: u32,
    /// Upper bound of the random wait between attempts (drawn from [d/2, d]).
    pub retry_delay: Duration,
    /// Per-node request timeout.
    pub request_timeout: Duration,
    /// Clock drift allowance as a fraction of the TTL.
    pub drift_factor: f64,
    /// A deliberate flaw, to simulate what it costs (`Variant::Spec`: the
    /// correct algorithm; never set another otherwise).
    pub variant: Variant,
    /// Which lock is taken on each node.
    pub lock: LockKind,
    /// The longest wait before reconnecting to a node after failed
    /// requests (the wait doubles from 10 ms up to it).
    pub reconnect_backoff: Duration,
}

/// The lock taken on each node (the scenario format's `clients.lock`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockKind {
    /// `SET key token NX PX ttl`, compare-and-delete, compare-and-pexpire:
    /// the lock of the Redis distributed-locks page.
    #[default]
    SetNx,
    /// Redisson's reentrant lock: a hash `{token: count}` taken, re-entered,
    /// released by count and renewed by Redisson's scripts
    /// ([`super::reentrant`]).
    Reentrant,
}

impl LockKind {
    /// Every kind, the default first.
    pub const ALL: [LockKind; 2] = [LockKind::SetNx, LockKind::Reentrant];

    /// The spelling used in scenario files (`clients.lock`).
    pub fn as_str(self) -> &'static str {
        match self {
            LockKind::SetNx => "set-nx",
            LockKind::Reentrant => "reentrant",
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            retry_count: 3,
            retry_delay: Duration::from_millis(200),
            request_timeout: Duration::from_millis(50),
            drift_factor: 0.01,
            variant: Variant::Spec,
            lock: LockKind::SetNx,
            reconnect_backoff: redlock_proto::connection::MAX_BACKOFF,
        }
    }
}

/// A held lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lock {
    pub resource: String,
    pub token: String,
    pub ttl: Duration,
    /// Validity left when the lock call returned.
    pub validity: Duration,
    /// Monotonic time (the client's clock) at which the lock call returned.
    pub acquired_at: Duration,
    /// Monotonic time after which the lock must be taken as lost.
    pub valid_until: Duration,
    /// Nodes that accepted the key.
    pub nodes_locked: usize,
    /// Which nodes (in the client's node order) hold the key for us.
    pub taken: Vec<bool>,
    /// Re-entry depth: 1 for the lock call, one more for each re-entry held
    /// ([`LockKind::Reentrant`]; always 1 for the `SET NX` lock).
    pub depth: u32,
}

/// What one node said to one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeOutcome {
    /// It took the key (or, for an extension, extended it).
    Acquired,
    /// It answered no: the key is held by someone else (or, for an
    /// extension, no longer holds our token).
    Refused,
    /// It answered with an error reply.
    ErrorReply(String),
    /// It did not answer.
    Failed(RequestError),
}

impl fmt::Display for NodeOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeOutcome::Acquired => write!(f, "ok"),
            NodeOutcome::Refused => write!(f, "refused"),
            NodeOutcome::ErrorReply(e) => write!(f, "error reply: {e}"),
            NodeOutcome::Failed(e) => write!(f, "{e}"),
        }
    }
}

/// Why a lock call or an extension failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockError {
    /// Fewer than a majority of nodes took the key.
    NoQuorum {
        acquired: usize,
        needed: usize,
        outcomes: Vec<(String, NodeOutcome)>,
    },
    /// A majority took the key, but acquiring took so long that no validity
    /// was left (ttl − elapsed − drift ≤ 0).
    ValidityExhausted {
        acquired: usize,
        elapsed: Duration,
        ttl: Duration,
    },
    /// No node answered at all (every request failed on the network).
    Io {
        outcomes: Vec<(String, NodeOutcome)>,
    },
    /// The lock is gone: its validity ran out, or a majority no longer holds
    /// our token, so it cannot be extended.
    Lost { resource: String },
    /// Re-entry asked of a client whose lock is not reentrant.
    NotReentrant,
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |o: &[(String, NodeOutcome)]| {
            o.iter()
                .map(|(a, r)| format!("{a}: {r}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            LockError::NoQuorum { acquired, needed, outcomes } => {
                write!(f, "quorum not reached: {acquired} of {needed} needed ({})", list(outcomes))
            }
            LockError::ValidityExhausted { acquired, elapsed, ttl } => write!(
                f,
                "validity exhausted: {acquired} nodes locked but acquiring took {elapsed:?} of a {ttl:?} TTL"
            ),
            LockError::Io { outcomes } => write!(f, "no node answered ({})", list(outcomes)),
            LockError::Lost { resource } => write!(f, "lock on {resource} lost"),
            LockError::NotReentrant => write!(f, "the lock is not reentrant (lock = \"set-nx\")"),
        }
    }
}

impl std::error::Error for LockError {}

/// The Redlock client over a fixed set of nodes.
pub struct Redlock {
    pub(super) nodes: Vec<NodeConn>,
    pub(super) connector: Arc<dyn Connector>,
    pub(super) clock: Arc<dyn Clock>,
    rng: Mutex<ChaCha20Rng>,
    pub(super) config: Config,
    release_sha: String,
    extend_sha: String,
    extend_resurrect_sha: String,
    pub(super) reentrant: super::scripts::ReentrantShas,
}

impl Redlock {
    /// A client for `nodes` (`host:port` each). `rng` makes the tokens and
    /// retry delays: seeded from the OS in production, from the scenario seed
    /// in the simulation.
    pub fn new(
        nodes: impl IntoIterator<Item = String>,
        config: Config,
        clock: Arc<dyn Clock>,
        connector: Arc<dyn Connector>,
        rng: ChaCha20Rng,
    ) -> Self {
        Redlock {
            nodes: nodes
                .into_iter()
                .map(|n| NodeConn::with_max_backoff(n, config.reconnect_backoff))
                .collect(),
            connector,
            clock,
            rng: Mutex::new(rng),
            config,
            release_sha: sha1_hex(RELEASE.as_bytes()),
            extend_sha: sha1_hex(EXTEND.as_bytes()),
            extend_resurrect_sha: sha1_hex(EXTEND_RESURRECT.as_bytes()),
            reentrant: super::scripts::ReentrantShas::new(),
        }
    }

    /// A client on real TCP with the system clock and an OS-seeded RNG.
    pub fn connect_tcp(nodes: impl IntoIterator<Item = String>, config: Config) -> Self {
        Self::new(
            nodes,
            config,
            Arc::new(redlock_proto::clock::SystemClock::new()),
            Arc::new(redlock_proto::connection::TcpConnector),
            ChaCha20Rng::from_os_rng(),
        )
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub fn node_addrs(&self) -> Vec<&str> {
        self.nodes.iter().map(NodeConn::addr).collect()
    }

    /// Is this deliberate flaw configured?
    pub(super) fn has(&self, flaw: Variant) -> bool {
        self.config.variant == flaw
    }

    /// Nodes that must take the key (or extend it) for success.
    pub(super) fn needed(&self, outcomes: &[NodeOutcome]) -> usize {
        if self.has(Variant::MajorityOfResponders) {
            // Variant::MajorityOfResponders: a majority of the nodes that
            // answered yes or no, not of all N.
            let answered = outcomes
                .iter()
                .filter(|o| matches!(o, NodeOutcome::Acquired | NodeOutcome::Refused))
                .count();
            return quorum(answered);
        }
        quorum(self.nodes.len())
    }

    /// The wall clock at the start of a request round, read only for
    /// [`Variant::WallClockElapsed`].
    pub(super) fn wall_start(&self) -> Option<i64> {
        self.has(Variant::WallClockElapsed)
            .then(|| self.clock.wall_ms())
    }

    /// Validity left after a request round that took `elapsed` (monotonic):
    /// [`validity`], or what the configured flaw computes instead.
    pub(super) fn validity_after(
        &self,
        ttl: Duration,
        elapsed: Duration,
        wall_start: Option<i64>,
    ) -> Option<Duration> {
        let df = self.config.drift_factor;
        match (self.config.variant, wall_start) {
            // Variant::WallClockElapsed: elapsed from two wall-clock readings.
            (Variant::WallClockElapsed, Some(w)) => {
                validity_wall(ttl, self.clock.wall_ms().saturating_sub(w), df)
            }
            // Variant::NoDriftAllowance: ttl − elapsed.
            (Variant::NoDriftAllowance, _) => validity_without_drift(ttl, elapsed),
            // Variant::UnsignedValidity: wraps when elapsed + drift > ttl.
            (Variant::UnsignedValidity, _) => validity_unsigned(ttl, elapsed, df),
            // Variant::NoValidityCheck: a quorum is success, whatever is left
            // (nothing, when acquiring outlasted the TTL).
            (Variant::NoValidityCheck, _) => {
                Some(validity(ttl, elapsed, df).unwrap_or(Duration::ZERO))
            }
            _ => validity(ttl, elapsed, df),
        }
    }

    fn random_token(&self) -> String {
        let bytes: [u8; 20] = self.rng.lock().unwrap_or_else(|e| e.into_inner()).random();
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn retry_wait(&self) -> Duration {
        let d = self.config.retry_delay;
        if d.is_zero() {
            return d;
        }
        let mut rng = self.rng.lock().unwrap_or_else(|e| e.into_inner());
        rng.random_range(d / 2..=d)
    }

    /// Takes the lock on `resource` for `ttl`, trying up to `retry_count`
    /// times. Returns the error of the last attempt.
    pub async fn lock(&self, resource: &str, ttl: Duration) -> Result<Lock, LockError> {
        let token = self.random_token();
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.try_lock(resource, &token, ttl).await {
                Ok(lock) => return Ok(lock),
                Err(e) if attempt >= self.config.retry_count.max(1) => {
                    if self.has(Variant::NoReleaseOnFailure) {
                        // Variant::NoReleaseOnFailure: node-redlock releases the
                        // partial locks only once every retry has failed.
                        self.release(resource, &token, ttl).await;
                    }
                    return Err(e);
                }
                Err(_) => self.clock.sleep(self.retry_wait()).await,
            }
        }
    }

    /// One attempt with a given token.
    pub(crate) async fn try_lock(
        &self,
        resource: &str,
        token: &str,
        ttl: Duration,
    ) -> Result<Lock, LockError> {
        if self.has(Variant::LegacySetnx) {
            return self.try_lock_legacy(resource, ttl).await;
        }
        let ttl_ms = ttl.as_millis().max(1).to_string();
        let start = self.clock.now();
        let wall_start = self.wall_start();
        let outcomes = if self.config.lock == LockKind::Reentrant {
            self.take_reentrant(resource, token, &ttl_ms, None).await
        } else {
            let cmd = Frame::command([
                b"SET",
                resource.as_bytes(),
                token.as_bytes(),
                b"NX",
                b"PX",
                ttl_ms.as_bytes(),
            ]);
            self.on_all(&cmd, |r| matches!(r, Frame::Simple(s) if s == "OK"))
                .await
        };
        let now = self.clock.now();
        let elapsed = now.saturating_sub(start);
        let acquired = count_acquired(&outcomes);
        let needed = self.needed(&outcomes);
        let result = if acquired < needed {
            Err(self.no_quorum(acquired, outcomes))
        } else {
            match self.validity_after(ttl, elapsed, wall_start) {
                Some(v) => Ok(Lock {
                    resource: resource.to_string(),
                    token: token.to_string(),
                    ttl,
                    validity: v,
                    acquired_at: now,
                    valid_until: now.saturating_add(v),
                    nodes_locked: acquired,
                    taken: taken(&outcomes),
                    depth: 1,
                }),
                None => Err(LockError::ValidityExhausted {
                    acquired,
                    elapsed,
                    ttl,
                }),
            }
        };
        // Variant::NoReleaseOnFailure: the nodes this attempt locked stay locked
        // while `lock` retries.
        if result.is_err() && !self.has(Variant::NoReleaseOnFailure) {
            self.release(resource, token, ttl).await;
        }
        result
    }

    /// After an extension: so many nodes no longer hold our token that a
    /// majority can never be reached again, so the lock is lost.
    pub(super) fn majority_refused(&self, refused: usize, needed: usize) -> bool {
        refused > self.nodes.len().saturating_sub(needed)
    }

    pub(super) fn no_quorum(&self, acquired: usize, outcomes: Vec<NodeOutcome>) -> LockError {
        let answered = outcomes
            .iter()
            .any(|o| !matches!(o, NodeOutcome::Failed(_)));
        let needed = self.needed(&outcomes);
        let outcomes = self.label(outcomes);
        if answered {
            LockError::NoQuorum {
                acquired,
                needed,
                outcomes,
            }
        } else {
            LockError::Io { outcomes }
        }
    }

    pub(super) fn label(&self, outcomes: Vec<NodeOutcome>) -> Vec<(String, NodeOutcome)> {
        self.nodes
            .iter()
            .map(|n| n.addr().to_string())
            .zip(outcomes)
            .collect()
    }

    /// Releases the lock on every node; returns on how many the key was ours
    /// and was deleted.
    pub async fn unlock(&self, lock: &Lock) -> usize {
        self.release(&lock.resource, &lock.token, lock.ttl).await
    }

    pub(super) async fn release(&self, resource: &str, token: &str, ttl: Duration) -> usize {
        if self.has(Variant::PlainDelRelease) {
            // Variant::PlainDelRelease: DEL whatever key is there, ours or not.
            let del = Frame::command([b"DEL", resource.as_bytes()]);
            let outcomes = self.on_all(&del, |r| r == &Frame::Integer(1)).await;
            return count_acquired(&outcomes);
        }
        if self.has(Variant::LegacySetnx) {
            return self.release_legacy(resource, token, None).await;
        }
        if self.config.lock == LockKind::Reentrant {
            // Release by count: 1 where the count reached zero and the key
            // was deleted.
            let outcomes = self.leave_reentrant(resource, token, ttl, None).await;
            return outcomes
                .iter()
                .filter(|o| matches!(o, Some(Ok(Frame::Integer(1)))))
                .count();
        }
        let args = [resource, token];
        let outcomes = self
            .script(&self.release_sha, RELEASE, &args, None, |r| {
                r == &Frame::Integer(1)
            })
            .await;
        count_acquired(&outcomes)
    }

    /// Extends `lock` to a fresh `ttl` on every node that still holds its
    /// token. Succeeds only on a majority, within the lock's validity; the
    /// returned lock carries the new validity.
    pub async fn extend(&self, lock: &Lock, ttl: Duration) -> Result<Lock, LockError> {
        // Variant::ExtendResurrects: the extension is attempted, and counted,
        // whether or not the lock's validity has run out (redsync's Extend
        // checks neither), with a script that re-creates a missing key.
        let resurrects = self.has(Variant::ExtendResurrects);
        let start = self.clock.now();
        if start >= lock.valid_until && !resurrects {
            return Err(LockError::Lost {
                resource: lock.resource.clone(),
            });
        }
        if self.has(Variant::LegacySetnx) {
            return self.extend_legacy(lock, ttl, start).await;
        }
        let wall_start = self.wall_start();
        let ttl_ms = ttl.as_millis().max(1).to_string();
        let args = [lock.resource.as_str(), lock.token.as_str(), ttl_ms.as_str()];
        let outcomes = if self.config.lock == LockKind::Reentrant {
            self.renew_reentrant(lock, &ttl_ms).await
        } else {
            let (sha, body) = if resurrects {
                (&self.extend_resurrect_sha, EXTEND_RESURRECT)
            } else {
                (&self.extend_sha, EXTEND)
            };
            self.script(sha, body, &args, None, |r| r == &Frame::Integer(1))
                .await
        };
        let now = self.clock.now();
        let acquired = count_acquired(&outcomes);
        let needed = self.needed(&outcomes);
        let refused = outcomes
            .iter()
            .filter(|o| **o == NodeOutcome::Refused)
            .count();
        if (now >= lock.valid_until && !resurrects) || self.majority_refused(refused, needed) {
            return Err(LockError::Lost {
                resource: lock.resource.clone(),
            });
        }
        if acquired < needed {
            return Err(self.no_quorum(acquired, outcomes));
        }
        // As for an acquisition: valid until start + ttl − drift.
        let elapsed = now.saturating_sub(start);
        let Some(v) = self.validity_after(ttl, elapsed, wall_start) else {
            return Err(LockError::ValidityExhausted {
                acquired,
                elapsed,
                ttl,
            });
        };
        Ok(Lock {
            ttl,
            validity: v,
            acquired_at: now,
            valid_until: now.saturating_add(v),
            nodes_locked: acquired,
            taken: taken(&outcomes),
            ..lock.clone()
        })
    }

    /// Runs one of the lock scripts on every node (or on the nodes marked in
    /// `only`; the others count as refused): `EVALSHA`, and `EVAL` on a node
    /// that answers `NOSCRIPT` (a restarted node has an empty cache).
    pub(super) async fn script(
        &self,
        sha: &str,
        body: &str,
        args: &[&str],
        only: Option<&[bool]>,
        success: impl Fn(&Frame) -> bool + Copy,
    ) -> Vec<NodeOutcome> {
        let replies = self.script_replies(sha, body, args, only).await;
        replies
            .into_iter()
            .map(|r| r.map_or(NodeOutcome::Refused, |r| outcome(r, success)))
            .collect()
    }

    /// [`Self::script`]'s replies, as they came; `None` for the nodes left
    /// out by `only`, which are not asked.
    pub(super) async fn script_replies(
        &self,
        sha: &str,
        body: &str,
        args: &[&str],
        only: Option<&[bool]>,
    ) -> Vec<Option<Result<Frame, RequestError>>> {
        let evalsha = Frame::command(["EVALSHA", sha, "1"].iter().chain(args));
        let eval = Frame::command(["EVAL", body, "1"].iter().chain(args));
        let (evalsha, eval) = (&evalsha, &eval);
        let timeout = self.config.request_timeout;
        let futs = self.nodes.iter().enumerate().map(|(i, node)| async move {
            if only.is_some_and(|m| !m.get(i).copied().unwrap_or(false)) {
                return None;
            }
            let conn = self.connector.as_ref();
            let clock = self.clock.as_ref();
            let mut reply = node.request(conn, clock, evalsha, timeout).await;
            if matches!(&reply, Ok(Frame::Error(e)) if e.starts_with("NOSCRIPT")) {
                reply = node.request(conn, clock, eval, timeout).await;
            }
            Some(reply)
        });
        self.each(futs.collect()).await
    }

    /// Awaits one future per node: all at once (polled in node order), or,
    /// with [`Variant::Sequential`], one after another.
    pub(super) async fn each<F: Future>(&self, futs: Vec<F>) -> Vec<F::Output> {
        if self.has(Variant::Sequential) {
            // Variant::Sequential: the next node is asked only once the previous
            // one has answered or timed out.
            let mut out = Vec::with_capacity(futs.len());
            for f in futs {
                out.push(f.await);
            }
            return out;
        }
        join_all(futs).await
    }

    /// Sends `cmd` to every node concurrently.
    pub(super) async fn on_all(
        &self,
        cmd: &Frame,
        success: impl Fn(&Frame) -> bool + Copy,
    ) -> Vec<NodeOutcome> {
        let timeout = self.config.request_timeout;
        let futs = self.nodes.iter().map(|node| async move {
            outcome(
                node.request(self.connector.as_ref(), self.clock.as_ref(), cmd, timeout)
                    .await,
                success,
            )
        });
        self.each(futs.collect()).await
    }
}

pub(super) fn outcome(
    reply: Result<Frame, RequestError>,
    success: impl Fn(&Frame) -> bool,
) -> NodeOutcome {
    match reply {
        Ok(Frame::Error(e)) => NodeOutcome::ErrorReply(e),
        Ok(f) if success(&f) => NodeOutcome::Acquired,
        Ok(_) => NodeOutcome::Refused,
        Err(e) => NodeOutcome::Failed(e),
    }
}

/// Which nodes took the key (or extended it).
pub(super) fn taken(outcomes: &[NodeOutcome]) -> Vec<bool> {
    outcomes
        .iter()
        .map(|o| *o == NodeOutcome::Acquired)
        .collect()
}

pub(super) fn count_acquired(outcomes: &[NodeOutcome]) -> usize {
    outcomes
        .iter()
        .filter(|o| **o == NodeOutcome::Acquired)
        .count()
}

/// Polls every future, in index order, until all are done; results in input
/// order. Deterministic: no task spawning, no scheduler involved.
pub(crate) async fn join_all<F: Future>(futs: Vec<F>) -> Vec<F::Output> {
    let mut futs: Vec<Pin<Box<F>>> = futs.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = futs.iter().map(|_| None).collect();
    poll_fn(|cx| {
        let mut pending = false;
        for (f, slot) in futs.iter_mut().zip(out.iter_mut()) {
            if slot.is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(v) => *slot = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    out.into_iter()
        .map(|o| o.expect("every future finished"))
        .collect()
}
