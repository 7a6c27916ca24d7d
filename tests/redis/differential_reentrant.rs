//! Differential test of Redisson's reentrant lock scripts (take or re-enter,
//! release by count, renew: `client::scripts::REENTRANT_*`): the same seeded
//! sequence against the project's node and against a real `redis-server` 7.0
//! must give the same replies.
//!
//! Each seed draws its whole sequence before anything runs: the three scripts
//! by `EVAL` and by `EVALSHA` (after `SCRIPT LOAD`, and once after `SCRIPT
//! FLUSH`, to see `NOSCRIPT`), with three owners on two keys and leases of
//! days, mixed with `HGETALL`, `HGET`, `HLEN`, `TYPE`, `EXISTS`, `PTTL`, `DEL`,
//! a string written on a lock key (the scripts then fail with `WRONGTYPE`)
//! and a lease in the past or not a number. Replies are compared exactly,
//! except a `PTTL` and the take script's refusal (the holder's pttl), which may
//! differ by [`PTTL_TOLERANCE_MS`] since the servers run a moment apart.
//!
//! `REENTRANT_SEEDS=10,11 cargo test --release --test redis differential_reentrant`
//! runs more seeds.

use crate::common;

use common::{start_redis, start_sim_node, Client};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redlock_client::scripts::{sha1_hex, REENTRANT_RELEASE, REENTRANT_RENEW, REENTRANT_TAKE};
use redlock_proto::resp::Frame;

/// Commands per seed.
const COMMANDS: usize = 1500;
/// Largest accepted difference between the two servers' pttl replies.
const PTTL_TOLERANCE_MS: i64 = 250;

const KEYS: [&str; 2] = ["rlock", "{rlock}:2"];
const OWNERS: [&str; 3] = [
    "6f1c2a7e-2b8d-4c1e-9a55-0d3f1b2c4e5a:1",
    "6f1c2a7e-2b8d-4c1e-9a55-0d3f1b2c4e5a:57",
    "b0e7d9c4-8f3a-4d2b-a1e6-5c9f0e8d7b6a:1",
];

fn seeds() -> Vec<u64> {
    match std::env::var("REENTRANT_SEEDS") {
        Ok(s) => s
            .split(',')
            .map(|x| x.trim().parse().expect("REENTRANT_SEEDS: numbers"))
            .collect(),
        Err(_) => vec![1, 2, 3],
    }
}

/// Which script a step runs.
#[derive(Clone, Copy)]
enum Script {
    Take,
    Release,
    Renew,
}

impl Script {
    fn body(self) -> &'static str {
        match self {
            Script::Take => REENTRANT_TAKE,
            Script::Release => REENTRANT_RELEASE,
            Script::Renew => REENTRANT_RENEW,
        }
    }
}

/// A lease: days (unique per draw, so no tie depends on timing), sometimes
/// zero, negative or not a number.
fn lease(rng: &mut ChaCha8Rng, n: &mut u64) -> String {
    *n += 1;
    match rng.random_range(0..20) {
        0 => "0".into(),
        1 => "-5".into(),
        2 => "soon".into(),
        _ => (86_400_000 * rng.random_range(1..5u64) + *n).to_string(),
    }
}

/// One step: the command, and whether its reply is a pttl (compared within
/// the tolerance).
fn step(rng: &mut ChaCha8Rng, n: &mut u64) -> (Vec<String>, bool) {
    let key = KEYS[rng.random_range(0..KEYS.len())].to_string();
    let owner = OWNERS[rng.random_range(0..OWNERS.len())].to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let roll = rng.random_range(0..100);
    let script = match roll {
        0..=39 => Some(Script::Take),
        40..=64 => Some(Script::Release),
        65..=79 => Some(Script::Renew),
        _ => None,
    };
    if let Some(sc) = script {
        let mut cmd = if rng.random_bool(0.5) {
            s(&["EVAL", sc.body()])
        } else {
            vec!["EVALSHA".into(), sha1_hex(sc.body().as_bytes())]
        };
        cmd.push("1".into());
        cmd.push(key);
        match sc {
            Script::Take | Script::Renew => {
                cmd.push(lease(rng, n));
                cmd.push(owner);
            }
            Script::Release => {
                cmd.push("0".into());
                cmd.push(lease(rng, n));
                cmd.push(owner);
            }
        }
        return (cmd, matches!(sc, Script::Take));
    }
    match roll {
        80..=84 => (s(&["HGETALL", &key]), false),
        85..=86 => (s(&["HGET", &key, &owner]), false),
        87 => (s(&["HLEN", &key]), false),
        88 => (s(&["TYPE", &key]), false),
        89 => (s(&["EXISTS", &key]), false),
        90..=92 => (s(&["PTTL", &key]), true),
        93..=97 => (s(&["DEL", &key]), false),
        98 if rng.random_bool(0.5) => (s(&["SET", &key, "a-string"]), false),
        98 => (s(&["SCRIPT", "FLUSH"]), false),
        _ => {
            let sc = [Script::Take, Script::Release, Script::Renew][rng.random_range(0..3)];
            (s(&["SCRIPT", "LOAD", sc.body()]), false)
        }
    }
}

fn agree(pttl: bool, r: &Frame, n: &Frame) -> bool {
    match (r, n) {
        (Frame::Integer(a), Frame::Integer(b)) if pttl && *a > 0 && *b > 0 => {
            (a - b).abs() <= PTTL_TOLERANCE_MS
        }
        _ => r == n,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redissons_scripts_answer_as_redis_does() {
    common::require_redis("redissons_scripts_answer_as_redis_does");
    let servers = start_redis(1);
    let node_addr = start_sim_node().await;
    let mut r = Client::connect(&servers[0].addr()).await;
    let mut nd = Client::connect(&node_addr).await;
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    for seed in seeds() {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut n = 0;
        let steps: Vec<(Vec<String>, bool)> =
            (0..COMMANDS).map(|_| step(&mut rng, &mut n)).collect();
        r.call(&["FLUSHALL"]).await;
        nd.call(&["FLUSHALL"]).await;
        for (i, (cmd, pttl)) in steps.iter().enumerate() {
            let a = r.call(cmd).await;
            let b = nd.call(cmd).await;
            assert!(
                agree(*pttl, &a, &b),
                "seed {seed}, step {i}: {}\n  redis-server: {a:?}\n  node:         {b:?}",
                cmd.iter()
                    .map(|c| if c.len() > 40 {
                        format!("{}…", &c[..40])
                    } else {
                        c.clone()
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            let kind = match &a {
                Frame::Error(e) => format!("error {}", e.split(' ').next().unwrap_or("")),
                Frame::Null => "nil".into(),
                Frame::Integer(_) => "integer".into(),
                Frame::Simple(_) => "status".into(),
                Frame::Bulk(_) => "bulk".into(),
                Frame::Array(_) => "array".into(),
                other => format!("{other:?}"),
            };
            *kinds.entry(format!("{} -> {kind}", cmd[0])).or_default() += 1;
        }
    }
    eprintln!("reply kinds: {kinds:#?}");
    // The sequence must reach every outcome of the scripts, or it tests little.
    for k in [
        "EVAL -> nil",
        "EVAL -> integer",
        "EVALSHA -> nil",
        "EVALSHA -> integer",
        "EVAL -> error WRONGTYPE",
        "EVALSHA -> error NOSCRIPT",
    ] {
        assert!(
            kinds.get(k).copied().unwrap_or(0) > 0,
            "never saw {k}: {kinds:#?}"
        );
    }
}

/// The lock's life cycle, step by step, on both servers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reentrant_lock_cycle() {
    common::require_redis("a_reentrant_lock_cycle");
    let servers = start_redis(1);
    let node_addr = start_sim_node().await;
    let mut r = Client::connect(&servers[0].addr()).await;
    let mut n = Client::connect(&node_addr).await;
    let (a, b) = (OWNERS[0], OWNERS[2]);
    let take = |o: &str| {
        vec![
            "EVAL".to_string(),
            REENTRANT_TAKE.into(),
            "1".into(),
            "k".into(),
            "30000".into(),
            o.into(),
        ]
    };
    let release = |o: &str| {
        vec![
            "EVAL".to_string(),
            REENTRANT_RELEASE.into(),
            "1".into(),
            "k".into(),
            "0".into(),
            "30000".into(),
            o.into(),
        ]
    };
    let renew = |o: &str| {
        vec![
            "EVAL".to_string(),
            REENTRANT_RENEW.into(),
            "1".into(),
            "k".into(),
            "30000".into(),
            o.into(),
        ]
    };
    let hgetall = vec!["HGETALL".to_string(), "k".into()];
    let cases: Vec<(Vec<String>, Option<Frame>)> = vec![
        (take(a), Some(Frame::Null)),
        (take(a), Some(Frame::Null)),
        (take(a), Some(Frame::Null)),
        (
            hgetall.clone(),
            Some(Frame::Array(vec![Frame::bulk(a), Frame::bulk("3")])),
        ),
        (take(b), None),
        (renew(b), Some(Frame::Integer(0))),
        (renew(a), Some(Frame::Integer(1))),
        (release(b), Some(Frame::Null)),
        (release(a), Some(Frame::Integer(0))),
        (release(a), Some(Frame::Integer(0))),
        (
            hgetall.clone(),
            Some(Frame::Array(vec![Frame::bulk(a), Frame::bulk("1")])),
        ),
        (release(a), Some(Frame::Integer(1))),
        (vec!["EXISTS".into(), "k".into()], Some(Frame::Integer(0))),
        (release(a), Some(Frame::Null)),
        (renew(a), Some(Frame::Integer(0))),
    ];
    for (cmd, want) in cases {
        let x = r.call(&cmd).await;
        let y = n.call(&cmd).await;
        let pttl = cmd.get(1).is_some_and(|s| s == REENTRANT_TAKE);
        assert!(
            agree(pttl, &x, &y),
            "{:?}: redis {x:?}, node {y:?}",
            &cmd[..1]
        );
        match want {
            Some(w) => assert_eq!(x, w, "{cmd:?}"),
            None => assert!(
                matches!(x, Frame::Integer(ms) if ms > 29_000 && ms <= 30_000),
                "{x:?}"
            ),
        }
    }
}
