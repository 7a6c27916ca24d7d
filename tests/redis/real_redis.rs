//! The Redlock client against five real `redis-server` processes: mutual
//! exclusion under contention, fault tolerance (2 of 5 killed still lock, 3
//! killed do not), safe release, extension, and the watchdog.

use crate::common;

use common::{start_redis, Client, RedisServer};
use redlock_client::{Config, LockError, NodeOutcome, Redlock};
use redlock_proto::resp::Frame;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const MS: Duration = Duration::from_millis(1);

fn client(servers: &[RedisServer], config: Config) -> Arc<Redlock> {
    Arc::new(Redlock::connect_tcp(
        servers.iter().map(|s| s.addr()),
        config,
    ))
}

async fn get_all(servers: &[RedisServer], key: &str) -> Vec<Frame> {
    let mut out = Vec::new();
    for s in servers {
        out.push(Client::connect(&s.addr()).await.call(&["GET", key]).await);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn contention_never_gives_two_holders() {
    common::require_redis("contention_never_gives_two_holders");
    let servers = start_redis(5);
    let config = Config {
        retry_count: 1,
        retry_delay: 20 * MS,
        ..Default::default()
    };
    let holders = Arc::new(AtomicUsize::new(0));
    let acquisitions = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let c = client(&servers, config.clone());
        let (holders, acquisitions) = (holders.clone(), acquisitions.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..60 {
                if let Ok(lock) = c.lock("contended", Duration::from_secs(5)).await {
                    assert_eq!(
                        holders.fetch_add(1, Ordering::SeqCst),
                        0,
                        "two holders at once"
                    );
                    acquisitions.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_micros(300)).await;
                    holders.fetch_sub(1, Ordering::SeqCst);
                    assert!(lock.nodes_locked >= 3);
                    assert_eq!(
                        c.unlock(&lock).await,
                        lock.nodes_locked,
                        "released where we locked"
                    );
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let n = acquisitions.load(Ordering::SeqCst);
    eprintln!("contention: {n} acquisitions by 8 tasks, never two holders");
    assert!(
        n >= 20,
        "only {n} acquisitions: the lock is not making progress"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_of_five_down_still_locks_three_down_does_not() {
    common::require_redis("two_of_five_down_still_locks_three_down_does_not");
    let mut servers = start_redis(5);
    let config = Config {
        retry_count: 1,
        ..Default::default()
    };
    let c = client(&servers, config.clone());
    // Warm the connections, so the kills below break established streams.
    let lock = c.lock("ft", Duration::from_secs(10)).await.unwrap();
    c.unlock(&lock).await;

    servers[0].kill();
    servers[3].kill();
    let lock = c
        .lock("ft", Duration::from_secs(10))
        .await
        .expect("3 of 5 up must lock");
    assert_eq!(lock.nodes_locked, 3);
    assert!(lock.validity > Duration::from_millis(9_000));
    assert_eq!(c.unlock(&lock).await, 3);

    servers[4].kill();
    match c.lock("ft", Duration::from_secs(10)).await {
        Err(LockError::NoQuorum {
            acquired,
            needed,
            outcomes,
        }) => {
            assert_eq!((acquired, needed), (2, 3));
            let failed: Vec<usize> = (0..5)
                .filter(|&i| matches!(outcomes[i].1, NodeOutcome::Failed(_)))
                .collect();
            assert_eq!(
                failed,
                vec![0, 3, 4],
                "the killed nodes are the failed ones: {outcomes:?}"
            );
            assert_eq!(outcomes[1].1, NodeOutcome::Acquired);
        }
        other => panic!("expected NoQuorum with 2 of 3, got {other:?}"),
    }
    // The failed attempt released its partial locks on the live nodes.
    let live = [&servers[1], &servers[2]];
    for s in live {
        let reply = Client::connect(&s.addr())
            .await
            .call(&["EXISTS", "ft"])
            .await;
        assert_eq!(
            reply,
            Frame::Integer(0),
            "partial lock left on {}",
            s.addr()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_down_is_an_io_error() {
    common::require_redis("all_down_is_an_io_error");
    let mut servers = start_redis(3);
    for s in &mut servers {
        s.kill();
    }
    let c = client(
        &servers,
        Config {
            retry_count: 2,
            retry_delay: 10 * MS,
            ..Default::default()
        },
    );
    match c.lock("x", Duration::from_secs(1)).await {
        Err(LockError::Io { outcomes }) => assert_eq!(outcomes.len(), 3),
        other => panic!("expected Io, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_never_deletes_another_holders_key() {
    common::require_redis("release_never_deletes_another_holders_key");
    let servers = start_redis(5);
    let a = client(&servers, Config::default());
    let b = client(&servers, Config::default());
    let lock_a = a.lock("res", 150 * MS).await.unwrap();
    tokio::time::sleep(250 * MS).await; // A's keys expire.
    let lock_b = b.lock("res", Duration::from_secs(10)).await.unwrap();
    assert_ne!(lock_a.token, lock_b.token);
    assert_eq!(
        a.unlock(&lock_a).await,
        0,
        "A deleted keys that were not its own"
    );
    let values = get_all(&servers, "res").await;
    assert!(
        values.iter().all(|v| *v == Frame::bulk(&lock_b.token)),
        "B's keys: {values:?}"
    );
    // And B still cannot be locked out by a third party.
    let c = client(
        &servers,
        Config {
            retry_count: 1,
            ..Default::default()
        },
    );
    assert!(matches!(
        c.lock("res", Duration::from_secs(1)).await,
        Err(LockError::NoQuorum { acquired: 0, .. })
    ));
    assert_eq!(b.unlock(&lock_b).await, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_keeps_the_lock_past_its_first_ttl() {
    common::require_redis("extension_keeps_the_lock_past_its_first_ttl");
    let servers = start_redis(5);
    let a = client(&servers, Config::default());
    let other = client(
        &servers,
        Config {
            retry_count: 1,
            ..Default::default()
        },
    );
    let ttl = 400 * MS;
    let mut lock = a.lock("ext", ttl).await.unwrap();
    let first_end = lock.valid_until;
    for _ in 0..4 {
        tokio::time::sleep(200 * MS).await;
        lock = a.extend(&lock, ttl).await.expect("extend within validity");
        assert_eq!(lock.nodes_locked, 5);
    }
    // 800ms after taking a 400ms lock, it is still ours everywhere.
    assert!(lock.valid_until > first_end + 500 * MS);
    let values = get_all(&servers, "ext").await;
    assert!(
        values.iter().all(|v| *v == Frame::bulk(&lock.token)),
        "{values:?}"
    );
    assert!(
        other.lock("ext", ttl).await.is_err(),
        "a second client got an extended lock"
    );
    assert_eq!(a.unlock(&lock).await, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_lock_cannot_be_extended_or_resurrected() {
    common::require_redis("an_expired_lock_cannot_be_extended_or_resurrected");
    let servers = start_redis(5);
    let a = client(&servers, Config::default());
    let lock = a.lock("gone", 100 * MS).await.unwrap();
    tokio::time::sleep(200 * MS).await;
    assert_eq!(
        a.extend(&lock, Duration::from_secs(10)).await,
        Err(LockError::Lost {
            resource: "gone".into()
        })
    );
    // Even pretending the lock were still valid, the script must not re-create keys.
    let mut pretend = lock.clone();
    pretend.valid_until += Duration::from_secs(60);
    assert_eq!(
        a.extend(&pretend, Duration::from_secs(10)).await,
        Err(LockError::Lost {
            resource: "gone".into()
        })
    );
    let values = get_all(&servers, "gone").await;
    assert!(
        values.iter().all(|v| *v == Frame::Null),
        "extension re-created a key: {values:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchdog_extends_and_reports_loss() {
    common::require_redis("watchdog_extends_and_reports_loss");
    let servers = start_redis(3);
    let a = client(&servers, Config::default());
    let lock = a.lock("wd", 300 * MS).await.unwrap();
    let token = lock.token.clone();
    let mut dog = a.watchdog(lock);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(
        dog.status().lost.is_none(),
        "lost while the servers were healthy"
    );
    let values = get_all(&servers, "wd").await;
    assert!(
        values.iter().all(|v| *v == Frame::bulk(&token)),
        "watchdog let the key lapse: {values:?}"
    );
    for s in &servers {
        Client::connect(&s.addr()).await.call(&["DEL", "wd"]).await;
    }
    let lost = tokio::time::timeout(Duration::from_secs(1), dog.lost())
        .await
        .expect("loss noticed within ttl");
    assert_eq!(
        lost,
        LockError::Lost {
            resource: "wd".into()
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_instance_lock_is_the_same_client_with_one_node() {
    common::require_redis("single_instance_lock_is_the_same_client_with_one_node");
    let servers = start_redis(1);
    let a = client(&servers, Config::default());
    let b = client(
        &servers,
        Config {
            retry_count: 1,
            ..Default::default()
        },
    );
    let lock = a.lock("one", Duration::from_secs(5)).await.unwrap();
    assert!(matches!(
        b.lock("one", Duration::from_secs(5)).await,
        Err(LockError::NoQuorum { needed: 1, .. })
    ));
    assert_eq!(a.unlock(&lock).await, 1);
    let lock = b.lock("one", Duration::from_secs(5)).await.unwrap();
    assert_eq!(b.unlock(&lock).await, 1);
}
