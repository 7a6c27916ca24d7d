//! The sentinel: one host that watches the master of the `single` topology
//! and fails over as Redis Sentinel 7.0 does, for a master of quorum 1
//! and a single sentinel: [`monitor`] (its timer, links, subjective down)
//! and [`failover`] (objective down, the election, the replica's
//! selection and promotion, the other replicas' reconfiguration, the
//! switch) model `sentinel.c`, its timings included; the scenario's
//! `failover_after` is its `down-after-milliseconds`, the failover timeout
//! is [`FAILOVER_TIMEOUT`] (as the lab's `redis-sentinel` is configured).
//! `reports/sentinel-timing/` measures the model against `redis-sentinel`.
//!
//! The failover is told ([`SentinelConfig::on_failover`]) when the
//! promotion is seen (`+promoted-slave`): from then on `SENTINEL
//! get-master-addr-by-name` names the new master, as Redis Sentinel's
//! does, before its `+switch-master`.
//!
//! It answers clients ([`answer`]) as Redis Sentinel 7 does, for the
//! master named `mymaster`: `SENTINEL get-master-addr-by-name`, `masters`,
//! `master`, `replicas`, `sentinels`, `ROLE`, `PING`, `INFO` and the
//! handshake; the simulation serves it on [`SENTINEL_PORT`].
//!
//! Clients may `SUBSCRIBE` and `PSUBSCRIBE` to its events (rueidis,
//! go-redis's failover client, ioredis's failover detector): each of
//! Redis Sentinel's events the model makes (`+sdown`, `+odown`,
//! `+try-failover`, `+selected-slave`, `+promoted-slave`,
//! `+failover-end`, `+switch-master`, `+convert-to-slave`, ...) is
//! published on its channel, worded as Redis Sentinel words it, each
//! client shown the addresses its listener shows. A RESP2 client
//! subscribed to anything is refused every other command but `PING`, as
//! Redis Sentinel refuses it.

pub mod answer;
mod failover;
mod instance;
mod link;
mod monitor;
mod state;

pub use failover::FAILOVER_TIMEOUT;

use crate::Listener;
use redlock_proto::clock::Clock;
use redlock_proto::connection::Connector;
use redlock_proto::resp::{Connection, Frame};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

pub const SENTINEL_PORT: u16 = 26379;

/// Called with `(old master, new master)` addresses at each failover.
pub(crate) type FailoverHook = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// Called with each of the sentinel's events as Redis Sentinel logs it
/// (`+sdown master mymaster n1 6379`), with the nodes' own addresses.
pub type EventHook = Arc<dyn Fn(&str) + Send + Sync>;

#[derive(Clone)]
pub struct SentinelConfig {
    /// Node addresses, `host:port` (`"n1:6379"`, ...), in tie-break order.
    pub nodes: Vec<String>,
    /// Address of the master at the start (one of `nodes`).
    pub master: String,
    /// `down-after-milliseconds`; `None`: never fail over (the sentinel
    /// still watches, with Redis's default of 30 s, answers, and re-points
    /// nodes).
    pub failover_after: Option<Duration>,
    pub clock: Arc<dyn Clock>,
    pub connector: Arc<dyn Connector>,
    /// Told each failover when the promotion is seen.
    pub on_failover: FailoverHook,
    /// Told each event (the lab writes them to the sentinel's log).
    pub on_event: Option<EventHook>,
    /// Seeds the sentinel's random choices: its ticks' lengths, the
    /// failover's start desync, the order it walks the replicas in.
    pub seed: u64,
}

/// Splits `host:port`.
pub fn split_addr(addr: &str) -> (&str, &str) {
    addr.rsplit_once(':').unwrap_or((addr, "6379"))
}

/// What the sentinel knows now, for its answers ([`answer`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct View {
    /// The master's address, as the monitor reaches it (the promoted
    /// replica's from its promotion on).
    pub master: String,
    /// The master's replicas that answer and say so, with their offsets,
    /// in the order the sentinel walks them.
    pub(crate) replicas: Vec<(String, i64)>,
    /// The sentinel's time of the master's last answer.
    pub(crate) last_ok: Duration,
    /// The master is subjectively (and so objectively) down.
    pub(crate) down: bool,
    /// Failovers so far.
    pub(crate) config_epoch: u64,
    /// How long the master may not answer before it is down: the
    /// failover's wait, or Redis's default for a monitor that never fails
    /// over.
    pub(crate) down_after: Duration,
}

impl View {
    /// The master is objectively down.
    pub(crate) fn master_down(&self) -> bool {
        self.down
    }

    /// What the sentinel `s` knows now.
    fn of(s: &monitor::Sentinel) -> View {
        let current = s.current_master().to_string();
        let replicas = s
            .replicas
            .iter()
            .filter(|r| r.addr != current && !r.s_down && !r.link.disconnected())
            .filter(|r| r.info_refresh.is_some() && r.role_reported == instance::Role::Replica)
            .map(|r| (r.addr.clone(), r.repl_offset))
            .collect();
        View {
            master: current,
            replicas,
            last_ok: s.master.link.last_avail_time,
            down: s.master.s_down,
            config_epoch: s.config_epoch,
            down_after: s.down_after,
        }
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
        down_after: cfg.failover_after.unwrap_or(monitor::DEFAULT_DOWN_AFTER),
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

    /// One of the sentinel's events, on its channel, worded as Redis
    /// Sentinel words it (`sentinelEvent`'s `%@`: `master <name> <ip>
    /// <port>`, or `slave <ip>:<port> <ip> <port> @ <name> <master ip>
    /// <master port>`; `+switch-master <name> <old ip> <old port> <new ip>
    /// <new port>`).
    fn event(&self, e: &monitor::Event) {
        self.publish(e.name, |show| worded(e, show));
    }
}

/// An event's message, with the addresses `show` shows.
fn worded(e: &monitor::Event, show: &answer::Translate) -> String {
    let name = answer::MASTER_NAME;
    let master = show(&e.master);
    let (mi, mp) = split_addr(&master);
    match (&e.replica, e.name) {
        _ if monitor::BARE.contains(&e.name) => e.extra.clone(),
        (Some(new), "+switch-master") => {
            let new = show(new);
            let (ni, np) = split_addr(&new);
            format!("{name} {mi} {mp} {ni} {np}")
        }
        (Some(r), _) => {
            let r = show(r);
            let (ri, rp) = split_addr(&r);
            format!("slave {ri}:{rp} {ri} {rp} @ {name} {mi} {mp}{}", e.extra)
        }
        (None, _) => format!("master {name} {mi} {mp}{}", e.extra),
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

/// Runs the sentinel's model: its ticks, and between them what its
/// links read; after each, the view its answers read and its events.
async fn monitor(cfg: SentinelConfig, view: Shared, audience: Audience) {
    let clock = cfg.clock.clone();
    let (deliver, mut arrivals) = tokio::sync::mpsc::unbounded_channel();
    let mut s = monitor::Sentinel::new(&cfg, deliver, clock.now());
    // Redis runs its first `serverCron` 1 ms after it starts.
    let mut tick = clock.sleep(Duration::from_millis(1));
    loop {
        tokio::select! {
            biased;
            Some(arrival) = arrivals.recv() => s.arrive(arrival, clock.now()),
            _ = &mut tick => {
                s.tick(clock.now());
                tick = clock.sleep(s.next_tick());
            }
        }
        for e in s.take_events() {
            if let ("+promoted-slave", Some(new)) = (e.name, &e.replica) {
                (cfg.on_failover)(&e.master, new);
            }
            audience.event(&e);
            if let Some(log) = &cfg.on_event {
                log(&format!("{} {}", e.name, worded(&e, &answer::same())));
            }
        }
        *lock(&view) = View::of(&s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
