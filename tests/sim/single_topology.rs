//! The `single` topology on turmoil: asynchronous replication with a delay,
//! read-only replicas, the sentinel's failover (and the lock race it opens),
//! and persistence across a crash.

use redlock_client::SimConnector;
use redlock_harness::sim::sentinel::{self, SentinelConfig};
use redlock_node::persistence::{self, Disk, Mode, SharedDisk};
use redlock_node::{replication, Node};
use redlock_proto::clock::{sim_now, Clock, ClockModel, SimClock};
use redlock_proto::connection::NodeConn;
use redlock_proto::resp::Frame;
use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

const EPOCH_SECS: u64 = 1_700_000_000;
const EPOCH_MS: i64 = EPOCH_SECS as i64 * 1000;
const MS: Duration = Duration::from_millis(1);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn sim_clock() -> SimClock {
    SimClock::new(ClockModel::new(EPOCH_MS, 0.0, 1.0))
}

/// What the test client asks the driver to do between steps.
enum Act {
    /// Cut the host off from every other host, then crash it (and its disk).
    Crash(String),
    /// Heal its links and start it again.
    Restart(String),
    /// Cut both directions between two hosts, losing what is in flight
    /// (a link that drops its packets).
    Partition(String, String),
    Heal(String, String),
    /// Hold both directions between two hosts, as a partition TCP rides
    /// out (what is held arrives after the release).
    Hold(String, String),
    Release(String, String),
}

/// Shared by the hosts, the test client and the driver.
#[derive(Default)]
struct Shared {
    events: Mutex<Vec<String>>,
    acts: Mutex<Vec<Act>>,
}

impl Shared {
    fn log(&self, what: impl AsRef<str>) {
        let line = format!("{:>6}ms {}", sim_now().as_millis(), what.as_ref());
        self.events.lock().unwrap().push(line);
    }

    fn act(&self, a: Act) {
        self.acts.lock().unwrap().push(a);
    }

    fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }
}

struct Setup {
    nodes: usize,
    replication_delay: Duration,
    failover_after: Option<Duration>,
    persistence: Mode,
    seed: u64,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            nodes: 3,
            replication_delay: Duration::ZERO,
            failover_after: None,
            persistence: Mode::None,
            seed: 1,
        }
    }
}

struct World<'a> {
    sim: turmoil::Sim<'a>,
    shared: Arc<Shared>,
    disks: Vec<SharedDisk>,
    hosts: Vec<String>,
}

/// Node hosts `n1..`, n1 the master and the others its replicas, and a
/// sentinel when `failover_after` is set.
fn world<'a>(s: &Setup) -> World<'a> {
    let mut sim = turmoil::Builder::new()
        .epoch(UNIX_EPOCH + Duration::from_secs(EPOCH_SECS))
        .tick_duration(MS)
        .simulation_duration(Duration::from_secs(60))
        .min_message_latency(MS)
        .max_message_latency(ms(5))
        .rng_seed(s.seed)
        .build();
    let shared = Arc::new(Shared::default());
    let mut disks = Vec::new();
    let mut hosts = Vec::new();
    let addrs: Vec<String> = (1..=s.nodes).map(|i| format!("n{i}:6379")).collect();
    for i in 1..=s.nodes {
        let name = format!("n{i}");
        let clock = sim_clock();
        let disk = Disk::shared();
        disks.push(disk.clone());
        hosts.push(name.clone());
        let (delay, mode) = (s.replication_delay, s.persistence);
        sim.host(name.as_str(), move || {
            let (clock, disk) = (clock.clone(), disk.clone());
            async move {
                // --- the wiring of one node host ---
                let clock: Arc<dyn Clock> = Arc::new(clock);
                let keyspace = disk.lock().unwrap().load(clock.wall_ms());
                let node = Node::from_keyspace(clock, keyspace);
                replication::set_replication_delay(&node, delay);
                if i != 1 {
                    node.execute(&args(&["REPLICAOF", "n1", "6379"]));
                }
                if let Some(fsync) = persistence::attach(&node, disk, mode) {
                    tokio::spawn(fsync);
                }
                tokio::spawn(replication::replica_task(
                    node.clone(),
                    Arc::new(SimConnector),
                ));
                let listener = turmoil::net::TcpListener::bind("0.0.0.0:6379").await?;
                redlock_node::serve(node, listener).await?;
                Ok(())
            }
        });
    }
    if s.failover_after.is_some() {
        hosts.push("sentinel".into());
        let clock = sim_clock();
        let shared = shared.clone();
        let (failover_after, seed) = (s.failover_after, s.seed);
        sim.host("sentinel", move || {
            let (shared, log) = (shared.clone(), shared.clone());
            let cfg = SentinelConfig {
                nodes: addrs.clone(),
                master: "n1:6379".into(),
                failover_after,
                clock: Arc::new(clock.clone()),
                connector: Arc::new(SimConnector),
                on_failover: Arc::new(move |old: &str, new: &str| {
                    shared.log(format!("failover {old} -> {new}"))
                }),
                seed,
                on_event: Some(Arc::new(move |e: &str| log.log(format!("sentinel {e}")))),
            };
            sentinel::run(cfg)
        });
    }
    hosts.push("c".into());
    World {
        sim,
        shared,
        disks,
        hosts,
    }
}

impl World<'_> {
    /// Steps until the client is done, applying its requests in between.
    fn run(&mut self) {
        loop {
            let done = match self.sim.step() {
                Ok(done) => done,
                Err(e) => panic!("{e}\nevents: {:#?}", self.shared.events.lock().unwrap()),
            };
            let acts: Vec<Act> = std::mem::take(&mut *self.shared.acts.lock().unwrap());
            for a in acts {
                match a {
                    Act::Crash(h) => {
                        for other in self.hosts.iter().filter(|o| **o != h) {
                            self.sim.partition(h.as_str(), other.as_str());
                        }
                        self.sim.crash(h.as_str());
                        if let Some(d) = self.disk_of(&h) {
                            d.lock().unwrap().crash();
                        }
                    }
                    Act::Restart(h) => {
                        for other in self.hosts.iter().filter(|o| **o != h) {
                            self.sim.repair(h.as_str(), other.as_str());
                        }
                        self.sim.bounce(h.as_str());
                    }
                    Act::Partition(a, b) => self.sim.partition(a.as_str(), b.as_str()),
                    Act::Heal(a, b) => self.sim.repair(a.as_str(), b.as_str()),
                    Act::Hold(a, b) => self.sim.hold(a.as_str(), b.as_str()),
                    Act::Release(a, b) => self.sim.release(a.as_str(), b.as_str()),
                }
            }
            if done {
                return;
            }
        }
    }

    fn disk_of(&self, host: &str) -> Option<&SharedDisk> {
        let i: usize = host.strip_prefix('n')?.parse().ok()?;
        self.disks.get(i - 1)
    }
}

fn args(a: &[&str]) -> Vec<bytes::Bytes> {
    a.iter()
        .map(|s| bytes::Bytes::copy_from_slice(s.as_bytes()))
        .collect()
}

/// The test client: one connection per address, on its own clock.
struct Cli {
    clock: SimClock,
    conns: Mutex<Vec<Arc<NodeConn>>>,
}

impl Cli {
    fn new() -> Self {
        Cli {
            clock: sim_clock(),
            conns: Mutex::new(Vec::new()),
        }
    }

    fn conn(&self, addr: &str) -> Arc<NodeConn> {
        let mut conns = self.conns.lock().unwrap();
        if let Some(c) = conns.iter().find(|c| c.addr() == addr) {
            return c.clone();
        }
        let c = Arc::new(NodeConn::new(addr));
        conns.push(c.clone());
        c
    }

    /// Sends `cmd`, retrying (for up to 5 s) until some reply comes.
    async fn cmd(&self, addr: &str, cmd: &[&str]) -> Frame {
        let conn = self.conn(addr);
        let give_up = self.clock.now() + Duration::from_secs(5);
        loop {
            match conn
                .request(&SimConnector, &self.clock, &Frame::command(cmd), ms(200))
                .await
            {
                Ok(f) => return f,
                Err(e) if self.clock.now() >= give_up => panic!("{addr} {cmd:?}: {e}"),
                Err(_) => self.sleep(ms(20)).await,
            }
        }
    }

    async fn sleep(&self, d: Duration) {
        self.clock.sleep(d).await
    }

    /// The master the sentinel names, waiting until it is not `old`.
    async fn master_after(&self, old: &str) -> String {
        for _ in 0..100 {
            let f = self
                .cmd(
                    "sentinel:26379",
                    &["SENTINEL", "get-master-addr-by-name", "mymaster"],
                )
                .await;
            let Frame::Array(items) = f else {
                panic!("sentinel said {f:?}")
            };
            let Frame::Bulk(host) = &items[0] else {
                panic!("sentinel said {items:?}")
            };
            let host = String::from_utf8_lossy(host).into_owned();
            if host != old {
                return host;
            }
            self.sleep(ms(100)).await;
        }
        panic!("no failover");
    }
}

fn ok() -> Frame {
    Frame::ok()
}

fn bulk(s: &str) -> Frame {
    Frame::bulk(s)
}

/// Runs `script` as the test client `c` of a world built from `setup`, and
/// returns the events recorded.
fn run<F, Fut>(setup: Setup, script: F) -> Vec<String>
where
    F: FnOnce(Arc<Shared>, Cli) -> Fut,
    Fut: std::future::Future<Output = ()> + 'static,
{
    let mut w = world(&setup);
    let fut = script(w.shared.clone(), Cli::new());
    w.sim.client("c", async move {
        fut.await;
        Ok(())
    });
    w.run();
    w.shared.events()
}

async fn offset(cli: &Cli, addr: &str) -> i64 {
    match cli.cmd(addr, &["ROLE"]).await {
        Frame::Array(items) => match items.last() {
            Some(Frame::Integer(o)) => *o,
            _ => match items.get(1) {
                Some(Frame::Integer(o)) => *o,
                other => panic!("ROLE: {other:?}"),
            },
        },
        f => panic!("ROLE: {f:?}"),
    }
}

#[test]
fn writes_reach_replicas_after_the_delay() {
    let setup = Setup {
        replication_delay: ms(500),
        ..Setup::default()
    };
    run(setup, |_, cli| async move {
        cli.sleep(Duration::from_secs(1)).await;
        let role = cli.cmd("n2:6379", &["ROLE"]).await;
        assert_eq!(
            role,
            Frame::Array(vec![
                bulk("slave"),
                bulk("n1:6379"),
                Frame::Integer(6379),
                bulk("connected"),
                Frame::Integer(0),
            ])
        );
        assert_eq!(cli.cmd("n1:6379", &["SET", "k", "v"]).await, ok());
        cli.sleep(ms(100)).await;
        assert_eq!(cli.cmd("n2:6379", &["GET", "k"]).await, Frame::Null);
        assert_eq!(cli.cmd("n3:6379", &["GET", "k"]).await, Frame::Null);
        cli.sleep(ms(600)).await;
        assert_eq!(cli.cmd("n2:6379", &["GET", "k"]).await, bulk("v"));
        assert_eq!(cli.cmd("n3:6379", &["GET", "k"]).await, bulk("v"));
        // Offsets agree once caught up; expiry times travel as absolute times.
        assert_eq!(offset(&cli, "n1:6379").await, 1);
        assert_eq!(offset(&cli, "n2:6379").await, 1);
        cli.cmd("n1:6379", &["SET", "t", "x", "PX", "300"]).await;
        cli.cmd("n1:6379", &["DEL", "k"]).await;
        cli.sleep(ms(1000)).await;
        // The master expired `t` and propagated the DEL.
        assert_eq!(cli.cmd("n2:6379", &["GET", "k"]).await, Frame::Null);
        assert_eq!(
            cli.cmd("n2:6379", &["EXISTS", "t"]).await,
            Frame::Integer(0)
        );
        let master = offset(&cli, "n1:6379").await;
        assert_eq!(master, 4);
        assert_eq!(offset(&cli, "n2:6379").await, master);
        assert_eq!(offset(&cli, "n3:6379").await, master);
    });
}

#[test]
fn replicas_refuse_writes_until_promoted() {
    run(Setup::default(), |_, cli| async move {
        cli.sleep(ms(500)).await;
        cli.cmd("n1:6379", &["SET", "k", "v"]).await;
        cli.sleep(ms(100)).await;
        let readonly = Frame::err("READONLY You can't write against a read only replica.");
        assert_eq!(cli.cmd("n2:6379", &["SET", "k", "w"]).await, readonly);
        assert_eq!(cli.cmd("n2:6379", &["DEL", "k"]).await, readonly);
        assert_eq!(cli.cmd("n2:6379", &["GET", "k"]).await, bulk("v"));
        // Promoted, it keeps the data and takes writes; n3 follows it.
        assert_eq!(cli.cmd("n2:6379", &["REPLICAOF", "NO", "ONE"]).await, ok());
        assert_eq!(cli.cmd("n3:6379", &["REPLICAOF", "n2", "6379"]).await, ok());
        assert_eq!(cli.cmd("n2:6379", &["SET", "k", "w"]).await, ok());
        cli.sleep(ms(300)).await;
        assert_eq!(cli.cmd("n3:6379", &["GET", "k"]).await, bulk("w"));
        // The old master, turned replica, resyncs from the new one.
        assert_eq!(cli.cmd("n1:6379", &["SLAVEOF", "n2", "6379"]).await, ok());
        cli.sleep(ms(300)).await;
        assert_eq!(cli.cmd("n1:6379", &["GET", "k"]).await, bulk("w"));
        assert_eq!(cli.cmd("n1:6379", &["SET", "k", "x"]).await, readonly);
    });
}

/// n1 takes the lock, then loses power (cut off first, so nothing more
/// leaves it) `crash_after` later; the sentinel promotes a replica (either:
/// their offsets are equal, and the seed draws the sentinel's order);
/// another client tries the lock on the new master.
async fn failover_race(shared: Arc<Shared>, cli: Cli, crash_after: Duration) {
    cli.sleep(Duration::from_secs(1)).await;
    let a = cli
        .cmd("n1:6379", &["SET", "lock", "a", "NX", "PX", "10000"])
        .await;
    shared.log(format!("c: SET lock a on n1 -> {a:?}"));
    assert_eq!(a, ok());
    cli.sleep(crash_after).await;
    shared.log("crash n1");
    shared.act(Act::Crash("n1".into()));
    let master = cli.master_after("n1").await;
    shared.log(format!("c: sentinel names {master}"));
    assert!(master == "n2" || master == "n3", "{master}");
    let (new, other) = match master.as_str() {
        "n2" => ("n2:6379", "n3:6379"),
        _ => ("n3:6379", "n2:6379"),
    };
    for n in ["n2:6379", "n3:6379"] {
        let role = cli.cmd(n, &["ROLE"]).await;
        shared.log(format!("c: ROLE {n} -> {role:?}"));
    }
    let b = cli
        .cmd(new, &["SET", "lock", "b", "NX", "PX", "30000"])
        .await;
    shared.log(format!("c: SET lock b on the new master -> {b:?}"));
    // The other replica follows the new master once the sentinel has
    // re-pointed it (at the new master's next INFO, within about a
    // second), and gets b only once the replication delay (500ms) has
    // passed since the new master wrote it.
    cli.sleep(ms(2000)).await;
    let on_other = cli.cmd(other, &["GET", "lock"]).await;
    shared.log(format!("c: GET lock on the other replica -> {on_other:?}"));
    // The old master comes back empty, as a master; the sentinel turns it
    // into a replica of the new master at its first INFO 8 s after it
    // first saw it so (`+convert-to-slave`: about 10 s after the switch, as
    // INFO goes to a replica every 10 s), and it resyncs.
    shared.act(Act::Restart("n1".into()));
    cli.sleep(Duration::from_secs(13)).await;
    let Frame::Array(role) = cli.cmd("n1:6379", &["ROLE"]).await else {
        panic!("ROLE")
    };
    shared.log(format!(
        "c: n1 follows the new master: {}",
        role[1] == bulk(new)
    ));
    let on_n1 = cli.cmd("n1:6379", &["GET", "lock"]).await;
    shared.log(format!("c: GET lock on n1 -> {on_n1:?}"));
    let offsets = [
        offset(&cli, "n1:6379").await,
        offset(&cli, "n2:6379").await,
        offset(&cli, "n3:6379").await,
    ];
    shared.log(format!("c: offsets {offsets:?}"));
    assert_eq!(offsets[0], offsets[1]);
    assert_eq!(offsets[2], offsets[1]);
}

fn race_setup(seed: u64) -> Setup {
    Setup {
        replication_delay: ms(500),
        failover_after: Some(Duration::from_secs(1)),
        seed,
        ..Setup::default()
    }
}

fn assert_has(events: &[String], what: &str) {
    assert!(
        events.iter().any(|e| e.contains(what)),
        "no event with {what:?} in {events:#?}"
    );
}

#[test]
fn failover_before_replication_lets_a_second_client_lock() {
    let events = run(race_setup(1), |s, cli| failover_race(s, cli, ms(50)));
    assert_has(&events, "failover n1:6379 -> n");
    // The race the project exists to show: both SET NX succeed.
    assert_has(&events, "SET lock b on the new master -> Simple(\"OK\")");
    assert_has(&events, "GET lock on the other replica -> Bulk(b\"b\")");
    assert_has(&events, "n1 follows the new master: true");
    assert_has(&events, "GET lock on n1 -> Bulk(b\"b\")");
}

#[test]
fn failover_after_replication_keeps_the_lock() {
    let events = run(race_setup(1), |s, cli| failover_race(s, cli, ms(700)));
    assert_has(&events, "failover n1:6379 -> n");
    assert_has(&events, "SET lock b on the new master -> Null");
    assert_has(&events, "GET lock on the other replica -> Bulk(b\"a\")");
}

#[test]
fn the_failover_race_is_deterministic() {
    let first = run(race_setup(7), |s, cli| failover_race(s, cli, ms(50)));
    let second = run(race_setup(7), |s, cli| failover_race(s, cli, ms(50)));
    assert!(first.len() >= 6, "{first:#?}");
    assert_eq!(first, second);
}

/// One master; `SET k v`, wait `before_crash`, power loss, restart after
/// 500 ms, then `GET k`.
fn crash_restart(mode: Mode, before_crash: Duration) -> Frame {
    let setup = Setup {
        nodes: 1,
        persistence: mode,
        ..Setup::default()
    };
    let got = Arc::new(Mutex::new(None));
    let out = got.clone();
    run(setup, move |shared, cli| async move {
        cli.sleep(ms(300)).await;
        assert_eq!(cli.cmd("n1:6379", &["SET", "k", "v"]).await, ok());
        cli.cmd("n1:6379", &["SET", "e", "v", "PX", "600"]).await;
        cli.sleep(before_crash).await;
        shared.act(Act::Crash("n1".into()));
        cli.sleep(ms(500)).await;
        shared.act(Act::Restart("n1".into()));
        cli.sleep(ms(100)).await;
        // Expiry times are absolute: `e` expired while the node was down.
        assert_eq!(cli.cmd("n1:6379", &["GET", "e"]).await, Frame::Null);
        *out.lock().unwrap() = Some(cli.cmd("n1:6379", &["GET", "k"]).await);
    });
    let v = got.lock().unwrap().take();
    v.expect("client finished")
}

#[test]
fn persistence_always_keeps_the_key_and_none_loses_it() {
    assert_eq!(crash_restart(Mode::Always, ms(10)), bulk("v"));
    assert_eq!(crash_restart(Mode::None, ms(10)), Frame::Null);
}

#[test]
fn persistence_everysec_loses_only_the_last_second() {
    assert_eq!(crash_restart(Mode::Everysec, ms(100)), Frame::Null);
    assert_eq!(crash_restart(Mode::Everysec, ms(1200)), bulk("v"));
}

/// A hash (the reentrant lock's `{owner: count}`) reaches the replicas, with
/// its field order and absolute expiry, survives a power loss with `fsync`
/// always, and is what a promoted replica serves after a failover.
#[test]
fn hashes_replicate_persist_and_fail_over() {
    let setup = Setup {
        persistence: Mode::Always,
        failover_after: Some(ms(500)),
        ..Setup::default()
    };
    let events = run(setup, |shared, cli| async move {
        cli.sleep(ms(300)).await;
        let m = "n1:6379";
        cli.cmd(m, &["HSET", "h", "b", "1", "a", "2"]).await;
        assert_eq!(
            cli.cmd(m, &["HINCRBY", "h", "b", "5"]).await,
            Frame::Integer(6)
        );
        cli.cmd(m, &["HSET", "h", "c", "x"]).await;
        cli.cmd(m, &["HDEL", "h", "a"]).await;
        cli.cmd(m, &["PEXPIRE", "h", "30000"]).await;
        cli.cmd(m, &["HSET", "gone", "f", "1"]).await;
        cli.cmd(m, &["HDEL", "gone", "f"]).await;
        let want = Frame::Map(vec![(bulk("b"), bulk("6")), (bulk("c"), bulk("x"))]);
        let flat = want.clone().into_resp2();
        assert_eq!(cli.cmd(m, &["HGETALL", "h"]).await, flat);
        cli.sleep(ms(200)).await;
        for n in ["n2:6379", "n3:6379"] {
            assert_eq!(cli.cmd(n, &["HGETALL", "h"]).await, flat, "{n}");
            assert_eq!(
                cli.cmd(n, &["TYPE", "gone"]).await,
                Frame::Simple("none".into())
            );
            let Frame::Integer(t) = cli.cmd(n, &["PTTL", "h"]).await else {
                panic!("PTTL")
            };
            assert!((29_000..=30_000).contains(&t), "{n}: {t}");
        }
        assert_eq!(offset(&cli, "n2:6379").await, offset(&cli, m).await);
        // Power loss of the master: the log (fsync always) brings it back.
        shared.act(Act::Crash("n1".into()));
        let master = cli.master_after("n1").await;
        shared.log(format!("promoted {master}"));
        let addr = format!("{master}:6379");
        assert_eq!(cli.cmd(&addr, &["HGETALL", "h"]).await, flat);
        assert_eq!(
            cli.cmd(&addr, &["HINCRBY", "h", "b", "-6"]).await,
            Frame::Integer(0)
        );
        shared.act(Act::Restart("n1".into()));
        cli.sleep(ms(50)).await;
        let Frame::Array(role) = cli.cmd(m, &["ROLE"]).await else {
            panic!("ROLE")
        };
        // Restarted from its log, n1 still holds the hash as it wrote it...
        if role[0] == bulk("master") {
            assert_eq!(cli.cmd(m, &["HGETALL", "h"]).await, flat);
        }
        // ...and, once the sentinel has made it follow the new master (8 s
        // after it saw it back as a master: `+convert-to-slave`), the new
        // master's version.
        cli.sleep(Duration::from_secs(13)).await;
        let now = Frame::Map(vec![(bulk("b"), bulk("0")), (bulk("c"), bulk("x"))]).into_resp2();
        assert_eq!(cli.cmd(m, &["HGETALL", "h"]).await, now);
    });
    assert_has(&events, "promoted n");
}

#[test]
fn a_replica_resyncs_after_a_partition() {
    let setup = Setup {
        nodes: 2,
        ..Setup::default()
    };
    let events = run(setup, |shared, cli| async move {
        cli.sleep(ms(500)).await;
        cli.cmd("n1:6379", &["SET", "k", "1"]).await;
        cli.sleep(ms(50)).await;
        shared.act(Act::Partition("n1".into(), "n2".into()));
        cli.sleep(ms(100)).await;
        cli.cmd("n1:6379", &["SET", "k", "2"]).await;
        cli.sleep(ms(1500)).await;
        let role = cli.cmd("n2:6379", &["ROLE"]).await;
        shared.log(format!("during: {role:?}"));
        // A stale replica still answers reads.
        assert_eq!(cli.cmd("n2:6379", &["GET", "k"]).await, bulk("1"));
        cli.cmd("n1:6379", &["SET", "k", "3"]).await;
        shared.act(Act::Heal("n1".into(), "n2".into()));
        cli.sleep(Duration::from_secs(2)).await;
        let role = cli.cmd("n2:6379", &["ROLE"]).await;
        shared.log(format!("after: {role:?}"));
        assert_eq!(cli.cmd("n2:6379", &["GET", "k"]).await, bulk("3"));
        cli.cmd("n1:6379", &["SET", "k", "4"]).await;
        cli.sleep(ms(50)).await;
        assert_eq!(cli.cmd("n2:6379", &["GET", "k"]).await, bulk("4"));
        assert_eq!(offset(&cli, "n2:6379").await, 4);
    });
    assert_has(&events, "during: Array([Bulk(b\"slave\"), Bulk(b\"n1:6379\"), Integer(6379), Bulk(b\"connect\"), Integer(1)])");
    assert_has(&events, "after: Array([Bulk(b\"slave\"), Bulk(b\"n1:6379\"), Integer(6379), Bulk(b\"connected\"), Integer(3)])");
}

#[test]
fn the_sentinel_waits_failover_after() {
    let setup = Setup {
        failover_after: Some(Duration::from_secs(1)),
        ..Setup::default()
    };
    let events = run(setup, |shared, cli| async move {
        cli.sleep(ms(500)).await;
        let cut = || Act::Hold("n1".into(), "sentinel".into());
        let heal = || Act::Release("n1".into(), "sentinel".into());
        shared.act(cut());
        cli.sleep(ms(800)).await;
        shared.act(heal());
        cli.sleep(ms(1500)).await;
        shared.log("blip over");
        shared.act(cut());
        let master = cli.master_after("n1").await;
        shared.log(format!("c: sentinel names {master}"));
    });
    let blip = events.iter().position(|e| e.contains("blip over")).unwrap();
    let failover = events.iter().position(|e| e.contains("failover")).unwrap();
    assert!(blip < failover, "{events:#?}");
    let at = |i: usize| -> u64 {
        events[i]
            .trim_start()
            .split("ms")
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    // Down once its oldest unanswered PING (sent up to a second and a tick
    // after the cut) is a second old, at a tick; promoted when the chosen
    // replica's next INFO (polled every second) says so, two ticks on.
    let waited = at(failover) - at(blip);
    assert!((1000..=3500).contains(&waited), "{events:#?}");
}

/// A minute of writes with expiring keys, a delay, everysec persistence and
/// repeated partitions of one replica: every replica ends at the master's
/// offset with the master's data.
#[test]
fn replicas_converge_after_a_long_run() {
    let setup = Setup {
        replication_delay: ms(200),
        persistence: Mode::Everysec,
        ..Setup::default()
    };
    let mut w = world(&setup);
    let shared = w.shared.clone();
    let cli = Cli::new();
    w.sim.client("c", async move {
        cli.sleep(ms(500)).await;
        let mut i = 0u64;
        while cli.clock.now() < Duration::from_secs(50) {
            let (k, v) = (format!("k{}", i % 100), i.to_string());
            cli.cmd("n1:6379", &["SET", &k, &v, "PX", "3000"]).await;
            cli.cmd("n1:6379", &["SET", &format!("p{}", i % 7), &v])
                .await;
            i += 1;
            match i % 2000 {
                500 => shared.act(Act::Partition("n1".into(), "n2".into())),
                900 => shared.act(Act::Heal("n1".into(), "n2".into())),
                _ => {}
            }
            cli.sleep(ms(2)).await;
        }
        // Past every expiry and the delay: the master's DELs have arrived.
        cli.sleep(ms(4000)).await;
        let mut offsets = Vec::new();
        for n in ["n1:6379", "n2:6379", "n3:6379"] {
            offsets.push(offset(&cli, n).await);
            assert_eq!(cli.cmd(n, &["EXISTS", "k1"]).await, Frame::Integer(0));
            let last = i - 1;
            let key = format!("p{}", last % 7);
            assert_eq!(cli.cmd(n, &["GET", &key]).await, bulk(&last.to_string()));
        }
        assert!(offsets[0] > 10_000, "{offsets:?}");
        assert_eq!(offsets[1], offsets[0]);
        assert_eq!(offsets[2], offsets[0]);
        Ok(())
    });
    w.sim.run().unwrap();
    // The append-only file was rewritten along the way.
    assert!(w.disks[1].lock().unwrap().synced_len() < 12_000);
}

// ---------------------------------------------------------------------------
// Whole runs of the simulation: no path carries a write to a replica before
// `replication_delay` has passed since the master wrote it.

const DELAY_400: &str = r#"
[cluster]
topology = "single"
nodes = 3
replication_delay = "400ms"
failover_after = "1s"

[clients]
ttl = "10s"
hold = "2s"
think = "0s"
"#;

fn run_history(text: &str) -> redlock_harness::history::History {
    let s = redlock_harness::scenario::parse_str(text, "t.toml").unwrap();
    redlock_harness::sim::run(&s, 1).unwrap()
}

/// `(time, host, token)` of every `key_set` event, in order.
fn key_sets(h: &redlock_harness::history::History) -> Vec<(Duration, String, String)> {
    use redlock_harness::history::EventKind;
    h.events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::KeySet { token, .. } => Some((e.time, e.host.clone(), token.clone())),
            _ => None,
        })
        .collect()
}

/// Every copy of a token on another node is set at least `delay` after the
/// first node (the master the client wrote to) set it. Returns the copies.
fn assert_copies_delayed(
    h: &redlock_harness::history::History,
    delay: Duration,
) -> Vec<(Duration, String, String)> {
    let sets = key_sets(h);
    let mut copies = Vec::new();
    for (t, host, token) in &sets {
        let (t0, origin, _) = sets.iter().find(|(_, _, k)| k == token).unwrap();
        if host == origin {
            continue;
        }
        assert!(
            *t >= *t0 + delay,
            "{host} set {token} at {t:?}, only {:?} after {origin} did: {sets:#?}",
            *t - *t0
        );
        copies.push((*t, host.clone(), token.clone()));
    }
    copies
}

/// The node's `node_up` times.
fn ups(h: &redlock_harness::history::History, host: &str) -> Vec<Duration> {
    h.of(host)
        .filter(|e| e.kind.name() == "node_up")
        .map(|e| e.time)
        .collect()
}

/// The initial sync is done at time 0: a lock taken in the first
/// milliseconds reaches the replicas only through the delayed stream.
#[test]
fn the_first_write_reaches_replicas_only_after_the_delay() {
    let h = run_history(&format!(
        "duration = \"1500ms\"\n{DELAY_400}count = 2\n\n[hosts.c2]\nstart = \"1s\"\n"
    ));
    let sets = key_sets(&h);
    let (t0, origin, first) = sets[0].clone();
    assert_eq!(origin, "n1");
    assert!(t0 < ms(20), "{sets:#?}");
    let copies = assert_copies_delayed(&h, ms(400));
    for r in ["n2", "n3"] {
        assert!(
            copies.iter().any(|(_, h, k)| h == r && *k == first),
            "{r} never got {first}: {sets:#?}"
        );
    }
}

/// A replica that restarts empty just after the master's write resyncs,
/// and the snapshot brings the key no earlier than the delay after it.
#[test]
fn a_restarted_replicas_resync_waits_the_delay() {
    let h = run_history(&format!(
        "duration = \"1500ms\"\n{DELAY_400}count = 1\n\n\
         [[faults]]\nat = \"0s\"\nafter = \"c1:acquired\"\ndo = \"crash\"\nhost = \"n2\"\nrestart = \"immediate\"\n"
    ));
    let restarted = ups(&h, "n2");
    assert_eq!(restarted.len(), 2, "n2 restarted once");
    let copies = assert_copies_delayed(&h, ms(400));
    assert!(
        copies
            .iter()
            .any(|(t, h, _)| h == "n2" && *t > restarted[1]),
        "n2 resynced the key: {copies:#?}"
    );
}

/// After a failover the promoted replica's new replicas (the other
/// replica, and n1 coming back as a replica) get its writes no earlier than
/// the delay after them.
#[test]
fn after_a_failover_resyncs_wait_the_delay() {
    let h = run_history(&format!(
        "duration = \"8s\"\n{DELAY_400}count = 2\n\n[hosts.c2]\nstart = \"4s\"\n\n\
         [[faults]]\nat = \"100ms\"\nafter = \"c1:acquired\"\ndo = \"crash\"\nhost = \"master\"\nrestart = \"4s\"\n"
    ));
    use redlock_harness::history::EventKind;
    let new = h.events.iter().find_map(|e| match &e.kind {
        EventKind::Failover { new_master, .. } => Some(new_master.clone()),
        _ => None,
    });
    let new = new.expect("a failover");
    let back = ups(&h, "n1");
    assert_eq!(back.len(), 2, "n1 came back");
    let copies = assert_copies_delayed(&h, ms(400));
    let other = if new == "n2" { "n3" } else { "n2" };
    for r in ["n1", other] {
        assert!(
            copies.iter().any(|(t, h, _)| h == r && *t > back[1]),
            "{r} got the new master's key: {copies:#?}"
        );
    }
}

/// The sentinel's failover, step by step, as `sentinel.c` times it (one
/// master, two replicas, down-after 1 s, quorum 1; the master loses power):
/// subjective down no sooner than down-after after the crash and no later
/// than a ping period, down-after and a tick; objective down, the failover's
/// start and the election in that tick; the replica's selection one tick
/// later (the ticks last 52 to 100 ms), `SLAVEOF NO ONE` the tick after;
/// the promotion seen at the replica's next `INFO` (every second during a
/// failover), and told then; the other replica sent `SLAVEOF` at the next
/// tick, and the switch at the tick after it reports itself done; the old
/// master,
/// back as a master, converted at its first `INFO` 8 s after it said so.
#[test]
fn the_sentinel_fails_over_on_sentinel_c_timing() {
    let events = run(race_setup(3), |s, cli| failover_race(s, cli, ms(50)));
    let at = |what: &str| -> u64 {
        let e = events.iter().find(|e| e.contains(what));
        let e = e.unwrap_or_else(|| panic!("no {what:?} in {events:#?}"));
        e.trim_start().split("ms").next().unwrap().parse().unwrap()
    };
    let tick = 52..=100;
    let crash = at("crash n1");
    let sdown = at("+sdown master mymaster n1");
    assert!(
        (crash + 1000..=crash + 1000 + 1000 + 200).contains(&sdown),
        "{events:#?}"
    );
    for same in [
        "+odown master",
        "+try-failover",
        "+elected-leader",
        "failover-state-select-slave",
    ] {
        assert_eq!(at(same), sdown, "{same}: {events:#?}");
    }
    let selected = at("+selected-slave");
    assert!(tick.contains(&(selected - sdown)), "{events:#?}");
    let noone = at("+failover-state-wait-promotion");
    assert!(tick.contains(&(noone - selected)), "{events:#?}");
    let promoted = at("+promoted-slave");
    assert!(
        (noone..=sdown + 1000 + 2 * 100 + 1000).contains(&promoted),
        "{events:#?}"
    );
    assert_eq!(
        at("failover n1:6379 -> "),
        promoted,
        "told at the promotion"
    );
    // Seen in a reply, between ticks: what follows comes at the next tick.
    let sent = at("+slave-reconf-sent");
    assert!((1..=100).contains(&(sent - promoted)), "{events:#?}");
    let done = at("+slave-reconf-done");
    let switch = at("+switch-master mymaster n1 6379");
    assert!(
        done > sent && (1..=100).contains(&(switch - done)),
        "{events:#?}"
    );
    // Seen back (its link answers again, its first INFO says master), then
    // converted at the first INFO (every 10 s) 8 s after.
    let back = at("-sdown slave n1:6379");
    let converted = at("+convert-to-slave slave n1:6379");
    assert!(back > switch, "{events:#?}");
    assert!(
        (back + 8000..=back + 10_000 + 200).contains(&converted),
        "{events:#?}"
    );
}

/// A client asks the sentinel for the master before a lock call (at the
/// start, and after a failed one). With the sentinel cut off near the end,
/// the ask waits out its timeout past `duration`: no lock call starts then
/// ("no new lock attempt starts after it"). Seed 1 asked at 9.99 s and
/// called at 10.211 s before the check after the ask.
#[test]
fn no_lock_call_starts_after_the_duration_when_the_sentinel_answered_late() {
    use redlock_harness::history::EventKind;
    use redlock_harness::{runner, scenario};
    let text = r#"name = "ask-past-the-end"
duration = "10s"

[cluster]
topology = "single"
nodes = 2
failover_after = "1s"

[clients]
count = 2
ttl = "2s"
request_timeout = "200ms"

[hosts.c1]
hold = "100ms"
think = "50ms"

[hosts.c2]
hold = "100ms"
think = "50ms"

[[faults]]
at = "9s"
do = "partition"
sides = [["n1", "sentinel"], ["n2", "c1", "c2", "store"]]
"#;
    let s = scenario::parse_str(text, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    for seed in 1..=3 {
        let run = runner::simulate_keeping(s.clone(), seed).unwrap_or_else(|e| panic!("{e}"));
        let calls: Vec<_> = run
            .history
            .events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::LockCall { .. }))
            .collect();
        assert!(calls.len() > 20, "seed {seed}: {} lock calls", calls.len());
        let late: Vec<_> = calls.iter().filter(|e| e.time >= s.duration).collect();
        assert!(
            late.is_empty(),
            "seed {seed}: lock calls after the end: {late:?}"
        );
    }
}
