//! The `single` topology's real `redis-sentinel`: one, of quorum 1,
//! monitoring the master through its own links to the nodes, configured
//! as the scenario's sentinel:
//! - `down-after-milliseconds` is `cluster.failover_after`;
//! - `failover-timeout` is the node's sentinel's ([`FAILOVER_TIMEOUT`],
//!   3 s), `parallel-syncs` 1.
//!
//! The lab records each failover when the sentinel announces the
//! promotion (`+promoted-slave`, which the lab subscribes to on a
//! connection of its own): from then on `SENTINEL get-master-addr-by-name`
//! names the new master, as the node's sentinel does. Its `+switch-master`
//! comes later: once the other replicas report the new master (which,
//! through the lab's links, they name by another address than the
//! sentinel's), or at the failover timeout.

use super::observe::query;
use super::server::Launch;
use crate::process::{ClientProcess, Reaper};
use bytes::{Buf, BytesMut};
use redlock_node::sentinel::FAILOVER_TIMEOUT;
use redlock_proto::resp::{self, Frame};
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

/// Told each failover: the old master's and the new one's ports, as the
/// sentinel knows them (its links' ports).
pub(crate) type OnSwitch = Arc<dyn Fn(u16, u16) + Send + Sync>;

pub(crate) struct RealSentinel {
    process: Option<ClientProcess>,
    pub(crate) addr: SocketAddr,
    watcher: JoinHandle<()>,
}

impl RealSentinel {
    /// Starts the sentinel, its configuration in `dir`, monitoring the
    /// master it reaches at `master_port`.
    pub(crate) async fn start(
        dir: &Path,
        logs: &Path,
        master_port: u16,
        replica_ports: &[u16],
        failover_after: Duration,
        reaper: &Arc<Reaper>,
        on_switch: OnSwitch,
    ) -> io::Result<RealSentinel> {
        assert!(
            !replica_ports.contains(&master_port),
            "the sentinel's master at port {master_port}, a replica's"
        );
        std::fs::create_dir_all(dir)?;
        let down_after = failover_after.as_millis().max(1);
        let failover_timeout = FAILOVER_TIMEOUT.as_millis();
        let conf = dir.join("sentinel.conf");
        let text = format!(
            "bind 127.0.0.1\nprotected-mode no\ndir \"{}\"\nlogfile \"\"\n\
             sentinel monitor mymaster 127.0.0.1 {master_port} 1\n\
             sentinel down-after-milliseconds mymaster {down_after}\n\
             sentinel failover-timeout mymaster {failover_timeout}\n\
             sentinel parallel-syncs mymaster 1\n",
            dir.display()
        );
        let known: String = replica_ports
            .iter()
            .map(|p| format!("sentinel known-replica mymaster 127.0.0.1 {p}\n"))
            .collect();
        std::fs::write(&conf, text + &known)?;
        let launch = Launch {
            program: "redis-sentinel",
            conf: &conf,
            env: &[],
            cleared: &[],
            reaper,
        };
        let log = |attempt: u32| logs.join(format!("sentinel.{attempt}.log"));
        let (p, addr, _) = launch
            .start(log)
            .await
            .map_err(|e| io::Error::other(format!("redis-sentinel did not start: {e}")))?;
        watching(addr, replica_ports).await?;
        let watcher = tokio::spawn(watch(addr, on_switch));
        Ok(RealSentinel {
            process: Some(p),
            addr,
            watcher,
        })
    }

    pub(crate) async fn stop(&mut self) {
        self.watcher.abort();
        if let Some(mut p) = self.process.take() {
            let _ = p.stop(Duration::from_secs(2)).await;
        }
    }
}

impl Drop for RealSentinel {
    fn drop(&mut self) {
        self.watcher.abort();
    }
}

/// Waits (10 s at most) until the sentinel has answers from the master and
/// from every replica: the run starts with a sentinel that can fail over
/// at once, as the node code's does.
async fn watching(addr: SocketAddr, replicas: &[u16]) -> io::Result<()> {
    for _ in 0..1000 {
        let master = query(addr, &["SENTINEL", "MASTER", "mymaster"]).await?;
        let listed = query(addr, &["SENTINEL", "REPLICAS", "mymaster"]).await?;
        let healthy = |f: &Frame, flags: &str| field(f, "flags").as_deref() == Some(flags);
        let up: Vec<u16> = match &listed {
            Frame::Array(rs) => rs
                .iter()
                .filter(|r| healthy(r, "slave"))
                .filter_map(|r| field(r, "port")?.parse().ok())
                .collect(),
            _ => Vec::new(),
        };
        if healthy(&master, "master") && replicas.iter().all(|p| up.contains(p)) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err(io::Error::other(
        "the sentinel did not see the master and every replica up in 10 s",
    ))
}

/// A field of a `SENTINEL MASTER`/`REPLICAS` entry (a flat array of names
/// and values).
fn field(entry: &Frame, name: &str) -> Option<String> {
    let Frame::Array(items) = entry else {
        return None;
    };
    items.chunks(2).find_map(|kv| match kv {
        [Frame::Bulk(k), Frame::Bulk(v)] if k.as_ref() == name.as_bytes() => {
            Some(String::from_utf8_lossy(v).into_owned())
        }
        _ => None,
    })
}

/// Subscribes to `+promoted-slave` and tells `on_switch` each.
async fn watch(addr: SocketAddr, on_switch: OnSwitch) {
    let Ok(mut s) = TcpStream::connect(addr).await else {
        return;
    };
    let sub = Frame::command(["SUBSCRIBE", "+promoted-slave"]).to_bytes();
    if s.write_all(&sub).await.is_err() {
        return;
    }
    let mut buf = BytesMut::new();
    loop {
        match s.read_buf(&mut buf).await {
            Ok(n) if n > 0 => {}
            _ => return,
        }
        while let Ok(Some((frame, used))) = resp::parse(&buf) {
            buf.advance(used);
            if let Some((old, new)) = promotion_of(&frame) {
                on_switch(old, new);
            }
        }
    }
}

/// `slave <ip>:<port> <ip> <port> @ mymaster <master ip> <master port>`'s
/// ports: the old master's and the promoted replica's.
fn promotion_of(frame: &Frame) -> Option<(u16, u16)> {
    let Frame::Array(items) = frame else {
        return None;
    };
    let Some(Frame::Bulk(msg)) = items.get(2) else {
        return None;
    };
    let text = String::from_utf8_lossy(msg);
    let w: Vec<&str> = text.split(' ').collect();
    if w.len() != 8 || w[0] != "slave" || w[4] != "@" {
        return None;
    }
    Some((w[7].parse().ok()?, w[3].parse().ok()?))
}
