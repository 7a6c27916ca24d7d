//! A lock of one's own in the simulation: the example lock of
//! `examples/redis_crate_lock/` (written with the `redis` crate alone) runs
//! scenario files through `redlock_sim::own_lock`, gives the built-in
//! client's verdicts, replays by seed, and runs on real Redis unchanged.

use crate::common;

#[path = "../../examples/redis_crate_lock/harness.rs"]
mod harness;
#[path = "../../examples/redis_crate_lock/lock.rs"]
mod lock;

use redlock_harness::check::Verdict;
use redlock_harness::runner;
use redlock_harness::scenario::{self, Scenario};
use redlock_sim::own_lock::{self, RedisConn};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn load(file: &str) -> Scenario {
    scenario::load(Path::new(file)).unwrap()
}

fn own(s: &Scenario, seed: u64) -> runner::Run {
    own_lock::simulate(s.clone(), seed, false, harness::build).unwrap()
}

fn temp_dir(name: &str) -> crate::common::Scratch {
    crate::common::Scratch::fresh(&format!("sim-own-{name}"))
}

#[test]
fn the_example_lock_gives_the_built_in_clients_verdicts() {
    for (file, expected) in [
        ("scenarios/crash_restart_immediate.toml", Verdict::Violation),
        ("scenarios/crash_restart_delayed.toml", Verdict::Safe),
    ] {
        let s = load(file);
        for seed in [s.seed, 2, 3, 4, 5, 6] {
            let mine = own(&s, seed);
            let builtin = runner::simulate(s.clone(), seed).unwrap();
            assert_eq!(
                builtin.check.verdict, expected,
                "{file} seed {seed}: built-in"
            );
            assert_eq!(mine.check.verdict, expected, "{file} seed {seed}: own lock");
            assert!(
                mine.check.holds.len() >= 2,
                "{file} seed {seed}: the own lock took the lock {} times",
                mine.check.holds.len()
            );
            if expected == Verdict::Violation {
                assert!(!mine.check.overlaps.is_empty(), "{file} seed {seed}");
            }
            // Its own tokens, not the built-in client's: a different history.
            assert_ne!(mine.trace, builtin.trace, "{file} seed {seed}");
        }
    }
}

#[test]
fn the_example_lock_follows_the_sentinel_with_one_master() {
    // One master with replicas: the lock asks the sentinel, and loses
    // safety to the failover race as the built-in client does.
    let s = load("scenarios/failover_race.toml");
    let mine = own(&s, s.seed);
    let builtin = runner::simulate(s.clone(), s.seed).unwrap();
    assert_eq!(mine.check.verdict, Verdict::Violation);
    assert_eq!(builtin.check.verdict, Verdict::Violation);
    assert!(mine.check.holds.len() >= 2);
}

#[test]
fn the_same_seed_replays_to_the_same_trace() {
    // The busy nemesis scenario without its watchdog client (an own lock
    // is not extended by the harness).
    let text = std::fs::read_to_string("tests/data/busy_nemesis.toml")
        .unwrap()
        .replace("renew = true\n", "");
    let s = scenario::parse_str(&text, "busy_nemesis.toml").unwrap();
    let a = own_lock::simulate(s.clone(), 7, true, harness::build).unwrap();
    let b = own_lock::simulate(s.clone(), 7, true, harness::build).unwrap();
    assert!(
        a.history.events.len() > 300,
        "not busy: {} events",
        a.history.events.len()
    );
    assert!(a.check.holds.len() >= 5, "{} holds", a.check.holds.len());
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.history, b.history);
    assert_eq!(
        a.trace,
        a.history.trace(),
        "the streamed trace is the history's"
    );
    let c = own_lock::simulate(s, 8, false, harness::build).unwrap();
    assert_ne!(a.trace, c.trace, "the seed does not matter");
}

/// The example's binary, built (release, as the tests are) if need be.
/// `scripts/test.sh` builds the examples before the tests start and names
/// their directory in `REDLOCK_SIM_EXAMPLES`: a cargo run from a test would
/// wait for the build directory's lock while the suite builds the others.
fn example_bin() -> PathBuf {
    if let Some(exe) = crate::common::prebuilt_example("redis_crate_lock") {
        return exe;
    }
    let status = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--quiet",
            "--example",
            "redis_crate_lock",
        ])
        .status()
        .expect("run cargo");
    assert!(
        status.success(),
        "cargo build --example redis_crate_lock failed"
    );
    let deps = std::env::current_exe().unwrap();
    let profile = deps.parent().and_then(Path::parent).unwrap();
    profile.join("examples").join("redis_crate_lock")
}

fn field<'a>(stdout: &'a str, name: &str) -> &'a str {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no {name} line in:\n{stdout}"))
}

#[test]
fn the_example_binary_prints_the_summary_and_writes_the_report() {
    let bin = example_bin();
    for (file, code, verdict) in [
        ("scenarios/crash_restart_immediate.toml", 0, "violation"),
        ("scenarios/crash_restart_delayed.toml", 0, "safe"),
    ] {
        let out = temp_dir("report");
        let o = Command::new(&bin)
            .arg(file)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(code),
            "{file}: {stdout}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(field(&stdout, "verdict"), verdict);
        assert_eq!(field(&stdout, "expected"), verdict);
        for name in ["lock_overlaps", "write_interleavings", "stale_writes"] {
            field(&stdout, name).parse::<u64>().unwrap();
        }
        let s = load(file);
        assert_eq!(field(&stdout, "trace"), own(&s, s.seed).trace, "{file}");
        for f in [
            "history.csv",
            "summary.json",
            "report.md",
            "index.html",
            "timeline.svg",
        ] {
            assert!(out.join(f).is_file(), "{file}: no {f}");
        }
        std::fs::remove_dir_all(&out).unwrap();
    }
    // --seed: another seed, another trace; the verdict the scenario expects
    // still, exit 0.
    let out = temp_dir("seed");
    let o = Command::new(&bin)
        .args([
            "scenarios/crash_restart_immediate.toml",
            "--seed",
            "3",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let s = load("scenarios/crash_restart_immediate.toml");
    assert_eq!(
        field(&String::from_utf8_lossy(&o.stdout), "trace"),
        own(&s, 3).trace
    );
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let bin = example_bin();
    let dir = temp_dir("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let invalid = dir.join("invalid.toml");
    std::fs::write(&invalid, "name = \"x\"\nduration = \"soon\"\n").unwrap();
    let renew = dir.join("renew.toml");
    std::fs::write(
        &renew,
        std::fs::read_to_string("scenarios/crash_restart_delayed.toml").unwrap()
            + "\n[hosts.c1]\nrenew = true\n",
    )
    .unwrap();
    let missing = dir.join("missing.toml");
    let out = dir.join("out");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![missing.display().to_string()], "missing.toml"),
        (vec![invalid.display().to_string()], "duration"),
        (vec![renew.display().to_string()], "hosts.c1.renew"),
        (
            vec![
                "scenarios/crash_restart_delayed.toml".into(),
                "--seed".into(),
                "many".into(),
            ],
            "--seed",
        ),
        (
            vec![
                "scenarios/crash_restart_delayed.toml".into(),
                "--bogus".into(),
            ],
            "--bogus",
        ),
        (vec![], "FILE"),
    ];
    for (args, says) in cases {
        let o = Command::new(&bin)
            .args(&args)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
    // The library call refuses the same way.
    let s = scenario::load(&renew).unwrap();
    assert!(matches!(
        own_lock::simulate(s, 1, false, harness::build),
        Err(runner::RunError::BadInput(_))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_connection_is_dropped_and_the_next_request_reconnects() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // A server silent on its first connection, answering +PONG to every
    // read on the later ones.
    let server = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = server.local_addr().unwrap().to_string();
    let task = tokio::spawn(async move {
        let mut silent = Vec::new();
        let mut first = true;
        while let Ok((mut s, _)) = server.accept().await {
            if std::mem::take(&mut first) {
                silent.push(s);
                continue;
            }
            tokio::spawn(async move {
                let mut buf = [0u8; 512];
                while let Ok(n) = s.read(&mut buf).await {
                    if n == 0 || s.write_all(b"+PONG\r\n").await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let mut conn = RedisConn::tcp(&addr, Duration::from_millis(100));
    let e = redis::cmd("PING")
        .query_async::<String>(&mut conn)
        .await
        .unwrap_err();
    assert!(e.is_timeout(), "{e}");
    tokio::time::sleep(Duration::from_millis(50)).await; // the reconnect backoff
    let pong: String = redis::cmd("PING").query_async(&mut conn).await.unwrap();
    assert_eq!(pong, "PONG");
    task.abort();
    // Error replies keep their kind: NOSCRIPT from the node.
    let node = common::start_sim_node().await;
    let mut conn = RedisConn::tcp(&node, Duration::from_millis(500));
    let err = redis::cmd("EVALSHA")
        .arg("0000000000000000000000000000000000000000")
        .arg(0)
        .query_async::<redis::Value>(&mut conn)
        .await
        .unwrap_err();
    assert_eq!(
        err.kind(),
        redis::ErrorKind::Server(redis::ServerErrorKind::NoScript),
        "{err}"
    );
    // After HELLO 3 the replies are RESP3, read as the redis crate reads
    // them from redis-server: maps as maps.
    let hello: redis::Value = redis::cmd("HELLO")
        .arg(3)
        .query_async(&mut conn)
        .await
        .unwrap();
    let redis::Value::Map(fields) = hello else {
        panic!("HELLO 3: {hello:?}")
    };
    assert!(fields.contains(&(
        redis::Value::BulkString(b"proto".to_vec()),
        redis::Value::Int(3)
    )));
    let _: i64 = redis::cmd("HSET")
        .arg("h")
        .arg("f")
        .arg("v")
        .query_async(&mut conn)
        .await
        .unwrap();
    let all: redis::Value = redis::cmd("HGETALL")
        .arg("h")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        all,
        redis::Value::Map(vec![(
            redis::Value::BulkString(b"f".to_vec()),
            redis::Value::BulkString(b"v".to_vec())
        )])
    );
}

// --- a lock that misbehaves ---

struct Panicking;

impl own_lock::OwnLock for Panicking {
    async fn acquire(
        &mut self,
        _: &str,
        _: Duration,
    ) -> Result<own_lock::Lease, own_lock::Failure> {
        panic!("the lock code gave up");
    }
    async fn release(&mut self, _: &own_lock::Lease) -> usize {
        0
    }
}

struct Stuck;

impl own_lock::OwnLock for Stuck {
    async fn acquire(
        &mut self,
        _: &str,
        _: Duration,
    ) -> Result<own_lock::Lease, own_lock::Failure> {
        std::future::pending().await
    }
    async fn release(&mut self, _: &own_lock::Lease) -> usize {
        0
    }
}

#[test]
fn a_panicking_lock_fails_the_run_and_a_stuck_one_does_not_hang_it() {
    let s = load("scenarios/crash_restart_delayed.toml");
    match own_lock::simulate(s.clone(), 1, false, |_| Panicking) {
        Err(runner::RunError::Failed(e)) => {
            assert!(e.contains("the lock code gave up"), "{e}");
            assert!(e.contains("lock code"), "{e}");
        }
        other => panic!("{:?}", other.map(|r| r.trace)),
    }
    let run = own_lock::simulate(s, 1, true, |_| Stuck).unwrap();
    // It never acquired, so the crash aimed at c1's acquisition never came:
    // the run tested nothing.
    assert_eq!(run.check.verdict, Verdict::Inconclusive);
    assert!(
        run.check.inconclusive[0]
            .text
            .contains("its trigger, c1:acquired, never came"),
        "{:?}",
        run.check.inconclusive
    );
    assert!(run.check.holds.is_empty());
    let calls = run
        .history
        .events
        .iter()
        .filter(|e| e.kind.name() == "lock_call")
        .count();
    assert_eq!(calls, 2, "one call per client, never returning");
}
