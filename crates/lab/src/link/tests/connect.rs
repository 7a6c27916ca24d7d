//! A connect across a cut link, as real TCP has it (the scenario format's
//! `[network]`): a client that gives up on it and closes before the heal
//! sends nothing, and its server never sees a connection; a client that
//! stays connected through the cut has its request delivered after the
//! heal, in order, and its close after the data. With redis-py (the venv
//! of `bash scripts/test.sh`) against the lab's node, and on raw sockets.
//! The simulation's side of the same case is tests/sim/network.rs's
//! `a_connect_across_a_held_link_waits_and_leaves_nothing_when_given_up`.

use crate::clock::LabClock;
use crate::link::{Link, Setting};
use crate::node::{NodeHost, Sink};
use redlock_node::persistence::Mode;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const MS: Duration = Duration::from_millis(1);

/// redis-py's venv, made by `bash scripts/test.sh`.
fn python() -> &'static str {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/libs/python/.venv/bin/python"
    );
    assert!(
        std::path::Path::new(p).exists(),
        "redis-py is missing: `bash scripts/test.sh` installs it (python3 -m venv \
         tests/libs/python/.venv && tests/libs/python/.venv/bin/pip install -r \
         drivers/python/requirements.txt)"
    );
    p
}
/// Far above what an idle machine needs for a hop on loopback.
const SLACK: Duration = Duration::from_millis(400);

/// The lab's node n1 with a port for c1, the command lines it applied.
async fn node() -> (NodeHost, Arc<Mutex<Vec<String>>>) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    let sink: Sink = Arc::new(move |_, _, effects| {
        for e in effects {
            let words: Vec<String> = e
                .iter()
                .map(|b| String::from_utf8_lossy(b).into())
                .collect();
            log.lock().unwrap().push(words.join(" "));
        }
    });
    let clock = LabClock::new(Instant::now(), 1_700_000_000_000, 0.0, 1.0);
    let host = NodeHost::start("n1", &["c1".to_string()], clock, Mode::None, sink)
        .await
        .unwrap();
    (host, seen)
}

/// A tap in front of `server` that counts the connections it is offered
/// and passes each through.
async fn tap(server: SocketAddr) -> (SocketAddr, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let n = count.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            n.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let Ok(mut up) = TcpStream::connect(server).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut s, &mut up).await;
            });
        }
    });
    (addr, count)
}

/// redis-py's `SET lock c1 NX PX 10000` to `addr` with both its timeouts
/// (connect and socket) at `timeout_ms` and no retry, in a Python process
/// that has said `READY` (imported and built its client: a loaded machine
/// takes seconds over that, which nothing here counts).
struct PySet {
    child: tokio::process::Child,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl PySet {
    async fn start(addr: SocketAddr, timeout_ms: u64) -> PySet {
        let script = r#"
import sys, time, redis
from redis.backoff import NoBackoff
from redis.retry import Retry
t = int(sys.argv[3]) / 1000
r = redis.Redis(sys.argv[1], int(sys.argv[2]), socket_timeout=t,
                socket_connect_timeout=t, retry=Retry(NoBackoff(), 0))
print("READY", flush=True)
start = time.monotonic()
try:
    r.set("lock", "c1", nx=True, px=10000)
    print("OK", round((time.monotonic() - start) * 1000))
except (redis.TimeoutError, redis.ConnectionError) as e:
    print("GAVE UP", type(e).__name__, round((time.monotonic() - start) * 1000))
r.close()
"#;
        let mut child = tokio::process::Command::new(python())
            .args(["-c", script, &addr.ip().to_string()])
            .arg(addr.port().to_string())
            .arg(timeout_ms.to_string())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("python runs");
        let stdout = child.stdout.take().expect("piped");
        let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
        let first = lines.next_line().await.expect("python's stdout");
        assert_eq!(first.as_deref(), Some("READY"), "redis-py did not start");
        PySet { child, lines }
    }

    /// Its outcome (`OK` or `GAVE UP <error>`) and how long the `SET` took,
    /// by Python's own monotonic clock; the process is waited for.
    async fn outcome(mut self) -> (String, Duration) {
        let line = self.lines.next_line().await.expect("python's stdout");
        let status = self.child.wait().await.expect("python exits");
        let line = line.unwrap_or_else(|| panic!("redis-py said nothing more ({status})"));
        let (what, ms) = line
            .rsplit_once(' ')
            .expect("an outcome and its milliseconds");
        let ms: u64 = ms
            .parse()
            .unwrap_or_else(|_| panic!("not milliseconds: {line}"));
        (what.to_string(), Duration::from_millis(ms))
    }
}

/// A partition between the client and the server: both directions held.
fn cut(link: &Link, held: bool) {
    link.up.send_modify(|s| s.held = held);
    link.down.send_modify(|s| s.held = held);
}

#[tokio::test]
async fn redis_py_giving_up_on_a_cut_connect_sends_nothing_after_the_heal() {
    let (host, seen) = node().await;
    let (server, offered) = tap(host.addr("c1").unwrap()).await;
    let link = Link::open(server, Setting::open(MS), 11).await.unwrap();
    cut(&link, true);
    let (what, took) = PySet::start(link.addr, 200).await.outcome().await;
    assert!(
        what.starts_with("GAVE UP"),
        "redis-py did not give up: {what}"
    );
    // It gave up at its 200 ms timeout, long before the heal.
    assert!(took >= 200 * MS && took < 200 * MS + 2 * SLACK, "{took:?}");
    cut(&link, false);
    tokio::time::sleep(3 * SLACK).await;
    assert_eq!(
        offered.load(Ordering::SeqCst),
        0,
        "the server saw a connect"
    );
    assert!(
        seen.lock().unwrap().is_empty(),
        "the node applied {:?}",
        seen.lock().unwrap()
    );
}

#[tokio::test]
async fn redis_py_connected_through_a_cut_has_its_set_applied_after_the_heal() {
    let (host, seen) = node().await;
    let (server, offered) = tap(host.addr("c1").unwrap()).await;
    let link = Link::open(server, Setting::open(MS), 12).await.unwrap();
    cut(&link, true);
    let client = PySet::start(link.addr, 5000).await;
    tokio::time::sleep(700 * MS).await;
    assert_eq!(offered.load(Ordering::SeqCst), 0, "connected across a cut");
    cut(&link, false);
    let (what, took) = client.outcome().await;
    assert_eq!(what, "OK");
    // The connect was held through the cut (its SET took the 700 ms
    // hold at least) and completed at the heal, before the client's 5 s
    // timeout (which would have been GAVE UP).
    assert!(
        took >= 700 * MS,
        "the SET did not wait for the heal: {took:?}"
    );
    assert_eq!(offered.load(Ordering::SeqCst), 1);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].starts_with("SET lock c1"), "{seen:?}");
}

/// A server that returns everything one connection sent, until its end,
/// with the instant of that end; none if nothing connected within `wait`.
async fn one_connection(l: TcpListener, wait: Duration) -> Option<(Vec<u8>, Instant)> {
    let (mut s, _) = tokio::time::timeout(wait, l.accept()).await.ok()?.ok()?;
    let mut all = Vec::new();
    s.read_to_end(&mut all).await.unwrap();
    Some((all, Instant::now()))
}

#[tokio::test]
async fn a_client_closing_before_the_handshake_would_complete_sends_nothing() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let link = Link::open(l.local_addr().unwrap(), Setting::open(MS), 13)
        .await
        .unwrap();
    cut(&link, true);
    let mut c = TcpStream::connect(link.addr).await.unwrap();
    c.write_all(b"SET").await.unwrap();
    tokio::time::sleep(100 * MS).await;
    drop(c);
    tokio::time::sleep(100 * MS).await;
    cut(&link, false);
    let got = one_connection(l, 3 * SLACK).await;
    assert!(got.is_none(), "the server got {got:?}");
}

#[tokio::test]
async fn a_client_connected_through_a_cut_is_delivered_in_order_then_its_close() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let link = Link::open(l.local_addr().unwrap(), Setting::open(MS), 14)
        .await
        .unwrap();
    cut(&link, true);
    let server = tokio::spawn(one_connection(l, 10 * SLACK));
    let mut c = TcpStream::connect(link.addr).await.unwrap();
    c.write_all(b"a").await.unwrap();
    tokio::time::sleep(50 * MS).await;
    c.write_all(b"b").await.unwrap();
    tokio::time::sleep(300 * MS).await;
    let healed = Instant::now();
    cut(&link, false);
    // Once the handshake is through (the reply direction carries a byte
    // only on an open connection), more data, then the close.
    tokio::time::sleep(SLACK / 4).await;
    c.write_all(b"c").await.unwrap();
    c.shutdown().await.unwrap();
    let (bytes, end) = server.await.unwrap().expect("nothing connected");
    assert_eq!(bytes, b"abc");
    assert!(end >= healed + 3 * MS && end < healed + 2 * SLACK);
}
