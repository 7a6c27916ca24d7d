//! `WAIT numreplicas timeout` against `redis-server` 7.0.15: a master with
//! one replica on each side (two `redis-server`s; two nodes in this
//! process, the replica following over TCP), the same requests, the same
//! replies, and the same blocking: a write waited for by its one replica
//! returns at once, waiting for two returns 1 at the timeout; a connection
//! that wrote nothing waits for nothing; bad arguments and a replica are
//! refused with Redis's words; the master's `INFO` counts the replica
//! (`connected_slaves`, which Redisson reads to decide to `WAIT`). Found by the node-vs-Redis agreement report:
//! Redisson's `RLock` waits (`WAIT`) for its lock to reach the replicas, so
//! on real Redis a failover could not lose it, and on the node, which had
//! no `WAIT`, it could.

use crate::common::{self, start_redis};
use redlock_proto::resp::{parse, Frame};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn call(addr: &str, conn: &mut Option<TcpStream>, line: &str) -> String {
    if conn.is_none() {
        *conn = Some(TcpStream::connect(addr).await.unwrap());
    }
    let s = conn.as_mut().unwrap();
    let args: Vec<&str> = line.split(' ').collect();
    s.write_all(&Frame::command(args).to_bytes()).await.unwrap();
    let mut buf = Vec::new();
    loop {
        if let Some((_, used)) = parse(&buf).unwrap() {
            return String::from_utf8_lossy(&buf[..used]).trim_end().to_string();
        }
        let mut chunk = [0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut chunk))
            .await
            .expect("a reply within 10 s")
            .unwrap();
        assert!(n > 0, "closed");
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// One request on a connection of its own.
async fn once(addr: &str, line: &str) -> String {
    call(addr, &mut None, line).await
}

/// Waits until the replica has what the master was just given.
async fn synced(master: &str, replica: &str) {
    once(master, "SET synced 1").await;
    for _ in 0..500 {
        if once(replica, "GET synced").await == "$1\r\n1" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{replica} never synced with {master}");
}

/// The cases, each reply with how long it took (ms).
async fn cases(master: &str, replica: &str) -> Vec<(String, u128)> {
    synced(master, replica).await;
    let mut out = Vec::new();
    let mut c = None;
    for line in [
        "WAIT 1 0",
        "SET k v",
        "WAIT 1 5000",
        "SET k2 v",
        "WAIT 2 300",
        "WAIT 0 0",
        "WAIT x 0",
        "WAIT 1 x",
        "WAIT 1 -1",
        "WAIT 1",
    ] {
        let t = Instant::now();
        let r = call(master, &mut c, line).await;
        out.push((format!("{line} => {r}"), t.elapsed().as_millis()));
    }
    let t = Instant::now();
    let r = once(replica, "WAIT 0 0").await;
    out.push((format!("replica WAIT 0 0 => {r}"), t.elapsed().as_millis()));
    // Redisson decides to WAIT by the master's `connected_slaves`.
    let info = once(master, "INFO replication").await;
    let slaves = info
        .lines()
        .find(|l| l.starts_with("connected_slaves:"))
        .unwrap_or("(none)")
        .to_string();
    out.push((slaves, 0));
    // What Redis Sentinel reads of a replica: its master's host and port
    // apart, the link, its priority; an offset.
    let info = once(replica, "INFO replication").await;
    let (host, port) = master.split_once(':').unwrap();
    for field in [
        "role",
        "master_host",
        "master_port",
        "master_link_status",
        "slave_priority",
    ] {
        let v = info
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")))
            .unwrap_or("(none)");
        let v = if v == host {
            "<master's host>"
        } else if v == port {
            "<master's port>"
        } else {
            v
        };
        out.push((format!("replica {field}:{v}"), 0));
    }
    let offset = info.lines().any(|l| l.starts_with("slave_repl_offset:"));
    out.push((format!("replica slave_repl_offset: {offset}"), 0));
    out
}

async fn node_pair() -> (String, String) {
    use redlock_node::{replication, serve, Node};
    use redlock_proto::clock::SystemClock;
    let mut addrs = Vec::new();
    let mut nodes = Vec::new();
    for _ in 0..2 {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        addrs.push(l.local_addr().unwrap().to_string());
        let node = Node::new(Arc::new(SystemClock::new()));
        tokio::spawn(serve(node.clone(), l));
        nodes.push(node);
    }
    let connector = Arc::new(redlock_proto::transport::TcpConnector);
    for n in &nodes {
        tokio::spawn(replication::replica_task(n.clone(), connector.clone()));
    }
    let (host, port) = addrs[0].split_once(':').unwrap();
    once(&addrs[1], &format!("REPLICAOF {host} {port}")).await;
    (addrs[0].clone(), addrs[1].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_blocks_and_answers_as_redis_does() {
    common::require_redis("wait_blocks_and_answers_as_redis_does");
    let servers = start_redis(2);
    let (m, r) = (servers[0].addr(), servers[1].addr());
    let (host, port) = m.split_once(':').unwrap();
    once(&r, &format!("REPLICAOF {host} {port}")).await;
    let redis = cases(&m, &r).await;
    let (nm, nr) = node_pair().await;
    let node = cases(&nm, &nr).await;
    let replies = |v: &[(String, u128)]| v.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>();
    assert_eq!(replies(&redis), replies(&node));
    assert_eq!(redis[2].0, "WAIT 1 5000 => :1");
    assert!(
        redis.iter().any(|(s, _)| s == "connected_slaves:1"),
        "{redis:?}"
    );
    assert!(
        redis
            .iter()
            .any(|(s, _)| s == "replica master_port:<master's port>"),
        "{redis:?}"
    );
    for side in [&redis, &node] {
        // Acknowledged within a second, not at the 5 s timeout.
        assert!(side[2].1 < 1000, "{side:?}");
        // Two replicas wanted, one there: the 300 ms timeout runs out.
        assert!(side[4].1 >= 250 && side[4].1 < 2000, "{side:?}");
    }
}
