//! A lab run's real servers started: every node's `redis-server` (each a
//! master at first, observed from its first command), then, for `single`,
//! once the links are open, the replicas pointed at `n1` through their own
//! links and synced, and the real sentinel with the clients' links to it.

use super::node::RedisNode;
use super::observe::query;
use super::sentinel::{OnSwitch, RealSentinel};
use super::server::{RedisHost, ServerConfig};
use super::DataRoot;
use crate::clock::NodeTime;
use crate::error::LabError;
use crate::faketime::{self, FakeClock};
use crate::net::LabNet;
use crate::process::Reaper;
use crate::record::LabRecorder;
use crate::rewrite::PortMap;
use crate::world::LabNode;
use redlock_engine::setup::clock_draws;
use redlock_history::EventKind;
use redlock_proto::resp::Frame;
use redlock_scenario::Scenario;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn failed(what: &str) -> impl Fn(std::io::Error) -> LabError + '_ {
    move |e| LabError::Failed(format!("lab: {what}: {e}"))
}

/// Every node's server, started and observed, its output in `logs`.
pub(crate) async fn start_servers(
    s: &Scenario,
    seed: u64,
    rec: &LabRecorder,
    net: &LabNet,
    root: &DataRoot,
    logs: &Path,
    reaper: &Arc<Reaper>,
) -> Result<BTreeMap<String, LabNode>, LabError> {
    std::fs::create_dir_all(logs).map_err(failed("creating the servers' logs"))?;
    let draws = clock_draws(s, seed);
    let mut nodes = BTreeMap::new();
    for i in 1..=s.cluster.nodes {
        let name = format!("n{i}");
        let dir = root.path.join(&name);
        std::fs::create_dir_all(&dir).map_err(failed("creating a data directory"))?;
        let clock = if super::clock_needed(s, seed, &name) {
            let lib = faketime::library().ok_or_else(|| {
                LabError::BadInput(format!(
                    "redlock-sim lab: scenario {}: with --servers redis, {name}'s clock is set \
                     through libfaketime, which is not installed: sudo apt-get install faketime",
                    s.name
                ))
            })?;
            let (offset, rate) = draws.get(&name).copied().unwrap_or((0.0, 1.0));
            let file = dir.join("clock.faketime");
            let c = FakeClock::start(&lib, &file, &name, offset, rate)
                .map_err(failed("setting a server's clock"))?;
            for f in c.leftovers() {
                reaper.note(&format!("f{f}"));
            }
            Some(c)
        } else {
            None
        };
        let config = ServerConfig {
            persistence: s.cluster.persistence,
        };
        let server = RedisHost::start(&name, &dir, logs, &config, clock, reaper)
            .await
            .map_err(failed("starting redis-server"))?;
        let node = RedisNode::observe(server, net.peers.clone(), rec.clone())
            .await
            .map_err(failed("observing redis-server"))?;
        let time = match &node.server.clock {
            Some(c) => NodeTime::Fake(c.view()),
            None => NodeTime::System,
        };
        rec.node_clock(&name, time);
        rec.node_up(&name, 0, &[]);
        nodes.insert(name, LabNode::Redis(Box::new(node)));
    }
    Ok(nodes)
}

/// The port `from`'s link to `to` listens on.
fn port(net: &LabNet, from: &str, to: &str) -> u16 {
    net.addr(from, to).expect("a link the lab opened").port()
}

/// `single`: what a node's link to another carries down (a master's
/// stream to its replica) takes `replication_delay` on top of the
/// network's latency, once the replicas have synced (the simulation starts
/// with them synced). What a replica sends its master (its
/// acknowledgements) is not delayed, as with the node code.
fn delay_replication(s: &Scenario, net: &mut LabNet) {
    let names: Vec<String> = (1..=s.cluster.nodes).map(|i| format!("n{i}")).collect();
    for a in &names {
        for b in names.iter().filter(|b| *b != a) {
            net.delay_down(a, b, s.cluster.replication_delay);
        }
    }
}

/// `single`: each node told the port the sentinel reaches it at, the
/// replicas pointed at `n1` through their own links and synced; the maps of
/// each sentinel's link to a node filled (on the way to it, the sentinel's
/// ports of the nodes to that node's own; on the way back, the reverse).
pub(crate) async fn replicate(
    s: &Scenario,
    net: &mut LabNet,
    nodes: &BTreeMap<String, LabNode>,
    sentinel_maps: &[(String, PortMap, PortMap)],
) -> Result<(), LabError> {
    assert_eq!(
        s.cluster.topology,
        redlock_scenario::Topology::Single,
        "replicas outside the single topology"
    );
    assert_eq!(
        sentinel_maps.len(),
        nodes.len(),
        "the sentinel's port maps, one per node"
    );
    let names: Vec<String> = nodes.keys().cloned().collect();
    for (to, up, down) in sentinel_maps {
        for other in names.iter().filter(|n| *n != to) {
            up.insert(port(net, "sentinel", other), port(net, to, other));
            down.insert(port(net, to, other), port(net, "sentinel", other));
        }
    }
    for (name, node) in nodes {
        let addr = node.addr(name).expect("a server just started");
        let announce = port(net, "sentinel", name).to_string();
        let mut cmds = vec![
            vec!["CONFIG", "SET", "replica-announce-ip", "127.0.0.1"],
            vec!["CONFIG", "SET", "replica-announce-port", announce.as_str()],
        ];
        let master = (name != "n1").then(|| port(net, name, "n1").to_string());
        if let Some(m) = &master {
            cmds.push(vec!["REPLICAOF", "127.0.0.1", m.as_str()]);
        }
        cmds.push(vec!["CONFIG", "REWRITE"]);
        for c in cmds {
            match query(addr, &c)
                .await
                .map_err(failed("configuring replication"))?
            {
                Frame::Error(e) => {
                    return Err(LabError::Failed(format!("lab: {}: {e}", c.join(" "))))
                }
                _ => continue,
            }
        }
    }
    for (name, node) in nodes.iter().filter(|(n, _)| *n != "n1") {
        synced(name, node.addr(name).expect("up")).await?;
    }
    delay_replication(s, net);
    Ok(())
}

/// Waits until the replica at `addr` has its master's link up.
async fn synced(name: &str, addr: std::net::SocketAddr) -> Result<(), LabError> {
    for _ in 0..500 {
        if let Ok(Frame::Bulk(info)) = query(addr, &["INFO", "replication"]).await {
            if String::from_utf8_lossy(&info).contains("master_link_status:up") {
                return Ok(());
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err(LabError::Failed(format!(
        "lab: {name} did not sync with n1 in 5 s"
    )))
}

/// The real sentinel, reaching the master through its own link; each
/// failover it announces recorded and made the lab's master.
pub(crate) async fn start_sentinel(
    s: &Scenario,
    net: &LabNet,
    rec: &LabRecorder,
    master: &Arc<Mutex<String>>,
    root: &DataRoot,
    logs: &Path,
    reaper: &Arc<Reaper>,
) -> Result<RealSentinel, LabError> {
    let by_port: BTreeMap<u16, String> = (1..=s.cluster.nodes)
        .map(|i| format!("n{i}"))
        .map(|n| (port(net, "sentinel", &n), n))
        .collect();
    // Each node the sentinel knows by a port of its own: its link's.
    assert_eq!(
        by_port.len(),
        s.cluster.nodes,
        "two nodes behind one port of the sentinel's"
    );
    let (rec, master) = (rec.clone(), master.clone());
    let on_switch: OnSwitch = Arc::new(move |old, new| {
        let name = |p: u16| by_port.get(&p).cloned().unwrap_or_else(|| p.to_string());
        let (old, new) = (name(old), name(new));
        *master.lock().unwrap_or_else(|e| e.into_inner()) = new.clone();
        let kind = EventKind::Failover {
            old_master: old,
            new_master: new,
        };
        rec.record("sentinel", kind);
    });
    let replicas: Vec<u16> = (2..=s.cluster.nodes)
        .map(|i| port(net, "sentinel", &format!("n{i}")))
        .collect();
    RealSentinel::start(
        &root.path.join("sentinel"),
        logs,
        port(net, "sentinel", "n1"),
        &replicas,
        // No failover: a sentinel that waits a day to call the master down.
        s.cluster
            .failover_after
            .unwrap_or(Duration::from_secs(86_400)),
        reaper,
        on_switch,
    )
    .await
    .map_err(failed("starting redis-sentinel"))
}

/// Each client's link to the real sentinel, telling the client the ports
/// of its own links to the nodes.
pub(crate) async fn open_sentinel_links(
    s: &Scenario,
    seed: u64,
    net: &mut LabNet,
    sentinel: &RealSentinel,
) -> Result<(), LabError> {
    for c in &s.clients {
        let map = PortMap::default();
        for i in 1..=s.cluster.nodes {
            let n = format!("n{i}");
            map.insert(port(net, "sentinel", &n), port(net, &c.name, &n));
        }
        let seed = crate::net::link_seed(seed, &c.name, "sentinel");
        net.open_rewriting(
            &c.name,
            "sentinel",
            sentinel.addr,
            seed,
            None,
            (None, Some(map)),
        )
        .await
        .map_err(failed("opening a link"))?;
    }
    Ok(())
}
