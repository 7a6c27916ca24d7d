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
//! It answers clients ([`answer`]) as Redis Sentinel 7 does, for the
//! master named `mymaster`: `SENTINEL get-master-addr-by-name`, `masters`,
//! `master`, `replicas`, `sentinels`, `ROLE`, `PING`, `INFO` and the
//! handshake; the simulation serves it on [`SENTINEL_PORT`].
//!
//! Clients may `SUBSCRIBE` and `PSUBSCRIBE` to its events (rueidis,
//! go-redis's failover client, ioredis's failover detector): it publishes
//! `+sdown` and `+odown` (`master mymaster <ip> <port>`, `#quorum 1/1`)
//! when the master has not answered for the down-after time, `-sdown` and
//! `-odown` when it answers again, and `+switch-master mymaster <old ip>
//! <old port> <new ip> <new port>` at each failover, each client shown the
//! addresses its listener shows. Redis Sentinel's other events (the
//! failover's steps, `+slave`, `+sentinel`, `+reboot`) are not published.
//! A RESP2 client subscribed to anything is refused every other command
//! but `PING`, as Redis Sentinel refuses it.

pub mod answer;

use crate::Listener;
use redlock_proto::clock::Clock;
use redlock_proto::connection::{Connector, NodeConn};
use redlock_proto::resp::{Connection, Frame};
use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

pub const SENTINEL_PORT: u16 = 26379;
/// How often the sentinel pings the master.
pub(crate) const TICK: Duration = Duration::from_millis(100);
/// Timeout of every request the sentinel sends.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_millis(50);
/// How often it checks that every other node replicates the master.
pub(crate) const RECONCILE: Duration = Duration::from_secs(1);

/// Called with `(old master, new master)` addresses at each failover.
pub(crate) type FailoverHook = Arc<dyn Fn(&str, &str) + Send + Sync>;

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
    /// Asks the nodes' roles at once, so that it lists the replicas from
    /// its first answer, as a sentinel that has run a while does (the lab;
    /// the simulation's first look is [`RECONCILE`] in, which its traces
    /// keep).
    pub reconcile_at_start: bool,
}

/// Splits `host:port`.
pub fn split_addr(addr: &str) -> (&str, &str) {
    addr.rsplit_once(':').unwrap_or((addr, "6379"))
}

/// What the sentinel knows now, for its answers ([`answer`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct View {
    /// The master's address, as the monitor reaches it.
    pub master: String,
    /// The replicas of the master seen at the last reconcile, with their
    /// offsets, in `nodes` order.
    pub(crate) replicas: Vec<(String, i64)>,
    /// The sentinel's time of the master's last answer.
    pub(crate) last_ok: Duration,
    /// Failovers so far.
    pub(crate) config_epoch: u64,
    /// How long the master may not answer before it is down: the
    /// failover's wait, or Redis's default for a monitor that never fails
    /// over.
    pub(crate) down_after: Duration,
}

/// Redis Sentinel's default `down-after-milliseconds`.
const DEFAULT_DOWN_AFTER: Duration = Duration::from_secs(30);

impl View {
    /// The master has not answered for the down-after time at `now`.
    pub(crate) fn master_down(&self, now: Duration) -> bool {
        now.saturating_sub(self.last_ok) >= self.down_after
    }
}

type Shared = Arc<Mutex<View>>;

fn lock(view: &Shared) -> std::sync::MutexGuard<'_, View> {
    view.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs the sentinel: the monitor, and the RESP server on `listener`
/// (the simulation's `sim::sentinel::run` binds it on its host).
pub async fn run_with_listener<L: Listener>(cfg: SentinelConfig, listener: L) -> std::io::Result<()>
where
    L::Stream: 'static,
{
    run_with_listeners(cfg, vec![(listener, answer::same())]).await
}

/// [`run_with_listener`] with one listener per kind of client, each showing
/// the nodes' addresses through its own [`answer::Translate`] (the lab:
/// the address this client reaches each node at).
pub async fn run_with_listeners<L: Listener>(
    cfg: SentinelConfig,
    listeners: Vec<(L, answer::Translate)>,
) -> std::io::Result<()>
where
    L::Stream: 'static,
{
    let view: Shared = Arc::new(Mutex::new(View {
        master: cfg.master.clone(),
        down_after: cfg.failover_after.unwrap_or(DEFAULT_DOWN_AFTER),
        last_ok: cfg.clock.now(),
        ..View::default()
    }));
    let clock = cfg.clock.clone();
    // Each listener's connections: their handshake answered as a node
    // answers it, numbered as a server numbers its clients (one count for
    // all), and their subscriptions.
    let first = crate::Node::new(clock.clone());
    let handshakes: Vec<crate::Node> = (0..listeners.len())
        .map(|i| {
            if i == 0 {
                first.clone()
            } else {
                first.sharing_ids()
            }
        })
        .collect();
    let audience = Audience(Arc::new(
        handshakes
            .iter()
            .cloned()
            .zip(listeners.iter().map(|(_, t)| t.clone()))
            .collect(),
    ));
    let monitor = tokio::spawn(monitor(cfg, view.clone(), audience));
    let result = serve(listeners, view, clock, handshakes).await;
    monitor.abort();
    result
}

/// Whom the sentinel's events reach: each listener's subscribers, shown
/// the addresses that listener shows.
#[derive(Clone)]
struct Audience(Arc<Vec<(crate::Node, answer::Translate)>>);

impl Audience {
    /// Publishes on `channel` to every subscriber the message `text` writes
    /// with its listener's addresses, as Redis Sentinel publishes its
    /// events.
    fn publish(&self, channel: &str, text: impl Fn(&answer::Translate) -> String) {
        for (node, show) in self.0.iter() {
            let message = text(show);
            node.with_keyspace(|ks| crate::pubsub::publish_to(ks, channel, &message));
        }
    }

    /// `+sdown`/`+odown` (`down`) or `-sdown`/`-odown` of the master.
    fn master_down(&self, addr: &str, down: bool) {
        let sign = if down { '+' } else { '-' };
        let at = |show: &answer::Translate| {
            let shown = show(addr);
            let (ip, port) = split_addr(&shown);
            format!("master {} {ip} {port}", answer::MASTER_NAME)
        };
        self.publish(&format!("{sign}sdown"), at);
        let quorum = if down { " #quorum 1/1" } else { "" };
        self.publish(&format!("{sign}odown"), |show| {
            format!("{}{quorum}", at(show))
        });
    }

    /// `+switch-master <name> <old ip> <old port> <new ip> <new port>`.
    fn switch_master(&self, old: &str, new: &str) {
        self.publish("+switch-master", |show| {
            let (old, new) = (show(old), show(new));
            let ((oi, op), (ni, np)) = (split_addr(&old), split_addr(&new));
            format!("{} {oi} {op} {ni} {np}", answer::MASTER_NAME)
        });
    }
}

/// Accepts on every listener until one fails; each connection gets its
/// own task.
async fn serve<L: Listener>(
    mut listeners: Vec<(L, answer::Translate)>,
    view: Shared,
    clock: Arc<dyn Clock>,
    handshakes: Vec<crate::Node>,
) -> std::io::Result<()>
where
    L::Stream: 'static,
{
    loop {
        let (i, accepted) = {
            let mut accepts: Vec<_> = listeners
                .iter_mut()
                .enumerate()
                .map(|(i, (l, _))| Box::pin(async move { (i, l.accept().await) }))
                .collect();
            // The first ready, in listener order.
            std::future::poll_fn(|cx| {
                for a in accepts.iter_mut() {
                    if let std::task::Poll::Ready(r) = a.as_mut().poll(cx) {
                        return std::task::Poll::Ready(r);
                    }
                }
                std::task::Poll::Pending
            })
            .await
        };
        let show = listeners[i].1.clone();
        let shared = (view.clone(), clock.clone(), handshakes[i].clone());
        tokio::spawn(connection(accepted?, show, shared));
    }
}

/// One client's connection: sentinel commands from the view; the
/// handshake as a node answers it, in mode `sentinel`; the subscriptions
/// to the sentinel's events, whose messages it writes while it waits.
async fn connection<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    show: answer::Translate,
    (view, clock, handshake): (Shared, Arc<dyn Clock>, crate::Node),
) {
    let mut conn = Connection::new(stream);
    let mut session = crate::session::Session::new(handshake.next_client_id());
    let mut client = crate::clients::Attached::new(&handshake, session.id);
    while let Some(args) = client.next_request(&mut conn, session.protocol).await {
        let now = clock.now();
        let replies = answer_request(&args, &lock(&view), &show, now, &handshake, &mut session);
        if !client
            .write_replies(&mut conn, &replies, session.protocol)
            .await
        {
            return;
        }
    }
}

/// The replies to one request on a sentinel connection.
fn answer_request(
    args: &[bytes::Bytes],
    view: &View,
    show: &answer::Translate,
    now: Duration,
    handshake: &crate::Node,
    session: &mut crate::session::Session,
) -> Vec<Frame> {
    let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    let subscribed = session.protocol == redlock_proto::resp::Protocol::Resp2
        && handshake.keyspace().pubsub.subscribed(session.id);
    match name.as_str() {
        "subscribe" | "psubscribe" | "unsubscribe" | "punsubscribe" => {
            return crate::session::answer(handshake, session, args);
        }
        "ping" if subscribed => return crate::session::answer(handshake, session, args),
        _ => {}
    }
    if subscribed {
        if let Some(refused) = answer::refused_when_subscribed(args) {
            return vec![refused];
        }
    }
    let answered = answer::reply(args, view, show, now);
    vec![answered
        .unwrap_or_else(|| sentinel_mode(crate::session::execute(handshake, session, args)))]
}

/// A `HELLO` reply as a sentinel words it: `mode sentinel`, and no `role`.
fn sentinel_mode(reply: Frame) -> Frame {
    let Frame::Map(pairs) = reply else {
        return reply;
    };
    let key = |k: &Frame, name: &str| matches!(k, Frame::Bulk(b) if b.as_ref() == name.as_bytes());
    let pairs = pairs.into_iter().filter(|(k, _)| !key(k, "role"));
    Frame::Map(
        pairs
            .map(|(k, v)| match key(&k, "mode") {
                true => (k, Frame::bulk("sentinel")),
                false => (k, v),
            })
            .collect(),
    )
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
    view: Shared,
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
        lock(&self.view).master.clone()
    }

    /// The master answered at `at`.
    fn saw_master(&self, at: Duration) {
        lock(&self.view).last_ok = at;
    }

    /// `addr` is the master now.
    fn promoted(&self, addr: &str, at: Duration) {
        let mut v = lock(&self.view);
        v.master = addr.to_string();
        v.replicas.retain(|(a, _)| a != addr);
        v.last_ok = at;
        v.config_epoch += 1;
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

/// Pings the master, fails over, and keeps the other nodes pointed at it;
/// tells the subscribers of the master's going down and coming back, and
/// of each failover.
async fn monitor(cfg: SentinelConfig, view: Shared, audience: Audience) {
    let clock = cfg.clock.clone();
    let m = Monitor {
        conns: Mutex::new(
            cfg.nodes
                .iter()
                .map(|n| Arc::new(NodeConn::new(n)))
                .collect(),
        ),
        cfg,
        view,
    };
    let mut last_ok = clock.now();
    let mut next_tick = clock.now();
    let mut next_reconcile = clock.now() + RECONCILE;
    if m.cfg.reconcile_at_start {
        next_reconcile = clock.now();
    }
    // Nodes still to be sent `REPLICAOF <master>`.
    let mut pending: BTreeSet<usize> = BTreeSet::new();
    // Whether the master's being down was announced.
    let mut announced_down = false;
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
        let answered = m.request(cur, &["PING"]).await.is_some();
        if answered {
            last_ok = clock.now();
            m.saw_master(last_ok);
        }
        let down = lock(&m.view).master_down(clock.now());
        if down != announced_down {
            audience.master_down(&current, down);
            announced_down = down;
        }
        if let (false, Some(after)) = (answered, m.cfg.failover_after) {
            if clock.now().saturating_sub(last_ok) >= after {
                if let Some(new) = m.failover(cur).await {
                    let new_addr = m.cfg.nodes[new].clone();
                    m.promoted(&new_addr, clock.now());
                    (m.cfg.on_failover)(&current, &new_addr);
                    audience.switch_master(&current, &new_addr);
                    announced_down = false;
                    pending = (0..m.cfg.nodes.len()).filter(|&i| i != new).collect();
                    last_ok = clock.now();
                    continue;
                }
            }
        }
        if clock.now() >= next_reconcile {
            next_reconcile = clock.now() + RECONCILE;
            let mut replicas = Vec::new();
            for i in 0..m.cfg.nodes.len() {
                if i == cur || pending.contains(&i) {
                    continue;
                }
                match m.role(i).await {
                    Some(Seen::Replica { master, offset }) if master == current => {
                        replicas.push((m.cfg.nodes[i].clone(), offset));
                    }
                    Some(_) => {
                        pending.insert(i);
                    }
                    None => {}
                }
            }
            lock(&m.view).replicas = replicas;
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
        let args = |w: &[&str]| -> Vec<bytes::Bytes> {
            w.iter()
                .map(|s| bytes::Bytes::from(s.to_string()))
                .collect()
        };
        let view = View {
            master: "n2:6379".into(),
            ..View::default()
        };
        let show = answer::same();
        let ask = |w: &[&str]| answer::reply(&args(w), &view, &show, Duration::ZERO).unwrap();
        assert_eq!(
            ask(&["SENTINEL", "get-master-addr-by-name", "mymaster"]),
            Frame::Array(vec![Frame::bulk("n2"), Frame::bulk("6379")])
        );
        assert_eq!(
            ask(&["SENTINEL", "get-master-addr-by-name", "other"]),
            Frame::Null
        );
        assert_eq!(ask(&["PING"]), Frame::Simple("PONG".into()));
        let c1: answer::Translate = Arc::new(|a: &str| format!("c1-sees-{a}"));
        let shown = answer::reply(
            &args(&["SENTINEL", "get-master-addr-by-name", "mymaster"]),
            &view,
            &c1,
            Duration::ZERO,
        );
        assert_eq!(
            shown,
            Some(Frame::Array(vec![
                Frame::bulk("c1-sees-n2"),
                Frame::bulk("6379")
            ]))
        );
    }
}
