//! A client's clock through libfaketime: the rate the scenario gives it at
//! each moment, with no step when it changes (the lab rewrites the offset
//! from the start time it wrote itself), and nothing of libfaketime's left
//! in `/dev/shm` after the lab, even when the lab is killed.

use super::leftovers::alive;
use super::runs::python;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

/// Says it is ready (the run's clock starts at the reply), then notes,
/// every 20 ms of its own clock, the machine's uptime (no process fakes
/// `/proc/uptime`) and its wall and monotonic clocks, all in seconds.
const NOTER: &str = r#"
import os, time, redis
host, port = os.environ["REDLOCK_STORE"].rsplit(":", 1)
redis.Redis(host, int(port)).execute_command("READY", os.environ["REDLOCK_CLIENT"])
def up():
    return float(open("/proc/uptime").read().split()[0])
u0 = up()
while up() - u0 < 1.8:
    print(up(), time.time(), time.monotonic(), flush=True)
    time.sleep(0.02)
"#;

fn library_installed() {
    assert!(
        redlock_harness::lab::faketime::library().is_some(),
        "libfaketime is missing: `bash scripts/test.sh` installs it (apt-get install faketime)"
    );
}

fn fresh_dir(name: &str) -> crate::common::Scratch {
    crate::common::Scratch::dir(&format!("clock-{name}"))
}

/// (uptime, wall, monotonic) of each line of the log.
fn samples(log: &Path) -> Vec<[f64; 3]> {
    let text = std::fs::read_to_string(log).unwrap();
    text.lines()
        .filter_map(|l| {
            let v: Vec<f64> = l
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            (v.len() == 3).then(|| [v[0], v[1], v[2]])
        })
        .collect()
}

/// The rate of clock `k` between the first sample at or after real time
/// `from` and the last at or before `to` (seconds since the first sample).
fn rate(s: &[[f64; 3]], k: usize, from: f64, to: f64) -> f64 {
    let t0 = s[0][0];
    let a = s.iter().find(|x| x[0] - t0 >= from).unwrap();
    let b = s.iter().rev().find(|x| x[0] - t0 <= to).unwrap();
    (b[k] - a[k]) / (b[0] - a[0])
}

#[test]
fn a_client_clock_takes_each_rate_without_a_step() {
    library_installed();
    let dir = fresh_dir("rate");
    let py = python();
    let status = Command::new(BIN)
        .args(["lab", "tests/data/lab/client_clock_rate.toml", "--out"])
        .arg(dir.join("out"))
        .arg("--")
        .arg(&py)
        .args(["-c", NOTER])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    // It takes no lock: inconclusive, exit 1; its clock is what counts.
    assert_eq!(status.code(), Some(1));
    let s = samples(&dir.join("out/clients/c1.log"));
    assert!(s.len() > 40, "the client noted its clocks: {s:?}");
    for w in s.windows(2) {
        let real = w[1][0] - w[0][0];
        for k in [1, 2] {
            let step = w[1][k] - w[0][k];
            // /proc/uptime counts in 10 ms; rate 3 at most.
            assert!(
                step >= 0.0 && step <= 3.0 * real + 0.05,
                "clock {k} stepped by {step} s in {real} s of real time: {w:?}"
            );
        }
    }
    // The client notes from the run's clock start (READY's reply): windows
    // clear of the changes at 0.6 s and 1.2 s of the lab's time.
    for k in [1, 2] {
        let r = [
            rate(&s, k, 0.05, 0.5),
            rate(&s, k, 0.75, 1.1),
            rate(&s, k, 1.35, 1.8),
        ];
        assert!((r[0] - 1.0).abs() < 0.1, "clock {k} at rate 1 ran at {r:?}");
        assert!((r[1] - 3.0).abs() < 0.3, "clock {k} at rate 3 ran at {r:?}");
        assert!(
            (r[2] - 0.5).abs() < 0.08,
            "clock {k} at rate 0.5 ran at {r:?}"
        );
    }
    let spec = std::fs::read_to_string(dir.join("out/clients/c1.faketime")).unwrap();
    assert!(spec.ends_with(" x0.500000000000\n"), "{spec}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// libfaketime's semaphore and segment for this lab process's clients.
fn shared(lab: u32) -> Vec<String> {
    let prefix = format!("redlock-sim-{lab}-");
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix) || n.starts_with(&format!("sem.{prefix}")))
        .collect()
}

#[test]
fn libfaketimes_shared_memory_is_removed_after_an_end_and_a_kill() {
    library_installed();
    let dir = fresh_dir("shm");
    let script = "sleep 1000 & echo $! > \"$PID_FILE\"; wait";
    let mut lab = Command::new(BIN)
        .args(["lab", "tests/data/lab/client_clock_rate.toml", "--out"])
        .arg(dir.join("out"))
        .args(["--", "sh", "-c", script])
        .env("PID_FILE", dir.join("pid"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let noted = |d: &Path| std::fs::read_to_string(d.join("pid")).is_ok_and(|t| t.ends_with('\n'));
    while shared(lab.id()).len() < 2 || !noted(&dir) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the client never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Killed: only the reaper can clean up.
    lab.kill().unwrap();
    let status = lab.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    let t = Instant::now();
    while !shared(lab.id()).is_empty() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(shared(lab.id()), Vec::<String>::new(), "left in /dev/shm");
    let pid = std::fs::read_to_string(dir.join("pid")).unwrap();
    let sleep: i32 = pid.trim().parse().expect("the client noted its sleep");
    super::leftovers::wait_gone(&[sleep]);
    assert!(!alive(sleep), "the client's sleep outlived the lab");
    // A normal end removes them too.
    let lab = Command::new(BIN)
        .args(["lab", "tests/data/lab/client_clock_rate.toml", "--out"])
        .arg(dir.join("out2"))
        .args(["--", "sh", "-c", "sleep 0.5"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = lab.id();
    let out = lab.wait_with_output().unwrap();
    // A client that takes no lock: the run is inconclusive (exit 1).
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(shared(pid), Vec::<String>::new(), "left in /dev/shm");
    let _ = std::fs::remove_dir_all(&dir);
}
