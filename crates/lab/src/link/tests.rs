//! The lab's link: latency each way, holds that keep and deliver in order,
//! a connect that waits for the heal, nothing left after a drop.

// A connect across a cut, with redis-py against the lab's node.
mod connect;

use crate::link::{Link, Setting};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

const MS: Duration = Duration::from_millis(1);
/// Far above what an idle machine needs for a hop on loopback.
const SLACK: Duration = Duration::from_millis(400);

/// A server that reports each connection's bytes as they arrive (None at
/// its end), with the instant, and echoes them.
async fn server() -> (
    SocketAddr,
    mpsc::UnboundedReceiver<(Instant, Option<Vec<u8>>)>,
) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                loop {
                    let n = s.read(&mut buf).await.unwrap_or(0);
                    let _ = tx.send((Instant::now(), (n > 0).then(|| buf[..n].to_vec())));
                    if n == 0 || s.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, rx)
}

/// Everything the server received on its connections, in order, until an end.
async fn received(
    rx: &mut mpsc::UnboundedReceiver<(Instant, Option<Vec<u8>>)>,
) -> (Vec<u8>, Instant) {
    let mut all = Vec::new();
    while let Some((at, got)) = rx.recv().await {
        match got {
            Some(b) => all.extend(b),
            None => return (all, at),
        }
    }
    panic!("the server's channel closed");
}

#[tokio::test]
async fn a_round_trip_takes_the_latency_each_way() {
    let (addr, _rx) = server().await;
    let link = Link::open(addr, Setting::open(100 * MS), 1).await.unwrap();

    let mut c = TcpStream::connect(link.addr).await.unwrap();
    // The connect itself waits a hop before the server sees it.
    let t0 = Instant::now();
    c.write_all(b"ping").await.unwrap();
    let mut b = [0u8; 4];
    c.read_exact(&mut b).await.unwrap();
    let rtt = t0.elapsed();
    assert_eq!(&b, b"ping");
    assert!(
        rtt >= 200 * MS && rtt < 300 * MS + SLACK,
        "round trip {rtt:?}"
    );
}

#[tokio::test]
async fn what_a_hold_keeps_arrives_in_order_after_the_heal_then_the_end() {
    let (addr, mut rx) = server().await;
    let link = Link::open(addr, Setting::open(MS), 2).await.unwrap();
    let mut c = TcpStream::connect(link.addr).await.unwrap();
    c.write_all(b"x").await.unwrap();
    let mut b = [0u8; 1];
    c.read_exact(&mut b).await.unwrap();
    assert_eq!(rx.recv().await.unwrap().1.as_deref(), Some(&b"x"[..]));

    link.up.send_modify(|s| s.held = true);
    c.write_all(b"a").await.unwrap();
    c.write_all(b"b").await.unwrap();
    c.shutdown().await.unwrap();
    let quiet = tokio::time::timeout(300 * MS, rx.recv()).await;
    assert!(
        quiet.is_err(),
        "delivered across a hold: {:?}",
        quiet.unwrap()
    );
    let healed = Instant::now();
    link.up.send_modify(|s| s.held = false);
    let (bytes, end) = received(&mut rx).await;
    assert_eq!(bytes, b"ab");
    assert!(
        end >= healed + MS && end < healed + SLACK,
        "end {:?} after the heal",
        end - healed
    );
}

#[tokio::test]
async fn a_connection_stays_in_order_when_its_latency_drops() {
    let (addr, mut rx) = server().await;
    let link = Link::open(addr, Setting::open(MS), 3).await.unwrap();
    let mut c = TcpStream::connect(link.addr).await.unwrap();
    c.write_all(b"x").await.unwrap();
    assert_eq!(rx.recv().await.unwrap().1.as_deref(), Some(&b"x"[..]));

    link.up.send_replace(Setting::open(500 * MS));
    let sent = Instant::now();
    c.write_all(b"a").await.unwrap();
    tokio::time::sleep(20 * MS).await;
    link.up.send_replace(Setting::open(MS));
    c.write_all(b"b").await.unwrap();
    c.shutdown().await.unwrap();
    let (first, _) = rx.recv().await.unwrap();
    assert!(
        first >= sent + 500 * MS,
        "first byte after {:?}",
        first - sent
    );
    assert!(
        first < sent + 500 * MS + SLACK,
        "first byte after {:?}",
        first - sent
    );
}

#[tokio::test]
async fn a_connect_across_a_held_link_reaches_the_server_after_the_heal() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let link = Link::open(l.local_addr().unwrap(), Setting::open(MS), 4)
        .await
        .unwrap();
    link.up.send_modify(|s| s.held = true);
    let _c = TcpStream::connect(link.addr).await.unwrap();
    let early = tokio::time::timeout(300 * MS, l.accept()).await;
    assert!(early.is_err(), "the server accepted across a hold");
    let healed = Instant::now();
    link.up.send_modify(|s| s.held = false);
    let accepted = tokio::time::timeout(SLACK, l.accept()).await;
    assert!(accepted.is_ok(), "not accepted {SLACK:?} after the heal");
    assert!(healed.elapsed() >= 2 * MS, "a round trip after the heal");
}

#[tokio::test]
async fn a_held_reply_direction_holds_the_handshake() {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let link = Link::open(l.local_addr().unwrap(), Setting::open(MS), 6)
        .await
        .unwrap();
    link.down.send_modify(|s| s.held = true);
    let mut c = TcpStream::connect(link.addr).await.unwrap();
    c.write_all(b"req").await.unwrap();
    let early = tokio::time::timeout(300 * MS, l.accept()).await;
    assert!(
        early.is_err(),
        "the server accepted while the SYN-ACK was held"
    );
    link.down.send_modify(|s| s.held = false);
    assert!(
        tokio::time::timeout(SLACK, l.accept()).await.is_ok(),
        "not accepted after the heal"
    );
}

#[tokio::test]
async fn a_hold_that_comes_back_within_a_hop_holds_again() {
    let (addr, mut rx) = server().await;
    let link = Link::open(addr, Setting::open(MS), 7).await.unwrap();
    let mut c = TcpStream::connect(link.addr).await.unwrap();
    c.write_all(b"x").await.unwrap();
    assert_eq!(rx.recv().await.unwrap().1.as_deref(), Some(&b"x"[..]));
    link.up.send_replace(Setting {
        held: true,
        latency: (200 * MS, 200 * MS),
    });
    c.write_all(b"a").await.unwrap();
    tokio::time::sleep(50 * MS).await;
    // A heal, and the partition back 50 ms later, inside the 200 ms hop.
    link.up.send_modify(|s| s.held = false);
    tokio::time::sleep(50 * MS).await;
    link.up.send_modify(|s| s.held = true);
    let quiet = tokio::time::timeout(500 * MS, rx.recv()).await;
    assert!(quiet.is_err(), "crossed a partition: {:?}", quiet.unwrap());
    let healed = Instant::now();
    link.up.send_modify(|s| s.held = false);
    let (at, got) = tokio::time::timeout(SLACK + 200 * MS, rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.as_deref(), Some(&b"a"[..]));
    assert!(
        at >= healed + 200 * MS,
        "a hop after the heal: {:?}",
        at - healed
    );
}

#[tokio::test]
async fn a_reset_ends_the_client_with_a_reset_and_loses_what_was_on_its_way() {
    let (addr, mut rx) = server().await;
    let link = Link::open(addr, Setting::open(MS), 8).await.unwrap();
    let mut c = TcpStream::connect(link.addr).await.unwrap();
    c.write_all(b"x").await.unwrap();
    assert_eq!(rx.recv().await.unwrap().1.as_deref(), Some(&b"x"[..]));
    let mut b = [0u8; 1];
    c.read_exact(&mut b).await.unwrap();
    link.up.send_replace(Setting::open(300 * MS));
    c.write_all(b"a").await.unwrap();
    tokio::time::sleep(20 * MS).await;
    link.reset();
    let got = tokio::time::timeout(SLACK, c.read(&mut b))
        .await
        .expect("client still open");
    let e = got.expect_err("a reset, not an end");
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset);
    let (_, end) = tokio::time::timeout(SLACK, rx.recv())
        .await
        .expect("server still open")
        .unwrap();
    assert_eq!(end, None, "the write on its way was delivered");
    // New connections go through again.
    link.up.send_replace(Setting::open(MS));
    let mut c = TcpStream::connect(link.addr).await.unwrap();
    c.write_all(b"y").await.unwrap();
    assert_eq!(rx.recv().await.unwrap().1.as_deref(), Some(&b"y"[..]));
}

#[tokio::test]
async fn a_refused_connect_is_a_reset_and_a_moved_server_is_followed() {
    let gone = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gone_addr = gone.local_addr().unwrap();
    drop(gone);
    let link = Link::open(gone_addr, Setting::open(MS), 9).await.unwrap();
    let mut c = TcpStream::connect(link.addr).await.unwrap();
    expect_reset(&mut c).await;
    let (addr, mut rx) = server().await;
    link.set_server(addr);
    let mut c = TcpStream::connect(link.addr).await.unwrap();
    c.write_all(b"z").await.unwrap();
    assert_eq!(rx.recv().await.unwrap().1.as_deref(), Some(&b"z"[..]));
}

/// Asserts that the link ends client `c` with a reset (what a refused
/// connect comes to through it), within the tests' slack.
async fn expect_reset(c: &mut TcpStream) {
    let mut b = [0u8; 1];
    let got = tokio::time::timeout(SLACK, c.read(&mut b))
        .await
        .expect("client still open");
    assert_eq!(
        got.expect_err("a reset").kind(),
        std::io::ErrorKind::ConnectionReset
    );
}

/// A crashed server's link refuses new connections itself: a program
/// that took the freed port since (here a listener still at the old
/// address, as another run's node could be) is never connected to, and
/// nothing reaches it until the link is told where the server came back.
#[tokio::test]
async fn a_gone_server_is_refused_by_the_link_even_when_its_port_answers() {
    let (addr, mut rx) = server().await;
    let link = Link::open(addr, Setting::open(MS), 10).await.unwrap();
    link.server_gone();
    let mut c = TcpStream::connect(link.addr).await.unwrap();
    let _ = c.write_all(b"SET").await;
    expect_reset(&mut c).await;
    assert!(
        tokio::time::timeout(100 * MS, rx.recv()).await.is_err(),
        "the old address was connected to"
    );
    let (back, mut back_rx) = server().await;
    link.set_server(back);
    let mut c = TcpStream::connect(link.addr).await.unwrap();
    c.write_all(b"z").await.unwrap();
    assert_eq!(back_rx.recv().await.unwrap().1.as_deref(), Some(&b"z"[..]));
}

#[tokio::test]
async fn dropping_the_link_ends_its_connections_and_frees_its_port() {
    let (addr, mut rx) = server().await;
    let link = Link::open(addr, Setting::open(MS), 5).await.unwrap();
    let port = link.addr;
    let mut c = TcpStream::connect(port).await.unwrap();
    c.write_all(b"x").await.unwrap();
    assert_eq!(rx.recv().await.unwrap().1.as_deref(), Some(&b"x"[..]));
    drop(link);
    // The server's connection ends, and so does the client's.
    let end = tokio::time::timeout(SLACK, rx.recv())
        .await
        .expect("server side still open");
    assert_eq!(end.unwrap().1, None);
    let mut b = [0u8; 8];
    let mut echoed = 0;
    loop {
        match tokio::time::timeout(SLACK, c.read(&mut b))
            .await
            .expect("client side still open")
        {
            Ok(0) | Err(_) => break,
            Ok(n) => echoed += n,
        }
    }
    assert!(echoed <= 1);
    TcpListener::bind(port)
        .await
        .expect("the link's port is still bound");
}
