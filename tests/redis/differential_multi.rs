//! Transactions against a real `redis-server` (7.0.15), under RESP2 and
//! RESP3, as transcripts ([`crate::transcript`]): `MULTI`, queued
//! commands, `EXEC` (a failing command among them), `DISCARD`, the errors
//! (nested `MULTI`, `WATCH` inside, `EXEC`/`DISCARD` without `MULTI`, a
//! refused command aborting the transaction), `RESET` inside, and
//! rueidis's cached read (`CLIENT CACHING YES`, `MULTI`, `PTTL`, `GET`,
//! `EXEC`) whose key is then invalidated.

use crate::common::{self, start_redis, start_sim_node};
use crate::transcript::{on, on_all, run, same, Step};

fn steps() -> Vec<Step> {
    vec![
        on(0, "EXEC"),
        on(0, "DISCARD"),
        on(0, "MULTI x"),
        on_all(0, &["MULTI", "MULTI", "SET a 1", "GET a", "PTTL a", "EXEC"]),
        on_all(0, &["MULTI", "SET a 1", "NOSUCH", "GET", "EXEC"]),
        on_all(
            0,
            &["MULTI", "WATCH a", "INCR a", "SET a x", "INCR a", "EXEC"],
        ),
        on_all(0, &["MULTI", "SET b 1", "DISCARD", "DISCARD", "EXISTS b"]),
        on_all(0, &["MULTI", "SET b 1", "EXEC x", "EXEC"]),
        on_all(0, &["MULTI", "SET b 1", "RESET", "EXEC", "EXISTS b"]),
        on_all(0, &["MULTI", "CLIENT NOSUCH", "EXEC"]),
        on_all(
            0,
            &["MULTI", "BLPOP nol 1", "RPUSH l a", "BLPOP l 1", "EXEC"],
        ),
        on_all(0, &["MULTI", "EXEC"]),
        // rueidis's cached read, then another client's write.
        on(0, "CLIENT TRACKING ON OPTIN"),
        on(1, "SET k v"),
        on_all(
            0,
            &["CLIENT CACHING YES", "MULTI", "PTTL k", "GET k", "EXEC"],
        ),
        on(1, "SET k w"),
        on_all(0, &["MULTI", "GET k", "EXEC"]),
        on(1, "SET k x"),
    ]
}

async fn multi(proto: u8) {
    let servers = start_redis(1);
    let node = start_sim_node().await;
    let hello = (proto == 3).then_some("HELLO 3");
    let r = run(&servers[0].addr(), 2, hello, &steps()).await;
    let n = run(&node, 2, hello, &steps()).await;
    same(&r, &n, &format!("MULTI, RESP{proto}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_resp2() {
    common::require_redis("transactions_resp2");
    multi(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_resp3() {
    common::require_redis("transactions_resp3");
    multi(3).await;
}

/// What Redis Sentinel sends with each `SLAVEOF` (`sentinelSendSlaveOf`,
/// less `CONFIG REWRITE`: a `redis-server` started without a configuration
/// file refuses it, the node answers `+OK` as one started with a file
/// does): the transaction's replies, and `CLIENT KILL`'s count and errors.
/// The other client, killed, is not used again.
fn sentinel_steps() -> Vec<Step> {
    vec![
        on(1, "PING"),
        on(0, "CLIENT KILL 1.2.3.4:5"),
        on(0, "CLIENT KILL TYPE nosuch"),
        on(0, "CLIENT KILL ID 0"),
        on(0, "CLIENT KILL TYPE"),
        on(0, "CLIENT KILL TYPE pubsub"),
        on_all(
            0,
            &[
                "MULTI",
                "SLAVEOF NO ONE",
                "CLIENT KILL TYPE normal",
                "CLIENT KILL TYPE pubsub",
                "EXEC",
            ],
        ),
        on(0, "PING"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sentinels_slaveof_transaction() {
    common::require_redis("the_sentinels_slaveof_transaction");
    let servers = start_redis(1);
    let node = start_sim_node().await;
    // The killed connection reads as closed at the transaction's step or
    // the next (the marker after it may be answered first): compared apart.
    let (r, r_closed) = closed_apart(run(&servers[0].addr(), 2, None, &sentinel_steps()).await);
    let (n, n_closed) = closed_apart(run(&node, 2, None, &sentinel_steps()).await);
    same(&r, &n, "the sentinel's SLAVEOF transaction");
    assert!(
        r.iter().any(|line| line.contains(":1 :0")),
        "one client killed: {r:#?}"
    );
    assert_eq!((r_closed, n_closed), (true, true), "{r:#?}\n{n:#?}");
}

/// The transcript without the other connection's close, and whether it
/// closed.
fn closed_apart(lines: Vec<String>) -> (Vec<String>, bool) {
    let closed = |l: &String| l.ends_with("conn 1: (closed)");
    let was = lines.iter().any(closed);
    (lines.into_iter().filter(|l| !closed(l)).collect(), was)
}
