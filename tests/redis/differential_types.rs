//! Differential test of the list and sorted-set commands against a real
//! `redis-server` (7.0.15), comparing the raw bytes of every reply, under
//! RESP2 and RESP3:
//! - fixed cases: every command with its options, empty and missing keys,
//!   `WRONGTYPE` both ways, bad counts, scores, ranges and timeouts, and
//!   scripts that call them (python-redis-lock's and redis-semaphore's
//!   kinds of calls);
//! - blocking pops: a waiter served by a push (the pusher's reply first),
//!   first come first served among three, a waiter on two keys, `BRPOP`,
//!   timeouts, a waiter whose connection closes (the element stays), a
//!   push from a script;
//! - a random sequence (seeded ChaCha) over two lists, two sorted sets and
//!   a string.

use crate::common;

use common::{start_redis, start_sim_node};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redlock_proto::resp::{parse, Frame};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Raw {
    s: TcpStream,
    buf: Vec<u8>,
}

impl Raw {
    async fn connect(addr: &str) -> Raw {
        let s = TcpStream::connect(addr).await.unwrap();
        s.set_nodelay(true).unwrap();
        Raw { s, buf: Vec::new() }
    }

    async fn send(&mut self, args: &[Vec<u8>]) {
        let bytes = Frame::command(args).to_bytes();
        self.s.write_all(&bytes).await.unwrap();
    }

    /// The next reply's raw bytes, or `None` if none comes within `wait`.
    async fn reply(&mut self, wait: Duration) -> Option<Vec<u8>> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some((_, used)) = parse(&self.buf).expect("a well-formed reply") {
                return Some(self.buf.drain(..used).collect());
            }
            let mut chunk = [0u8; 4096];
            let read = tokio::time::timeout_at(deadline, self.s.read(&mut chunk)).await;
            let n = read.ok()?.unwrap();
            assert!(n > 0, "server closed the connection");
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    async fn call(&mut self, args: &[Vec<u8>]) -> Vec<u8> {
        self.send(args).await;
        self.reply(Duration::from_secs(5))
            .await
            .expect("a reply within 5 s")
    }
}

fn words(s: &str) -> Vec<Vec<u8>> {
    s.split(' ').map(|w| w.as_bytes().to_vec()).collect()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Sends `args` to both; panics with both replies if they differ.
async fn both(r: &mut Raw, n: &mut Raw, args: &[Vec<u8>], context: &str) -> Vec<u8> {
    let a = r.call(args).await;
    let b = n.call(args).await;
    let shown: Vec<String> = args.iter().map(|x| text(x)).collect();
    assert_eq!(
        text(&a),
        text(&b),
        "replies differ\n  {context}\n  command: {}",
        shown.join(" ")
    );
    a
}

const FIXED: &[&str] = &[
    "RPUSH l a b c",
    "LPUSH l x y",
    "LRANGE l 0 -1",
    "LRANGE l -100 100",
    "LRANGE l 2 1",
    "LRANGE l 5 10",
    "LRANGE l -2 -1",
    "LRANGE l x 1",
    "LRANGE nol 0 -1",
    "LLEN l",
    "LLEN nol",
    "LINDEX l 0",
    "LINDEX l -1",
    "LINDEX l 99",
    "LINDEX l -99",
    "LINDEX l x",
    "LINDEX nol 0",
    "LPOP l",
    "RPOP l",
    "LPOP l 2",
    "RPOP l 0",
    "LPOP l -1",
    "LPOP l x",
    "LPOP l 1 2",
    "LPOP nol",
    "LPOP nol 2",
    "LPOP nol 0",
    "RPOP l 5",
    "EXISTS l",
    "LPUSHX l a",
    "RPUSHX l a",
    "RPUSH l a b a c a d",
    "LPUSHX l z",
    "LREM l 2 a",
    "LRANGE l 0 -1",
    "LREM l -1 a",
    "LRANGE l 0 -1",
    "LREM l 0 zz",
    "LREM l x a",
    "LREM nol 1 a",
    "LTRIM l 1 2",
    "LRANGE l 0 -1",
    "LTRIM l 5 1",
    "EXISTS l",
    "LTRIM nol 0 1",
    "LTRIM l x 1",
    "RPUSH l 1 2 3",
    "BLPOP l 0",
    "BRPOP l 0",
    "BLPOP nol l 0.5",
    "BLPOP l -1",
    "BLPOP l x",
    "BLPOP l inf",
    "BLPOP nol 0.01",
    "BRPOP nol 0.01",
    "BLPOP nol 1e-400",
    "LPUSH",
    "LPUSH l",
    "BLPOP l",
    "TYPE l",
    "SET s v",
    "LPUSH s a",
    "RPUSH s a",
    "LPOP s",
    "LLEN s",
    "LRANGE s 0 1",
    "LINDEX s 0",
    "LREM s 1 a",
    "LTRIM s 0 1",
    "BLPOP s 0.01",
    "BLPOP nol s 0.01",
    "LPUSHX s a",
    "ZADD z 1 a 2 b 3 c",
    "ZADD z 2 a",
    "ZADD z CH 5 a 0 b 3 c",
    "ZADD z NX 9 a 9 d",
    "ZADD z XX 8 a 8 e",
    "ZADD z GT 1 a 10 b",
    "ZADD z LT 1 a 20 b",
    "ZADD z GT CH 100 c 0 d",
    "ZADD z INCR 2.5 a",
    "ZADD z INCR -inf a",
    "ZADD z INCR +inf a",
    "ZADD z NX INCR 1 a",
    "ZADD z XX INCR 1 nope",
    "ZADD z INCR 1 a 2 b",
    "ZADD z NX XX 1 a",
    "ZADD z GT LT 1 a",
    "ZADD z NX GT 1 a",
    "ZADD z 1",
    "ZADD z 1 a 2",
    "ZADD z x a",
    "ZADD z nan a",
    "ZADD z 1e400 a",
    "ZADD z -1e400 a",
    "ZADD z 1.5e3 f 0.1 g -0 h 0 i",
    "ZADD noz XX 1 a",
    "ZADD noz XX INCR 1 a",
    "EXISTS noz",
    "ZRANGE z 0 -1 WITHSCORES",
    "ZRANGE z 0 -1",
    "ZRANGE z 1 2 REV",
    "ZRANGE z -3 -1 WITHSCORES",
    "ZRANGE z 5 1",
    "ZRANGE z (1 +inf BYSCORE",
    "ZRANGE z +inf -inf BYSCORE REV WITHSCORES",
    "ZRANGE z -inf +inf BYSCORE LIMIT 1 2",
    "ZRANGE z -inf +inf BYSCORE LIMIT -1 2",
    "ZRANGE z -inf +inf BYSCORE LIMIT 1 -1 WITHSCORES",
    "ZRANGE z -inf +inf BYSCORE LIMIT 99 1",
    "ZRANGE z 0 -1 LIMIT 1 2",
    "ZRANGE z 0 -1 LIMIT 0 -1",
    "ZRANGE z 0 -1 LIMIT 1",
    "ZRANGE z 0 -1 NOPE",
    "ZRANGE z x 1",
    "ZRANGE z a b BYSCORE",
    "ZRANGE noz 0 -1",
    "ZRANGE noz 0 -1 WITHSCORES",
    "ZRANGEBYSCORE z -inf +inf",
    "ZRANGEBYSCORE z 1 (100 WITHSCORES",
    "ZRANGEBYSCORE z (0 10 LIMIT 0 2",
    "ZRANGEBYSCORE z 0 10 REV",
    "ZRANGEBYSCORE z 0 10 LIMIT x 1",
    "ZRANGEBYSCORE z x 10",
    "ZRANGEBYSCORE noz 0 1",
    "ZREVRANGE z 0 0 WITHSCORES",
    "ZREVRANGE z 0 -1",
    "ZREVRANGE z -2 -1 WITHSCORES",
    "ZREVRANGE z 5 1",
    "ZREVRANGE z 0 -1 REV",
    "ZREVRANGE z 0 -1 BYSCORE",
    "ZREVRANGE z 0 -1 LIMIT 0 1",
    "ZREVRANGE z 0 -1 LIMIT 0 -1 WITHSCORES",
    "ZREVRANGE z 0 -1 WITHSCORES WITHSCORES",
    "ZREVRANGE z x 1",
    "ZREVRANGE z 0",
    "ZREVRANGE noz 0 0 WITHSCORES",
    "ZREVRANGEBYSCORE z +inf -inf",
    "ZREVRANGEBYSCORE z (100 1 WITHSCORES",
    "ZREVRANGEBYSCORE z 10 (0 LIMIT 0 2",
    "ZREVRANGEBYSCORE z 10 (0 LIMIT 1 -1 WITHSCORES",
    "ZREVRANGEBYSCORE z 0 10",
    "ZREVRANGEBYSCORE z 10 0 REV",
    "ZREVRANGEBYSCORE z 10 0 BYSCORE",
    "ZREVRANGEBYSCORE z x 0",
    "ZREVRANGEBYSCORE z 10 0 LIMIT 0",
    "ZREVRANGEBYSCORE noz 1 0",
    "ZRANGE z 0 -1 REV WITHSCORES",
    "ZRANGE z 0 0 REV REV",
    "ZRANGE z 10 (0 BYSCORE REV LIMIT 0 2 WITHSCORES",
    "ZRANGE z 0 10 BYSCORE BYSCORE",
    "ZREVRANK z a",
    "ZREVRANK z h",
    "ZREVRANK z zz",
    "ZREVRANK noz a",
    "ZREVRANK z",
    "ZCOUNT z -inf +inf",
    "ZCOUNT z (0 1.5e3",
    "ZCOUNT z 0 x",
    "ZCOUNT noz 0 1",
    "ZCARD z",
    "ZCARD noz",
    "ZSCORE z a",
    "ZSCORE z g",
    "ZSCORE z f",
    "ZSCORE z zz",
    "ZSCORE noz a",
    "ZRANK z a",
    "ZRANK z h",
    "ZRANK z i",
    "ZRANK z zz",
    "ZRANK noz a",
    "ZREM z a zz",
    "ZREM noz a",
    "ZREMRANGEBYSCORE z (0 1",
    "ZREMRANGEBYSCORE z x 1",
    "ZREMRANGEBYSCORE noz 0 1",
    "ZRANGE z 0 -1 WITHSCORES",
    "ZREMRANGEBYSCORE z -inf +inf",
    "EXISTS z",
    "TYPE z",
    "ZADD z2 1 a",
    "TYPE z2",
    "ZADD s 1 a",
    "ZREM s a",
    "ZCARD s",
    "ZSCORE s a",
    "ZRANK s a",
    "ZCOUNT s 0 1",
    "ZRANGE s 0 1",
    "ZRANGEBYSCORE s 0 1",
    "ZREVRANGE s 0 0 WITHSCORES",
    "ZREVRANGEBYSCORE s 1 0",
    "ZREVRANK s a",
    "ZREMRANGEBYSCORE s 0 1",
    "LPUSH z2 a",
    "GET z2",
    "RPUSH l2 a",
    "GET l2",
    "HSET l2 f v",
    "ZADD l2 1 a",
    "ZCARD l2",
    "PEXPIRE l2 100000",
    "PEXPIRE z2 100000",
    "DEL l2 z2",
    // Scripts: python-redis-lock's signal and redis-semaphore's set.
    "EVAL redis.call('del',KEYS[1]);redis.call('lpush',KEYS[1],1);redis.call('pexpire',KEYS[1],100000);return(redis.call('llen',KEYS[1])) 1 sig",
    "EVAL return(redis.call('blpop',KEYS[1],0)) 1 sig",
    "EVAL return(redis.call('rpop',KEYS[1])) 1 sig",
    "EVAL return(redis.call('lpop',KEYS[1],3)) 1 sig",
    "EVAL redis.call('zremrangebyscore',KEYS[1],'-inf',10);redis.call('zadd',KEYS[1],20,'id1');return(redis.call('zcard',KEYS[1])) 1 sem",
    "EVAL return(redis.call('zrange',KEYS[1],0,-1,'WITHSCORES')) 1 sem",
    "EVAL return(redis.call('zscore',KEYS[1],'id1')) 1 sem",
    "EVAL return(redis.call('zrank',KEYS[1],'none')) 1 sem",
    "EVAL redis.setresp(3);return(redis.call('zrange',KEYS[1],0,-1,'WITHSCORES')) 1 sem",
    "EVAL redis.setresp(3);return(redis.call('zscore',KEYS[1],'id1')) 1 sem",
    "EVAL return(redis.call('zrevrange',KEYS[1],0,0,'WITHSCORES')) 1 sem",
    "EVAL return(redis.call('zrevrange',KEYS[1],0,0,'WITHSCORES')[2]) 1 sem",
    "EVAL redis.setresp(3);return(redis.call('zrevrange',KEYS[1],0,0,'WITHSCORES')) 1 sem",
    "EVAL return(redis.call('zrevrangebyscore',KEYS[1],'+inf','-inf','WITHSCORES','LIMIT',0,1)) 1 sem",
    "EVAL redis.setresp(3);return(redis.call('lpop',KEYS[1],2)) 1 nosuch",
];

async fn fixed_cases(proto: u8) {
    let servers = start_redis(1);
    let node_addr = start_sim_node().await;
    let mut r = Raw::connect(&servers[0].addr()).await;
    let mut n = Raw::connect(&node_addr).await;
    let ctx = format!("fixed cases, protocol {proto}");
    if proto == 3 {
        r.call(&words("HELLO 3")).await;
        n.call(&words("HELLO 3")).await;
    }
    for c in FIXED {
        // The scripts keep their spaces; everything else splits on them.
        let args = match c.strip_prefix("EVAL ") {
            Some(rest) => {
                let (script, tail) = rest.rsplit_once(' ').unwrap();
                let (script, numkeys) = script.rsplit_once(' ').unwrap();
                vec![b"EVAL".to_vec(), script.into(), numkeys.into(), tail.into()]
            }
            None => words(c),
        };
        both(&mut r, &mut n, &args, &ctx).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_zset_fixed_cases_resp2() {
    common::require_redis("list_and_zset_fixed_cases_resp2");
    fixed_cases(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_zset_fixed_cases_resp3() {
    common::require_redis("list_and_zset_fixed_cases_resp3");
    fixed_cases(3).await;
}

/// One server's connections for the blocking cases.
struct Clients {
    c: Vec<Raw>,
}

impl Clients {
    async fn open(addr: &str, n: usize) -> Clients {
        let mut c = Vec::new();
        for _ in 0..n {
            c.push(Raw::connect(addr).await);
        }
        Clients { c }
    }
}

/// The blocking cases on one server: every reply, in the order the test
/// reads them, as text (the same script runs against both servers).
async fn blocking_script(addr: &str) -> Vec<String> {
    let mut k = Clients::open(addr, 4).await;
    let mut out = Vec::new();
    let short = Duration::from_millis(300);
    let mut note = |r: Option<Vec<u8>>| out.push(r.map_or("(no reply)".into(), |r| text(&r)));
    // A waiter, then a push of two: the pusher's reply counts both.
    k.c[0].send(&words("BLPOP q 5")).await;
    note(k.c[0].reply(short).await);
    note(Some(k.c[1].call(&words("RPUSH q a b")).await));
    note(k.c[0].reply(Duration::from_secs(5)).await);
    note(Some(k.c[1].call(&words("LRANGE q 0 -1")).await));
    // Three waiters, first come first served; one on two keys.
    k.c[0].send(&words("BRPOP q2 5")).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    k.c[2].send(&words("BLPOP q3 q2 5")).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    k.c[3].send(&words("BLPOP q2 5")).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    note(Some(k.c[1].call(&words("RPUSH q2 x y")).await));
    note(k.c[0].reply(Duration::from_secs(5)).await);
    note(k.c[2].reply(Duration::from_secs(5)).await);
    note(k.c[3].reply(short).await);
    note(Some(k.c[1].call(&words("LPUSH q2 z")).await));
    note(k.c[3].reply(Duration::from_secs(5)).await);
    note(Some(k.c[1].call(&words("EXISTS q q2")).await));
    // A push from a script serves a waiter after the script.
    k.c[0].send(&words("BLPOP q4 5")).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let script = "redis.call('rpush',KEYS[1],'s1','s2');return(redis.call('llen',KEYS[1]))";
    let eval = vec![
        b"EVAL".to_vec(),
        script.into(),
        b"1".to_vec(),
        b"q4".to_vec(),
    ];
    note(Some(k.c[1].call(&eval).await));
    note(k.c[0].reply(Duration::from_secs(5)).await);
    note(Some(k.c[1].call(&words("LRANGE q4 0 -1")).await));
    // Timeouts: a null array after the time, none before.
    k.c[0].send(&words("BLPOP none 0.2")).await;
    note(k.c[0].reply(Duration::from_millis(50)).await);
    note(k.c[0].reply(Duration::from_secs(5)).await);
    // A waiter whose connection closes takes nothing.
    k.c[2].send(&words("BLPOP q5 0")).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(k.c.remove(2));
    tokio::time::sleep(Duration::from_millis(100)).await;
    note(Some(k.c[1].call(&words("RPUSH q5 kept")).await));
    note(Some(k.c[1].call(&words("LRANGE q5 0 -1")).await));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_pops_block_and_wake_as_redis_does() {
    common::require_redis("blocking_pops_block_and_wake_as_redis_does");
    let servers = start_redis(1);
    let node_addr = start_sim_node().await;
    let redis = blocking_script(&servers[0].addr()).await;
    let node = blocking_script(&node_addr).await;
    assert_eq!(redis, node);
    // The script really saw each case (not all silence).
    assert_eq!(redis[0], "(no reply)");
    assert_eq!(redis[2], "*2\r\n$1\r\nq\r\n$1\r\na\r\n");
    assert!(
        redis.iter().filter(|r| r.as_str() == "*-1\r\n").count() == 1,
        "{redis:?}"
    );
}

// ---------------------------------------------------------------------------
// Random sequences

const KEYS: &[&str] = &["l1", "l2", "z1", "z2", "s"];
const ELEMS: &[&str] = &["a", "b", "c", "", "1", "x y"];
const SCORES: &[&str] = &[
    "0", "1", "-1", "2.5", "1e3", "-inf", "+inf", "0.1", "x", "(1",
];
const INDEXES: &[&str] = &["0", "1", "-1", "2", "-3", "10", "-10", "x"];

fn pick<'a>(rng: &mut ChaCha8Rng, from: &[&'a str]) -> &'a str {
    from[rng.random_range(0..from.len())]
}

/// One random command over the keys.
fn random_command(rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    // Mostly keys of the command's own type; now and then any.
    let any = rng.random_range(0..8) == 0;
    let lk = if any {
        pick(rng, KEYS)
    } else {
        pick(rng, &KEYS[..2])
    };
    let zk = if any {
        pick(rng, KEYS)
    } else {
        pick(rng, &KEYS[2..4])
    };
    let k = pick(rng, KEYS);
    let e = pick(rng, ELEMS);
    let i = pick(rng, INDEXES);
    let j = pick(rng, INDEXES);
    let s = pick(rng, SCORES);
    let t = pick(rng, SCORES);
    let parts: Vec<&str> = match rng.random_range(0..22) {
        0 => vec!["LPUSH", lk, e, pick(rng, ELEMS)],
        1 => vec!["RPUSH", lk, e, pick(rng, ELEMS), pick(rng, ELEMS)],
        2 => vec!["LPOP", lk],
        3 => vec!["RPOP", lk, i],
        4 => vec!["LRANGE", lk, i, j],
        5 => vec!["LLEN", lk],
        6 => vec!["LREM", lk, i, e],
        7 => vec!["LTRIM", lk, i, j],
        8 => vec!["LINDEX", lk, i],
        9 => vec!["BLPOP", lk, pick(rng, KEYS), "0.01"],
        10 => vec!["ZADD", zk, s, e],
        11 => vec![
            "ZADD",
            zk,
            pick(rng, &["NX", "XX", "GT", "LT", "CH", "INCR"]),
            s,
            e,
        ],
        12 => vec!["ZREM", zk, e],
        13 => vec![
            "ZRANGE",
            zk,
            i,
            j,
            pick(rng, &["WITHSCORES", "REV", "LIMIT"]),
        ],
        14 => vec!["ZRANGE", zk, s, t, "BYSCORE"],
        15 => vec!["ZRANGEBYSCORE", zk, s, t, "WITHSCORES"],
        16 => vec!["ZREMRANGEBYSCORE", zk, s, t],
        17 => vec!["ZCOUNT", zk, s, t],
        18 => vec!["ZSCORE", zk, e],
        19 => vec!["ZRANK", zk, e],
        20 if rng.random_range(0..3) == 0 => vec!["SET", k, e],
        20 => vec!["DEL", k],
        _ => vec!["TYPE", k],
    };
    parts.iter().map(|p| p.as_bytes().to_vec()).collect()
}

async fn random_sequence(seed: u64, steps: usize) {
    let servers = start_redis(1);
    let node_addr = start_sim_node().await;
    let mut r = Raw::connect(&servers[0].addr()).await;
    let mut n = Raw::connect(&node_addr).await;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Each command answered other than by an error, and the outcomes that
    // show the sequence reached the interesting states.
    let mut answered = std::collections::BTreeSet::new();
    let mut seen = std::collections::BTreeSet::new();
    for step in 0..steps {
        // Each protocol in turn, every 250 steps, and now and then at random.
        if step % 250 == 0 || rng.random_range(0..50) == 0 {
            let three = (step / 250) % 2 == 1 || rng.random_bool(0.5) && step % 250 != 0;
            let hello = if three { "HELLO 3" } else { "HELLO 2" };
            r.call(&words(hello)).await;
            n.call(&words(hello)).await;
        }
        let c = random_command(&mut rng);
        let reply = text(&both(&mut r, &mut n, &c, &format!("seed {seed} step {step}")).await);
        let name = text(&c[0]);
        if !reply.starts_with('-') {
            answered.insert(name.clone());
        }
        for (what, hit) in [
            ("wrongtype", reply.starts_with("-WRONGTYPE")),
            ("null array", reply == "*-1\r\n"),
            (
                "popped by BLPOP",
                name == "BLPOP" && reply.starts_with("*2\r\n"),
            ),
            (
                "a RESP3 double",
                reply.contains("\r\n,") || reply.starts_with(','),
            ),
            (
                "a list of 3",
                name == "LRANGE" && reply.starts_with("*3\r\n"),
            ),
        ] {
            if hit {
                seen.insert(what);
            }
        }
    }
    for must in [
        "wrongtype",
        "null array",
        "popped by BLPOP",
        "a RESP3 double",
        "a list of 3",
    ] {
        assert!(
            seen.contains(must),
            "seed {seed} never saw {must}: {seen:?}"
        );
    }
    assert!(
        answered.len() >= 20,
        "seed {seed}: only these answered: {answered:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_zset_random_sequence_seed_1() {
    common::require_redis("list_and_zset_random_sequence_seed_1");
    random_sequence(1, 1500).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_zset_random_sequence_seed_2() {
    common::require_redis("list_and_zset_random_sequence_seed_2");
    random_sequence(2, 1500).await;
}

/// `KEYS`'s glob against Redis's, each answer sorted (Redis's order is its
/// hash table's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_patterns_match_as_redis_matches_them() {
    common::require_redis("keys_patterns_match_as_redis_matches_them");
    let servers = start_redis(1);
    let node_addr = start_sim_node().await;
    let mut r = Raw::connect(&servers[0].addr()).await;
    let mut n = Raw::connect(&node_addr).await;
    for k in [
        "lock:a",
        "lock:b",
        "lock:ab",
        "lock-signal:a",
        "x*y",
        "x?y",
        "x[y",
        "Lock:a",
        "lockz",
    ] {
        let set = vec![b"SET".to_vec(), k.as_bytes().to_vec(), b"1".to_vec()];
        both(&mut r, &mut n, &set, "keys").await;
    }
    let patterns = [
        "*",
        "lock:*",
        "lock:?",
        "lock*",
        "lock[:z]*",
        "lock[^:]*",
        "lock[a-z]",
        "[Ll]ock:a",
        "x\\*y",
        "x\\?y",
        "x[*]y",
        "x[y",
        "*a",
        "lock:[a-b]",
        "lock:[b-a]",
        "nomatch*",
        "",
    ];
    for p in patterns {
        let args = vec![b"KEYS".to_vec(), p.as_bytes().to_vec()];
        let sorted = |raw: Vec<u8>| {
            let mut lines: Vec<String> = text(&raw).split("\r\n").map(String::from).collect();
            let head = lines.remove(0);
            let mut keys: Vec<String> = lines
                .chunks(2)
                .filter(|c| c.len() == 2)
                .map(|c| c[1].clone())
                .collect();
            keys.sort();
            format!("{head} {keys:?}")
        };
        let (a, b) = (sorted(r.call(&args).await), sorted(n.call(&args).await));
        assert_eq!(a, b, "KEYS {p}");
    }
}

/// A master made a replica answers its blocked clients `UNBLOCKED` and
/// closes their connections (Redis 7.0's `disconnectAllBlockedClients`).
async fn unblocked_by_replicaof(addr: &str) -> (String, bool) {
    let mut a = Raw::connect(addr).await;
    let mut b = Raw::connect(addr).await;
    a.send(&words("BLPOP q 0")).await;
    assert!(
        a.reply(Duration::from_millis(200)).await.is_none(),
        "blocked"
    );
    b.call(&words("REPLICAOF 127.0.0.1 1")).await;
    let reply = a
        .reply(Duration::from_secs(5))
        .await
        .map_or("(none)".into(), |r| text(&r));
    let mut rest = [0u8; 8];
    let closed = matches!(
        tokio::time::timeout(Duration::from_secs(5), a.s.read(&mut rest)).await,
        Ok(Ok(0) | Err(_))
    );
    b.call(&words("REPLICAOF NO ONE")).await;
    (reply, closed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_master_made_replica_unblocks_its_waiters() {
    common::require_redis("a_master_made_replica_unblocks_its_waiters");
    let servers = start_redis(1);
    let node_addr = start_sim_node().await;
    let redis = unblocked_by_replicaof(&servers[0].addr()).await;
    let node = unblocked_by_replicaof(&node_addr).await;
    assert!(redis.0.starts_with("-UNBLOCKED"), "{redis:?}");
    assert!(redis.1, "redis-server closed the connection");
    assert_eq!(redis, node);
}
