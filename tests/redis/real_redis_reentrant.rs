//! Redisson's reentrant lock (`lock = "reentrant"`) in the built-in client,
//! against real `redis-server` processes: take, re-enter, the hash
//! `{owner: count}`, release level by level, another owner refused with the
//! pttl, the watchdog's renewal, a majority of three, and the scripts' own
//! replies.

use crate::common;

use common::{start_redis, Client, RedisServer};
use redlock_client::scripts::{REENTRANT_RELEASE, REENTRANT_RENEW, REENTRANT_TAKE};
use redlock_client::{Config, LockError, LockKind, Redlock};
use redlock_proto::resp::Frame;
use std::sync::Arc;
use std::time::Duration;

const MS: Duration = Duration::from_millis(1);

fn reentrant() -> Config {
    Config {
        lock: LockKind::Reentrant,
        retry_count: 1,
        ..Default::default()
    }
}

fn client(servers: &[RedisServer], config: Config) -> Arc<Redlock> {
    Arc::new(Redlock::connect_tcp(
        servers.iter().map(|s| s.addr()),
        config,
    ))
}

async fn call(s: &RedisServer, args: &[&str]) -> Frame {
    Client::connect(&s.addr()).await.call(args).await
}

/// HGETALL as (field, value) pairs.
async fn hash(s: &RedisServer, key: &str) -> Vec<(String, String)> {
    match call(s, &["HGETALL", key]).await {
        Frame::Array(items) => items
            .chunks(2)
            .map(|p| match p {
                [Frame::Bulk(f), Frame::Bulk(v)] => (
                    String::from_utf8_lossy(f).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                ),
                other => panic!("HGETALL pair {other:?}"),
            })
            .collect(),
        other => panic!("HGETALL replied {other:?}"),
    }
}

fn owner(token: &str, count: u32) -> Vec<(String, String)> {
    vec![(token.to_string(), count.to_string())]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn take_reenter_release_in_reverse_order() {
    common::require_redis("take_reenter_release_in_reverse_order");
    let servers = start_redis(1);
    let s = &servers[0];
    let a = client(&servers, reentrant());
    let b = client(&servers, reentrant());
    let ttl = Duration::from_secs(10);
    let l1 = a.lock("rl", ttl).await.unwrap();
    assert_eq!((l1.depth, l1.nodes_locked), (1, 1));
    assert_eq!(call(s, &["TYPE", "rl"]).await, Frame::Simple("hash".into()));
    assert_eq!(hash(s, "rl").await, owner(&l1.token, 1));
    let l2 = a.reenter(&l1).await.unwrap();
    let l3 = a.reenter(&l2).await.unwrap();
    assert_eq!((l2.depth, l3.depth), (2, 3));
    assert_eq!(
        l3.valid_until, l1.valid_until,
        "a re-entry is not an extension"
    );
    assert_eq!(hash(s, "rl").await, owner(&l1.token, 3));

    // Another owner is refused; the take script tells it the holder's pttl.
    assert!(matches!(
        b.lock("rl", ttl).await,
        Err(LockError::NoQuorum {
            acquired: 0,
            needed: 1,
            ..
        })
    ));
    let pttl = call(s, &["EVAL", REENTRANT_TAKE, "1", "rl", "10000", "other"]).await;
    match pttl {
        Frame::Integer(ms) => assert!(ms > 9_000 && ms <= 10_000, "pttl {ms}"),
        other => panic!("the take script answered another owner {other:?}"),
    }
    assert_eq!(
        hash(s, "rl").await,
        owner(&l1.token, 3),
        "refusal changed nothing"
    );

    // Released in reverse order: 3 → 2 → 1 → gone.
    let (up, n) = a.leave(&l3).await;
    assert_eq!((up.depth, n), (2, 1));
    assert_eq!(hash(s, "rl").await, owner(&l1.token, 2));
    let (up, n) = a.leave(&up).await;
    assert_eq!((up.depth, n), (1, 1));
    assert_eq!(hash(s, "rl").await, owner(&l1.token, 1));
    let (up, n) = a.leave(&up).await;
    assert_eq!((up.depth, n), (0, 1), "the last level deletes the key");
    assert_eq!(call(s, &["EXISTS", "rl"]).await, Frame::Integer(0));

    // Now the other owner takes it.
    let lb = b.lock("rl", ttl).await.unwrap();
    assert_eq!(hash(s, "rl").await, owner(&lb.token, 1));
    // Releasing a level the client does not hold changes nothing.
    let (_, n) = a.leave(&l2).await;
    assert_eq!(n, 0);
    assert_eq!(hash(s, "rl").await, owner(&lb.token, 1));
    assert_eq!(b.unlock(&lb).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_set_nx_client_cannot_reenter_and_an_expired_lock_is_lost() {
    common::require_redis("the_set_nx_client_cannot_reenter_and_an_expired_lock_is_lost");
    let servers = start_redis(1);
    let plain = client(&servers, Config::default());
    let l = plain.lock("p", Duration::from_secs(5)).await.unwrap();
    assert_eq!(plain.reenter(&l).await, Err(LockError::NotReentrant));
    plain.unlock(&l).await;

    let a = client(&servers, reentrant());
    let l = a.lock("short", 50 * MS).await.unwrap();
    tokio::time::sleep(100 * MS).await;
    assert_eq!(
        a.reenter(&l).await,
        Err(LockError::Lost {
            resource: "short".into()
        })
    );
    assert_eq!(
        call(&servers[0], &["EXISTS", "short"]).await,
        Frame::Integer(0),
        "a re-entry after the validity must not re-create the key"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchdog_renews_with_the_renew_script() {
    common::require_redis("watchdog_renews_with_the_renew_script");
    let servers = start_redis(3);
    let a = client(&servers, reentrant());
    let lock = a.lock("wd", 300 * MS).await.unwrap();
    let token = lock.token.clone();
    let l2 = a.reenter(&lock).await.unwrap();
    let mut dog = a.watchdog(lock);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(dog.status().lost.is_none(), "lost while healthy");
    assert!(dog.lock().valid_until > l2.valid_until, "renewed");
    for s in &servers {
        assert_eq!(
            hash(s, "wd").await,
            owner(&token, 2),
            "renewal keeps the count"
        );
        match call(s, &["PTTL", "wd"]).await {
            Frame::Integer(ms) => assert!(ms > 0 && ms <= 300, "pttl {ms}"),
            other => panic!("PTTL {other:?}"),
        }
    }
    for s in &servers[..2] {
        call(s, &["DEL", "wd"]).await;
    }
    let lost = tokio::time::timeout(Duration::from_secs(1), dog.lost())
        .await
        .expect("loss noticed within the ttl");
    assert_eq!(
        lost,
        LockError::Lost {
            resource: "wd".into()
        }
    );
    for s in &servers[..2] {
        assert_eq!(
            call(s, &["EXISTS", "wd"]).await,
            Frame::Integer(0),
            "the renew script never re-creates a key"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_majority_of_three() {
    common::require_redis("a_majority_of_three");
    let mut servers = start_redis(3);
    let a = client(&servers, reentrant());
    let b = client(&servers, reentrant());
    let ttl = Duration::from_secs(10);
    // Another owner holds n3: a takes n1 + n2, a majority.
    let other = call(
        &servers[2],
        &["EVAL", REENTRANT_TAKE, "1", "m", "10000", "other"],
    )
    .await;
    assert_eq!(other, Frame::Null);
    let l1 = a.lock("m", ttl).await.unwrap();
    assert_eq!(l1.nodes_locked, 2);
    assert_eq!(l1.taken, vec![true, true, false]);
    let l2 = a.reenter(&l1).await.unwrap();
    assert_eq!((l2.nodes_locked, l2.depth), (2, 2));
    for s in &servers[..2] {
        assert_eq!(hash(s, "m").await, owner(&l1.token, 2));
    }
    assert_eq!(
        hash(&servers[2], "m").await,
        owner("other", 1),
        "n3 untouched"
    );
    assert!(b.lock("m", ttl).await.is_err());

    // n1 goes down: a re-entry on n2 alone is not a majority, and the count
    // it added on n2 is taken back.
    servers[0].kill();
    match a.reenter(&l2).await {
        Err(LockError::NoQuorum {
            acquired: 1,
            needed: 2,
            ..
        }) => {}
        other => panic!("re-entry on one of three: {other:?}"),
    }
    assert_eq!(hash(&servers[1], "m").await, owner(&l1.token, 2));

    // n2's key taken by someone else: a majority refuses, the lock is lost.
    call(&servers[1], &["DEL", "m"]).await;
    call(
        &servers[1],
        &["EVAL", REENTRANT_TAKE, "1", "m", "10000", "other"],
    )
    .await;
    assert_eq!(
        a.reenter(&l2).await,
        Err(LockError::Lost {
            resource: "m".into()
        })
    );
    assert_eq!(hash(&servers[1], "m").await, owner("other", 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_of_three_up_still_lock_and_release() {
    common::require_redis("two_of_three_up_still_lock_and_release");
    let mut servers = start_redis(3);
    servers[1].kill();
    let a = client(&servers, reentrant());
    let l1 = a.lock("k", Duration::from_secs(10)).await.unwrap();
    assert_eq!(l1.taken, vec![true, false, true]);
    let l2 = a.reenter(&l1).await.unwrap();
    assert_eq!(hash(&servers[2], "k").await, owner(&l1.token, 2));
    let (l1b, n) = a.leave(&l2).await;
    assert_eq!((l1b.depth, n), (1, 2));
    assert_eq!(a.unlock(&l1b).await, 2);
    for i in [0, 2] {
        assert_eq!(call(&servers[i], &["EXISTS", "k"]).await, Frame::Integer(0));
    }
    servers[2].kill();
    assert!(matches!(
        a.lock("k", Duration::from_secs(10)).await,
        Err(LockError::NoQuorum {
            acquired: 1,
            needed: 2,
            ..
        })
    ));
}

/// The scripts' replies, straight from redis-server: what the node must
/// answer too (tests/differential.rs checks it does).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scripts_replies() {
    common::require_redis("the_scripts_replies");
    let servers = start_redis(1);
    let s = &servers[0];
    let mut c = Client::connect(&s.addr()).await;
    let take = |o: &'static str| ["EVAL", REENTRANT_TAKE, "1", "h", "5000", o];
    let release = |o: &'static str| ["EVAL", REENTRANT_RELEASE, "1", "h", "0", "5000", o];
    let renew = |o: &'static str| ["EVAL", REENTRANT_RENEW, "1", "h", "5000", o];
    assert_eq!(c.call(&renew("a")).await, Frame::Integer(0));
    assert_eq!(c.call(&release("a")).await, Frame::Null);
    assert_eq!(c.call(&take("a")).await, Frame::Null);
    assert_eq!(c.call(&take("a")).await, Frame::Null);
    assert!(matches!(c.call(&take("b")).await, Frame::Integer(ms) if ms > 0 && ms <= 5000));
    assert_eq!(c.call(&renew("a")).await, Frame::Integer(1));
    assert_eq!(c.call(&renew("b")).await, Frame::Integer(0));
    assert_eq!(c.call(&release("b")).await, Frame::Null);
    assert_eq!(c.call(&release("a")).await, Frame::Integer(0));
    assert_eq!(c.call(&["HGET", "h", "a"]).await, Frame::bulk("1"));
    assert_eq!(c.call(&release("a")).await, Frame::Integer(1));
    assert_eq!(c.call(&["EXISTS", "h"]).await, Frame::Integer(0));
    // On a string key the hash commands fail: WRONGTYPE, as a script error.
    c.call(&["SET", "h", "x"]).await;
    match c.call(&take("a")).await {
        Frame::Error(e) => assert!(e.contains("WRONGTYPE"), "{e}"),
        other => panic!("take on a string: {other:?}"),
    }
}

/// A request cancelled after it was sent (as the watchdog's extension is when
/// the lock is released mid-renewal) must not leave its reply to be read as
/// the answer to the next request: with Redisson's scripts a stale nil reads
/// as "acquired". BLPOP with a timeout makes the server answer late.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_request_never_answers_the_next() {
    common::require_redis("a_cancelled_request_never_answers_the_next");
    use redlock_proto::clock::SystemClock;
    use redlock_proto::connection::{NodeConn, TcpConnector};
    let servers = start_redis(1);
    let conn = NodeConn::new(servers[0].addr());
    let clock = SystemClock::new();
    let blpop = Frame::command(["BLPOP", "nothing", "0.3"]);
    let sent = conn.request(&TcpConnector, &clock, &blpop, Duration::from_secs(5));
    assert!(
        tokio::time::timeout(50 * MS, sent).await.is_err(),
        "BLPOP answered early"
    );
    tokio::time::sleep(400 * MS).await;
    let ping = Frame::command(["PING"]);
    let reply = conn
        .request(&TcpConnector, &clock, &ping, Duration::from_secs(1))
        .await;
    assert_eq!(reply, Ok(Frame::Simple("PONG".into())));
}
