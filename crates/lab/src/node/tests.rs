//! The lab's node: who wrote, what a crash keeps by persistence, a pause
//! that answers nothing, a fast clock that expires keys early.

use crate::clock::LabClock;
use crate::node::{NodeHost, Sink};
use redlock_node::persistence::Mode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const MS: Duration = Duration::from_millis(1);
const SLACK: Duration = Duration::from_millis(400);

type Seen = Arc<Mutex<Vec<(String, Option<String>, String)>>>;

/// A node with ports for c1 and c2 whose effects land in the returned log
/// as (node, peer, command line).
async fn node(mode: Mode, rate: f64) -> (NodeHost, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let sink: Sink = Arc::new(move |node, peer, effects| {
        for e in effects {
            let line: Vec<String> = e
                .iter()
                .map(|b| String::from_utf8_lossy(b).into())
                .collect();
            log.lock()
                .unwrap()
                .push((node.to_string(), peer.map(String::from), line.join(" ")));
        }
    });
    let clock = LabClock::new(Instant::now(), 1_700_000_000_000, 0.0, rate);
    let peers = vec!["c1".to_string(), "c2".to_string()];
    (
        NodeHost::start("n1", &peers, clock, mode, sink)
            .await
            .unwrap(),
        seen,
    )
}

fn resp(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend(format!("${}\r\n{a}\r\n", a.len()).into_bytes());
    }
    out
}

/// Sends one command and reads one reply (a short one: a line, or a bulk).
async fn call(s: &mut TcpStream, args: &[&str]) -> String {
    s.write_all(&resp(args)).await.unwrap();
    let mut buf = vec![0u8; 512];
    let n = s.read(&mut buf).await.unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

async fn connect(host: &NodeHost, peer: &str) -> TcpStream {
    TcpStream::connect(host.addr(peer).unwrap()).await.unwrap()
}

#[tokio::test]
async fn each_write_is_reported_with_the_client_whose_port_it_came_in_on() {
    let (host, seen) = node(Mode::None, 1.0).await;
    let mut c1 = connect(&host, "c1").await;
    let mut c2 = connect(&host, "c2").await;
    assert_eq!(
        call(&mut c1, &["SET", "lock", "t1", "NX", "PX", "100"]).await,
        "+OK\r\n"
    );
    assert_eq!(
        call(&mut c2, &["SET", "lock", "t2", "NX", "PX", "100"]).await,
        "$-1\r\n"
    );
    tokio::time::sleep(300 * MS).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0].1.as_deref(), Some("c1"), "{seen:?}");
    assert!(seen[0].2.starts_with("SET lock t1"), "{seen:?}");
    // The expiry is the node's own doing.
    assert_eq!(
        seen.last().unwrap(),
        &("n1".to_string(), None, "DEL lock".to_string())
    );
    assert_eq!(seen.len(), 2, "{seen:?}");
}

#[tokio::test]
async fn a_crash_closes_and_refuses_and_a_restart_keeps_what_was_synced() {
    // (persistence, wait before the crash, what GET says after the restart)
    let cases = [
        (Mode::None, Duration::ZERO, "$-1\r\n"),
        (Mode::Always, Duration::ZERO, "$2\r\nt1\r\n"),
        (Mode::Everysec, Duration::ZERO, "$-1\r\n"),
        (Mode::Everysec, 1300 * MS, "$2\r\nt1\r\n"),
    ];
    for (mode, wait, kept) in cases {
        let (mut host, seen) = node(mode, 1.0).await;
        let mut c1 = connect(&host, "c1").await;
        assert_eq!(
            call(&mut c1, &["SET", "lock", "t1", "PX", "60000"]).await,
            "+OK\r\n"
        );
        tokio::time::sleep(wait).await;
        let before = host.addr("c1").unwrap();
        assert!(host.crash().await);
        assert!(!host.crash().await, "crashed twice");
        let effects = seen.lock().unwrap().len();
        let mut b = [0u8; 8];
        let closed = tokio::time::timeout(SLACK, c1.read(&mut b))
            .await
            .expect("still open");
        assert!(matches!(closed, Ok(0) | Err(_)), "{closed:?}");
        assert!(
            TcpStream::connect(before).await.is_err(),
            "accepted while down"
        );
        // At once: nothing of the old process holds a port or runs.
        assert!(host.restart().await.unwrap());
        assert_eq!(
            seen.lock().unwrap().len(),
            effects,
            "an effect after the crash"
        );
        let mut c1 = connect(&host, "c1").await;
        assert_eq!(
            call(&mut c1, &["GET", "lock"]).await,
            kept,
            "{mode:?} after {wait:?}"
        );
    }
}

#[tokio::test]
async fn a_paused_node_answers_after_it_resumes() {
    let (host, seen) = node(Mode::None, 1.0).await;
    let mut c1 = connect(&host, "c1").await;
    assert_eq!(call(&mut c1, &["PING"]).await, "+PONG\r\n");
    host.set_paused(true);
    c1.write_all(&resp(&["SET", "k", "v"])).await.unwrap();
    let mut b = [0u8; 16];
    let early = tokio::time::timeout(300 * MS, c1.read(&mut b)).await;
    assert!(early.is_err(), "answered while paused");
    assert!(
        seen.lock().unwrap().is_empty(),
        "ran a command while paused"
    );
    host.set_paused(false);
    let n = tokio::time::timeout(SLACK, c1.read(&mut b))
        .await
        .expect("no answer after resuming")
        .unwrap();
    assert_eq!(&b[..n], b"+OK\r\n");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_fast_clock_expires_a_key_early() {
    let (host, _) = node(Mode::None, 2.0).await;
    let mut c1 = connect(&host, "c1").await;
    let set = Instant::now();
    assert_eq!(
        call(&mut c1, &["SET", "lock", "t1", "PX", "1000"]).await,
        "+OK\r\n"
    );
    loop {
        if call(&mut c1, &["GET", "lock"]).await == "$-1\r\n" {
            break;
        }
        tokio::time::sleep(10 * MS).await;
    }
    let gone = set.elapsed();
    assert!(
        gone >= 480 * MS && gone < 500 * MS + SLACK,
        "gone after {gone:?}"
    );
}
