//! The sentinel: one host that watches the master of the `single` topology
//! and fails over to the most up-to-date replica, as Redis Sentinel does
//! (with a quorum of one).
//!
//! Every [`TICK`] of its clock it pings the current master (timeout
//! [`REQUEST_TIMEOUT`]). Once the master has not answered for
//! `failover_after`, it asks every other node `ROLE`, picks the reachable
//! replica with the highest offset (ties: the first in `nodes` order), sends
//! it `REPLICAOF NO ONE`, and once that is acknowledged makes it the master,
//! reports the failover, and sends every other node (the old master
//! included, whenever it is reachable again: it keeps retrying)
//! `REPLICAOF <new host> <new port>`. Every [`RECONCILE`] it also asks every
//! node but the master for its `ROLE` and re-points any that is not a
//! replica of the current master (a node that restarted as an empty master).
//!
//! It answers clients on [`SENTINEL_PORT`]: `SENTINEL
//! get-master-addr-by-name <any name>` gives `[host, port]` of the current
//! master; `PING` gives `PONG`.

use crate::client::connection::{Connector, NodeConn};
use crate::clock::Clock;
use crate::node::errors::is;
use crate::node::Listener;
use crate::resp::{ConnError, Connection, Frame};
use bytes::Bytes;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

pub const SENTINEL_PORT: u16 = 26379;
/// How often the sentinel pings the master.
pub const TICK: Duration = Duration::from_millis(100);
/// Timeout of every request the sentinel sends.
pub const REQUEST_TIMEOUT: Duration = Duration::from_millis(50);
/// How often it checks that every other node replicates the master.
pub const RECONCILE: Duration = Duration::from_secs(1);

/// Called with `(old master, new master)` addresses at each failover.
pub type FailoverHook = Arc<dyn Fn(&str, &str) + Send + Sync>;

#[derive(Clone)]
pub struct SentinelConfig {
    /// Node addresses, `host:port` (`"n1:6379"`, ...), in tie-break order.
    pub nodes: Vec<String>,
    /// Address of the master at the start (one of `nodes`).
    pub master: String,
    /// Fail over once the master has been unreachable this long; `None`:
    /// never fail over (the sentinel still answers and re-points nodes).
    pub failover_after: Option<Duration>,
    pub clock: Arc<dyn Clock>,
    pub connector: Arc<dyn Connector>,
    pub on_failover: FailoverHook,
}

/// Splits `host:port`.
pub fn split_addr(addr: &str) -> (&str, &str) {
    addr.rsplit_once(':').unwrap_or((addr, "6379"))
}

/// Runs the sentinel on this turmoil host: the monitor, and the RESP server
/// on `0.0.0.0:26379`.
pub async fn run(cfg: SentinelConfig) -> turmoil::Result {
    let listener = super::sockets::bind(SENTINEL_PORT).await?;
    run_with_listener(cfg, listener).await?;
    Ok(())
}

/// [`run`] on any listener.
pub async fn run_with_listener<L: Listener>(cfg: SentinelConfig, listener: L) -> std::io::Result<()>
where
    L::Stream: 'static,
{
    let master = Arc::new(Mutex::new(cfg.master.clone()));
    let monitor = tokio::spawn(monitor(cfg, master.clone()));
    let result = serve(listener, master).await;
    monitor.abort();
    result
}

async fn serve<L: Listener>(mut listener: L, master: Arc<Mutex<String>>) -> std::io::Result<()> {
    loop {
        let stream = listener.accept().await?;
        tokio::spawn(answer(stream, master.clone()));
    }
}

async fn answer<S: AsyncRead + AsyncWrite + Unpin>(stream: S, master: Arc<Mutex<String>>) {
    let mut conn = Connection::new(stream);
    loop {
        let args = match conn.read_request().await {
            Ok(Some(args)) if args.is_empty() => continue,
            Ok(Some(args)) => args,
            Ok(None) | Err(ConnError::Io(_)) | Err(ConnError::Closed) => return,
            Err(ConnError::Protocol(e)) => {
                let _ = conn.write_frame(&Frame::err(format!("ERR {e}"))).await;
                return;
            }
        };
        let reply = reply_to(&args, &master.lock().unwrap_or_else(|e| e.into_inner()));
        if conn.write_frame(&reply).await.is_err() {
            return;
        }
    }
}

fn reply_to(args: &[Bytes], master: &str) -> Frame {
    if is(&args[0], "ping") && args.len() == 1 {
        return Frame::Simple("PONG".into());
    }
    if is(&args[0], "sentinel") && args.len() == 3 && is(&args[1], "get-master-addr-by-name") {
        let (host, port) = split_addr(master);
        return Frame::Array(vec![Frame::bulk(host), Frame::bulk(port)]);
    }
    Frame::err(format!(
        "ERR unknown command '{}'",
        String::from_utf8_lossy(&args[0])
    ))
}

/// What `ROLE` said.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Master,
    Replica { master: String, offset: i64 },
}

fn parse_role(f: &Frame) -> Option<Seen> {
    let Frame::Array(items) = f else { return None };
    match items.first()? {
        Frame::Bulk(b) if b.as_ref() == b"master" => Some(Seen::Master),
        Frame::Bulk(b) if b.as_ref() == b"slave" => {
            // The node may name its master `host:port` or `host` (with the
            // port beside it, as Redis does): compare as `host:port`.
            let master = match (items.get(1)?, items.get(2)?) {
                (Frame::Bulk(m), _) if m.contains(&b':') => String::from_utf8_lossy(m).into_owned(),
                (Frame::Bulk(m), Frame::Integer(port)) => {
                    format!("{}:{port}", String::from_utf8_lossy(m))
                }
                _ => return None,
            };
            let offset = match items.get(4)? {
                Frame::Integer(o) => *o,
                _ => return None,
            };
            Some(Seen::Replica { master, offset })
        }
        _ => None,
    }
}

struct Monitor {
    cfg: SentinelConfig,
    conns: Mutex<Vec<Arc<NodeConn>>>,
    master: Arc<Mutex<String>>,
}

impl Monitor {
    /// One request to node `i`. A failed connection is replaced by a fresh
    /// one, so the next request reconnects at once: the sentinel's own pace
    /// ([`TICK`]) is its backoff, and a master that is back is seen back.
    async fn request(&self, i: usize, cmd: &[&str]) -> Option<Frame> {
        let conn = self.conns.lock().unwrap_or_else(|e| e.into_inner())[i].clone();
        let r = conn
            .request(
                &*self.cfg.connector,
                &*self.cfg.clock,
                &Frame::command(cmd),
                REQUEST_TIMEOUT,
            )
            .await;
        if r.is_err() {
            let fresh = Arc::new(NodeConn::new(self.cfg.nodes[i].clone()));
            self.conns.lock().unwrap_or_else(|e| e.into_inner())[i] = fresh;
        }
        r.ok()
    }

    async fn role(&self, i: usize) -> Option<Seen> {
        parse_role(&self.request(i, &["ROLE"]).await?)
    }

    fn current(&self) -> String {
        self.master
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn index(&self, addr: &str) -> Option<usize> {
        self.cfg.nodes.iter().position(|n| n == addr)
    }

    /// Promotes the best reachable replica; returns its index.
    async fn failover(&self, old: usize) -> Option<usize> {
        let mut best: Option<(i64, usize)> = None;
        for i in 0..self.cfg.nodes.len() {
            if i == old {
                continue;
            }
            if let Some(Seen::Replica { offset, .. }) = self.role(i).await {
                if best.is_none_or(|(o, _)| offset > o) {
                    best = Some((offset, i));
                }
            }
        }
        let (_, new) = best?;
        match self.request(new, &["REPLICAOF", "NO", "ONE"]).await {
            Some(Frame::Simple(_)) => Some(new),
            _ => None,
        }
    }
}

/// Pings the master, fails over, and keeps the other nodes pointed at it.
async fn monitor(cfg: SentinelConfig, master: Arc<Mutex<String>>) {
    let clock = cfg.clock.clone();
    let m = Monitor {
        conns: Mutex::new(
            cfg.nodes
                .iter()
                .map(|n| Arc::new(NodeConn::new(n)))
                .collect(),
        ),
        cfg,
        master,
    };
    let mut last_ok = clock.now();
    let mut next_tick = clock.now();
    let mut next_reconcile = clock.now() + RECONCILE;
    // Nodes still to be sent `REPLICAOF <master>`.
    let mut pending: BTreeSet<usize> = BTreeSet::new();
    loop {
        let now = clock.now();
        if next_tick > now {
            clock.sleep(next_tick - now).await;
        }
        // A slow tick (requests timing out) delays the next; no catching up.
        next_tick = next_tick.max(clock.now()) + TICK;
        let current = m.current();
        let Some(cur) = m.index(&current) else {
            return;
        };
        if m.request(cur, &["PING"]).await.is_some() {
            last_ok = clock.now();
        } else if let Some(after) = m.cfg.failover_after {
            if clock.now().saturating_sub(last_ok) >= after {
                if let Some(new) = m.failover(cur).await {
                    let new_addr = m.cfg.nodes[new].clone();
                    *m.master.lock().unwrap_or_else(|e| e.into_inner()) = new_addr.clone();
                    (m.cfg.on_failover)(&current, &new_addr);
                    pending = (0..m.cfg.nodes.len()).filter(|&i| i != new).collect();
                    last_ok = clock.now();
                    continue;
                }
            }
        }
        if clock.now() >= next_reconcile {
            next_reconcile = clock.now() + RECONCILE;
            for i in 0..m.cfg.nodes.len() {
                if i == cur || pending.contains(&i) {
                    continue;
                }
                match m.role(i).await {
                    Some(Seen::Replica { master, .. }) if master == current => {}
                    Some(_) => {
                        pending.insert(i);
                    }
                    None => {}
                }
            }
        }
        let (host, port) = split_addr(&current);
        for i in pending.clone() {
            if let Some(Frame::Simple(_)) = m.request(i, &["REPLICAOF", host, port]).await {
                pending.remove(&i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_parse() {
        let replica = Frame::Array(vec![
            Frame::bulk("slave"),
            Frame::bulk("n1:6379"),
            Frame::Integer(6379),
            Frame::bulk("connected"),
            Frame::Integer(42),
        ]);
        assert_eq!(
            parse_role(&replica),
            Some(Seen::Replica {
                master: "n1:6379".into(),
                offset: 42
            })
        );
        let master = Frame::Array(vec![
            Frame::bulk("master"),
            Frame::Integer(3),
            Frame::Array(vec![]),
        ]);
        assert_eq!(parse_role(&master), Some(Seen::Master));
        let redis_style = Frame::Array(vec![
            Frame::bulk("slave"),
            Frame::bulk("n1"),
            Frame::Integer(6379),
            Frame::bulk("connected"),
            Frame::Integer(7),
        ]);
        assert_eq!(
            parse_role(&redis_style),
            Some(Seen::Replica {
                master: "n1:6379".into(),
                offset: 7
            })
        );
        assert_eq!(parse_role(&Frame::Null), None);
    }

    #[test]
    fn answers_get_master_addr() {
        let args: Vec<Bytes> = ["SENTINEL", "get-master-addr-by-name", "mymaster"]
            .iter()
            .map(|s| Bytes::from(*s))
            .collect();
        assert_eq!(
            reply_to(&args, "n2:6379"),
            Frame::Array(vec![Frame::bulk("n2"), Frame::bulk("6379")])
        );
        assert_eq!(
            reply_to(&[Bytes::from("PING")], "n1:6379"),
            Frame::Simple("PONG".into())
        );
    }
}
