//! The sentinel's answers against Debian's `redis-sentinel`, both watching
//! the same two `redis-server`s (a master and its replica): the queries
//! lock libraries send, under RESP2 and RESP3, must read the same. Fields
//! that are times, ids or link states (they differ between any two
//! sentinels) are checked for their form only. Subscribers to the
//! sentinel's events (each sentinel with a pair of servers of its own, a
//! port shown by its role) read the same confirmations, refusals in
//! subscribed mode, and `+sdown`, `+odown` and `+switch-master` when the
//! master dies, under RESP2 and RESP3.

use crate::common::{self, start_redis, words, Client, Raw};
use redlock_node::sentinel::{self, SentinelConfig};
use redlock_proto::clock::SystemClock;
use redlock_proto::resp::Frame;
use redlock_proto::transport::TcpConnector;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A `redis-sentinel` child process, killed when dropped.
struct RealSentinel {
    port: u16,
    child: Child,
    _dir: common::Scratch,
}

impl Drop for RealSentinel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_real_sentinel(master_port: u16) -> RealSentinel {
    let port = common::free_port();
    let dir = common::Scratch::dir(&format!("sim-sentinel-{port}"));
    let conf = dir.join("sentinel.conf");
    let text = format!(
        "port {port}\nbind 127.0.0.1\nsentinel monitor mymaster 127.0.0.1 {master_port} 1\n\
         sentinel down-after-milliseconds mymaster 1000\n"
    );
    std::fs::write(&conf, text).unwrap();
    let child = Command::new("redis-sentinel")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "run redis-sentinel: {e}; `{}` (the README's test command) installs it \
                 (or: apt-get install redis-sentinel)",
                common::INSTALL
            )
        });
    assert!(
        common::wait_ready(port, Duration::from_secs(5)),
        "redis-sentinel did not answer"
    );
    RealSentinel {
        port,
        child,
        _dir: dir,
    }
}

/// Ours, on a free port, watching the same nodes.
async fn start_ours(nodes: Vec<String>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let cfg = SentinelConfig {
        master: nodes[0].clone(),
        nodes,
        failover_after: Some(Duration::from_secs(1)),
        clock: Arc::new(SystemClock::new()),
        connector: Arc::new(TcpConnector),
        on_failover: Arc::new(|_: &str, _: &str| {}),
        seed: 1,
        on_event: None,
    };
    tokio::spawn(sentinel::run_with_listener(cfg, listener));
    addr
}

/// The flat key/value pairs of a RESP2 array or a RESP3 map.
fn pairs(f: &Frame) -> Vec<(String, String)> {
    let text = |f: &Frame| match f {
        Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    };
    match f {
        Frame::Map(m) => m.iter().map(|(k, v)| (text(k), text(v))).collect(),
        Frame::Array(a) => a.chunks(2).map(|kv| (text(&kv[0]), text(&kv[1]))).collect(),
        other => panic!("not a map: {other:?}"),
    }
}

/// Fields whose value depends on the sentinel's own timing or identity.
const VARYING: &[&str] = &[
    "runid",
    "last-ping-sent",
    "last-ok-ping-reply",
    "last-ping-reply",
    "info-refresh",
    "role-reported-time",
    "master-link-down-time",
    "master-link-status",
    "slave-repl-offset",
];

fn same_instance(ours: &Frame, real: &Frame, what: &str) {
    let (o, r) = (pairs(ours), pairs(real));
    let keys = |p: &[(String, String)]| p.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    assert_eq!(keys(&o), keys(&r), "{what}: fields");
    for ((k, ov), (_, rv)) in o.iter().zip(&r) {
        if k == "runid" {
            assert!(
                ov.len() == 40 && ov.bytes().all(|b| b.is_ascii_hexdigit()),
                "{what} runid {ov}"
            );
        } else if k == "master-link-status" {
            assert!(ov == "ok" || ov == "err", "{what}: {k} {ov}");
        } else if VARYING.contains(&k.as_str()) {
            assert!(
                ov.parse::<i64>().is_ok(),
                "{what}: {k} = {ov} is not a number"
            );
        } else {
            assert_eq!(ov, rv, "{what}: {k}");
        }
    }
}

/// Waits until `SENTINEL replicas mymaster` lists one replica, connected:
/// redis-sentinel learns of it from the master's `INFO`, then connects to
/// it, and says `slave,disconnected` until then (longer on a loaded
/// machine).
async fn replicas_known(c: &mut Client, who: &str) {
    let t = Instant::now();
    loop {
        if let Frame::Array(a) = c.call(&["SENTINEL", "replicas", "mymaster"]).await {
            let connected = |f: &Frame| {
                pairs(f)
                    .iter()
                    .any(|(k, v)| k == "flags" && !v.contains("disconnected"))
            };
            if a.len() == 1 && connected(&a[0]) {
                return;
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{who}: no connected replica seen in 20 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queries_libraries_send_read_as_redis_sentinel_answers_them() {
    common::require_redis("sentinel differential");
    let servers = start_redis(2);
    let (master, replica) = (&servers[0], &servers[1]);
    let mut r = Client::connect(&replica.addr()).await;
    let port = master.port.to_string();
    assert_eq!(
        r.call(&["REPLICAOF", "127.0.0.1", &port]).await,
        Frame::ok()
    );
    let real = start_real_sentinel(master.port);
    let ours = start_ours(vec![master.addr(), replica.addr()]).await;
    for proto in ["2", "3"] {
        let mut o = Client::connect(&ours).await;
        let mut s = Client::connect(&format!("127.0.0.1:{}", real.port)).await;
        let (oh, sh) = (
            o.call(&["HELLO", proto]).await,
            s.call(&["HELLO", proto]).await,
        );
        let hello = |f: &Frame| {
            pairs(f)
                .into_iter()
                .filter(|(k, _)| k != "id")
                .collect::<Vec<_>>()
        };
        assert_eq!(hello(&oh), hello(&sh), "HELLO {proto}");
        replicas_known(&mut o, "ours").await;
        replicas_known(&mut s, "redis-sentinel").await;
        for q in [
            &["PING"][..],
            &["PING", "hi"],
            &["ROLE"],
            &["SENTINEL", "get-master-addr-by-name", "mymaster"],
            &["SENTINEL", "get-master-addr-by-name", "nope"],
            &["SENTINEL", "get-master-addr-by-name"],
            &["SENTINEL", "master", "nope"],
            &["SENTINEL", "sentinels", "mymaster"],
            &["SENTINEL", "nosuch"],
            &["SENTINEL", "ckquorum", "mymaster"],
            &["CLIENT", "SETNAME", "lib"],
            // rueidis's handshake (rueidislock's options), on the sentinel too.
            &["CLIENT", "TRACKING", "ON", "OPTOUT"],
            &["CLIENT", "CACHING", "NO"],
            &["CLIENT", "TRACKINGINFO"],
            &["CLIENT", "TRACKING", "OFF"],
            &["CLIENT", "NOSUCH"],
            &["UNSUBSCRIBE", "+switch-master"],
            &["GET", "x"],
        ] {
            assert_eq!(o.call(q).await, s.call(q).await, "{q:?} under RESP{proto}");
        }
        let q = ["SENTINEL", "master", "mymaster"];
        same_instance(&o.call(&q).await, &s.call(&q).await, "SENTINEL master");
        for q in [
            ["SENTINEL", "masters"].as_slice(),
            &["SENTINEL", "replicas", "mymaster"],
            &["SENTINEL", "slaves", "mymaster"],
        ] {
            let (Frame::Array(oa), Frame::Array(sa)) = (o.call(q).await, s.call(q).await) else {
                panic!("{q:?}: not arrays");
            };
            assert_eq!(oa.len(), sa.len(), "{q:?}");
            for (of, sf) in oa.iter().zip(&sa) {
                same_instance(of, sf, &format!("{q:?}"));
            }
        }
    }
}

/// Reads the next frame of `c` as text, with the ports of `named` shown
/// by their names and bulk lengths as `$n` (a port's length may differ);
/// `None` if none comes within `wait`.
async fn next_shown(c: &mut Raw, wait: Duration, named: &[(u16, &str)]) -> Option<String> {
    let f = c.reply(wait).await?;
    let text = String::from_utf8_lossy(&f).replace("\r\n", " ");
    let text = named
        .iter()
        .fold(text, |t, (port, name)| t.replace(&port.to_string(), name));
    let words: Vec<&str> = text
        .split(' ')
        .map(|w| match w.strip_prefix('$') {
            Some(n) if n.parse::<usize>().is_ok() => "$n",
            _ => w,
        })
        .collect();
    Some(words.join(" "))
}

/// One sentinel's side: two subscribers (RESP2 and RESP3) and a plain
/// connection; what they read around a failover of `master` to `replica`.
async fn events_around_a_failover(
    sentinel: &str,
    servers: &mut [common::RedisServer],
) -> Vec<String> {
    let named = [(servers[0].port, "OLD"), (servers[1].port, "NEW")];
    let mut plain = Raw::connect(sentinel).await;
    let mut subs = [Raw::connect(sentinel).await, Raw::connect(sentinel).await];
    subs[1].call(&words("HELLO 3")).await;
    let mut out = Vec::new();
    let short = Duration::from_millis(200);
    for s in subs.iter_mut() {
        s.send(&words("SUBSCRIBE +switch-master +sdown +odown"))
            .await;
        for _ in 0..3 {
            out.extend(next_shown(s, short, &named).await);
        }
        for q in [
            "SENTINEL get-master-addr-by-name mymaster",
            "GET x",
            "PING",
            "PING hi",
            "CLIENT GETNAME",
            "PSUBSCRIBE +switch-*",
        ] {
            s.send(&words(q)).await;
            out.extend(next_shown(s, short, &named).await);
        }
    }
    for q in [
        "PUBLISH x y",
        "PUBLISH __sentinel__:hello y",
        "PUBLISH",
        "RESET",
        "UNSUBSCRIBE",
    ] {
        plain.send(&words(q)).await;
        out.extend(next_shown(&mut plain, short, &named).await);
    }
    replicas_known(&mut Client::connect(sentinel).await, sentinel).await;
    servers[0].kill();
    // +sdown, +odown, then +switch-master twice (the channel, then the
    // pattern) on each subscriber.
    for s in subs.iter_mut() {
        for _ in 0..4 {
            out.extend(next_shown(s, Duration::from_secs(30), &named).await);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_hear_of_a_failover_as_redis_sentinel_tells_them() {
    common::require_redis("sentinel events");
    let mut real_pair = start_redis(2);
    let mut our_pair = start_redis(2);
    for pair in [&real_pair, &our_pair] {
        let mut r = Client::connect(&pair[1].addr()).await;
        let port = pair[0].port.to_string();
        r.call(&["REPLICAOF", "127.0.0.1", &port]).await;
    }
    let real = start_real_sentinel(real_pair[0].port);
    let ours = start_ours(vec![our_pair[0].addr(), our_pair[1].addr()]).await;
    let real_addr = format!("127.0.0.1:{}", real.port);
    let (r, o) = tokio::join!(
        events_around_a_failover(&real_addr, &mut real_pair),
        events_around_a_failover(&ours, &mut our_pair)
    );
    for (a, b) in r.iter().zip(&o) {
        assert_eq!(a, b, "redis-sentinel (left) and ours (right)");
    }
    assert_eq!(r.len(), o.len(), "{r:#?}\n{o:#?}");
    let told = |what: &str| r.iter().filter(|l| l.contains(what)).count();
    assert_eq!(told("mymaster 127.0.0.1 OLD 127.0.0.1 NEW"), 4, "{r:#?}");
    assert_eq!(
        told("master mymaster 127.0.0.1 OLD #quorum 1/1"),
        2,
        "{r:#?}"
    );
}
