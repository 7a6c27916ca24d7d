//! `redlock-sim lock` and `redlock-sim node`, run as a user runs them.

use crate::common;

use common::{free_port, start_redis, wait_ready, RedisServer};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

fn nodes(servers: &[RedisServer]) -> String {
    servers
        .iter()
        .map(RedisServer::addr)
        .collect::<Vec<_>>()
        .join(",")
}

fn lock_cmd(nodes: &str, extra: &[&str], shell: &str) -> Command {
    let mut c = Command::new(BIN);
    c.args(["lock", "--nodes", nodes, "--resource", "job"])
        .args(extra)
        .args(["--", "sh", "-c", shell]);
    c
}

#[test]
fn runs_the_command_and_passes_its_exit_code() {
    common::require_redis("runs_the_command_and_passes_its_exit_code");
    let servers = start_redis(3);
    let out = lock_cmd(&nodes(&servers), &[], "echo inside; exit 7")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "inside\n");
}

#[test]
fn a_second_lock_waits_for_the_first() {
    common::require_redis("a_second_lock_waits_for_the_first");
    let servers = start_redis(3);
    let dir = common::Scratch::dir("sim-cli");
    let log = dir.join("log");
    let _ = std::fs::remove_file(&log);
    let log_s = log.display().to_string();
    let n = nodes(&servers);
    // The first holds the lock for 1.2s with a 500ms TTL: only the watchdog's
    // extensions keep the second out.
    let mut first = lock_cmd(
        &n,
        &["--ttl", "500ms"],
        &format!("echo first-start >> {log_s}; sleep 1.2; echo first-end >> {log_s}"),
    )
    .spawn()
    .unwrap();
    let start = Instant::now();
    while !std::fs::read_to_string(&log).is_ok_and(|s| s.contains("first-start")) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "first lock never ran"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = lock_cmd(&n, &["--wait", "10s"], &format!("echo second >> {log_s}"))
        .output()
        .unwrap();
    assert!(second.status.success());
    assert!(first.wait().unwrap().success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        text, "first-start\nfirst-end\nsecond\n",
        "the second ran inside the first"
    );
}

#[test]
fn gives_up_with_75_when_the_lock_stays_taken() {
    common::require_redis("gives_up_with_75_when_the_lock_stays_taken");
    let servers = start_redis(3);
    let n = nodes(&servers);
    let mut holder = lock_cmd(&n, &[], "sleep 2").spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let out = lock_cmd(&n, &["--wait", "300ms"], "echo never")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(75));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("could not acquire job"));
    holder.wait().unwrap();
}

#[test]
fn a_lost_lock_terminates_the_command() {
    common::require_redis("a_lost_lock_terminates_the_command");
    let servers = start_redis(3);
    let holder = lock_cmd(&nodes(&servers), &["--ttl", "600ms"], "sleep 10")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    for s in &servers {
        let out = Command::new("redis-cli")
            .args(["-p", &s.port.to_string(), "DEL", "job"])
            .output();
        if out.is_err() {
            // No redis-cli: speak RESP directly.
            use std::io::Write;
            let mut c = std::net::TcpStream::connect(s.addr()).unwrap();
            c.write_all(b"DEL job\r\n").unwrap();
        }
    }
    let start = Instant::now();
    let out = holder.wait_with_output().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "command ran on after the lock was lost"
    );
    assert_eq!(out.status.code(), Some(128 + 15), "expected SIGTERM's 143");
    assert!(String::from_utf8_lossy(&out.stderr).contains("lost"));
}

#[test]
fn bad_flags_exit_2() {
    for args in [
        vec!["lock", "--resource", "r", "--", "true"],
        vec![
            "lock",
            "--nodes",
            "a:1",
            "--resource",
            "r",
            "--ttl",
            "10",
            "--",
            "true",
        ],
        vec!["lock", "--nodes", "a:1", "--resource", "r"],
        vec!["nosuch"],
    ] {
        let out = Command::new(BIN).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
    let out = Command::new(BIN)
        .args([
            "lock",
            "--nodes",
            "a:1",
            "--resource",
            "r",
            "--ttl",
            "10",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unit"),
        "the error says durations need a unit"
    );
}

#[test]
fn node_serves_on_a_real_port() {
    let port = free_port();
    let mut child = Command::new(BIN)
        .args(["node", "--port", &port.to_string()])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ready = wait_ready(port, Duration::from_secs(5));
    let mut reply = String::new();
    if ready {
        use std::io::{Read, Write};
        let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.write_all(b"*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nNX\r\n$2\r\nPX\r\n")
            .unwrap();
        c.write_all(b"SET k v NX PX 1000\r\nSET k w NX PX 1000\r\nGET k\r\n")
            .unwrap();
        c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut buf = [0u8; 256];
        while !reply.ends_with("$1\r\nv\r\n") {
            let n = c.read(&mut buf).unwrap();
            assert!(n > 0);
            reply.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(ready, "node did not answer PING");
    // The first (RESP, missing PX value... is complete: SET k v NX PX) is a
    // syntax error; then OK, nil, and the value.
    assert_eq!(reply, "-ERR syntax error\r\n+OK\r\n$-1\r\n$1\r\nv\r\n");
}
