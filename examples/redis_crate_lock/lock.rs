//! A distributed lock written with the `redis` crate alone: the algorithm of
//! the Redis distributed-locks page, as a service might carry it.
//!
//! - one random token per attempt (20 bytes, hex);
//! - `SET resource token NX PX ttl` on each node in turn (the page's
//!   sequential variant), through any `redis::aio::ConnectionLike`;
//! - success needs a majority of the nodes and a positive validity,
//!   `ttl − elapsed − (ttl × drift_factor + 2 ms)`, elapsed on a monotonic
//!   clock;
//! - a failed attempt releases every node and waits a random delay in
//!   `[retry_delay/2, retry_delay]` before the next;
//! - release is the page's compare-and-delete script run with
//!   `redis::Script` (EVALSHA, and on NOSCRIPT a SCRIPT LOAD and EVALSHA
//!   again);
//! - with one master and replicas, the master is asked of the sentinel
//!   (`SENTINEL get-master-addr-by-name`), again after a failed attempt.
//!
//! Nothing of redlock-sim is used here: time comes through the small
//! [`Time`] trait, randomness from the generator it is given, connections
//! are any `ConnectionLike`. So the same code runs on a real Redis over
//! `redis::aio::MultiplexedConnection` and in the simulation.

use rand::Rng;
use rand_chacha::ChaCha20Rng;
use redis::aio::ConnectionLike;
use redis::Value;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

/// The compare-and-delete script of the Redis distributed-locks page.
pub const RELEASE: &str = "if redis.call(\"get\",KEYS[1]) == ARGV[1] then\n    return redis.call(\"del\",KEYS[1])\nelse\n    return 0\nend";

/// A monotonic clock and a timer.
pub trait Time {
    /// Time since an arbitrary origin; never goes back.
    fn now(&self) -> Duration;
    /// Completes once `d` has passed.
    fn sleep(&self, d: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// How the lock tries.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Attempts per lock call (at least one is made).
    pub retry_count: u32,
    /// Upper bound of the random wait between attempts.
    pub retry_delay: Duration,
    /// Clock drift allowance, as a fraction of the TTL.
    pub drift_factor: f64,
}

/// A lock held.
#[derive(Clone, Debug)]
pub struct Held {
    pub resource: String,
    pub token: String,
    /// Validity left when the lock call returned.
    pub validity: Duration,
    /// Nodes that took the key.
    pub nodes: usize,
}

/// Why a lock call failed (the last attempt's reason).
#[derive(Clone, Debug)]
pub enum LockError {
    /// Fewer than a majority of the nodes took the key.
    NoQuorum { locked: usize, needed: usize },
    /// A majority took it, but acquiring used up the TTL.
    NoValidity { locked: usize, elapsed: Duration },
    /// One master with replicas, and the sentinel named none we know.
    MasterUnknown,
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::NoQuorum { locked, needed } => {
                write!(f, "no quorum: {locked} of {needed} needed")
            }
            LockError::NoValidity { locked, elapsed } => {
                write!(f, "no validity left: {locked} nodes locked in {elapsed:?}")
            }
            LockError::MasterUnknown => write!(f, "the sentinel named no known master"),
        }
    }
}

impl std::error::Error for LockError {}

/// The lock over a fixed set of nodes (several independent masters), or
/// over whichever node a sentinel names as master.
pub struct RedisCrateLock<C, T> {
    /// Each node's `host:port` and connection.
    nodes: Vec<(String, C)>,
    /// With a sentinel: the nodes are one master and its replicas.
    sentinel: Option<C>,
    /// Index of the master the sentinel named last.
    master: Option<usize>,
    time: T,
    rng: ChaCha20Rng,
    settings: Settings,
    release: redis::Script,
}

impl<C: ConnectionLike, T: Time> RedisCrateLock<C, T> {
    pub fn new(
        nodes: Vec<(String, C)>,
        sentinel: Option<C>,
        time: T,
        rng: ChaCha20Rng,
        settings: Settings,
    ) -> Self {
        RedisCrateLock {
            nodes,
            sentinel,
            master: None,
            time,
            rng,
            settings,
            release: redis::Script::new(RELEASE),
        }
    }

    /// The nodes to lock: all of them, or the master the sentinel names.
    async fn targets(&mut self) -> Vec<usize> {
        let Some(sentinel) = self.sentinel.as_mut() else {
            return (0..self.nodes.len()).collect();
        };
        if self.master.is_none() {
            let reply: redis::RedisResult<Option<(String, u16)>> = redis::cmd("SENTINEL")
                .arg("get-master-addr-by-name")
                .arg("mymaster")
                .query_async(sentinel)
                .await;
            if let Ok(Some((host, port))) = reply {
                let addr = format!("{host}:{port}");
                self.master = self.nodes.iter().position(|(a, _)| *a == addr);
            }
        }
        self.master.into_iter().collect()
    }

    fn token(&mut self) -> String {
        let bytes: [u8; 20] = self.rng.random();
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Takes the lock on `resource` for `ttl`.
    pub async fn lock(&mut self, resource: &str, ttl: Duration) -> Result<Held, LockError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = self.try_lock(resource, ttl).await;
            if result.is_ok() || attempt >= self.settings.retry_count.max(1) {
                return result;
            }
            let d = self.settings.retry_delay;
            let wait = if d.is_zero() {
                d
            } else {
                self.rng.random_range(d / 2..=d)
            };
            self.time.sleep(wait).await;
        }
    }

    async fn try_lock(&mut self, resource: &str, ttl: Duration) -> Result<Held, LockError> {
        let targets = self.targets().await;
        if targets.is_empty() {
            return Err(LockError::MasterUnknown);
        }
        let token = self.token();
        let needed = targets.len() / 2 + 1;
        let ttl_ms = ttl.as_millis().max(1) as u64;
        let start = self.time.now();
        let mut locked = 0;
        for &i in &targets {
            let reply: redis::RedisResult<Value> = redis::cmd("SET")
                .arg(resource)
                .arg(&token)
                .arg("NX")
                .arg("PX")
                .arg(ttl_ms)
                .query_async(&mut self.nodes[i].1)
                .await;
            if matches!(reply, Ok(Value::Okay))
                || matches!(&reply, Ok(Value::SimpleString(s)) if s == "OK")
            {
                locked += 1;
            }
        }
        let elapsed = self.time.now().saturating_sub(start);
        let drift =
            Duration::from_nanos((ttl.as_nanos() as f64 * self.settings.drift_factor) as u64)
                + Duration::from_millis(2);
        let left = ttl.as_nanos() as i128 - elapsed.as_nanos() as i128 - drift.as_nanos() as i128;
        if locked >= needed && left > 0 {
            return Ok(Held {
                resource: resource.to_string(),
                token,
                validity: Duration::from_nanos(left as u64),
                nodes: locked,
            });
        }
        self.release_on(&targets, resource, &token).await;
        // One master: it may have moved; ask the sentinel again.
        self.master = None;
        Err(if locked >= needed {
            LockError::NoValidity { locked, elapsed }
        } else {
            LockError::NoQuorum { locked, needed }
        })
    }

    async fn release_on(&mut self, targets: &[usize], resource: &str, token: &str) -> usize {
        let mut released = 0;
        for &i in targets {
            let reply: redis::RedisResult<i64> = self
                .release
                .key(resource)
                .arg(token)
                .invoke_async(&mut self.nodes[i].1)
                .await;
            if reply == Ok(1) {
                released += 1;
            }
        }
        released
    }

    /// Releases the lock on every node that still holds our token; returns
    /// on how many it was deleted.
    pub async fn unlock(&mut self, held: &Held) -> usize {
        let targets: Vec<usize> = match self.sentinel {
            Some(_) => self.master.into_iter().collect(),
            None => (0..self.nodes.len()).collect(),
        };
        self.release_on(&targets, &held.resource, &held.token).await
    }
}
