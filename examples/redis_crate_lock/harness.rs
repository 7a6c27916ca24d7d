//! The glue between the lock of `lock.rs` and redlock-sim: the lock built
//! from what the simulation hands each client host, and the
//! `redlock_sim::own_lock::OwnLock` trait the client loop drives.

use super::lock::{Held, RedisCrateLock, Settings, Time};
use redlock_sim::clock::Clock;
use redlock_sim::own_lock::{Failure, Lease, LockEnv, OwnLock, RedisConn};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

/// The simulated host's clock, as the lock reads time.
pub struct SimTime(pub Arc<dyn Clock>);

impl Time for SimTime {
    fn now(&self) -> Duration {
        self.0.now()
    }

    fn sleep(&self, d: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        self.0.sleep(d)
    }
}

pub type SimLock = RedisCrateLock<RedisConn, SimTime>;

/// One client host's lock: every node, the sentinel (one master with
/// replicas), the host's clock and generator, the scenario's settings.
pub fn build(env: LockEnv) -> SimLock {
    let nodes = env
        .nodes
        .into_iter()
        .map(|c| (c.addr().to_string(), c))
        .collect();
    let settings = Settings {
        retry_count: env.spec.retry_count,
        retry_delay: env.spec.retry_delay,
        drift_factor: env.spec.drift_factor,
    };
    RedisCrateLock::new(nodes, env.sentinel, SimTime(env.clock), env.rng, settings)
}

impl OwnLock for SimLock {
    async fn acquire(&mut self, resource: &str, ttl: Duration) -> Result<Lease, Failure> {
        let held = self.lock(resource, ttl).await?;
        Ok(Lease {
            resource: held.resource,
            token: held.token,
            validity: held.validity,
            nodes: held.nodes,
        })
    }

    async fn release(&mut self, lease: &Lease) -> usize {
        let held = Held {
            resource: lease.resource.clone(),
            token: lease.token.clone(),
            validity: lease.validity,
            nodes: lease.nodes,
        };
        self.unlock(&held).await
    }
}
