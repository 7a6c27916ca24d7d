//! One lab run: the scenario's cluster, store and sentinel served in this
//! process on 127.0.0.1, every client a copy of the user's command reaching
//! them through links of its own, the scenario's faults applied on the wall
//! clock by the fault engine ([`redlock_engine`], acting through
//! [`super::world`]), and the history the lab saw.
//!
//! The run starts the nodes (one port per peer), the store, in the `single`
//! topology the sentinel (one listener per client, each naming nodes at the
//! address that client reaches them through) and the replicas, then the
//! links, then the clients. It waits for them to be ready (`READY`: the
//! ready barrier, after which the run's clock starts). Then every
//! millisecond it records what ran out on the nodes' clocks, releases the
//! faults whose trigger came (`after = "c1:acquired"`: the first time the
//! lab sees c1 own the lock), applies those due and the timers that end
//! them, and notes the clients that exited. At `duration` it records
//! `end`; it stops when every client has exited, or two TTLs after
//! `duration`, when the clients still running get SIGTERM, then SIGKILL.

use super::clock::{LabClock, NodeTime};
use super::net::{LabNet, Route};
use super::node::{NodeHost, Replica};
use super::phases::Marks;
pub use super::phases::Phases;
use super::process::Reaper;
use super::record::LabRecorder;
use super::redis::cluster;
use super::redis::sentinel::RealSentinel;
use super::redis::{DataRoot, Servers};
use super::rewrite::PortMap;
use super::store::Store;
use super::world::{LabNode, LabWorld};
use redlock_check::verdict::Cause;
use redlock_engine::plan::fault_plan;
use redlock_engine::setup::{clock_draws, persistence_mode, NODE_PORT};
use redlock_engine::Engine;
use redlock_history::{EventKind, History};
use redlock_node::sentinel::{self, answer, SentinelConfig};
use redlock_scenario::{Scenario, Topology, Trigger};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// What one lab run needs.
#[derive(Clone, Debug)]
pub struct Setup {
    pub scenario: Scenario,
    pub seed: u64,
    /// The client command and its arguments.
    pub cmd: Vec<String>,
    /// Where each client's output goes: `<logs>/<client>.log` (it exists);
    /// real servers' go to `<logs>/../servers/`.
    pub logs: PathBuf,
    pub servers: Servers,
}

/// How a client's process ended.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientEnd {
    pub name: String,
    pub(crate) log: PathBuf,
    /// As the system says (`exit status: 0`, `signal: 9 (SIGKILL)`).
    pub status: String,
    /// It ended by itself before the run's `duration`, or failed.
    pub early: bool,
    /// It exited with a non-zero status, or died of a signal the lab did
    /// not send, before the run's end: the run is inconclusive.
    pub failed: bool,
}

/// A finished lab run.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub history: History,
    pub clients: Vec<ClientEnd>,
    /// What became of the scenario's faults.
    pub faults: redlock_engine::RunFaults,
    /// Why the run did not test what it should have, as the lab saw it
    /// while it ran (a client never ready).
    pub causes: Vec<Cause>,
    /// Where the run's wall time went.
    pub phases: Phases,
}

/// How long a client has, from its launch, to say `READY`.
pub(crate) const READY_WAIT: Duration = Duration::from_secs(30);

pub use super::error::LabError;

fn io_err(what: &str) -> impl Fn(std::io::Error) -> LabError + '_ {
    move |e| LabError::Failed(format!("lab: {what}: {e}"))
}

/// Everything of one run.
pub(crate) struct Lab {
    scenario: Scenario,
    world: LabWorld,
    engine: Engine,
    seed: u64,
    pub(crate) ends: BTreeMap<String, ClientEnd>,
    sentinel: Option<JoinHandle<()>>,
    /// The clients with a clock of their own whose processes the lab has
    /// not yet looked at ([`super::reach`]).
    unreached: Vec<String>,
    /// `--servers redis`: the real sentinel, and the servers' data (last:
    /// removed once the servers are gone).
    real_sentinel: Option<RealSentinel>,
    /// The run's causes of inconclusiveness seen as it ran.
    causes: Vec<Cause>,
    _data: Option<DataRoot>,
}

/// Runs `setup` to its end. Clients are started from the calling thread,
/// which must live as long as the run (their parent-death signal follows
/// it): call it from `block_on`, not from a spawned task.
pub async fn run(setup: &Setup, reaper: &Arc<Reaper>) -> Result<Outcome, LabError> {
    let begun = Instant::now();
    let mut lab = Lab::start(setup, reaper).await?;
    let mut marks = Marks::from(begun);
    lab.spawn_clients(setup, reaper)?;
    let driven = match lab.wait_ready().await {
        Ok(()) => {
            marks.ready = Instant::now();
            lab.drive(&mut marks).await
        }
        Err(e) => Err(e),
    };
    lab.stop().await;
    driven?;
    let clients: Vec<ClientEnd> = std::mem::take(&mut lab.ends).into_values().collect();
    assert_eq!(
        clients.len(),
        setup.scenario.clients.len(),
        "a run's outcome has an end for each of its clients"
    );
    Ok(Outcome {
        history: lab.world.rec.history(),
        clients,
        faults: lab.engine.faults(),
        causes: std::mem::take(&mut lab.causes),
        phases: marks.phases(),
    })
}

impl Lab {
    async fn start(setup: &Setup, reaper: &Arc<Reaper>) -> Result<Lab, LabError> {
        let s = &setup.scenario;
        let origin = Instant::now();
        let mut resources: Vec<String> = s.clients.iter().map(|c| c.resource.clone()).collect();
        resources.sort();
        resources.dedup();
        let rec = LabRecorder::new(origin, &resources, s.cluster.topology, s.cluster.nodes);
        // The scenario was checked for the lab (`refuse`): triggers are
        // `acquired`, released when the lab first sees the client own.
        assert!(
            s.faults
                .iter()
                .all(|f| matches!(f.after, Trigger::Start | Trigger::Acquired(_))),
            "lab: scenario {}: a fault's trigger the lab cannot see (lab::refuse refuses it)",
            s.name
        );
        let (queue, waiting, aimer) = fault_plan(s, setup.seed);
        let mut engine = Engine::new(s, setup.seed, queue);
        engine.wait_for(waiting);
        if let Some(aimer) = aimer {
            rec.aim(aimer, s.max_ttl);
        }
        let master = Arc::new(Mutex::new("n1".to_string()));
        let mut net = LabNet::new(s.network.latency);
        let clients: Vec<String> = s.clients.iter().map(|c| c.name.clone()).collect();
        net.tell_server_errors(&clients, server_errors(&rec));
        let clocks = clocks(s, setup.seed, origin);
        let real = setup.servers == Servers::Redis;
        let (nodes, data) = if real {
            let root = DataRoot::new(reaper).map_err(io_err("a data directory"))?;
            let logs = server_logs(&setup.logs);
            let nodes =
                cluster::start_servers(s, setup.seed, &rec, &net, &root, &logs, reaper).await?;
            (nodes, Some(root))
        } else {
            (start_nodes(s, &rec, &net, &clocks, &master).await?, None)
        };
        assert_eq!(
            nodes.len(),
            s.cluster.nodes,
            "lab: the nodes started are the scenario's"
        );
        let sink_rec = rec.clone();
        let store = Store::start(&clients, Arc::new(move |e| sink_rec.store(e)))
            .await
            .map_err(io_err("starting the store"))?;
        let maps = open_links(s, setup.seed, &mut net, &nodes, &store, real).await?;
        let mut real_sentinel = None;
        if let (Some(root), Topology::Single) = (&data, s.cluster.topology) {
            cluster::replicate(s, &mut net, &nodes, &maps).await?;
            let logs = server_logs(&setup.logs);
            let sentinel =
                cluster::start_sentinel(s, &net, &rec, &master, root, &logs, reaper).await?;
            cluster::open_sentinel_links(s, setup.seed, &mut net, &sentinel).await?;
            real_sentinel = Some(sentinel);
        }
        if real {
            rec.start_now();
        }
        let world = LabWorld {
            rec,
            net,
            nodes,
            store,
            clients: BTreeMap::new(),
            clocks: BTreeMap::new(),
            master,
        };
        let mut lab = Lab {
            scenario: s.clone(),
            world,
            engine,
            seed: setup.seed,
            ends: BTreeMap::new(),
            sentinel: None,
            unreached: Vec::new(),
            real_sentinel,
            causes: Vec::new(),
            _data: data,
        };
        if s.cluster.topology == Topology::Single && !real {
            lab.start_sentinel(clocks["sentinel"].clone(), &server_logs(&setup.logs))
                .await?;
        }
        Ok(lab)
    }

    /// The sentinel, one listener per client, each naming a node at the
    /// address that client reaches it through.
    async fn start_sentinel(&mut self, clock: LabClock, logs: &Path) -> Result<(), LabError> {
        let node_addrs: Vec<String> = (1..=self.scenario.cluster.nodes)
            .map(|i| format!("n{i}:{NODE_PORT}"))
            .collect();
        let mut listeners = Vec::new();
        for c in &self.scenario.clients {
            let l = TcpListener::bind(("127.0.0.1", 0))
                .await
                .map_err(io_err("binding the sentinel"))?;
            let addr = l.local_addr().map_err(io_err("binding the sentinel"))?;
            self.world
                .net
                .open(
                    &c.name,
                    "sentinel",
                    addr,
                    link_seed(self.seed, &c.name, "sentinel"),
                    None,
                )
                .await
                .map_err(io_err("opening a link"))?;
            let mine: BTreeMap<String, String> = (1..=self.scenario.cluster.nodes)
                .filter_map(|i| {
                    let n = format!("n{i}");
                    let a = self.world.net.addr(&c.name, &n)?;
                    Some((format!("{n}:{NODE_PORT}"), a.to_string()))
                })
                .collect();
            let show: answer::Translate =
                Arc::new(move |a: &str| mine.get(a).cloned().unwrap_or_else(|| a.to_string()));
            listeners.push((l, show));
        }
        assert_eq!(
            listeners.len(),
            self.scenario.clients.len(),
            "the sentinel listens once for each client"
        );
        let (rec, master) = (self.world.rec.clone(), self.world.master.clone());
        let cfg = SentinelConfig {
            nodes: node_addrs.clone(),
            master: node_addrs[0].clone(),
            failover_after: self.scenario.cluster.failover_after,
            clock: Arc::new(clock),
            connector: Arc::new(Route {
                from: "sentinel".into(),
                directory: self.world.net.directory.clone(),
            }),
            on_failover: Arc::new(move |old: &str, new: &str| {
                let (old, new) = (sentinel::split_addr(old).0, sentinel::split_addr(new).0);
                *master.lock().unwrap_or_else(|e| e.into_inner()) = new.to_string();
                let kind = EventKind::Failover {
                    old_master: old.to_string(),
                    new_master: new.to_string(),
                };
                rec.record("sentinel", kind);
            }),
            seed: redlock_engine::setup::sentinel_seed(self.seed),
            on_event: Some(sentinel_log(logs, &self.world.rec)?),
        };
        self.sentinel = Some(tokio::spawn(async move {
            let _ = sentinel::run_with_listeners(cfg, listeners).await;
        }));
        Ok(())
    }

    /// Runs the faults on the wall clock until the clients are done; an
    /// error when a client's clock turns out to be out of libfaketime's
    /// reach. Two TTLs after the end, the clients still running are
    /// stopped (SIGTERM, then SIGKILL a second later).
    async fn drive(&mut self, marks: &mut Marks) -> Result<(), LabError> {
        let end = self.scenario.duration;
        let limit = end + self.scenario.max_ttl * 2;
        let mut ended = false;
        loop {
            let now = self.world.rec.now();
            self.check_reach()?;
            // What ran out before a fault due now is recorded first.
            self.world.rec.expire_due();
            self.step_faults(now).await;
            self.note_exits(ended);
            if !ended && now >= end {
                self.world.rec.record("lab", EventKind::End);
                ended = true;
                marks.end = Instant::now();
            }
            let running = self.ends.values().any(|e| e.status.is_empty());
            if (ended && !running) || now >= limit {
                // The limit is past the end: the end is recorded first.
                assert!(ended, "a run stopped at {now:?} before its end {end:?}");
                marks.exited = Instant::now();
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// Releases the faults whose trigger came, adds those the aimed
    /// nemesis placed, applies those due and fires the timers due.
    async fn step_faults(&mut self, now: Duration) {
        self.engine.add_due(self.world.rec.take_placed());
        let rec = &self.world.rec;
        self.engine.release(|t| match t {
            Trigger::Acquired(c) => rec.first_owned(c),
            _ => None,
        });
        self.engine.apply_due(&mut self.world, now).await;
    }

    /// SIGTERM, then SIGKILL, to every client still running; the servers
    /// and links close when the lab is dropped.
    async fn stop(&mut self) {
        for (name, p) in &mut self.world.clients {
            let end = self.ends.get_mut(name).expect("every client has an end");
            if let Ok(status) = p.stop(Duration::from_secs(1)).await {
                if end.status.is_empty() {
                    end.status = format!("stopped by the lab ({status})");
                }
            }
        }
        if let Some(s) = self.sentinel.take() {
            s.abort();
        }
        if let Some(s) = &mut self.real_sentinel {
            s.stop().await;
        }
        for node in self.world.nodes.values_mut() {
            node.stop().await;
        }
    }
}

/// Records each reply that says a server could not run a client's lock
/// command (a script, or a command naming a lock key): a library's probe
/// that Redis refuses too is no cause ([`super::replies`]).
fn server_errors(rec: &LabRecorder) -> super::net::ServerErrors {
    let rec = rec.clone();
    Arc::new(
        move |client: &str, server: &str, words: &[String], error: &str| {
            if !super::replies::is_lock_command(words, &rec.lock_keys()) {
                return;
            }
            let kind = EventKind::ServerError {
                server: server.to_string(),
                command: super::replies::command_name(words),
                error: error.to_string(),
            };
            rec.record(client, kind);
        },
    )
}

/// The node's sentinel's events, each line the run's time in ms and the
/// event as Redis Sentinel logs it, in `<servers>/sentinel.log`.
fn sentinel_log(servers: &Path, rec: &LabRecorder) -> Result<sentinel::EventHook, LabError> {
    use std::io::Write;
    std::fs::create_dir_all(servers).map_err(io_err("creating the servers' log folder"))?;
    let file = std::fs::File::create(servers.join("sentinel.log"))
        .map_err(io_err("creating the sentinel's log"))?;
    let (file, rec) = (Mutex::new(file), rec.clone());
    Ok(Arc::new(move |line: &str| {
        let at = rec.now().as_secs_f64() * 1000.0;
        let mut f = file.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(f, "{at:.3} {line}");
    }))
}

/// Where real servers' output goes, beside the clients' logs.
fn server_logs(logs: &std::path::Path) -> PathBuf {
    logs.parent().unwrap_or(logs).join("servers")
}

/// Each host's clock: the simulation's draws (rate, offset) on real time.
fn clocks(s: &Scenario, seed: u64, origin: Instant) -> BTreeMap<String, LabClock> {
    let epoch_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    clock_draws(s, seed)
        .into_iter()
        .map(|(h, (offset, rate))| (h, LabClock::new(origin, epoch_ms, offset, rate)))
        .collect()
}

use super::net::link_seed;

mod clients;

/// Every node, with a port for each client, each other node and the
/// sentinel; in the `single` topology each replicates through its links.
async fn start_nodes(
    s: &Scenario,
    rec: &LabRecorder,
    net: &LabNet,
    clocks: &BTreeMap<String, LabClock>,
    master: &Arc<Mutex<String>>,
) -> Result<BTreeMap<String, LabNode>, LabError> {
    let names: Vec<String> = (1..=s.cluster.nodes).map(|i| format!("n{i}")).collect();
    let clients: Vec<String> = s.clients.iter().map(|c| c.name.clone()).collect();
    let mut nodes = BTreeMap::new();
    for name in &names {
        let mut peers: Vec<String> = clients.clone();
        peers.extend(names.iter().filter(|n| *n != name).cloned());
        peers.push("sentinel".into());
        let (rec2, clients2) = (rec.clone(), clients.clone());
        let sink: super::node::Sink = Arc::new(move |node, peer, effects| {
            let client = peer.filter(|p| clients2.iter().any(|c| c == p));
            rec2.node_effects(node, client, effects);
        });
        let replica = (s.cluster.topology == Topology::Single).then(|| Replica {
            route: Arc::new(Route {
                from: name.clone(),
                directory: net.directory.clone(),
            }),
            delay: s.cluster.replication_delay,
            master: master.clone(),
        });
        let clock = clocks[name].clone();
        let mode = persistence_mode(s.cluster.persistence);
        let host = NodeHost::start_replica(name, &peers, clock, mode, sink, replica)
            .await
            .map_err(io_err("starting a node"))?;
        rec.node_clock(name, NodeTime::Model(clocks[name].clone()));
        rec.node_up(name, 0, &[]);
        nodes.insert(name.clone(), LabNode::Own(Box::new(host)));
    }
    Ok(nodes)
}

/// The links: each client to each node and to the store (keeping when the
/// client sent what it sent there); in the `single` topology each node to
/// each other and the sentinel to each node. With `real` servers, the
/// sentinel's links to the nodes rewrite ports both ways, by the maps
/// returned (per node, the way to it and the way back, filled once every
/// link is open): a node's `INFO` names its master by the port the
/// sentinel knows it at, so the sentinel sees a replica it re-pointed
/// reconfigured (`+slave-reconf-done`), as it would without links.
async fn open_links(
    s: &Scenario,
    seed: u64,
    net: &mut LabNet,
    nodes: &BTreeMap<String, LabNode>,
    store: &Store,
    real: bool,
) -> Result<Vec<(String, PortMap, PortMap)>, LabError> {
    let mut pairs: Vec<(String, String, std::net::SocketAddr)> = Vec::new();
    for c in &s.clients {
        for (n, host) in nodes {
            pairs.extend(host.addr(&c.name).map(|a| (c.name.clone(), n.clone(), a)));
        }
        pairs.extend(
            store
                .addr(&c.name)
                .map(|a| (c.name.clone(), "store".into(), a)),
        );
    }
    if s.cluster.topology == Topology::Single {
        for (n, host) in nodes {
            for from in nodes
                .keys()
                .filter(|m| *m != n)
                .chain(["sentinel".to_string()].iter())
            {
                pairs.extend(host.addr(from).map(|a| (from.clone(), n.clone(), a)));
            }
        }
    }
    let mut maps = Vec::new();
    for (from, to, addr) in pairs {
        let sent = (to == "store").then(|| store.send_times());
        let (up, down) = match real && from == "sentinel" {
            true => (Some(PortMap::default()), Some(PortMap::default())),
            false => (None, None),
        };
        if let (Some(u), Some(d)) = (&up, &down) {
            maps.push((to.clone(), u.clone(), d.clone()));
        }
        net.open_rewriting(
            &from,
            &to,
            addr,
            link_seed(seed, &from, &to),
            sent,
            (up, down),
        )
        .await
        .map_err(io_err("opening a link"))?;
    }
    // With real servers, one map pair for each node the sentinel watches.
    let watched = match real && s.cluster.topology == Topology::Single {
        true => nodes.len(),
        false => 0,
    };
    assert_eq!(
        maps.len(),
        watched,
        "the sentinel's port maps, one per node"
    );
    Ok(maps)
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(s) = self.sentinel.take() {
            s.abort();
        }
    }
}
