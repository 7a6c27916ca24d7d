//! A lock of the user's own on a simulated client host, in place of the
//! built-in client.
//!
//! The user implements [`OwnLock`] (take a lock, release it) against the
//! `redis` crate's async connection, and gives a function that builds one
//! lock per client host from a [`LockEnv`]: a [`RedisConn`] to every node
//! (and to the sentinel with the `single` topology), the host's simulated
//! clock and a seeded ChaCha generator. The client loop of
//! [`super::workload`] drives it exactly as it drives the built-in client
//! (think, lock call, hold with writes, release) and records the same
//! events, so the checker, the stale-write and fencing checks and the
//! reports work unchanged. `redlock_sim::own_lock` runs a scenario file with it.

use rand_chacha::ChaCha20Rng;
use redlock_client::RedisConn;
use redlock_proto::clock::Clock;
use redlock_scenario::{ClientSpec, Scenario, Topology};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// Why a lock call failed, in the user's words (any error converts: a
/// `redis::RedisError` with `?`, a message with `.into()`).
pub type Failure = Box<dyn std::error::Error + Send + Sync>;

/// A lock the user's code holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The lock's key.
    pub resource: String,
    /// The random value that marks the lock as this holder's.
    pub token: String,
    /// How long, from the moment `acquire` returns, the lock may be taken
    /// as held (measured on the client's monotonic clock). The client stops
    /// writing once it is over, and the checker holds the lock to it.
    pub validity: Duration,
    /// Nodes that took the key (recorded with the acquisition).
    pub nodes: usize,
}

/// The user's lock code. Methods may be written as `async fn`.
pub trait OwnLock: 'static {
    /// Takes the lock on `resource` for `ttl` (retrying as it sees fit), or
    /// says why not.
    fn acquire(
        &mut self,
        resource: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<Lease, Failure>>;

    /// Releases `lease`; returns on how many nodes the key was deleted.
    fn release(&mut self, lease: &Lease) -> impl Future<Output = usize>;
}

/// What one client host's lock is built from.
pub struct LockEnv {
    /// The client's host name (`c1`, ...).
    pub client: String,
    /// The client's settings from the scenario (`ttl`, `retry_count`,
    /// `retry_delay`, `request_timeout`, `drift_factor`, ...), for the lock
    /// to follow as it sees fit. `variant`, `lock` and `reentry` choose the
    /// built-in client's code and mean nothing here.
    pub spec: ClientSpec,
    /// `redlock`: independent masters; `single`: one master (n1 at first)
    /// with replicas, the master named by the sentinel.
    pub topology: Topology,
    /// One connection to each node, n1..nN in order (`RedisConn::addr` is
    /// `nK:6379`). Each request times out after `spec.request_timeout` on
    /// the client's clock; a timed-out connection reconnects on its next
    /// request.
    pub nodes: Vec<RedisConn>,
    /// With the `single` topology, the sentinel (`SENTINEL
    /// get-master-addr-by-name mymaster` answers `[host, port]`); else none.
    pub sentinel: Option<RedisConn>,
    /// The client's clocks: monotonic `now` and `sleep`, `wall_ms`. Nothing
    /// else in the simulation tells time.
    pub clock: Arc<dyn Clock>,
    /// A generator seeded from the run's seed and the client's name (for
    /// tokens and random waits): nothing else in the simulation is random.
    pub rng: ChaCha20Rng,
}

/// [`OwnLock`] behind a pointer, for the client loop.
pub trait DynLock {
    fn acquire<'a>(
        &'a mut self,
        resource: &'a str,
        ttl: Duration,
    ) -> Pin<Box<dyn Future<Output = Result<Lease, Failure>> + 'a>>;
    fn release<'a>(&'a mut self, lease: &'a Lease) -> Pin<Box<dyn Future<Output = usize> + 'a>>;
}

impl<L: OwnLock> DynLock for L {
    fn acquire<'a>(
        &'a mut self,
        resource: &'a str,
        ttl: Duration,
    ) -> Pin<Box<dyn Future<Output = Result<Lease, Failure>> + 'a>> {
        Box::pin(OwnLock::acquire(self, resource, ttl))
    }

    fn release<'a>(&'a mut self, lease: &'a Lease) -> Pin<Box<dyn Future<Output = usize> + 'a>> {
        Box::pin(OwnLock::release(self, lease))
    }
}

/// Builds each client host's lock.
pub(crate) type Factory = Arc<dyn Fn(LockEnv) -> Box<dyn DynLock> + Send + Sync>;

/// A [`Factory`] from a function that builds the user's lock.
pub fn factory<L: OwnLock>(build: impl Fn(LockEnv) -> L + Send + Sync + 'static) -> Factory {
    Arc::new(move |env| Box::new(build(env)) as Box<dyn DynLock>)
}

/// What keeps a scenario from running with a lock of one's own: the key
/// and why, for the first client that needs the built-in client (`renew = true`: the
/// watchdog extends the built-in client's lock; an own lock has no
/// extension here).
pub fn unsupported(s: &Scenario) -> Option<(String, String)> {
    s.clients.iter().find(|c| c.renew).map(|_| {
        (
            "clients.renew".to_string(),
            "renew = true needs the built-in client's watchdog; a lock of your own is not \
             extended by the harness: set renew = false"
                .to_string(),
        )
    })
}
