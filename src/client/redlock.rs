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

use super::connection::{Connector, NodeConn, RequestError};
use super::scripts::{sha1_hex, EXTEND, RELEASE};
use crate::clock::Clock;
use crate::resp::Frame;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
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
}

impl Default for Config {
    fn default() -> Self {
        Config {
            retry_count: 3,
            retry_delay: Duration::from_millis(200),
            request_timeout: Duration::from_millis(50),
            drift_factor: 0.01,
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
        }
    }
}

impl std::error::Error for LockError {}

/// The drift allowance: ttl × drift_factor + 2ms.
pub fn drift(ttl: Duration, drift_factor: f64) -> Duration {
    Duration::from_nanos((ttl.as_nanos() as f64 * drift_factor.max(0.0)) as u64)
        + Duration::from_millis(2)
}

/// Validity left after acquiring in `elapsed`: ttl − elapsed − drift, in
/// signed arithmetic; `None` when that is zero or less (never a lock whose
/// validity is ≤ 0, never an underflow).
pub fn validity(ttl: Duration, elapsed: Duration, drift_factor: f64) -> Option<Duration> {
    let v = ttl.as_nanos() as i128
        - elapsed.as_nanos() as i128
        - drift(ttl, drift_factor).as_nanos() as i128;
    (v > 0).then(|| Duration::from_nanos(v as u64))
}

/// Majority of `n`.
pub fn quorum(n: usize) -> usize {
    n / 2 + 1
}

/// The Redlock client over a fixed set of nodes.
pub struct Redlock {
    nodes: Vec<NodeConn>,
    connector: Arc<dyn Connector>,
    clock: Arc<dyn Clock>,
    rng: Mutex<ChaCha20Rng>,
    config: Config,
    release_sha: String,
    extend_sha: String,
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
            nodes: nodes.into_iter().map(NodeConn::new).collect(),
            connector,
            clock,
            rng: Mutex::new(rng),
            config,
            release_sha: sha1_hex(RELEASE.as_bytes()),
            extend_sha: sha1_hex(EXTEND.as_bytes()),
        }
    }

    /// A client on real TCP with the system clock and an OS-seeded RNG.
    pub fn connect_tcp(nodes: impl IntoIterator<Item = String>, config: Config) -> Self {
        Self::new(
            nodes,
            config,
            Arc::new(crate::clock::SystemClock::new()),
            Arc::new(super::connection::TcpConnector),
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
                Err(e) if attempt >= self.config.retry_count.max(1) => return Err(e),
                Err(_) => self.clock.sleep(self.retry_wait()).await,
            }
        }
    }

    /// One attempt with a given token.
    pub async fn try_lock(
        &self,
        resource: &str,
        token: &str,
        ttl: Duration,
    ) -> Result<Lock, LockError> {
        let ttl_ms = ttl.as_millis().max(1).to_string();
        let cmd = Frame::command([
            b"SET",
            resource.as_bytes(),
            token.as_bytes(),
            b"NX",
            b"PX",
            ttl_ms.as_bytes(),
        ]);
        let start = self.clock.now();
        let outcomes = self
            .on_all(&cmd, |r| matches!(r, Frame::Simple(s) if s == "OK"))
            .await;
        let now = self.clock.now();
        let elapsed = now.saturating_sub(start);
        let acquired = count_acquired(&outcomes);
        let needed = quorum(self.nodes.len());
        let result = if acquired < needed {
            Err(self.no_quorum(acquired, outcomes))
        } else {
            match validity(ttl, elapsed, self.config.drift_factor) {
                Some(v) => Ok(Lock {
                    resource: resource.to_string(),
                    token: token.to_string(),
                    ttl,
                    validity: v,
                    acquired_at: now,
                    valid_until: now + v,
                    nodes_locked: acquired,
                }),
                None => Err(LockError::ValidityExhausted {
                    acquired,
                    elapsed,
                    ttl,
                }),
            }
        };
        if result.is_err() {
            self.release(resource, token).await;
        }
        result
    }

    fn no_quorum(&self, acquired: usize, outcomes: Vec<NodeOutcome>) -> LockError {
        let answered = outcomes
            .iter()
            .any(|o| !matches!(o, NodeOutcome::Failed(_)));
        let outcomes = self.label(outcomes);
        if answered {
            LockError::NoQuorum {
                acquired,
                needed: quorum(self.nodes.len()),
                outcomes,
            }
        } else {
            LockError::Io { outcomes }
        }
    }

    fn label(&self, outcomes: Vec<NodeOutcome>) -> Vec<(String, NodeOutcome)> {
        self.nodes
            .iter()
            .map(|n| n.addr().to_string())
            .zip(outcomes)
            .collect()
    }

    /// Releases the lock on every node; returns on how many the key was ours
    /// and was deleted.
    pub async fn unlock(&self, lock: &Lock) -> usize {
        self.release(&lock.resource, &lock.token).await
    }

    async fn release(&self, resource: &str, token: &str) -> usize {
        let args = [resource, token];
        let outcomes = self
            .script(&self.release_sha, RELEASE, &args, |r| {
                r == &Frame::Integer(1)
            })
            .await;
        count_acquired(&outcomes)
    }

    /// Extends `lock` to a fresh `ttl` on every node that still holds its
    /// token. Succeeds only on a majority, within the lock's validity; the
    /// returned lock carries the new validity.
    pub async fn extend(&self, lock: &Lock, ttl: Duration) -> Result<Lock, LockError> {
        let start = self.clock.now();
        if start >= lock.valid_until {
            return Err(LockError::Lost {
                resource: lock.resource.clone(),
            });
        }
        let ttl_ms = ttl.as_millis().max(1).to_string();
        let args = [lock.resource.as_str(), lock.token.as_str(), ttl_ms.as_str()];
        let outcomes = self
            .script(&self.extend_sha, EXTEND, &args, |r| r == &Frame::Integer(1))
            .await;
        let now = self.clock.now();
        let acquired = count_acquired(&outcomes);
        let needed = quorum(self.nodes.len());
        let refused = outcomes
            .iter()
            .filter(|o| **o == NodeOutcome::Refused)
            .count();
        if now >= lock.valid_until || refused > self.nodes.len() - needed {
            return Err(LockError::Lost {
                resource: lock.resource.clone(),
            });
        }
        if acquired < needed {
            return Err(self.no_quorum(acquired, outcomes));
        }
        // As for an acquisition: valid until start + ttl − drift.
        let elapsed = now - start;
        let Some(v) = validity(ttl, elapsed, self.config.drift_factor) else {
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
            valid_until: now + v,
            nodes_locked: acquired,
            ..lock.clone()
        })
    }

    /// Runs one of the lock scripts on every node: `EVALSHA`, and `EVAL` on a
    /// node that answers `NOSCRIPT` (a restarted node has an empty cache).
    async fn script(
        &self,
        sha: &str,
        body: &str,
        args: &[&str],
        success: impl Fn(&Frame) -> bool + Copy,
    ) -> Vec<NodeOutcome> {
        let evalsha = Frame::command(["EVALSHA", sha, "1"].iter().chain(args));
        let eval = Frame::command(["EVAL", body, "1"].iter().chain(args));
        let (evalsha, eval) = (&evalsha, &eval);
        let timeout = self.config.request_timeout;
        let futs = self.nodes.iter().map(|node| async move {
            let conn = self.connector.as_ref();
            let clock = self.clock.as_ref();
            let mut reply = node.request(conn, clock, evalsha, timeout).await;
            if matches!(&reply, Ok(Frame::Error(e)) if e.starts_with("NOSCRIPT")) {
                reply = node.request(conn, clock, eval, timeout).await;
            }
            outcome(reply, success)
        });
        join_all(futs.collect()).await
    }

    /// Sends `cmd` to every node concurrently.
    async fn on_all(
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
        join_all(futs.collect()).await
    }
}

fn outcome(reply: Result<Frame, RequestError>, success: impl Fn(&Frame) -> bool) -> NodeOutcome {
    match reply {
        Ok(Frame::Error(e)) => NodeOutcome::ErrorReply(e),
        Ok(f) if success(&f) => NodeOutcome::Acquired,
        Ok(_) => NodeOutcome::Refused,
        Err(e) => NodeOutcome::Failed(e),
    }
}

fn count_acquired(outcomes: &[NodeOutcome]) -> usize {
    outcomes
        .iter()
        .filter(|o| **o == NodeOutcome::Acquired)
        .count()
}

/// Polls every future, in index order, until all are done; results in input
/// order. Deterministic: no task spawning, no scheduler involved.
pub async fn join_all<F: Future>(futs: Vec<F>) -> Vec<F::Output> {
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

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn validity_at_its_edges() {
        // 10s TTL: drift = 100ms + 2ms.
        assert_eq!(validity(10_000 * MS, 0 * MS, 0.01), Some(9_898 * MS));
        assert_eq!(validity(10_000 * MS, 9_897 * MS, 0.01), Some(MS));
        assert_eq!(validity(10_000 * MS, 9_898 * MS, 0.01), None);
        assert_eq!(validity(10_000 * MS, 20_000 * MS, 0.01), None);
        // Tiny TTLs: the 2ms term alone eats them.
        assert_eq!(validity(2 * MS, Duration::ZERO, 0.01), None);
        assert_eq!(validity(MS, Duration::ZERO, 0.0), None);
        assert_eq!(validity(3 * MS, Duration::ZERO, 0.0), Some(MS));
        // Elapsed far beyond anything: no underflow, no panic.
        assert_eq!(validity(Duration::ZERO, Duration::MAX, 1.0), None);
        assert_eq!(
            validity(Duration::from_secs(u64::MAX / 4), Duration::ZERO, 0.0).is_some(),
            true
        );
    }

    #[test]
    fn majority() {
        assert_eq!([1, 2, 3, 4, 5].map(quorum), [1, 2, 2, 3, 3]);
    }
}
