//! `TIME` and Symfony Lock's `RedisStore` against a real `redis-server`
//! (7.0.15), under RESP2 and RESP3:
//! - `TIME`'s form (two bulk strings: seconds near the server's, and
//!   microseconds below a million), its arity error, and `TIME` from a
//!   script, which may write afterwards (Symfony's check that it can use
//!   `TIME`);
//! - Symfony Lock 5.4's five scripts (`save`, `saveRead`,
//!   `putOffExpiration`, `delete`, `exists`, with `TIME` for `now`) through
//!   a lock's life: conflicts, read locks, promotion, expiry, a key of the
//!   old string kind; every reply compared byte for byte, then the set's
//!   members and whether the key has a TTL.

use crate::common::{self, start_redis, start_sim_node, words, Raw};
use std::time::Duration;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `*2 $n secs $m micros` read as numbers.
fn time_of(reply: &[u8]) -> (i64, i64) {
    let t = text(reply);
    let parts: Vec<&str> = t.split("\r\n").collect();
    assert!(
        parts.len() == 6
            && parts[0] == "*2"
            && parts[1].starts_with('$')
            && parts[3].starts_with('$'),
        "not TIME's form: {t:?}"
    );
    for (len, value) in [(parts[1], parts[2]), (parts[3], parts[4])] {
        assert_eq!(len[1..].parse::<usize>().unwrap(), value.len(), "{t:?}");
    }
    (parts[2].parse().unwrap(), parts[4].parse().unwrap())
}

/// Sends `args` to both; panics with both replies if they differ.
async fn both(r: &mut Raw, n: &mut Raw, args: &[Vec<u8>], ctx: &str) -> Vec<u8> {
    let (a, b) = (r.call(args).await, n.call(args).await);
    let shown: Vec<String> = args.iter().map(|x| text(x)).collect();
    assert_eq!(text(&a), text(&b), "{ctx}: {}", shown.join(" "));
    a
}

fn eval(script: &str, keys: &[&str], args: &[&str]) -> Vec<Vec<u8>> {
    let mut v = vec![
        b"EVAL".to_vec(),
        script.as_bytes().to_vec(),
        keys.len().to_string().into_bytes(),
    ];
    v.extend(keys.iter().chain(args).map(|a| a.as_bytes().to_vec()));
    v
}

async fn connect_both(proto: u8) -> (Vec<common::RedisServer>, Raw, Raw) {
    let servers = start_redis(1);
    let node = start_sim_node().await;
    let mut r = Raw::connect(&servers[0].addr()).await;
    let mut n = Raw::connect(&node).await;
    if proto == 3 {
        r.call(&words("HELLO 3")).await;
        n.call(&words("HELLO 3")).await;
    }
    (servers, r, n)
}

async fn time_cases(proto: u8) {
    let (_servers, mut r, mut n) = connect_both(proto).await;
    let ctx = format!("TIME, RESP{proto}");
    let scripted = eval("return redis.call('TIME')", &[], &[]);
    for ask in [words("TIME"), scripted] {
        let ((rs, ru), (ns, nu)) = (time_of(&r.call(&ask).await), time_of(&n.call(&ask).await));
        assert!((rs - ns).abs() <= 5, "{ctx}: {rs} and {ns} seconds");
        assert!((0..1_000_000).contains(&ru) && (0..1_000_000).contains(&nu));
    }
    for c in [
        words("TIME now"),
        eval(SUPPORT_TIME, &["symfony_check_support_time"], &[]),
        eval(
            "local t = redis.call('TIME') return {type(t), type(t[1]), type(t[2]), #t}",
            &[],
            &[],
        ),
        eval("return redis.call('TIME', 'x')", &[], &[]),
        eval("return redis.pcall('TIME', 'x')", &[], &[]),
    ] {
        both(&mut r, &mut n, &c, &ctx).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_resp2() {
    common::require_redis("time_resp2");
    time_cases(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_resp3() {
    common::require_redis("time_resp3");
    time_cases(3).await;
}

/// Symfony's check that scripts may call `TIME` and write after it.
const SUPPORT_TIME: &str = r#"
                local now = redis.call("TIME")
                redis.call("SET", KEYS[1], "1", "PX", 1)

	            return 1
            "#;

const NOW: &str = r#"
                local now = redis.call("TIME")
                now = now[1] * 1000 + math.floor(now[2] / 1000)
            "#;

const SAVE: &str = r#"
            local key = KEYS[1]
            local uniqueToken = ARGV[2]
            local ttl = tonumber(ARGV[3])

            -- asserts the KEY is compatible with current version (old Symfony <5.2 BC)
            if redis.call("TYPE", key).ok == "string" then
                return false
            end

            NOW

            -- Remove expired values
            redis.call("ZREMRANGEBYSCORE", key, "-inf", now)

            -- is already acquired
            if redis.call("ZSCORE", key, uniqueToken) then
                -- is not WRITE lock and cannot be promoted
                if not redis.call("ZSCORE", key, "__write__") and redis.call("ZCOUNT", key, "-inf", "+inf") > 1  then
                    return false
                end
            elseif redis.call("ZCOUNT", key, "-inf", "+inf") > 0  then
                return false
            end

            redis.call("ZADD", key, now + ttl, uniqueToken)
            redis.call("ZADD", key, now + ttl, "__write__")

            -- Extend the TTL of the key
            local maxExpiration = redis.call("ZREVRANGE", key, 0, 0, "WITHSCORES")[2]
            redis.call("PEXPIREAT", key, maxExpiration)

            return true
        "#;

const SAVE_READ: &str = r#"
            local key = KEYS[1]
            local uniqueToken = ARGV[2]
            local ttl = tonumber(ARGV[3])

            -- asserts the KEY is compatible with current version (old Symfony <5.2 BC)
            if redis.call("TYPE", key).ok == "string" then
                return false
            end

            NOW

            -- Remove expired values
            redis.call("ZREMRANGEBYSCORE", key, "-inf", now)

            -- lock not already acquired and a WRITE lock exists?
            if not redis.call("ZSCORE", key, uniqueToken) and redis.call("ZSCORE", key, "__write__") then
                return false
            end

            redis.call("ZADD", key, now + ttl, uniqueToken)
            redis.call("ZREM", key, "__write__")

            -- Extend the TTL of the key
            local maxExpiration = redis.call("ZREVRANGE", key, 0, 0, "WITHSCORES")[2]
            redis.call("PEXPIREAT", key, maxExpiration)

            return true
        "#;

const PUT_OFF: &str = r#"
            local key = KEYS[1]
            local uniqueToken = ARGV[2]
            local ttl = tonumber(ARGV[3])

            -- asserts the KEY is compatible with current version (old Symfony <5.2 BC)
            if redis.call("TYPE", key).ok == "string" then
                return false
            end

            NOW

            -- lock already acquired acquired?
            if not redis.call("ZSCORE", key, uniqueToken) then
                return false
            end

            redis.call("ZADD", key, now + ttl, uniqueToken)
            -- if the lock is also a WRITE lock, increase the TTL
            if redis.call("ZSCORE", key, "__write__") then
                redis.call("ZADD", key, now + ttl, "__write__")
            end

            -- Extend the TTL of the key
            local maxExpiration = redis.call("ZREVRANGE", key, 0, 0, "WITHSCORES")[2]
            redis.call("PEXPIREAT", key, maxExpiration)

            return true
        "#;

const DELETE: &str = r#"
            local key = KEYS[1]
            local uniqueToken = ARGV[1]

            -- asserts the KEY is compatible with current version (old Symfony <5.2 BC)
            if redis.call("TYPE", key).ok == "string" then
                return false
            end

            -- lock not already acquired
            if not redis.call("ZSCORE", key, uniqueToken) then
                return false
            end

            redis.call("ZREM", key, uniqueToken)
            redis.call("ZREM", key, "__write__")

            local maxExpiration = redis.call("ZREVRANGE", key, 0, 0, "WITHSCORES")[2]
            if nil ~= maxExpiration then
                redis.call("PEXPIREAT", key, maxExpiration)
            end

            return true
        "#;

const EXISTS: &str = r#"
            local key = KEYS[1]
            local uniqueToken = ARGV[2]

            -- asserts the KEY is compatible with current version (old Symfony <5.2 BC)
            if redis.call("TYPE", key).ok == "string" then
                return false
            end

            NOW

            -- Remove expired values
            redis.call("ZREMRANGEBYSCORE", key, "-inf", now)

            if redis.call("ZSCORE", key, uniqueToken) then
                return true
            end

            return false
        "#;

/// One of Symfony's calls: the script with `TIME` for `now`, the key, and
/// its arguments (`microtime(true)` first, unused with `TIME`).
fn symfony(script: &str, key: &str, token: &str, ttl_ms: Option<u64>) -> Vec<Vec<u8>> {
    let body = script.replace("NOW", NOW);
    let ttl = ttl_ms.map(|t| t.to_string());
    let mut args = vec!["1795890423.3959", token];
    if script == DELETE {
        args.remove(0);
    }
    if let Some(t) = &ttl {
        args.push(t);
    }
    eval(&body, &[key], &args)
}

async fn symfony_cases(proto: u8) {
    let (_servers, mut r, mut n) = connect_both(proto).await;
    let ctx = format!("Symfony Lock, RESP{proto}");
    let k = "sf:resource";
    let steps: Vec<Vec<Vec<u8>>> = vec![
        symfony(SAVE, k, "tokA", Some(300_000)),
        symfony(SAVE, k, "tokB", Some(300_000)),
        symfony(EXISTS, k, "tokA", None),
        symfony(EXISTS, k, "tokB", None),
        symfony(PUT_OFF, k, "tokA", Some(600_000)),
        symfony(PUT_OFF, k, "tokB", Some(600_000)),
        symfony(SAVE_READ, k, "tokC", Some(300_000)),
        symfony(SAVE, k, "tokA", Some(300_000)),
        words("ZRANGE sf:resource 0 -1"),
        symfony(DELETE, k, "tokA", None),
        symfony(DELETE, k, "tokA", None),
        words("EXISTS sf:resource"),
        symfony(SAVE_READ, k, "tokC", Some(300_000)),
        symfony(SAVE_READ, k, "tokD", Some(300_000)),
        symfony(SAVE, k, "tokC", Some(300_000)),
        symfony(PUT_OFF, k, "tokD", Some(400_000)),
        words("ZRANGE sf:resource 0 -1"),
        symfony(DELETE, k, "tokD", None),
        symfony(SAVE, k, "tokC", Some(300_000)),
        words("ZRANGE sf:resource 0 -1"),
        words("ZCARD sf:resource"),
        words("TYPE sf:resource"),
        eval("return redis.call('PTTL', KEYS[1]) > 0", &[k], &[]),
        symfony(DELETE, k, "tokC", None),
        words("EXISTS sf:resource"),
        // A lock of 1 ms is gone 50 ms later, its key with it.
        symfony(SAVE, "sf:short", "tokE", Some(1)),
        words("SLEEP"),
        symfony(EXISTS, "sf:short", "tokE", None),
        symfony(SAVE, "sf:short", "tokF", Some(300_000)),
        // The old string form of a Symfony lock.
        words("SET sf:old tok"),
        symfony(SAVE, "sf:old", "tok", Some(300_000)),
        symfony(SAVE_READ, "sf:old", "tok", Some(300_000)),
        symfony(PUT_OFF, "sf:old", "tok", Some(300_000)),
        symfony(DELETE, "sf:old", "tok", None),
        symfony(EXISTS, "sf:old", "tok", None),
    ];
    for s in &steps {
        if s == &words("SLEEP") {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        }
        both(&mut r, &mut n, s, &ctx).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symfony_lock_scripts_resp2() {
    common::require_redis("symfony_lock_scripts_resp2");
    symfony_cases(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symfony_lock_scripts_resp3() {
    common::require_redis("symfony_lock_scripts_resp3");
    symfony_cases(3).await;
}
