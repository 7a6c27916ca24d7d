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
