//! Whole lab runs through the binary, short (TTLs of a second): the
//! verdicts the contract promises, with the built-in client and with
//! redis-py's `Lock` as the clients. Real time is noisy, but each of these
//! faults decides its verdict by its structure (a master lost before its
//! replica got the key, a node back empty while its key was needed, a
//! client stopped longer than its TTL), not by a close timing.

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

/// The venv `bash scripts/test.sh` makes, with redis-py pinned.
pub fn python() -> PathBuf {
    let p = Path::new("tests/libs/python/.venv/bin/python");
    assert!(
        p.exists(),
        "redis-py is missing: `bash scripts/test.sh` installs it (python3 -m venv \
         tests/libs/python/.venv && tests/libs/python/.venv/bin/pip install -r \
         drivers/python/requirements.txt)"
    );
    p.to_path_buf()
}

/// The command of a Java driver in `jar` (under `drivers/java/target/`,
/// built by `bash drivers/java/build.sh`), as the matrices run it.
pub fn java(jar: &str, class_and_args: &[&str]) -> Vec<String> {
    let path = format!("drivers/java/target/{jar}");
    assert!(
        Path::new(&path).exists(),
        "{path} is missing: `bash scripts/test.sh` builds it (bash drivers/java/build.sh)"
    );
    let mut cmd: Vec<String> = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp"]
        .map(String::from)
        .to_vec();
    cmd.push(path);
    cmd.extend(class_and_args.iter().map(|a| a.to_string()));
    cmd
}

/// A Go driver (`drivers/go/bin/<name>`, built by `bash drivers/go/build.sh`).
pub fn go(name: &str) -> String {
    let path = format!("drivers/go/bin/{name}");
    assert!(
        Path::new(&path).exists(),
        "{path} is missing: `bash scripts/test.sh` builds it (bash drivers/go/build.sh)"
    );
    path
}

/// The command of a PHP driver (`drivers/php/<script>`), once PHP,
/// phpredis and the lock libraries (Debian's packages) are there.
pub fn php(script: &str) -> Vec<String> {
    let probe = "exit(class_exists('Redis') \
        && stream_resolve_include_path('Symfony/Component/Lock/autoload.php') \
        && stream_resolve_include_path('Illuminate/Cache/autoload.php') ? 0 : 1);";
    let ok = Command::new("php")
        .args(["-r", probe])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "PHP, phpredis or its lock libraries are missing: `bash scripts/test.sh` installs them \
         (apt-get install php-cli php-redis php-symfony-lock php-illuminate-cache php-illuminate-redis)"
    );
    ["php".to_string(), format!("drivers/php/{script}")].to_vec()
}

/// Runs `lab FILE --seeds A..=B --jobs J --out DIR [extra] -- CMD`; the
/// verdict of every seed, from `runs.csv`.
pub fn lab(file: &str, seeds: &str, jobs: u32, extra: &[&str], cmd: &[&str]) -> Vec<String> {
    lab_env(file, seeds, jobs, extra, cmd, &[])
}

/// [`lab`], with `env` added to the lab's environment (its clients inherit it).
pub fn lab_env(
    file: &str,
    seeds: &str,
    jobs: u32,
    extra: &[&str],
    cmd: &[&str],
    env: &[(String, String)],
) -> Vec<String> {
    let rows = lab_rows(file, seeds, jobs, extra, cmd, env);
    rows.into_iter().map(|r| r["verdict"].clone()).collect()
}

/// [`lab_env`]: every row of `runs.csv`, by column.
pub fn lab_rows(
    file: &str,
    seeds: &str,
    jobs: u32,
    extra: &[&str],
    cmd: &[&str],
    env: &[(String, String)],
) -> Vec<std::collections::BTreeMap<String, String>> {
    let dir = tempfile_dir();
    let out = Command::new(BIN)
        .envs(env.iter().cloned())
        .args(["lab", file, "--seeds", seeds, "--jobs", &jobs.to_string()])
        .arg("--out")
        .arg(&dir)
        .args(extra)
        .arg("--")
        .args(cmd)
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0) | Some(1)),
        "lab failed: {:?}\n{stderr}",
        out.status
    );
    let runs = std::fs::read_to_string(dir.join("runs.csv")).expect("runs.csv");
    let mut lines = runs.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let rows = lines
        .map(|l| {
            let cells = l.split(',').map(str::to_string);
            header.iter().map(|h| h.to_string()).zip(cells).collect()
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    rows
}

fn tempfile_dir() -> crate::common::Scratch {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    crate::common::Scratch::fresh(&format!("lab-test-{n}"))
}

#[test]
fn the_failover_race_breaks_redis_py_lock_through_the_sentinel() {
    let py = python();
    let cmd = [py.to_str().unwrap(), "drivers/python/redis_py_lock.py"];
    let v = lab("tests/data/lab/failover_race.toml", "1..=2", 2, &[], &cmd);
    assert_eq!(v, ["violation", "violation"]);
}

#[test]
fn an_immediate_restart_breaks_redlock_and_a_delayed_one_does_not() {
    let cmd = [BIN, "lab-client"];
    let file = "tests/data/lab/crash_restart.toml";
    let immediate = lab(file, "1..=2", 2, &[], &cmd);
    assert_eq!(immediate, ["violation", "violation"]);
    let delayed = lab(file, "1..=2", 2, &["--set", "cluster.restart=1500ms"], &cmd);
    assert_eq!(delayed, ["safe", "safe"]);
}

/// A write the network holds past the client's wait is given up, not a
/// failure: the built-in client goes on, and its late write is refused by
/// fencing when it lands (a run the lab can conclude on).
#[test]
fn the_built_in_client_gives_up_a_held_write_and_goes_on() {
    let cmd = [BIN, "lab-client"];
    let file = "tests/data/lab/closed_request_fenced.toml";
    let rows = lab_rows(file, "1..=2", 2, &[], &cmd, &[]);
    for r in &rows {
        assert_eq!(r["verdict"], "safe", "{r:?}");
        let rejected: u64 = r["rejected_writes"].parse().unwrap();
        assert!(rejected >= 1, "the held write never landed: {r:?}");
    }
    assert_eq!(rows.len(), 2);
}

/// `--stop-early`: the first 10 conclusive runs all violate, so seeds
/// 11..=14 are not kept (those that had started are dropped, their
/// directories removed), and the reason is said.
#[test]
fn stop_early_stops_at_ten_violating_runs() {
    let dir = tempfile_dir();
    let out = Command::new(BIN)
        .args([
            "lab",
            "tests/data/lab/crash_restart.toml",
            "--seeds",
            "1..=14",
        ])
        .args(["--stop-early", "--jobs", "4", "--out"])
        .arg(&dir)
        .args(["--", BIN, "lab-client"])
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("10 runs: stopped early: its first 10 conclusive runs violated"),
        "{stderr}"
    );
    let runs = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    let seeds: Vec<&str> = runs
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(seeds, (1..=10).map(|s| s.to_string()).collect::<Vec<_>>());
    assert!(
        runs.lines()
            .skip(1)
            .all(|l| l.split(',').nth(2) == Some("violation")),
        "{runs}"
    );
    for s in 11..=14 {
        assert!(!dir.join(format!("seed-{s}")).exists(), "seed {s} dropped");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_client_stopped_past_its_ttl_writes_stale() {
    let py = python();
    let cmd = [py.to_str().unwrap(), "drivers/python/redis_py_lock.py"];
    let v = lab("tests/data/lab/paused_client.toml", "1..=1", 1, &[], &cmd);
    assert_eq!(v, ["violation"]);
}

/// `node`, with node-redlock and ioredis from `bash scripts/test.sh`.
fn node_env() -> (String, String) {
    let modules = Path::new("tests/libs/node/node_modules");
    assert!(
        modules.join("redlock").exists() && modules.join("ioredis").exists(),
        "node-redlock is missing: `bash scripts/test.sh` installs it (npm ci --prefix tests/libs/node)"
    );
    let abs = std::fs::canonicalize(modules).expect("node_modules");
    ("NODE_PATH".to_string(), abs.display().to_string())
}

#[test]
fn node_redlock_breaks_on_an_immediate_restart_and_not_on_a_delayed_one() {
    let env = [node_env()];
    let cmd = ["node", "drivers/node/node_redlock.js"];
    let file = "tests/data/lab/crash_restart.toml";
    assert_eq!(lab_env(file, "1..=1", 1, &[], &cmd, &env), ["violation"]);
    let set = ["--set", "cluster.restart=1500ms"];
    let delayed = lab_env(file, "1..=1", 1, &set, &cmd, &env);
    assert_eq!(delayed, ["safe"]);
}

#[test]
fn the_aimed_nemesis_crashes_nodes_at_lock_events_the_lab_sees() {
    let dir = tempfile_dir();
    let status = Command::new(BIN)
        .args([
            "lab",
            "tests/data/lab/aimed_crashes.toml",
            "--seed",
            "1",
            "--out",
        ])
        .arg(&dir)
        .args(["--", BIN, "lab-client"])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("the binary runs");
    assert!(matches!(status.code(), Some(0) | Some(1)), "{status:?}");
    let history = std::fs::read_to_string(dir.join("history.csv")).unwrap();
    let time = |l: &str| l.split(',').next().unwrap().parse::<f64>().unwrap();
    let key_sets: Vec<f64> = history
        .lines()
        .filter(|l| l.contains(",key_set,") && l.contains(" by=c"))
        .map(time)
        .collect();
    let crashes: Vec<f64> = history
        .lines()
        .filter(|l| l.contains(",fault,what=crash"))
        .map(time)
        .collect();
    assert!(
        !crashes.is_empty(),
        "the aimed nemesis crashed nothing:\n{history}"
    );
    // Every crash is placed at a lock event: at most near the end of the
    // validity after a key a client set (the TTL, 1 s, and 5% of it), never
    // in the quiet before the first one or between holds.
    for c in &crashes {
        let before = key_sets.iter().rev().find(|k| *k <= c);
        assert!(
            before.is_some_and(|k| c - k < 1100.0),
            "a crash at {c} ms is not at a lock event:\n{history}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_client_clock_slowed_through_libfaketime_writes_stale() {
    assert!(
        redlock_harness::lab::faketime::library().is_some(),
        "libfaketime is missing: `bash scripts/test.sh` installs it (apt-get install faketime)"
    );
    let cmd = [BIN, "lab-client"];
    let file = "tests/data/lab/slow_client_clock.toml";
    assert_eq!(lab(file, "1..=1", 1, &[], &cmd), ["violation"]);
    let normal = lab(file, "1..=1", 1, &["--set", "hosts.c1.clock_rate=1"], &cmd);
    assert_eq!(normal, ["safe"]);
}

#[test]
fn a_jvm_clock_slowed_through_libfaketime_writes_stale() {
    // The JVM reads time through libc: libfaketime, preloaded, runs its
    // System.nanoTime, its sleeps and Netty's timers at the rate.
    assert!(
        redlock_harness::lab::faketime::library().is_some(),
        "libfaketime is missing: `bash scripts/test.sh` installs it (apt-get install faketime)"
    );
    let cmd = java("redlock-drivers.jar", &["redlocksim.RedissonRedLockDriver"]);
    let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
    let file = "tests/data/lab/slow_jvm_clock.toml";
    assert_eq!(lab(file, "1..=1", 1, &[], &cmd), ["violation"]);
    let normal = lab(file, "1..=1", 1, &["--set", "hosts.c1.clock_rate=1"], &cmd);
    assert_eq!(normal, ["safe"]);
}

#[test]
fn with_fencing_the_stopped_clients_writes_are_refused() {
    let py = python();
    let cmd = [py.to_str().unwrap(), "drivers/python/redis_py_lock.py"];
    let set = ["--set", "clients.fencing=true"];
    let v = lab("tests/data/lab/paused_client.toml", "1..=1", 1, &set, &cmd);
    assert_eq!(v, ["safe"]);
}

#[test]
fn a_client_clock_slowed_during_the_hold_writes_stale() {
    assert!(
        redlock_harness::lab::faketime::library().is_some(),
        "libfaketime is missing: `bash scripts/test.sh` installs it (apt-get install faketime)"
    );
    let cmd = [BIN, "lab-client"];
    let file = "tests/data/lab/client_clock_slows.toml";
    assert_eq!(lab(file, "1..=2", 2, &[], &cmd), ["violation", "violation"]);
    // The same change to rate 1: the offset the lab rewrites keeps the
    // clock where it was, so nothing moves.
    let text = std::fs::read_to_string(file).unwrap();
    let scratch = crate::common::Scratch::dir("rate-one");
    let same = scratch.join("rate_one.toml");
    std::fs::write(&same, text.replace("rate = 0.25", "rate = 1.0")).unwrap();
    let v = lab(same.to_str().unwrap(), "1..=2", 2, &[], &cmd);
    assert_eq!(v, ["safe", "safe"]);
}
