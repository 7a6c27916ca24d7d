//! The lab's costs, measured in one run on this machine (`cargo bench
//! --bench lab`, release build):
//! - the latency a link adds per hop on loopback: ping-pong round trips to
//!   an echo server, direct and through a link set to zero latency; the
//!   added time per hop is half the difference of the round trips (p50 and
//!   p99 of each);
//! - a lab run's wall time over its `duration`: the lab-scale crash
//!   scenario with the built-in client;
//! - how many runs `--jobs` fits before verdicts change: the lab-scale
//!   scenarios whose verdict their faults decide (an immediate restart:
//!   violation; a delayed one: safe; the failover race with redis-py:
//!   violation), 8 seeds each at `--jobs` 1, 2, 4, 8 and 16, counting the runs
//!   whose verdict is not the expected one.

use redlock_harness::lab::link::{Link, Setting};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const BIN: &str = env!("CARGO_BIN_EXE_redlock-sim");

async fn echo_server() -> std::net::SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (mut s, _) = l.accept().await.unwrap();
            s.set_nodelay(true).unwrap();
            tokio::spawn(async move {
                let mut b = [0u8; 64];
                while let Ok(n) = s.read(&mut b).await {
                    if n == 0 || s.write_all(&b[..n]).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// `n` round trips of 32 bytes to `addr`, in µs, sorted.
async fn round_trips(addr: std::net::SocketAddr, n: usize) -> Vec<f64> {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.set_nodelay(true).unwrap();
    let msg = [7u8; 32];
    let mut b = [0u8; 32];
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        s.write_all(&msg).await.unwrap();
        s.read_exact(&mut b).await.unwrap();
        out.push(t.elapsed().as_secs_f64() * 1e6);
    }
    out.sort_by(f64::total_cmp);
    out
}

fn pct(v: &[f64], p: f64) -> f64 {
    v[((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1]
}

fn forwarding() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let server = echo_server().await;
        let link = Link::open(server, Setting::open(Duration::ZERO), 1).await.unwrap();
        let _ = round_trips(server, 200).await;
        let direct = round_trips(server, 5000).await;
        let through = round_trips(link.addr, 5000).await;
        for (name, p) in [("p50", 0.5), ("p99", 0.99)] {
            let (d, l) = (pct(&direct, p), pct(&through, p));
            println!(
                "forwarding {name}: round trip direct {d:.0} us, through a link {l:.0} us: {:.0} us added per hop",
                (l - d) / 2.0
            );
        }
    });
}

/// Runs `lab FILE --seeds 1..=n --jobs j [extra] -- cmd`: (verdicts, wall).
fn lab(file: &str, n: u64, jobs: u32, extra: &[&str], cmd: &[&str]) -> (Vec<String>, Duration) {
    let dir = std::env::temp_dir().join(format!("redlock-lab-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let t = Instant::now();
    let status = Command::new(BIN)
        .args([
            "lab",
            file,
            "--seeds",
            &format!("1..={n}"),
            "--jobs",
            &jobs.to_string(),
        ])
        .arg("--out")
        .arg(&dir)
        .args(extra)
        .arg("--")
        .args(cmd)
        .env("NODE_PATH", "tests/libs/node/node_modules")
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    let wall = t.elapsed();
    assert!(
        matches!(status.code(), Some(0) | Some(1)),
        "lab failed: {status:?}"
    );
    let runs = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    let v = runs
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap().to_string())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    (v, wall)
}

fn main() {
    forwarding();
    let client = [BIN, "lab-client"];
    let crash = "tests/data/lab/crash_restart.toml";
    let (_, wall) = lab(crash, 1, 1, &[], &client);
    println!(
        "a lab run: {:.2} s of wall time for 4 s of duration: {:.2}x",
        wall.as_secs_f64(),
        wall.as_secs_f64() / 4.0
    );
    let py = Path::new("tests/libs/python/.venv/bin/python");
    assert!(py.exists(), "bash scripts/test.sh installs redis-py");
    let py = [py.to_str().unwrap(), "drivers/python/redis_py_lock.py"];
    let cases: [(&str, &[&str], &[&str], &str); 3] = [
        (crash, &[], &client, "violation"),
        (crash, &["--set", "cluster.restart=1500ms"], &client, "safe"),
        ("tests/data/lab/failover_race.toml", &[], &py, "violation"),
    ];
    for jobs in [1, 2, 4, 8, 16] {
        let (mut wrong, mut runs) = (0, 0);
        let t = Instant::now();
        for (file, extra, cmd, want) in cases {
            let (v, _) = lab(file, 8, jobs, extra, cmd);
            runs += v.len();
            wrong += v.iter().filter(|x| *x != want).count();
        }
        println!(
            "--jobs {jobs}: {wrong} of {runs} verdicts not as expected, {:.1} s",
            t.elapsed().as_secs_f64()
        );
    }
}
