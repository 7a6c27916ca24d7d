//! The example lock of `examples/redis_crate_lock/` (written with the
//! `redis` crate alone) on real servers: over redlock-sim's `RedisConn` and
//! over the crate's own `MultiplexedConnection` against three
//! `redis-server`s, and over `RedisConn` against three of redlock-sim's own
//! nodes. Its simulated runs are in `tests/sim/own_lock.rs`.

use crate::common;

#[path = "../../examples/redis_crate_lock/lock.rs"]
mod lock;

use redlock_sim::own_lock::RedisConn;
use std::time::Duration;

struct StdTime(std::time::Instant);

impl lock::Time for StdTime {
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
    fn sleep(
        &self,
        d: Duration,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        Box::pin(tokio::time::sleep(d))
    }
}

fn real_lock<C: redis::aio::ConnectionLike>(
    nodes: Vec<(String, C)>,
    seed: u64,
) -> lock::RedisCrateLock<C, StdTime> {
    use rand::SeedableRng;
    let settings = lock::Settings {
        retry_count: 1,
        retry_delay: Duration::from_millis(10),
        drift_factor: 0.01,
    };
    lock::RedisCrateLock::new(
        nodes,
        None,
        StdTime(std::time::Instant::now()),
        rand_chacha::ChaCha20Rng::seed_from_u64(seed),
        settings,
    )
}

/// Two holders on the same servers: the second is refused while the first
/// holds; release deletes the key on every node (through EVALSHA, after
/// NOSCRIPT on a server whose script cache is empty).
async fn exercise<C: redis::aio::ConnectionLike>(
    what: &str,
    mut a: lock::RedisCrateLock<C, StdTime>,
    mut b: lock::RedisCrateLock<C, StdTime>,
    n: usize,
) {
    let ttl = Duration::from_secs(10);
    let held = a
        .lock("own-lock-test", ttl)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(held.nodes, n, "{what}");
    assert!(
        held.validity > Duration::from_secs(9) && held.validity < ttl,
        "{what}: {:?}",
        held.validity
    );
    let refused = b.lock("own-lock-test", ttl).await;
    assert!(
        matches!(refused, Err(lock::LockError::NoQuorum { locked: 0, .. })),
        "{what}: {refused:?}"
    );
    // b's release (of a token it never held) deletes nothing.
    let fake = lock::Held {
        token: "not-ours".into(),
        ..held.clone()
    };
    assert_eq!(b.unlock(&fake).await, 0, "{what}");
    assert_eq!(a.unlock(&held).await, n, "{what}");
    let again = b
        .lock("own-lock-test", ttl)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(b.unlock(&again).await, n, "{what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_lock_runs_on_real_redis_and_on_the_node() {
    common::require_redis("the_example_lock_runs_on_real_redis_and_on_the_node");
    let servers = common::start_redis(3);
    let addrs: Vec<String> = servers.iter().map(|s| s.addr()).collect();
    let timeout = Duration::from_millis(500);
    let conns = |addrs: &[String]| -> Vec<(String, RedisConn)> {
        addrs
            .iter()
            .map(|a| (a.clone(), RedisConn::tcp(a, timeout)))
            .collect()
    };
    // redlock-sim's connection over tokio TCP, against redis-server.
    exercise(
        "RedisConn on redis-server",
        real_lock(conns(&addrs), 1),
        real_lock(conns(&addrs), 2),
        3,
    )
    .await;
    // The redis crate's own connection, against redis-server: the lock is
    // plain redis-crate code.
    let mut multiplexed = Vec::new();
    for a in &addrs {
        let client = redis::Client::open(format!("redis://{a}/")).unwrap();
        multiplexed.push((
            a.clone(),
            client.get_multiplexed_async_connection().await.unwrap(),
        ));
    }
    let mut script_flush = redis::cmd("SCRIPT");
    script_flush.arg("FLUSH");
    for (_, c) in multiplexed.iter_mut() {
        let _: () = script_flush.query_async(c).await.unwrap();
    }
    exercise(
        "MultiplexedConnection on redis-server",
        real_lock(multiplexed.clone(), 3),
        real_lock(multiplexed, 4),
        3,
    )
    .await;
    // RedisConn against redlock-sim's own node.
    let mut nodes = Vec::new();
    for _ in 0..3 {
        nodes.push(common::start_sim_node().await);
    }
    exercise(
        "RedisConn on redlock-sim node",
        real_lock(conns(&nodes), 5),
        real_lock(conns(&nodes), 6),
        3,
    )
    .await;
}
