//! The lab's network: a [`Link`] for every pair of hosts that talk (each
//! client to each node, to the store and to the sentinel; in the `single`
//! topology each node to each other, for replication, and the sentinel to
//! each node), and the partitions, isolations and latencies on them.
//!
//! The fault engine keeps the cuts ([`Cuts`]: several faults may cut one
//! direction; it heals when the last goes), and every change is pushed to
//! the links' directions: a cut direction holds, a slowed one
//! takes the fault's latency. A crash does not cut here: the crashed node's
//! links are reset and its ports closed (see [`super::node`]).
//!
//! Hosts inside the lab (the nodes' replication, the sentinel) reach a node
//! by its name (`n2:6379`, as in the simulation) through a [`Route`], which
//! takes the host's own link to it.

use super::link::{Link, Setting};
use super::rewrite::PortMap;
use super::sent::SendTimes;
use redlock_engine::cuts::{Cuts, LinkState};
use redlock_proto::transport::Connector;
use redlock_proto::transport::{ConnectFuture, TcpConnector};
use redlock_scenario::DurRange;
use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// Every link's listening address, by `(from, to)`: filled once the links
/// are open, read by each [`Route`].
pub(crate) type Directory = Arc<RwLock<BTreeMap<(String, String), SocketAddr>>>;

/// Which host each link's connection to a node came from, by the local
/// port it connected from (what a real server sees as its peer's port).
pub(crate) type Peers = Arc<RwLock<BTreeMap<u16, String>>>;

/// The links and their fault state.
pub(crate) struct LabNet {
    links: BTreeMap<(String, String), Link>,
    latency: DurRange,
    /// Slowed pairs (both directions), with their latency.
    slowed: BTreeMap<(String, String), Duration>,
    pub(crate) directory: Directory,
    pub(crate) peers: Peers,
    /// A delay of its own on what a link's server sends its client, by
    /// link (a real replica's link to its master carries the master's
    /// stream down it: `replication_delay`).
    down_delays: BTreeMap<(String, String), Duration>,
    /// Told, for the links from a client to a node or the sentinel, each
    /// reply that says the server could not run the client's command:
    /// `(client, server, command, reply)`.
    replies: Option<ServerErrors>,
    /// The clients, for [`LabNet::tell_server_errors`].
    clients: Vec<String>,
}

/// Told each reply that says a server could not run a client's command:
/// the client, the server (`n1`, `sentinel`), the command's first words,
/// the reply.
pub(crate) type ServerErrors = Arc<dyn Fn(&str, &str, &[String], &str) + Send + Sync>;

impl LabNet {
    pub(crate) fn new(latency: DurRange) -> LabNet {
        assert!(
            latency.lo <= latency.hi,
            "the network's latency runs backwards: {:?}..{:?}",
            latency.lo,
            latency.hi
        );
        LabNet {
            links: BTreeMap::new(),
            latency,
            slowed: BTreeMap::new(),
            directory: Directory::default(),
            peers: Peers::default(),
            down_delays: BTreeMap::new(),
            replies: None,
            clients: Vec::new(),
        }
    }

    /// The links from each of `clients` to the servers opened from now on
    /// tell `errors` of each reply that says a server could not run a
    /// command ([`super::replies`]).
    pub(crate) fn tell_server_errors(&mut self, clients: &[String], errors: ServerErrors) {
        self.clients = clients.to_vec();
        self.replies = Some(errors);
    }

    /// Opens the link `from -> to`, forwarding to `server` (keeping in
    /// `sent` when it read each chunk from `from`, if given).
    pub(crate) async fn open(
        &mut self,
        from: &str,
        to: &str,
        server: SocketAddr,
        seed: u64,
        sent: Option<SendTimes>,
    ) -> io::Result<()> {
        self.open_rewriting(from, to, server, seed, sent, (None, None))
            .await
    }

    /// [`LabNet::open`], rewriting ports in what `from` sends (`.0`) and
    /// in what it is sent (`.1`).
    pub(crate) async fn open_rewriting(
        &mut self,
        from: &str,
        to: &str,
        server: SocketAddr,
        seed: u64,
        sent: Option<SendTimes>,
        (rewrite_up, rewrite_down): (Option<PortMap>, Option<PortMap>),
    ) -> io::Result<()> {
        let key = (from.to_string(), to.to_string());
        assert!(from != to, "a link from {from} to itself");
        assert!(
            !self.links.contains_key(&key),
            "the link {from} -> {to} opened twice"
        );
        let setting = Setting {
            held: false,
            latency: self.latency_of(from, to),
        };
        let (peers, me) = (self.peers.clone(), from.to_string());
        let note: super::link::ConnectNote = Arc::new(move |local: SocketAddr| {
            let mut book = peers.write().unwrap_or_else(|e| e.into_inner());
            book.insert(local.port(), me.clone());
        });
        let replies = match &self.replies {
            Some(tell) if to != "store" && self.clients.iter().any(|c| c == from) => {
                let (tell, client, server) = (tell.clone(), from.to_string(), to.to_string());
                let tap: super::replies::ReplyTap =
                    Arc::new(move |words: &[String], err: &str| tell(&client, &server, words, err));
                Some(tap)
            }
            _ => None,
        };
        let extra = super::link::Extra {
            sent,
            noted: Some(note),
            rewrite_up,
            rewrite_down,
            replies,
        };
        let link = Link::open_with(server, setting, seed, extra).await?;
        self.directory
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone(), link.addr);
        self.links.insert(key, link);
        Ok(())
    }

    /// Where `from` reaches `to`.
    pub(crate) fn addr(&self, from: &str, to: &str) -> Option<SocketAddr> {
        self.links
            .get(&(from.to_string(), to.to_string()))
            .map(|l| l.addr)
    }

    /// The links that lead to `to`, with the host each comes from.
    pub(crate) fn links_into<'a>(
        &'a self,
        to: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a Link)> + 'a {
        self.links
            .iter()
            .filter(move |((_, t), _)| t == to)
            .map(|((f, _), l)| (f.as_str(), l))
    }

    /// Sets the latency of the pair `a`, `b` (both directions); `None`:
    /// the network's own.
    pub(crate) fn set_latency(&mut self, a: &str, b: &str, latency: Option<Duration>) {
        assert!(a != b, "a latency fault on a link from {a} to itself");
        match latency {
            Some(d) => self.slowed.insert(pair(a, b), d),
            None => self.slowed.remove(&pair(a, b)),
        };
    }

    /// Pushes the wanted state to every link.
    pub(crate) fn apply(&self, cuts: &Cuts) {
        for ((from, to), link) in &self.links {
            let up = self.setting(cuts, from, to);
            let mut down = self.setting(cuts, to, from);
            down.latency = self.down_latency(from, to);
            link.up.send_if_modified(|s| replace(s, up));
            link.down.send_if_modified(|s| replace(s, down));
        }
    }

    /// Adds `d` to what the server of the link `from -> to` sends down it,
    /// from now on (before any fault: every link carries).
    pub(crate) fn delay_down(&mut self, from: &str, to: &str, d: Duration) {
        let key = (from.to_string(), to.to_string());
        self.down_delays.insert(key.clone(), d);
        let link = self.links.get(&key);
        assert!(
            link.is_some(),
            "a delay on the link {from} -> {to}, never opened"
        );
        if let Some(link) = link {
            link.down.send_replace(Setting {
                held: false,
                latency: self.down_latency(from, to),
            });
        }
    }

    /// The latency range of what `from` sends `to`.
    fn latency_of(&self, from: &str, to: &str) -> (Duration, Duration) {
        match self.slowed.get(&pair(from, to)) {
            Some(d) => (*d, *d),
            None => (self.latency.lo, self.latency.hi),
        }
    }

    /// The latency range down the link `from -> to`.
    fn down_latency(&self, from: &str, to: &str) -> (Duration, Duration) {
        let (lo, hi) = self.latency_of(to, from);
        let key = (from.to_string(), to.to_string());
        let extra = self.down_delays.get(&key).copied().unwrap_or_default();
        (lo + extra, hi + extra)
    }

    fn setting(&self, cuts: &Cuts, from: &str, to: &str) -> Setting {
        Setting {
            held: cuts.wanted(from, to) != LinkState::Healthy,
            latency: self.latency_of(from, to),
        }
    }
}

/// The seed of the link `from -> to`'s latencies in run `seed`.
pub(crate) fn link_seed(seed: u64, from: &str, to: &str) -> u64 {
    use rand::Rng;
    redlock_engine::setup::rng_for(seed, &format!("{from}>{to}"), "link").random()
}

fn replace(s: &mut Setting, new: Setting) -> bool {
    let changed = *s != new;
    *s = new;
    changed
}

fn pair(a: &str, b: &str) -> (String, String) {
    if a <= b {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

/// How a host inside the lab reaches another by name: `nK:port` is its own
/// link to `nK`; any other address is connected to as it is.
pub(crate) struct Route {
    pub from: String,
    pub(crate) directory: Directory,
}

impl Connector for Route {
    fn connect<'a>(&'a self, addr: &'a str) -> ConnectFuture<'a> {
        let host = redlock_node::sentinel::split_addr(addr).0;
        let key = (self.from.clone(), host.to_string());
        let via = self
            .directory
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .map(|a| a.to_string());
        Box::pin(async move {
            match via {
                Some(a) => TcpConnector.connect(&a).await,
                None => TcpConnector.connect(addr).await,
            }
        })
    }
}
