//! Differential test of Lua scripting: the same scripts through `EVAL`,
//! `EVALSHA` and `SCRIPT` against the project's node and a real
//! `redis-server` (7.0) must give byte-identical replies.
//!
//! - [`fixed_scripts_match_redis`]: a table of scripts covering every
//!   conversion both ways (integers, floats truncated, strings, nil as false,
//!   arrays cut at the first nil, nested tables, status and error tables,
//!   booleans), `redis.call` and `redis.pcall` errors (unknown command, wrong
//!   arity, bad argument types, commands scripts may not call, a command's
//!   own error), raised errors and compile errors, the sandbox (globals,
//!   missing libraries), the `redis.*` helpers, the distlock page's release
//!   script typed as a user types it, `EVALSHA` after `SCRIPT LOAD`,
//!   `NOSCRIPT`, `SCRIPT EXISTS|FLUSH`.
//! - [`resp3_conversions_match_redis`]: `redis.setresp(3)` (replies as RESP3
//!   inside the script, booleans returned as RESP3 booleans) and the `map`
//!   and `double` tables, over RESP2 and over RESP3 connections.
//! - [`random_scripts_match_redis`]: [`RANDOM_SCRIPTS`] scripts generated from
//!   a seeded ChaCha generator by a small grammar (`redis.call`/`pcall` of
//!   GET/SET/DEL/INCR/PEXPIRE/PTTL/EXISTS over a few keys, conditionals,
//!   returns of random Lua values including tables with holes, raised
//!   errors, `math.random`). `PTTL` values are only compared by sign (a
//!   script tests `pttl > 0`), as they differ by design between two servers;
//!   expiries are days long or already past.
//!
//! `DIFFERENTIAL_SCRIPT_SEEDS=2,3` runs other seeds (default: 1);
//! `DIFFERENTIAL_SCRIPT_SHOW=1` (with `--nocapture`) prints every random
//! script and its reply.
//!
//! Not compared: Redis's `cjson`, `bit`, `struct`, `cmsgpack` libraries (the
//! node does not provide them), `pairs(_G)` (the node's globals are a
//! read-only view), runaway scripts (the node stops them after its own
//! instruction limit, Redis answers BUSY to others: see tests at the end,
//! which run against the node alone).

use crate::common;

use common::{start_redis, start_sim_node, Client};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redlock_proto::resp::Frame;
use std::time::{Duration, Instant};

/// Random scripts compared per seed.
const RANDOM_SCRIPTS: usize = 300;

struct Pair {
    redis: Client,
    node: Client,
    _server: Vec<common::RedisServer>,
}

impl Pair {
    async fn new() -> Pair {
        let server = start_redis(1);
        let node_addr = start_sim_node().await;
        Pair {
            redis: Client::connect(&server[0].addr()).await,
            node: Client::connect(&node_addr).await,
            _server: server,
        }
    }

    /// Sends `args` to both; panics with both replies if they differ.
    async fn both(&mut self, args: &[&[u8]]) -> Frame {
        let r = self.redis.call(args).await;
        let n = self.node.call(args).await;
        assert_eq!(
            r,
            n,
            "replies differ\n  command: {}\n  redis-server: {r:?}\n  node:         {n:?}",
            show(args)
        );
        r
    }

    async fn eval(&mut self, script: &str, keys: &[&str], argv: &[&str]) -> Frame {
        let n = keys.len().to_string();
        let mut args: Vec<&[u8]> = vec![b"EVAL", script.as_bytes(), n.as_bytes()];
        args.extend(keys.iter().map(|k| k.as_bytes()));
        args.extend(argv.iter().map(|a| a.as_bytes()));
        self.both(&args).await
    }
}

fn show(args: &[&[u8]]) -> String {
    args.iter()
        .map(|a| format!("{:?}", String::from_utf8_lossy(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `(script, keys, argv)` run in order on both servers.
const FIXED: &[(&str, &[&str], &[&str])] = &[
    // Lua -> reply
    ("return 1", &[], &[]),
    ("return -7", &[], &[]),
    ("return 3.99", &[], &[]),
    ("return -3.5", &[], &[]),
    ("return 0.5", &[], &[]),
    ("return 1e15", &[], &[]),
    ("return 'hello'", &[], &[]),
    ("return ''", &[], &[]),
    ("return true", &[], &[]),
    ("return false", &[], &[]),
    ("return nil", &[], &[]),
    ("return", &[], &[]),
    ("return {}", &[], &[]),
    ("return {1, 2, 3}", &[], &[]),
    ("return {1, 2, nil, 3}", &[], &[]),
    ("return {nil, 1}", &[], &[]),
    ("return {1.5, -3.5, 3.99, 'a', true, false, {ok='fine'}}", &[], &[]),
    ("return {1, {2, {3, 'x'}}, 'y'}", &[], &[]),
    ("return {ok='FINE'}", &[], &[]),
    ("return {ok='two\\r\\nlines'}", &[], &[]),
    ("return {err='My error'}", &[], &[]),
    ("return {err='nospace'}", &[], &[]),
    ("return {err='a\\nb'}", &[], &[]),
    ("return {err=5}", &[], &[]),
    ("return {ok=5}", &[], &[]),
    ("return {1, {err='inner'}, 3}", &[], &[]),
    ("return {1, {ok='inner'}, 3}", &[], &[]),
    ("return {x=1, y=2}", &[], &[]),
    ("return {1, 2, x=3}", &[], &[]),
    ("return print", &[], &[]),
    ("return tostring", &[], &[]),
    ("return coroutine.create(function() end)", &[], &[]),
    ("return redis.status_reply('GOOD')", &[], &[]),
    ("return redis.error_reply('MYCODE went wrong')", &[], &[]),
    ("return redis.error_reply('-DASHED x')", &[], &[]),
    ("return redis.error_reply('')", &[], &[]),
    ("return redis.error_reply(5)", &[], &[]),
    ("return redis.status_reply()", &[], &[]),
    ("return redis.sha1hex('abc')", &[], &[]),
    ("return redis.sha1hex('')", &[], &[]),
    ("return redis.sha1hex(12)", &[], &[]),
    ("return redis.sha1hex()", &[], &[]),
    ("redis.log(redis.LOG_WARNING, 'hello'); return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}", &[], &[]),
    ("redis.log(9, 'x')", &[], &[]),
    ("redis.log('a', 'x')", &[], &[]),
    ("redis.log(1)", &[], &[]),
    ("return KEYS", &["a", "b"], &["c", "d", "e"]),
    ("return ARGV", &["a"], &["c", "", "e"]),
    ("return {#KEYS, #ARGV}", &[], &[]),
    ("return KEYS[3]", &["a"], &[]),
    // reply -> Lua
    ("return redis.call('set', KEYS[1], ARGV[1])", &["s1"], &["v1"]),
    ("return type(redis.call('set', KEYS[1], ARGV[1]))", &["s1"], &["v1"]),
    ("return redis.call('set', KEYS[1], ARGV[1]).ok", &["s1"], &["v1"]),
    ("return redis.call('get', KEYS[1])", &["s1"], &[]),
    ("return redis.call('get', 'missing')", &[], &[]),
    ("return tostring(redis.call('get', 'missing'))", &[], &[]),
    ("return type(redis.call('get', 'missing'))", &[], &[]),
    ("return redis.call('incr', 'counter')", &[], &[]),
    ("return type(redis.call('incr', 'counter'))", &[], &[]),
    ("return redis.call('exists', 's1', 'missing', 's1')", &[], &[]),
    ("return redis.call('set', 'fl', 3.5)", &[], &[]),
    ("return redis.call('get', 'fl')", &[], &[]),
    ("return redis.call('set', 'fl', 0.1)", &[], &[]),
    ("return redis.call('get', 'fl')", &[], &[]),
    ("return redis.call('set', 'fl', 1e20)", &[], &[]),
    ("return redis.call('get', 'fl')", &[], &[]),
    ("return redis.call('set', 'fl', 42)", &[], &[]),
    ("return redis.call('get', 'fl')", &[], &[]),
    ("return redis.call('ping')", &[], &[]),
    ("return redis.call('PING', 'hi')", &[], &[]),
    ("return redis.call('set', 'px', 'v', 'PX', 100000000)", &[], &[]),
    ("return redis.call('pttl', 'px') > 0", &[], &[]),
    ("return redis.call('pttl', 'missing')", &[], &[]),
    ("return redis.call('pexpire', 'px', 0)", &[], &[]),
    ("return redis.call('get', 'px')", &[], &[]),
    // errors from commands
    ("return redis.call('incr', 's1')", &[], &[]),
    ("return redis.pcall('incr', 's1')", &[], &[]),
    ("local r = redis.pcall('incr', 's1'); return r.err", &[], &[]),
    ("return redis.call('nosuch')", &[], &[]),
    ("return redis.pcall('nosuch', 'x')", &[], &[]),
    ("return redis.call('get')", &[], &[]),
    ("return redis.pcall('get', 'a', 'b')", &[], &[]),
    ("return redis.call('get', {})", &[], &[]),
    ("return redis.call('get', nil)", &[], &[]),
    ("return redis.call('get', true)", &[], &[]),
    ("return redis.pcall('get', {})", &[], &[]),
    ("return redis.call()", &[], &[]),
    ("return redis.call('eval', 'return 1', '0')", &[], &[]),
    ("return redis.call('evalsha', 'x', '0')", &[], &[]),
    ("return redis.call('script', 'flush')", &[], &[]),
    ("return redis.call('set', 'k', 'v', 'px', 'bad')", &[], &[]),
    ("return redis.call('pexpire', 'k', 'bad')", &[], &[]),
    ("\n\nreturn redis.call('nosuch')", &[], &[]),
    ("local ok, e = pcall(function() return redis.call('nosuch') end); return {tostring(ok), e}", &[], &[]),
    ("local ok, e = pcall(redis.call, 'incr', 's1'); return {tostring(ok), e}", &[], &[]),
    ("local ok, e = pcall(error, 'plain'); return {tostring(ok), e}", &[], &[]),
    ("local ok, e = pcall(error, {err='tbl'}); return {tostring(ok), e}", &[], &[]),
    ("local ok, e = pcall(function() local x = nil; return x.y end); return {tostring(ok), e}", &[], &[]),
    // raised errors
    ("error('boom')", &[], &[]),
    ("error('boom', 0)", &[], &[]),
    ("error({err='CUSTOM failure'})", &[], &[]),
    ("error({err='CUSTOM'})", &[], &[]),
    ("error(42)", &[], &[]),
    ("local x = nil; return x.field", &[], &[]),
    ("return 'x' + 1", &[], &[]),
    ("return #nil", &[], &[]),
    ("local t = setmetatable({}, {__index = function() error('deep') end}); return t.x", &[], &[]),
    ("\nlocal a = 1\nerror('line three')", &[], &[]),
    ("return redis.error_reply('E1') .. 'x'", &[], &[]),
    // compile errors
    ("return 1 +", &[], &[]),
    ("if then", &[], &[]),
    ("return 'unfinished", &[], &[]),
    ("x = = 1", &[], &[]),
    // sandbox
    ("x = 5", &[], &[]),
    ("return y", &[], &[]),
    ("return os", &[], &[]),
    ("return io", &[], &[]),
    ("return require", &[], &[]),
    ("return dofile", &[], &[]),
    ("return loadfile", &[], &[]),
    ("return debug", &[], &[]),
    ("return getfenv", &[], &[]),
    ("return _G.nothing", &[], &[]),
    ("KEYS = {}", &[], &[]),
    ("redis = nil", &[], &[]),
    ("string.foo = 1", &[], &[]),
    ("redis.call = nil", &[], &[]),
    ("rawset(_G, 'z', 1)", &[], &[]),
    ("local f = loadstring('w = 1'); f()", &[], &[]),
    ("return loadstring('return 1 + 1')()", &[], &[]),
    ("local t = {}; t.x = 1; return t.x", &[], &[]),
    ("return _VERSION", &[], &[]),
    ("return string.format('%d-%s', 7, 'x')", &[], &[]),
    ("return ('abc'):upper()", &[], &[]),
    ("return table.concat({'a', 'b'}, ',')", &[], &[]),
    ("return math.floor(7.9)", &[], &[]),
    ("return tonumber('0x10')", &[], &[]),
    ("return tostring(1/3)", &[], &[]),
    ("return unpack({1, 2})", &[], &[]),
    ("return select('#', 1, 2, 3)", &[], &[]),
    // math.random: Redis's rand48, from the same state on both fresh servers
    ("return {math.random(1000000), math.random(1000000), math.random(5, 9)}", &[], &[]),
    ("return math.random() * 1000000", &[], &[]),
    ("math.randomseed(7); return {math.random(1000000), math.random(1000000)}", &[], &[]),
    ("return math.random(0)", &[], &[]),
    ("return math.random(3, 1)", &[], &[]),
    ("return math.random('x')", &[], &[]),
    ("return math.random(1, 2, 3)", &[], &[]),
    ("local r = math.random; return r(0)", &[], &[]),
    ("return redis.setresp(5)", &[], &[]),
    ("redis.setresp(2); return redis.call('get', 'missing')", &[], &[]),
    // the distlock page's release script, typed as a user types it
    (r#"if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end"#, &["lk"], &["tok"]),
    ("return redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', 30000)", &["lk"], &["tok"]),
    (r#"if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end"#, &["lk"], &["other"]),
    (r#"if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end"#, &["lk"], &["tok"]),
    (r#"if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end"#, &[], &[]),
    // Redisson's release: delete, then publish the unlock to the channel
    // (no subscriber: 0), and Spring Integration 5.1's UNLINK
    ("redis.call('hset', KEYS[1], 'o', 1); redis.call('del', KEYS[1]); return redis.call('publish', KEYS[2], ARGV[1])", &["rl", "redisson_lock__channel:{rl}"], &["0"]),
    ("return redis.call('publish', 'ch')", &[], &[]),
    ("redis.call('set', KEYS[1], 'x'); return redis.call('unlink', KEYS[1], 'nokey')", &["ul"], &[]),
];

/// Scripts of Redis 7's RESP3 conversions (`redis.setresp(3)` and the
/// `map`/`double` tables), run over RESP2 and over RESP3 (`HELLO 3`).
const RESP3_SCRIPTS: &[&str] = &[
    "return {map={a=1}}",
    "return {map={a={1,2}, b={ok='fine'}, c='x'}}",
    "return {map={}}",
    "return {double=3.5}",
    "return {double=0.1}",
    "return {double=-2}",
    "return {double=1/0}",
    "return {double='x'}",
    "return {1, {double=2.5}, {map={k='v'}}}",
    "redis.setresp(3); return true",
    "redis.setresp(3); return false",
    "redis.setresp(3); return {true, false, 1}",
    "redis.setresp(3); redis.setresp(2); return false",
    "redis.call('hset', KEYS[1], 'f1', 'a', 'f2', 'b', 'f3', 'c'); redis.setresp(3); return redis.call('hgetall', KEYS[1])",
    "redis.setresp(3); local r = redis.call('hgetall', KEYS[1]); return {type(r), type(r.map), r.map.f2}",
    "redis.setresp(3); return type(redis.call('hgetall', 'missing').map)",
    "redis.setresp(3); return redis.call('get', 'missing') == nil",
    "redis.setresp(3); return {redis.call('get', 'missing'), 1}",
    "redis.setresp(3); return redis.call('hexists', KEYS[1], 'f1')",
    "redis.setresp(3); return redis.call('set', 'k', 'v')",
    "redis.setresp(3); return redis.pcall('incr', KEYS[1])",
    "local r = redis.call('hgetall', KEYS[1]); return type(r.map)",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resp3_conversions_match_redis() {
    common::require_redis("resp3_conversions_match_redis");
    let mut p = Pair::new().await;
    for protocol in [&b"2"[..], b"3"] {
        // (HELLO's reply holds the client id, which differs by design)
        p.redis.call(&[b"HELLO", protocol]).await;
        p.node.call(&[b"HELLO", protocol]).await;
        for script in RESP3_SCRIPTS {
            p.eval(script, &["h"], &[]).await;
        }
    }
    eprintln!(
        "RESP3 conversions: {} scripts compared under RESP2 and RESP3",
        RESP3_SCRIPTS.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixed_scripts_match_redis() {
    common::require_redis("fixed_scripts_match_redis");
    let mut p = Pair::new().await;
    for (script, keys, argv) in FIXED {
        p.eval(script, keys, argv).await;
    }
    // The built-in client's scripts, by EVAL and EVALSHA.
    use redlock_client::scripts::{sha1_hex, EXTEND, EXTEND_RESURRECT, RELEASE};
    for s in [RELEASE, EXTEND, EXTEND_RESURRECT] {
        p.both(&[b"SCRIPT", b"LOAD", s.as_bytes()]).await;
        let sha = sha1_hex(s.as_bytes());
        for argv in [
            &["tok", "100000000"][..],
            &["tok2", "100000000"],
            &["tok"],
            &[],
        ] {
            let mut args: Vec<&[u8]> = vec![b"EVALSHA", sha.as_bytes(), b"1", b"lk"];
            args.extend(argv.iter().map(|a| a.as_bytes()));
            p.both(&args).await;
            p.both(&[b"GET", b"lk"]).await;
        }
    }
    // SCRIPT LOAD, EVALSHA, NOSCRIPT, EXISTS, FLUSH.
    let body = b"return {KEYS[1], ARGV[1]}";
    let sha = p.both(&[b"SCRIPT", b"LOAD", body]).await;
    let Frame::Bulk(sha) = sha else {
        panic!("SCRIPT LOAD gave {sha:?}")
    };
    p.both(&[b"EVALSHA", &sha, b"1", b"k", b"a"]).await;
    p.both(&[b"EVALSHA", &sha.to_ascii_uppercase(), b"1", b"k", b"a"])
        .await;
    p.both(&[
        b"SCRIPT",
        b"EXISTS",
        &sha,
        b"0000000000000000000000000000000000000000",
    ])
    .await;
    p.both(&[b"SCRIPT", b"LOAD", b"return 1 +"]).await;
    p.both(&[
        b"SCRIPT",
        b"EXISTS",
        b"7ad0c7e8c2d9a1d6a2b6c8a4b5e0f1d2c3b4a596",
    ])
    .await;
    p.both(&[
        b"EVALSHA",
        b"ffffffffffffffffffffffffffffffffffffffff",
        b"0",
    ])
    .await;
    p.both(&[b"EVALSHA", b"short", b"0"]).await;
    p.both(&[b"EVAL", b"return 1", b"2", b"k"]).await;
    p.both(&[b"EVAL", b"return 1", b"-1"]).await;
    p.both(&[b"EVAL", b"return 1", b"x"]).await;
    p.both(&[b"SCRIPT", b"FLUSH"]).await;
    p.both(&[b"SCRIPT", b"EXISTS", &sha]).await;
    p.both(&[b"EVALSHA", &sha, b"1", b"k", b"a"]).await;
    p.both(&[b"EVAL", body, b"1", b"k", b"a"]).await;
    p.both(&[b"EVALSHA", &sha, b"1", b"k", b"a"]).await;
    eprintln!("fixed scripts: {} compared", FIXED.len());
}

/// A random script: statements over results `v1..`, then a return.
struct Gen {
    rng: ChaCha8Rng,
    vars: usize,
}

const VALUES: &[&str] = &[
    "'a'", "'1'", "'10'", "'-3'", "'x y'", "''", "ARGV[1]", "ARGV[2]", "3.7", "-2.5", "12",
];
const KEYS: &[&str] = &["KEYS[1]", "KEYS[2]", "'k3'", "'k4'"];

impl Gen {
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.rng.random_range(0..xs.len())]
    }

    fn call(&mut self) -> String {
        let f = if self.rng.random_bool(0.3) {
            "redis.pcall"
        } else {
            "redis.call"
        };
        let k = self.pick(KEYS);
        let v = self.pick(VALUES);
        match self.rng.random_range(0..11) {
            0 | 1 => format!("{f}('get', {k})"),
            2 => format!("{f}('set', {k}, {v})"),
            3 => format!("{f}('set', {k}, {v}, 'PX', 100000000)"),
            4 => format!("{f}('del', {k})"),
            5 => format!("{f}('incr', {k})"),
            6 => {
                let ms = self.pick(&["100000000", "0", "-5", "'abc'", "86400000"]);
                format!("{f}('pexpire', {k}, {ms})")
            }
            7 => format!("{f}('exists', {k}, {})", self.pick(KEYS)),
            8 => format!("({f}('pttl', {k}) > 0)"),
            9 => {
                let bad = self.pick(&[
                    "'nosuch'",
                    "'get'",
                    "'get', {}",
                    "'eval', 'return 1', 0",
                    "'set', 'x'",
                ]);
                format!("{f}({bad})")
            }
            _ => format!("{f}('set', {k}, {v}, 'NX')"),
        }
    }

    fn var(&mut self) -> String {
        if self.vars == 0 {
            return "nil".into();
        }
        format!("v{}", self.rng.random_range(1..=self.vars))
    }

    fn cond(&mut self) -> String {
        let v = self.var();
        match self.rng.random_range(0..6) {
            0 => format!("{v} == ARGV[1]"),
            1 => format!("{v} == false"),
            2 => format!("type({v}) == 'table'"),
            3 => format!("redis.call('exists', {}) == 1", self.pick(KEYS)),
            4 => format!("tonumber({v}) ~= nil and tonumber({v}) > 2"),
            _ => format!(
                "redis.call('get', {}) == {}",
                self.pick(KEYS),
                self.pick(VALUES)
            ),
        }
    }

    fn value(&mut self, depth: u32) -> String {
        let n = if depth > 1 { 12 } else { 16 };
        match self.rng.random_range(0..n) {
            0 => self.pick(VALUES).to_string(),
            1 => self.pick(&["true", "false", "nil"]).to_string(),
            2 => self
                .pick(&["3.99", "-3.5", "0.5", "-0.9", "1e10", "7"])
                .to_string(),
            3 | 4 => self.var(),
            5 => self.call(),
            6 => format!("{{ok={}}}", self.pick(&["'FINE'", "'x y'", "5"])),
            7 => format!("{{err={}}}", self.pick(&["'MY failure'", "'plain'", "5"])),
            8 => format!(
                "redis.error_reply({})",
                self.pick(&["'E1 bad'", "'oops'", "'-X y'"])
            ),
            9 => format!("redis.status_reply({})", self.pick(&["'OK'", "'QUEUED'"])),
            10 => "math.random(1000)".into(),
            11 => "#KEYS + #ARGV".to_string(),
            _ => {
                let len = self.rng.random_range(0..5);
                let items: Vec<String> = (0..len).map(|_| self.value(depth + 1)).collect();
                format!("{{{}}}", items.join(", "))
            }
        }
    }

    fn stmt(&mut self, depth: u32) -> String {
        match self.rng.random_range(0..if depth > 0 { 4 } else { 6 }) {
            0 | 1 => {
                let c = self.call();
                self.vars += 1;
                format!("local v{} = {c}", self.vars)
            }
            2 => self.call(),
            3 => {
                let e = self.pick(&[
                    "error('script failed')",
                    "error({err='TBL failed'})",
                    "error(7)",
                ]);
                format!("if {} then {e} end", self.cond())
            }
            _ => {
                let c = self.cond();
                // Locals inside branches are not visible after them.
                let saved = self.vars;
                let a = self.stmt(depth + 1);
                self.vars = saved;
                let b = self.stmt(depth + 1);
                self.vars = saved;
                format!("do if {c} then {a} else {b} end end")
            }
        }
    }

    fn script(&mut self) -> String {
        self.vars = 0;
        let mut lines = Vec::new();
        for _ in 0..self.rng.random_range(0..5) {
            let s = self.stmt(0);
            lines.push(s);
        }
        let v = self.value(0);
        lines.push(format!("return {v}"));
        lines.join("\n")
    }
}

async fn run_random(seed: u64) {
    let mut p = Pair::new().await;
    let mut g = Gen {
        rng: ChaCha8Rng::seed_from_u64(seed),
        vars: 0,
    };
    let started = Instant::now();
    let mut errors = 0;
    for i in 0..RANDOM_SCRIPTS {
        let script = g.script();
        let argv = [g.pick(&["a", "1", "10", "x y"]), g.pick(&["a", "5", ""])];
        let by_sha = g.rng.random_bool(0.2);
        let reply = if by_sha {
            let sha = p.both(&[b"SCRIPT", b"LOAD", script.as_bytes()]).await;
            match sha {
                Frame::Bulk(sha) => {
                    p.both(&[
                        b"EVALSHA",
                        &sha,
                        b"2",
                        b"k1",
                        b"k2",
                        argv[0].as_bytes(),
                        argv[1].as_bytes(),
                    ])
                    .await
                }
                other => other,
            }
        } else {
            p.eval(&script, &["k1", "k2"], &argv).await
        };
        if matches!(reply, Frame::Error(_)) {
            errors += 1;
        }
        if std::env::var_os("DIFFERENTIAL_SCRIPT_SHOW").is_some() {
            eprintln!("--- #{i} {argv:?}\n{script}\n=> {reply:?}");
        }
        if i % 50 == 49 {
            p.both(&[b"SCRIPT", b"FLUSH"]).await;
        }
    }
    assert!(
        errors > 10 && errors < RANDOM_SCRIPTS / 2,
        "seed {seed}: {errors} error replies: the grammar lost balance"
    );
    eprintln!(
        "random scripts seed {seed}: {RANDOM_SCRIPTS} scripts agree ({errors} error replies), {:.1?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_scripts_match_redis() {
    common::require_redis("random_scripts_match_redis");
    let seeds: Vec<u64> = std::env::var("DIFFERENTIAL_SCRIPT_SEEDS")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1]);
    for seed in seeds {
        run_random(seed).await;
    }
}

/// A script that never returns, or grows without end, is stopped with an
/// error in bounded time, and the node keeps answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runaway_scripts_are_stopped() {
    let addr = start_sim_node().await;
    let mut node = Client::connect(&addr).await;
    for script in [
        "while true do end",
        "local n = 0 while true do n = n + 1 end",
        "while true do pcall(function() while true do end end) end",
        "coroutine.wrap(function() while true do end end)()",
        "local co = coroutine.create(function() while true do end end) while true do coroutine.resume(co) end",
        "local s = 'x' while true do s = s .. s end",
        "local t = {} while true do t[#t + 1] = {#t} end",
        "return string.rep('x', 1000000000)",
    ] {
        let started = Instant::now();
        let reply = tokio::time::timeout(
            Duration::from_secs(60),
            node.call(&[b"EVAL".as_slice(), script.as_bytes(), b"0"]),
        )
        .await
        .unwrap_or_else(|_| panic!("{script:?} still running after 60 s"));
        let Frame::Error(e) = &reply else {
            panic!("{script:?} gave {reply:?}, not an error");
        };
        assert!(
            e.starts_with("ERR Script killed by redlock-sim") || e.contains("not enough memory"),
            "{script:?}: {e}"
        );
        eprintln!("{script:?}: {e} ({:.1?})", started.elapsed());
        if e.starts_with("ERR Script killed") {
            assert!(e.ends_with("on @user_script:1."), "{script:?}: not located: {e}");
        }
        assert_eq!(node.call(&["PING"]).await, Frame::Simple("PONG".into()));
        assert_eq!(
            node.call(&["EVAL", "return redis.call('set', 'after', 'ok')", "0"]).await,
            Frame::Simple("OK".into())
        );
    }
}
