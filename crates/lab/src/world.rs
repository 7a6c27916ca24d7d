//! What a fault does to the lab's hosts ([`engine::World`]), on the wall
//! clock, meaning what it means in the simulation:
//! - a node's `crash`: its process ends (every connection through its links
//!   is reset, what was on its way lost; a connect is refused), its disk
//!   keeps what its persistence synced; a real node's sockets close with
//!   it, so a `kill` is done the same way and only the history tells them
//!   apart; `restart` brings it back on new ports, its links following;
//! - `partition`, `isolate`, `heal`, `latency`: on the links ([`super::net`]);
//! - `pause`: a node or the store reads, writes and expires nothing while
//!   its clock runs on; a client's process group gets SIGSTOP, then SIGCONT;
//! - `clock-jump`, `clock-rate` on a node: the clock it expires keys by; on
//!   a client, `clock-rate` only: its clock through libfaketime
//!   ([`super::faketime`]).
//!
//! Every fault is recorded with host `lab`, at the time it was done.

use super::faketime::FakeClock;
use super::net::LabNet;
use super::node::NodeHost;
use super::process::ClientProcess;
use super::record::LabRecorder;
use super::redis::node::RedisNode;
use super::store::Store;
use redlock_engine::cuts::{Cause, Cuts};
use redlock_engine::{self as engine, PauseEnd};
use redlock_history::EventKind;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The lab's hosts, as the faults act on them.
pub(crate) struct LabWorld {
    pub(crate) rec: LabRecorder,
    pub(crate) net: LabNet,
    pub(crate) nodes: BTreeMap<String, LabNode>,
    pub(crate) store: Store,
    pub(crate) clients: BTreeMap<String, ClientProcess>,
    /// The clocks libfaketime gives clients, for those that have one.
    pub(crate) clocks: BTreeMap<String, FakeClock>,
    /// The master's name (the `single` topology; `n1` for `redlock`).
    pub(crate) master: Arc<Mutex<String>>,
}

/// A node of the lab: the node code in the lab's process, or a real
/// `redis-server` (`--servers redis`).
pub(crate) enum LabNode {
    Own(Box<NodeHost>),
    Redis(Box<RedisNode>),
}

impl LabNode {
    /// Where `peer` reaches it now (a real server has one port for all).
    pub(crate) fn addr(&self, peer: &str) -> Option<std::net::SocketAddr> {
        match self {
            LabNode::Own(n) => n.addr(peer),
            LabNode::Redis(r) => r.addr(),
        }
    }

    async fn crash(&mut self) -> bool {
        match self {
            LabNode::Own(n) => n.crash().await,
            LabNode::Redis(r) => r.crash().await,
        }
    }

    async fn restart(&mut self) -> std::io::Result<bool> {
        match self {
            LabNode::Own(n) => n.restart().await,
            LabNode::Redis(r) => r.restart().await,
        }
    }

    fn set_paused(&self, paused: bool) {
        match self {
            LabNode::Own(n) => n.set_paused(paused),
            LabNode::Redis(r) => r.server.set_paused(paused),
        }
    }

    /// Its key count and the commands that rebuild the lock keys (of
    /// `keys`) it holds, as it came back from a restart.
    fn came_back(&self, keys: &[String]) -> (usize, Vec<Vec<bytes::Bytes>>) {
        match self {
            LabNode::Own(n) => {
                let node = n.node().expect("a node that restarted is up");
                let rebuild = redlock_history::keys::snapshot_of(node, keys);
                (node.keyspace().counts().0, rebuild)
            }
            LabNode::Redis(r) => r.came_back(),
        }
    }

    /// The end of the run (a real server is stopped; the node code's ends
    /// when dropped).
    pub(crate) async fn stop(&mut self) {
        if let LabNode::Redis(r) = self {
            r.stop().await;
        }
    }
}

impl LabWorld {
    fn node(&mut self, host: &str) -> &mut LabNode {
        // The parser lets crash and restart name only nodes.
        self.nodes
            .get_mut(host)
            .unwrap_or_else(|| panic!("lab: a crash or restart of {host}, not a node"))
    }

    fn set_paused(&self, host: &str, paused: bool) {
        if let Some(n) = self.nodes.get(host) {
            n.set_paused(paused);
        } else if let Some(p) = self.clients.get(host) {
            if paused {
                p.pause();
            } else {
                p.resume();
            }
        } else {
            // lab::refuse refuses a pause of the sentinel.
            assert_eq!(
                host, "store",
                "lab: a pause of {host}, no node, client or store"
            );
            self.store.set_paused(paused);
        }
    }
}

impl engine::World for LabWorld {
    fn instant(&self, _due: Duration) -> Duration {
        self.rec.now()
    }

    fn master(&self) -> String {
        self.master
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn record(&self, _at: Duration, kind: EventKind) {
        self.rec.record("lab", kind);
    }

    fn sync_links(&mut self, cuts: &Cuts) {
        self.net.apply(cuts);
    }

    /// The node's process ends; its links are reset and refuse new
    /// connections until it is back (a crash does not cut them here: they
    /// refuse as its closed ports would, without connecting to its old
    /// address, which another program may have bound since).
    async fn crash(&mut self, _at: Duration, host: &str, _kill: bool, _: &mut Cuts, _: Cause) {
        let crashed = self.node(host).crash().await;
        assert!(
            crashed,
            "lab: {host} was up by the engine's count but not by its own"
        );
        for (_, link) in self.net.links_into(host) {
            link.server_gone();
        }
        self.rec.node_down(host);
    }

    /// The node again, its links following its new ports.
    async fn restart(&mut self, host: &str) {
        let node = self
            .nodes
            .get_mut(host)
            .expect("a restart's target is a node");
        match node.restart().await {
            Ok(true) => {}
            Ok(false) => panic!("lab: {host} was down by the engine's count but not by its own"),
            Err(e) => panic!("lab: restarting {host}: {e}"),
        }
        for (from, link) in self.net.links_into(host) {
            // Every host with a link to a node has a port on it.
            let a = node.addr(from);
            assert!(a.is_some(), "lab: {host} came back with no port for {from}");
            if let Some(a) = a {
                link.set_server(a);
            }
        }
    }

    /// Records what the node came back with: its keys, the lock keys held.
    fn restarted(&mut self, host: &str) {
        let keys = self.rec.lock_keys();
        let (count, rebuild) = self.node(host).came_back(&keys);
        self.rec.node_up(host, count, &rebuild);
    }

    fn pause(&mut self, host: &str, _from: Duration, _until: Duration) -> PauseEnd {
        self.set_paused(host, true);
        PauseEnd::OnResume
    }

    fn resume(&mut self, host: &str) {
        self.set_paused(host, false);
    }

    fn set_latency(&mut self, a: &str, b: &str, latency: Option<Duration>) {
        self.net.set_latency(a, b, latency);
    }

    fn jump_clock(&mut self, host: &str, by_ms: f64) {
        // lab::refuse refuses a jump of a client's, the store's and the
        // sentinel's clocks.
        assert!(
            self.nodes.contains_key(host),
            "lab: a clock jump of {host}, not a node"
        );
        match self.nodes.get_mut(host) {
            Some(LabNode::Own(n)) => n.clock.jump(by_ms),
            Some(LabNode::Redis(r)) => r.jump_clock(by_ms),
            None => {}
        }
    }

    fn set_clock_rate(&mut self, host: &str, _at: Duration, rate: f64) -> f64 {
        // A client whose clock a fault changes has one through libfaketime
        // (`faketime::needed`); lab::refuse refuses the store's and the
        // sentinel's.
        assert!(
            self.nodes.contains_key(host) || self.clocks.contains_key(host),
            "lab: a clock rate for {host}, neither a node nor a client with a clock of its own"
        );
        let mut from = 1.0;
        match self.nodes.get_mut(host) {
            Some(LabNode::Own(n)) => {
                from = n.clock.rate();
                n.clock.set_rate(rate);
            }
            Some(LabNode::Redis(r)) => from = r.set_clock_rate(rate),
            None => {}
        }
        if let Some(c) = self.clocks.get_mut(host) {
            from = c.rate();
            c.set_rate(rate)
                .expect("lab: rewriting a client's clock file");
        }
        from
    }
}
