//! Lock libraries of other ecosystems, installed from their package
//! registries, run unchanged against `redis-server` and against
//! `redlock-sim node`, and must behave the same.
//!
//! Each driver under tests/libs/ uses one library as its users do (acquire,
//! contention, extend, release by the owner and by a wrong owner, expiry
//! after a short TTL, and for the Redlock libraries a quorum of three masters
//! with one and with two of them down) and prints a deterministic transcript.
//! The transcript from `redis-server` must equal the expected one in
//! tests/libs/expected/ (so the driver really exercised the library), and the
//! transcript from `redlock-sim node` must equal the one from `redis-server`.
//!
//! The libraries come from `bash scripts/test.sh`: Python's into tests/libs/python/.venv,
//! Node's into tests/libs/node/node_modules. When they, `node` or
//! `redis-server` are missing the test fails and names the install command:
//! a missing library is never a pass.
//!
//! On a difference both transcripts are written to
//! target/lock-libraries/NAME.{redis,node}.txt.

use crate::common;

use common::{start_redis, start_sim_node_process, RedisServer, SimNodeProcess};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LIBS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/libs");
/// Masters that are down: privileged ports where nothing listens (a free
/// port picked at run time could be taken by a server the test starts
/// meanwhile); checked before the drivers run.
const DOWN: [&str; 2] = ["127.0.0.1:1", "127.0.0.1:2"];
/// A driver that has not finished by then is killed and the test fails.
const DRIVER_LIMIT: Duration = Duration::from_secs(30);

/// One driver run: a name, the program and its arguments before the
/// addresses, and how many live servers it takes (1 or 3; the Redlock
/// drivers also get two addresses where nothing listens).
struct Driver {
    name: &'static str,
    program: Program,
    args: &'static [&'static str],
    masters: usize,
}

#[derive(Clone, Copy)]
enum Program {
    Python,
    Node,
}

const DRIVERS: &[Driver] = &[
    Driver {
        name: "redis-py-lock-resp2",
        program: Program::Python,
        args: &["redis_py_lock.py", "2"],
        masters: 1,
    },
    Driver {
        name: "redis-py-lock-resp3",
        program: Program::Python,
        args: &["redis_py_lock.py", "3"],
        masters: 1,
    },
    Driver {
        name: "pottery-redlock",
        program: Program::Python,
        args: &["pottery_redlock.py"],
        masters: 3,
    },
    Driver {
        name: "redlock-py",
        program: Program::Python,
        args: &["redlock_py.py"],
        masters: 3,
    },
    Driver {
        name: "node-redlock",
        program: Program::Node,
        args: &["redlock_driver.js"],
        masters: 3,
    },
    Driver {
        name: "redis-semaphore",
        program: Program::Node,
        args: &["semaphore_driver.js"],
        masters: 3,
    },
    Driver {
        name: "python-redis-lock",
        program: Program::Python,
        args: &["python_redis_lock.py"],
        masters: 1,
    },
    Driver {
        name: "redis-semaphore-semaphore",
        program: Program::Node,
        args: &["counting_semaphore_driver.js"],
        masters: 1,
    },
];

fn python() -> PathBuf {
    Path::new(LIBS).join("python/.venv/bin/python")
}

/// Every tool and package the drivers need, or a panic naming the command
/// that installs what is missing (the same under CI and outside it).
fn check_installed() {
    let mut missing = Vec::new();
    let ok = |c: &mut Command| {
        c.stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok(Command::new("redis-server").arg("--version")) {
        missing.push("redis-server: apt-get install redis-server".to_string());
    }
    if !ok(Command::new(python()).args(["-c", "import redis, pottery, redlock, redis_lock"])) {
        missing.push(
            "the Python lock libraries: python3 -m venv tests/libs/python/.venv && \
             tests/libs/python/.venv/bin/pip install -r tests/libs/python/requirements.txt"
                .to_string(),
        );
    }
    if !ok(Command::new("node").arg("--version")) {
        missing.push("node: apt-get install nodejs npm".to_string());
    }
    let node_modules = Path::new(LIBS).join("node/node_modules");
    if ["redlock", "ioredis", "redis-semaphore"]
        .iter()
        .any(|m| !node_modules.join(m).join("package.json").is_file())
    {
        missing.push("the Node lock libraries: npm ci --prefix tests/libs/node".to_string());
    }
    for a in DOWN {
        if std::net::TcpStream::connect(a).is_ok() {
            missing.push(format!(
                "{a} answers, but the test needs nothing listening there (a master that is down)"
            ));
        }
    }
    assert!(
        missing.is_empty(),
        "lock_libraries cannot run; missing (`{}` installs them all and runs the suite):\n  {}",
        common::INSTALL,
        missing.join("\n  ")
    );
}

/// How a driver run ended: its transcript (stdout), and what went wrong if
/// it failed or overran the limit (with the end of its stderr).
struct Run {
    transcript: String,
    failure: Option<String>,
}

/// Runs a driver against the given addresses.
fn run_driver(d: &Driver, addrs: &[String]) -> Run {
    let (program, dir) = match d.program {
        Program::Python => (python(), Path::new(LIBS).join("python")),
        Program::Node => (PathBuf::from("node"), Path::new(LIBS).join("node")),
    };
    let mut child = match Command::new(&program)
        .args(d.args)
        .args(addrs)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            return Run {
                transcript: String::new(),
                failure: Some(format!("cannot start {}: {e}", program.display())),
            }
        }
    };
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > DRIVER_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let transcript = out_t.join().unwrap();
    let stderr = err_t.join().unwrap();
    let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
    let tail: String = tail
        .into_iter()
        .rev()
        .map(|l| format!("    {l}\n"))
        .collect();
    let failure = match status {
        Some(s) if s.success() => None,
        Some(s) => Some(format!(
            "the driver exited with {s}; its stderr ends:\n{tail}"
        )),
        None => Some(format!(
            "the driver did not finish in {DRIVER_LIMIT:?} and was killed; its stderr ends:\n{tail}"
        )),
    };
    Run {
        transcript,
        failure,
    }
}

/// The first line where two transcripts differ, for the failure message.
fn first_difference(a: &str, b: &str) -> String {
    let (la, lb): (Vec<_>, Vec<_>) = (a.lines().collect(), b.lines().collect());
    for i in 0..la.len().max(lb.len()) {
        let (x, y) = (la.get(i), lb.get(i));
        if x != y {
            return format!(
                "line {}:\n  {}\n  {}",
                i + 1,
                x.unwrap_or(&"(none)"),
                y.unwrap_or(&"(none)")
            );
        }
    }
    "none".to_string()
}

fn keep(name: &str, suffix: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/lock-libraries");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.{suffix}.txt"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The outcome of one driver: Ok, or what went wrong.
fn check_driver(d: &Driver) -> Result<(), String> {
    let redis: Vec<RedisServer> = start_redis(d.masters);
    let nodes: Vec<SimNodeProcess> = (0..d.masters).map(|_| start_sim_node_process()).collect();
    // Two addresses where nothing listens: masters that are down.
    let down: Vec<String> = if d.masters == 3 {
        DOWN.iter().map(|a| a.to_string()).collect()
    } else {
        Vec::new()
    };
    let mut redis_addrs: Vec<String> = redis.iter().map(RedisServer::addr).collect();
    redis_addrs.extend(down.iter().cloned());
    let mut node_addrs: Vec<String> = nodes
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port))
        .collect();
    node_addrs.extend(down.iter().cloned());

    let from_redis = run_driver(d, &redis_addrs);
    let from_node = run_driver(d, &node_addrs);
    let expected_path = Path::new(LIBS).join(format!("expected/{}.txt", d.name));
    let expected = std::fs::read_to_string(&expected_path)
        .map_err(|e| format!("{}: {}: {e}", d.name, expected_path.display()))?;
    let redis_file = keep(d.name, "redis", &from_redis.transcript);
    let node_file = keep(d.name, "node", &from_node.transcript);
    if from_redis.transcript != expected || from_redis.failure.is_some() {
        return Err(format!(
            "{}: against redis-server the library did not behave as expected ({}); \
             first difference (expected, got) at {}\n{}(transcript: {})",
            d.name,
            expected_path.display(),
            first_difference(&expected, &from_redis.transcript),
            from_redis.failure.unwrap_or_default(),
            redis_file.display()
        ));
    }
    if from_node.transcript != from_redis.transcript || from_node.failure.is_some() {
        return Err(format!(
            "{}: redlock-sim node answers differently from redis-server; first difference \
             (redis-server, node) at {}\n{}(transcripts: {}, {})",
            d.name,
            first_difference(&from_redis.transcript, &from_node.transcript),
            from_node.failure.unwrap_or_default(),
            redis_file.display(),
            node_file.display()
        ));
    }
    Ok(())
}

#[test]
fn lock_libraries_behave_the_same_against_the_node_and_redis_server() {
    check_installed();
    // The drivers run side by side, each with servers of its own.
    let results: Vec<(&str, std::thread::Result<Result<(), String>>)> = std::thread::scope(|s| {
        let handles: Vec<_> = DRIVERS
            .iter()
            .map(|d| (d.name, s.spawn(move || check_driver(d))))
            .collect();
        handles.into_iter().map(|(n, h)| (n, h.join())).collect()
    });
    let mut failures = Vec::new();
    for (name, r) in results {
        match r {
            Ok(Ok(())) => eprintln!("{name}: same transcript from redis-server and the node"),
            Ok(Err(msg)) => failures.push(msg),
            Err(p) => failures.push(format!(
                "{name}: {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} lock-library drivers failed:\n\n{}",
        failures.len(),
        DRIVERS.len(),
        failures.join("\n\n")
    );
}

/// The expected transcripts say what the libraries do against redis-server:
/// each holds the lines that make the test able to fail (a second owner
/// refused, a wrong owner's release refused, a lock gone after its TTL, and
/// for the Redlock libraries a quorum with one master down and none with
/// two).
#[test]
fn expected_transcripts_hold_the_key_behaviours() {
    let read = |n: &str| {
        std::fs::read_to_string(Path::new(LIBS).join(format!("expected/{n}.txt"))).unwrap()
    };
    let has = |n: &str, lines: &[&str]| {
        let t = read(n);
        for l in lines {
            assert!(
                t.lines().any(|x| x == *l),
                "{n}: expected line missing: {l}"
            );
        }
        assert!(
            t.ends_with("done\n"),
            "{n}: transcript does not end with done"
        );
    };
    for n in ["redis-py-lock-resp2", "redis-py-lock-resp3"] {
        has(
            n,
            &[
                "a acquires: True",
                "b acquires, no wait: False",
                "b, wrong token, releases: raises LockNotOwnedError: Cannot release a lock that's no longer owned",
                "after 600 ms: c locked: False",
                "d acquires: True",
                "a releases: None",
                "key gone: 0",
            ],
        );
    }
    has(
        "pottery-redlock",
        &[
            "a acquires: True",
            "masters holding it: 3",
            "b acquires, no wait: False",
            "b releases: 'raises ReleaseUnlockedLock'",
            "d acquires: True",
            "e acquires: True",
            "f acquires: False",
        ],
    );
    has(
        "redlock-py",
        &[
            "a locks res: \"Lock(resource='res', validity within 1 s of the ttl: True)\"",
            "b locks res (3 tries): False",
            "after 600 ms: masters holding it: [0, 0, 0]",
            "live masters holding it: [1, 1, 0]",
        ],
    );
    has(
        "node-redlock",
        &[
            "a acquires res3: \"lock, for 3, against 0 []\"",
            "res3 still on each master: [1,1,1]",
            "after 600 ms, ttl on each master: [0,0,0]",
            "h acquires on two live masters (third down): \"lock, for 2, against 1 [unreachable]\"",
        ],
    );
    has(
        "redis-semaphore",
        &[
            "a isAcquired: true",
            "b tryAcquire (300 ms): false",
            "f tryAcquire: true",
            "onLockLost: \"LostLockError: Lost mutex for key mutex:lost\"",
        ],
    );
    has(
        "python-redis-lock",
        &[
            "a acquires: True",
            "b acquires, waiting 1 s: False",
            "b got it: True",
            "b woke within 0.5 s of the release: True",
            "signal list after release: 1",
            "d waits 2 s (no signal; the key expires meanwhile): True",
            "after 2.5 s: owner: 'e'",
            "signal pushed: 1",
            "reset_all: None",
        ],
    );
    has(
        "redis-semaphore-semaphore",
        &[
            "key type: \"zset\"",
            "holders: [\"a\",\"b\"]",
            "x tryAcquire (300 ms): false",
            "holders: [\"b\",\"x\"]",
            "after 1700 ms: t tryAcquire: true",
            "after 1200 ms: isAcquired: true",
            "onLockLost: \"LostLockError: Lost semaphore for key semaphore:lost\"",
            "n tryAcquire 2: false",
        ],
    );
}
