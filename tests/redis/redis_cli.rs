//! What a user types into `redis-cli`: the distlock page's lock (acquire with
//! `SET NX PX`, release and extend by Lua script, typed as the page prints
//! them, one line or several), Redisson's reentrant lock scripts, and the
//! RESP3 handshake, each against `redis-server` and against `redlock-sim
//! node` (the binary, on a real port). The two must print the same.

use crate::common;

use common::{start_redis, start_sim_node_process};
use std::process::Command;

/// Runs `redis-cli -p PORT [extra] ARGS...` and returns what it printed.
fn cli(port: u16, extra: &[&str], args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["--no-raw", "-h", "127.0.0.1", "-p", &port.to_string()])
        .args(extra)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "run redis-cli: {e}; it comes with redis-server, which `{}` installs",
                common::INSTALL
            )
        });
    assert!(out.status.success(), "redis-cli {args:?} failed: {out:?}");
    let mut s = String::from_utf8_lossy(&out.stdout).into_owned();
    s.push_str(&String::from_utf8_lossy(&out.stderr));
    s
}

/// The release script as the distlock page prints it (several lines).
const RELEASE_PAGE: &str = "if redis.call(\"get\",KEYS[1]) == ARGV[1] then\n    return redis.call(\"del\",KEYS[1])\nelse\n    return 0\nend";
/// The same, typed on one line as a user types it at a prompt.
const RELEASE_TYPED: &str = "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) else return 0 end";
/// The extension the page describes: PEXPIRE if the key still holds our value.
const EXTEND_TYPED: &str = "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"pexpire\",KEYS[1],ARGV[2]) else return 0 end";

/// Redisson's `RedissonLock` scripts: take or re-enter, release by count
/// (without the PUBLISH to waiters), renew.
const REDISSON_TAKE: &str = "if (redis.call('exists', KEYS[1]) == 0) then redis.call('hset', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; return redis.call('pttl', KEYS[1]);";
const REDISSON_RELEASE: &str = "if (redis.call('hexists', KEYS[1], ARGV[2]) == 0) then return nil; end; local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[1]); return 0; else redis.call('del', KEYS[1]); return 1; end; return nil;";
const REDISSON_RENEW: &str = "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('pexpire', KEYS[1], ARGV[1]); return 1; end; return 0;";

/// The session a user runs; `PTTL` answers vary by a millisecond or two
/// between servers, so the session only asks whether a TTL is set (`TTL`
/// in seconds, with TTLs far from a boundary).
fn session() -> Vec<(Vec<&'static str>, Vec<&'static str>)> {
    let none: Vec<&str> = Vec::new();
    let resp3 = vec!["-3"];
    vec![
        (none.clone(), vec!["SET", "lk", "tok", "NX", "PX", "30000"]),
        (
            none.clone(),
            vec!["SET", "lk", "other", "NX", "PX", "30000"],
        ),
        (
            none.clone(),
            vec!["EVAL", RELEASE_TYPED, "1", "lk", "wrong"],
        ),
        (
            none.clone(),
            vec!["EVAL", EXTEND_TYPED, "1", "lk", "tok", "60500"],
        ),
        (none.clone(), vec!["TTL", "lk"]),
        (
            none.clone(),
            vec!["EVAL", EXTEND_TYPED, "1", "lk", "wrong", "90500"],
        ),
        (none.clone(), vec!["TTL", "lk"]),
        (none.clone(), vec!["EVAL", RELEASE_PAGE, "1", "lk", "tok"]),
        (none.clone(), vec!["EXISTS", "lk"]),
        (none.clone(), vec!["EVAL", RELEASE_TYPED, "1", "lk", "tok"]),
        (none.clone(), vec!["SCRIPT", "LOAD", RELEASE_TYPED]),
        (
            none.clone(),
            vec![
                "EVALSHA",
                "0000000000000000000000000000000000000000",
                "1",
                "lk",
                "tok",
            ],
        ),
        (none.clone(), vec!["EVAL", RELEASE_TYPED, "0"]),
        (none.clone(), vec!["EVAL", "return {1,2,3.9,nil,5}", "0"]),
        (
            none.clone(),
            vec!["EVAL", "return redis.call('nosuch')", "0"],
        ),
        (
            none.clone(),
            vec!["EVAL", "return {err='custom failure'}", "0"],
        ),
        (
            none.clone(),
            vec!["EVAL", "return redis.status_reply('FINE')", "0"],
        ),
        (none.clone(), vec!["EVAL", "return redis.sha1hex('')", "0"]),
        (none.clone(), vec!["EVAL", "this is not lua", "0"]),
        // Redisson's reentrant lock: take, re-enter, another owner, release by count.
        (
            none.clone(),
            vec!["EVAL", REDISSON_TAKE, "1", "rl", "30000", "uuid-1:1"],
        ),
        (
            none.clone(),
            vec!["EVAL", REDISSON_TAKE, "1", "rl", "30000", "uuid-1:1"],
        ),
        (none.clone(), vec!["HGETALL", "rl"]),
        (none.clone(), vec!["TYPE", "rl"]),
        (none.clone(), vec!["GET", "rl"]),
        (
            none.clone(),
            vec!["EVAL", REDISSON_RENEW, "1", "rl", "30000", "uuid-2:1"],
        ),
        (
            none.clone(),
            vec!["EVAL", REDISSON_RENEW, "1", "rl", "60500", "uuid-1:1"],
        ),
        (none.clone(), vec!["TTL", "rl"]),
        (
            none.clone(),
            vec!["EVAL", REDISSON_RELEASE, "1", "rl", "30000", "uuid-2:1"],
        ),
        (
            none.clone(),
            vec!["EVAL", REDISSON_RELEASE, "1", "rl", "30000", "uuid-1:1"],
        ),
        (none.clone(), vec!["HGET", "rl", "uuid-1:1"]),
        (
            none.clone(),
            vec!["EVAL", REDISSON_RELEASE, "1", "rl", "30000", "uuid-1:1"],
        ),
        (none.clone(), vec!["EXISTS", "rl"]),
        (none.clone(), vec!["SET", "str", "v"]),
        (
            none.clone(),
            vec!["EVAL", REDISSON_TAKE, "1", "str", "30000", "uuid-1:1"],
        ),
        // The RESP3 handshake and replies.
        (resp3.clone(), vec!["HSET", "h", "a", "1", "b", "2"]),
        (resp3.clone(), vec!["HGETALL", "h"]),
        (resp3.clone(), vec!["GET", "missing"]),
        (resp3.clone(), vec!["EVAL", RELEASE_TYPED, "1", "h", "x"]),
        (resp3.clone(), vec!["EVAL", "return {1,'two',false}", "0"]),
    ]
}

#[test]
fn redis_cli_sessions_print_the_same_from_both_servers() {
    common::require_redis("redis_cli_sessions_print_the_same_from_both_servers");
    let redis = start_redis(1);
    let node = start_sim_node_process();
    let mut differences = Vec::new();
    for (extra, args) in session() {
        let want = cli(redis[0].port, &extra, &args);
        let got = cli(node.port, &extra, &args);
        if want != got {
            differences.push(format!(
                "redis-cli {extra:?} {args:?}\n  redis-server:   {want:?}\n  redlock-sim node: {got:?}"
            ));
        }
    }
    assert!(
        differences.is_empty(),
        "{} of {} commands differ:\n{}",
        differences.len(),
        session().len(),
        differences.join("\n")
    );
    // The session did what a lock user expects (so the comparison is not
    // between two servers that refuse everything).
    assert_eq!(cli(node.port, &[], &["EXISTS", "lk"]).trim(), "(integer) 0");
    assert_eq!(
        cli(node.port, &[], &["EVAL", RELEASE_TYPED, "1", "lk", "x"]).trim(),
        "(integer) 0"
    );
    assert_eq!(
        cli(node.port, &[], &["SET", "lk", "tok", "NX", "PX", "30000"]).trim(),
        "OK"
    );
    assert_eq!(
        cli(node.port, &[], &["EVAL", RELEASE_TYPED, "1", "lk", "tok"]).trim(),
        "(integer) 1"
    );
}
