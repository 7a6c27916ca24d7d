//! A lab node: the node code of `redlock-sim node`, in the lab's process, on
//! 127.0.0.1, with the scenario's faults.
//!
//! Each node listens on one port per *peer* (a client, or `lab` for the
//! lab's own connections: replicas, the sentinel), chosen by the system at
//! the start and kept across restarts; a client's link leads to its own
//! port, so the node knows which client sent each command, and every
//! effect reaches the lab's sink with that client's name.
//! - `crash`: the process is gone: every connection and listener closes
//!   (a connect is refused until the restart), memory is lost, and the
//!   disk keeps what its persistence synced;
//! - `restart`: the keyspace from the disk, on new ports (the lab's links
//!   follow them: a port of its own may have been taken meanwhile);
//! - `pause`: it reads and writes nothing, accepts nothing and expires
//!   nothing while its clock runs on;
//! - clock faults act on its [`LabClock`], the clock it expires keys by.

use super::clock::LabClock;
use super::gate::{gated, running};
use bytes::Bytes;
use redlock_node::persistence::{self, SharedDisk};
use redlock_node::{Node, EXPIRY_PERIOD};
use redlock_proto::clock::Clock;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Receives each write's effects: the node, the peer whose command made
/// them (None for the active expiry, replication or a command the lab
/// ran), the effects. A key a command finds expired is deleted in that
/// command: that `DEL` carries the command's peer.
pub(crate) type Sink = Arc<dyn Fn(&str, Option<&str>, &[Vec<Bytes>]) + Send + Sync>;

tokio::task_local! {
    /// The peer whose connection this task serves.
    static PEER: Arc<str>;
}

/// One lab node, up or down.
pub(crate) struct NodeHost {
    pub(crate) name: String,
    pub(crate) clock: LabClock,
    disk: SharedDisk,
    mode: persistence::Mode,
    peers: Vec<String>,
    /// Where each peer reaches it now (new ports at each boot).
    ports: Vec<(String, SocketAddr)>,
    sink: Sink,
    /// The running process: its node and every task it runs.
    up: Option<(Node, Tasks)>,
    /// In the `single` topology: how it replicates.
    replica: Option<Replica>,
    boots: u64,
}

/// How a node of the `single` topology replicates: it comes up as the
/// replica of the master the sentinel names (synced at the first boot, when
/// the cluster is empty: the simulation's start), through `route`.
#[derive(Clone)]
pub(crate) struct Replica {
    pub(crate) route: Arc<dyn redlock_proto::transport::Connector>,
    pub(crate) delay: std::time::Duration,
    /// The master's name now (`n1` at first; the sentinel's failovers move it).
    pub(crate) master: Arc<Mutex<String>>,
}

/// Every task of one boot of a node, its connections' included, so that a
/// crash ends them all before it returns.
type Tasks = Arc<Mutex<Boot>>;

#[derive(Default)]
struct Boot {
    dead: bool,
    set: JoinSet<()>,
}

fn lock(tasks: &Tasks) -> std::sync::MutexGuard<'_, Boot> {
    tasks.lock().unwrap_or_else(|e| e.into_inner())
}

impl NodeHost {
    /// Starts a node with a port for each of `peers`, no replica (the
    /// tests' node).
    #[cfg(test)]
    pub(crate) async fn start(
        name: &str,
        peers: &[String],
        clock: LabClock,
        mode: persistence::Mode,
        sink: Sink,
    ) -> io::Result<NodeHost> {
        Self::start_replica(name, peers, clock, mode, sink, None).await
    }

    /// Starts a node with a port for each of `peers`, replicating as
    /// `replica` says.
    pub(crate) async fn start_replica(
        name: &str,
        peers: &[String],
        clock: LabClock,
        mode: persistence::Mode,
        sink: Sink,
        replica: Option<Replica>,
    ) -> io::Result<NodeHost> {
        // One port per peer: `addr` finds a peer's by its name.
        let mut names: Vec<&String> = peers.iter().collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), peers.len(), "{name}: a peer named twice");
        let mut host = NodeHost {
            name: name.to_string(),
            clock,
            disk: persistence::Disk::shared(),
            mode,
            peers: peers.to_vec(),
            ports: Vec::new(),
            sink,
            up: None,
            replica,
            boots: 0,
        };
        host.boot().await?;
        Ok(host)
    }

    /// The address `peer` reaches this node at now: it changes at each
    /// restart (a port of its own might be taken meanwhile by any
    /// connection's local port), so links follow it.
    pub(crate) fn addr(&self, peer: &str) -> Option<SocketAddr> {
        self.ports.iter().find(|(p, _)| p == peer).map(|(_, a)| *a)
    }

    /// The running node, if up (the lab reads its keyspace, runs `REPLICAOF`).
    pub(crate) fn node(&self) -> Option<&Node> {
        self.up.as_ref().map(|(n, _)| n)
    }

    /// Power loss: when it returns, every task of the node has ended (no
    /// command runs or answers after it), its sockets are closed, and the
    /// disk kept what was synced. False if it was already down.
    pub(crate) async fn crash(&mut self) -> bool {
        let Some((_, tasks)) = self.up.take() else {
            return false;
        };
        let mut set = {
            let mut boot = lock(&tasks);
            assert!(!boot.dead, "{}: crashed a boot already ended", self.name);
            boot.dead = true;
            std::mem::take(&mut boot.set)
        };
        set.abort_all();
        while set.join_next().await.is_some() {}
        persistence_lock(&self.disk).crash();
        self.clock.set_paused(false);
        true
    }

    /// Comes back, on new ports, with what the disk kept; false if it was
    /// up.
    pub(crate) async fn restart(&mut self) -> io::Result<bool> {
        if self.up.is_some() {
            return Ok(false);
        }
        self.boot().await?;
        Ok(true)
    }

    /// Stops or resumes the process (its clock's timers wait too).
    pub(crate) fn set_paused(&self, paused: bool) {
        self.clock.set_paused(paused);
    }

    async fn boot(&mut self) -> io::Result<()> {
        assert!(self.up.is_none(), "{}: booted while up", self.name);
        let mut listeners = Vec::new();
        for peer in &self.peers {
            listeners.push((peer.clone(), TcpListener::bind(("127.0.0.1", 0)).await?));
        }
        self.ports = listeners
            .iter()
            .map(|(p, l)| Ok((p.clone(), l.local_addr()?)))
            .collect::<io::Result<_>>()?;
        let clock: Arc<dyn Clock> = Arc::new(self.clock.clone());
        let keyspace = persistence_lock(&self.disk).load(clock.wall_ms());
        let node = Node::from_keyspace(clock, keyspace);
        let (name, sink) = (self.name.clone(), self.sink.clone());
        node.add_effects_sink(Arc::new(move |effects: &[Vec<Bytes>]| {
            let peer = PEER.try_with(|p| p.clone()).ok();
            sink(&name, peer.as_deref(), effects);
        }));
        self.boots += 1;
        let tasks: Tasks = Arc::default();
        {
            let mut boot = lock(&tasks);
            if let Some(r) = &self.replica {
                boot.set
                    .spawn(replicate(&node, &self.name, r, self.boots == 1));
            }
            if let Some(fsync) = persistence::attach(&node, self.disk.clone(), self.mode) {
                boot.set.spawn(fsync);
            }
            // The node's own expiry: its clock's timers wait out a pause.
            boot.set.spawn(redlock_node::active_expiry(node.clone()));
            for (peer, listener) in listeners {
                let paused = self.clock.paused();
                let accept = accept(node.clone(), listener, peer.into(), paused, tasks.clone());
                boot.set.spawn(accept);
            }
        }
        self.up = Some((node, tasks));
        Ok(())
    }
}

impl Drop for NodeHost {
    fn drop(&mut self) {
        if let Some((_, tasks)) = &self.up {
            let mut boot = lock(tasks);
            boot.dead = true;
            boot.set.abort_all();
        }
    }
}

/// Points `node` at the master and returns its replication task.
fn replicate(
    node: &Node,
    name: &str,
    r: &Replica,
    first_boot: bool,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    redlock_node::replication::set_replication_delay(node, r.delay);
    let master = r.master.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let addr = format!("{master}:{}", redlock_engine::setup::NODE_PORT);
    if master != name && first_boot {
        redlock_node::replication::attach_synced(node, &addr);
    } else if master != name {
        let port = redlock_engine::setup::NODE_PORT.to_string();
        node.execute(&[
            Bytes::from("REPLICAOF"),
            Bytes::from(master),
            Bytes::from(port),
        ]);
    }
    redlock_node::replication::replica_task(node.clone(), r.route.clone())
}

fn persistence_lock(disk: &SharedDisk) -> std::sync::MutexGuard<'_, persistence::Disk> {
    disk.lock().unwrap_or_else(|e| e.into_inner())
}

/// Accepts `peer`'s connections while the node runs; each is served in a
/// task of the boot's, so a crash ends them all.
async fn accept(
    node: Node,
    listener: TcpListener,
    peer: Arc<str>,
    mut paused: watch::Receiver<bool>,
    tasks: Tasks,
) {
    loop {
        running(&mut paused).await;
        tokio::select! {
            biased;
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    tokio::time::sleep(EXPIRY_PERIOD).await;
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let stream = gated(stream, paused.clone());
                let serve = PEER.scope(peer.clone(), redlock_node::handle_connection(node.clone(), stream));
                let mut boot = lock(&tasks);
                if boot.dead {
                    return;
                }
                boot.set.spawn(serve);
                while boot.set.try_join_next().is_some() {}
            }
            changed = paused.changed() => if changed.is_err() { return },
        }
    }
}

#[cfg(test)]
mod tests;
