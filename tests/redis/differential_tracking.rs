//! Client-side caching against a real `redis-server` (7.0.15), as
//! transcripts of four connections ([`crate::transcript`]):
//! - RESP3: default tracking (a read remembered, a write by another or by
//!   the reader itself invalidating, once), `NOLOOP`, `OPTIN` with `CLIENT
//!   CACHING YES`, `OPTOUT` with `CLIENT CACHING NO`, rueidislock's scripts
//!   (the `GET` inside a script tracks the key for its caller; a `DEL` by
//!   another and the key's expiry invalidate it), `BCAST` with prefixes
//!   (one message per prefix, its own writes too), `FLUSHALL` (a null),
//!   `REDIRECT` to another RESP3 client and to one that left
//!   (`tracking-redir-broken`), `CLIENT TRACKINGINFO|GETREDIR|NO-EVICT`,
//!   and every option error;
//! - RESP2: invalidations through `REDIRECT` to a client subscribed to
//!   `__redis__:invalidate`, none without it.

use crate::common::{self, start_redis, start_sim_node};
use crate::transcript::{eval, on, on_all, run, same, Step};

/// rueidislock's acquire (`acqms`) and release (`delkey`) scripts.
const ACQUIRE: &str = r#"local r = redis.call("SET",KEYS[1],ARGV[1],"NX","PX",ARGV[2]);redis.call("GET",KEYS[1]);return r"#;
const RELEASE: &str =
    r#"if redis.call("GET",KEYS[1]) == ARGV[1] then return redis.call("DEL",KEYS[1]) end;return 0"#;

fn script(i: usize, body: &str, keys: &[&str], args: &[&str]) -> Step {
    Step::Send(i, vec![eval(body, keys, args)])
}

fn resp3_default() -> Vec<Step> {
    vec![
        on(0, "CLIENT TRACKINGINFO"),
        on(0, "CLIENT GETREDIR"),
        on(0, "CLIENT TRACKING ON"),
        on(0, "CLIENT GETREDIR"),
        on(0, "GET k"),
        on(1, "SET k 1"),
        on(1, "SET k 2"),
        on(0, "GET k"),
        on(0, "SET k 3"),
        on(0, "EXISTS k k2"),
        on(1, "DEL k2"),
        on(1, "SET k2 x"),
        on(1, "DEL k"),
        on(0, "HGET h f"),
        on(1, "HSET h f v"),
        on(0, "ZSCORE z m"),
        on(1, "ZADD z 1 m"),
        on(0, "LRANGE l 0 -1"),
        on(1, "RPUSH l a"),
        on(0, "PTTL k2"),
        on(1, "PEXPIRE k2 100000"),
        on(0, "TYPE k2"),
        on(1, "GETSET k2 y"),
        on(0, "CLIENT TRACKING ON NOLOOP"),
        on(0, "CLIENT TRACKINGINFO"),
        on(0, "GET k"),
        on(0, "SET k 4"),
        on(1, "SET k 5"),
    ]
}

fn resp3_opt_in_out() -> Vec<Step> {
    vec![
        on(2, "CLIENT TRACKING ON OPTIN"),
        on(2, "GET o"),
        on(1, "SET o 1"),
        on_all(2, &["CLIENT CACHING YES", "GET o"]),
        on(1, "SET o 2"),
        on_all(2, &["CLIENT CACHING YES", "CLIENT TRACKINGINFO"]),
        on(2, "CLIENT CACHING NO"),
        on(2, "CLIENT CACHING MAYBE"),
        on(2, "CLIENT TRACKING ON OPTOUT"),
        on(2, "CLIENT TRACKING OFF"),
        on(2, "CLIENT TRACKING ON OPTOUT"),
        on_all(2, &["CLIENT CACHING NO", "GET p"]),
        on(1, "SET p 1"),
        on(2, "GET p"),
        on(1, "SET p 2"),
        on_all(2, &["CLIENT CACHING NO", "CLIENT TRACKINGINFO"]),
        on(2, "CLIENT CACHING YES"),
        on(2, "CLIENT TRACKING ON OPTIN"),
        // rueidislock: OPTOUT NOLOOP, and its scripts.
        on(2, "CLIENT TRACKING ON OPTOUT NOLOOP"),
        script(2, ACQUIRE, &["lk"], &["v1", "100000"]),
        script(2, ACQUIRE, &["lk"], &["v2", "100000"]),
        on(1, "DEL lk"),
        script(1, ACQUIRE, &["lk3"], &["v1", "100000"]),
        script(2, ACQUIRE, &["lk3"], &["v2", "100000"]),
        script(1, RELEASE, &["lk3"], &["v1"]),
        script(2, ACQUIRE, &["lk2"], &["v2", "200"]),
        Step::Sleep(600),
        on(2, "CLIENT TRACKINGINFO"),
    ]
}

fn resp3_bcast_flush_redirect() -> Vec<Step> {
    vec![
        on(3, "CLIENT TRACKING ON BCAST PREFIX user: PREFIX job:"),
        on(3, "CLIENT TRACKINGINFO"),
        on(1, "SET user:1 a"),
        on(1, "SET other a"),
        script(
            1,
            "redis.call('set','user:2','b');redis.call('set','job:1','c');redis.call('set','user:1','d');return 1",
            &[],
            &[],
        ),
        on(3, "SET user:9 own"),
        on(3, "GET user:9"),
        on(3, "CLIENT TRACKING ON BCAST PREFIX us"),
        on(3, "CLIENT TRACKING ON"),
        on(3, "CLIENT TRACKING ON BCAST NOLOOP PREFIX job:x"),
        on(0, "GET f"),
        on(1, "FLUSHALL"),
        on(0, "GET f"),
        on(1, "SET f 1"),
        on(0, "CLIENT TRACKING OFF"),
        on(0, "CLIENT TRACKING ON REDIRECT $ID1"),
        on(0, "CLIENT TRACKINGINFO"),
        on(0, "GET rd"),
        on(2, "SET rd 1"),
        Step::Close(1),
        Step::Sleep(50),
        on(0, "GET rd"),
        on(2, "SET rd 2"),
        on(0, "CLIENT TRACKINGINFO"),
        on(0, "GET rd"),
        on(0, "SET rd 3"),
    ]
}

fn option_errors() -> Vec<Step> {
    [
        "CLIENT TRACKING ON PREFIX a",
        "CLIENT TRACKING ON OPTIN OPTOUT",
        "CLIENT TRACKING ON BCAST OPTIN",
        "CLIENT TRACKING ON REDIRECT 999999",
        "CLIENT TRACKING ON REDIRECT 0",
        "CLIENT TRACKING ON REDIRECT x",
        "CLIENT TRACKING ON REDIRECT",
        "CLIENT TRACKING ON REDIRECT $ID0 REDIRECT $ID0",
        "CLIENT TRACKING ON FOO",
        "CLIENT TRACKING ON PREFIX",
        "CLIENT TRACKING MAYBE",
        "CLIENT TRACKING",
        "CLIENT TRACKING ON BCAST PREFIX a PREFIX ab",
        "CLIENT TRACKING OFF BCAST",
        "CLIENT CACHING YES",
        "CLIENT CACHING",
        "CLIENT CACHING YES x",
        "CLIENT TRACKINGINFO x",
        "CLIENT GETREDIR x",
        "CLIENT NO-EVICT ON",
        "CLIENT NO-EVICT off",
        "CLIENT NO-EVICT maybe",
        "CLIENT NO-EVICT",
        "CLIENT NOSUCH",
        "CLIENT",
        "CLIENT TRACKING OFF",
        "CLIENT TRACKING on bcast",
        "CLIENT TRACKINGINFO",
        "CLIENT TRACKING OFF",
    ]
    .iter()
    .map(|c| on(1, c))
    .collect()
}

fn resp2_redirect() -> Vec<Step> {
    vec![
        on(0, "SUBSCRIBE __redis__:invalidate"),
        on(1, "CLIENT TRACKING ON REDIRECT $ID0"),
        on(1, "GET k"),
        on(2, "SET k 1"),
        on(1, "GET k"),
        on(1, "SET k 2"),
        on(3, "CLIENT TRACKING ON"),
        on(3, "GET k"),
        on(2, "SET k 3"),
        on(3, "CLIENT TRACKING ON REDIRECT $ID2"),
        on(3, "GET k"),
        on(1, "GET k"),
        on(2, "DEL k"),
        on(1, "GET k"),
        on(2, "FLUSHALL"),
        on(1, "CLIENT TRACKING ON BCAST REDIRECT $ID0"),
        on(1, "CLIENT TRACKING OFF"),
        on(1, "CLIENT TRACKING ON BCAST PREFIX b: REDIRECT $ID0"),
        on(2, "SET b:1 x"),
        on(0, "UNSUBSCRIBE"),
        on(2, "SET b:2 x"),
    ]
}

async fn compare(proto: u8, steps: Vec<Step>, what: &str) {
    let servers = start_redis(1);
    let node = start_sim_node().await;
    let hello = (proto == 3).then_some("HELLO 3");
    let r = run(&servers[0].addr(), 4, hello, &steps).await;
    let n = run(&node, 4, hello, &steps).await;
    same(&r, &n, &format!("{what}, RESP{proto}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracking_default_mode_resp3() {
    common::require_redis("tracking_default_mode_resp3");
    compare(3, resp3_default(), "default tracking").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracking_optin_optout_and_rueidislock_resp3() {
    common::require_redis("tracking_optin_optout_and_rueidislock_resp3");
    compare(3, resp3_opt_in_out(), "OPTIN, OPTOUT, rueidislock").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracking_bcast_flush_and_redirect_resp3() {
    common::require_redis("tracking_bcast_flush_and_redirect_resp3");
    compare(3, resp3_bcast_flush_redirect(), "BCAST, FLUSHALL, REDIRECT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracking_options_and_errors() {
    common::require_redis("tracking_options_and_errors");
    compare(2, option_errors(), "options").await;
    compare(3, option_errors(), "options").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracking_redirect_resp2() {
    common::require_redis("tracking_redirect_resp2");
    compare(2, resp2_redirect(), "RESP2 redirect").await;
}
