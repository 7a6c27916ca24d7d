//! The Redis-like node: a keyspace served over RESP2 and RESP3.
//!
//! [`Node`] is a cheap handle on one node's state and clock. [`serve`] accepts
//! connections from any [`Listener`] (a tokio `TcpListener` on a real port, a
//! turmoil one in the simulation) and answers each request with
//! [`Node::execute`]. [`active_expiry`] is the background sweep Redis runs ten
//! times a second. Commands live one family per file: [`strings`], [`keys`],
//! [`hashes`], [`lists`], [`zsets`], [`scripting`], [`server`], [`pubsub`];
//! [`command`] dispatches them; a client's `BLPOP` that must wait waits in
//! [`blocking`]. The state of a connection (protocol, client id, name) is
//! kept by [`handle_connection`] in a [`session::Session`]; the commands
//! that need it (`HELLO`, `CLIENT`, `AUTH`, `RESET`, the subscriptions) are
//! answered in [`session`], never reaching [`Node::execute`]. The node's
//! connected clients ([`clients`]) receive what it sends unasked: pub/sub
//! messages ([`pubsub`]) and client-side caching's invalidations
//! ([`tracking`]).

// What other crates use is `pub`; everything else is `pub(crate)` or less.
#![warn(unreachable_pub)]
// The docs are the developers'; `cargo doc --document-private-items`
// renders the private items they link to.
#![allow(rustdoc::private_intra_doc_links)]

pub(crate) mod blocking;
pub(crate) mod channels;
pub(crate) mod clients;
pub(crate) mod cluster;
pub(crate) mod command;
pub(crate) mod errors;
pub(crate) mod format;
pub(crate) mod glob;
pub(crate) mod hashes;
pub(crate) mod keys;
pub mod keyspace;
pub(crate) mod lists;
pub(crate) mod multi;
pub mod persistence;
pub(crate) mod pubsub;
pub mod replication;
pub(crate) mod scripting;
pub mod sentinel;
pub(crate) mod server;
pub mod session;
pub(crate) mod strings;
pub(crate) mod tracking;
pub(crate) mod values;
pub(crate) mod wait;
pub(crate) mod zsets;

use bytes::Bytes;
use keyspace::Keyspace;
use redlock_proto::clock::Clock;
use redlock_proto::resp::{Connection, Frame};
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// How often the active expiry sweep runs (Redis's default `hz 10`).
pub const EXPIRY_PERIOD: Duration = Duration::from_millis(100);

/// Receives the effects of each command (see [`keyspace`]), in order, while
/// the keyspace is still locked: for the append-only file, replicas and the
/// simulation's history.
pub type EffectsSink = Arc<dyn Fn(&[Vec<Bytes>]) + Send + Sync>;

/// A handle on one node: its keyspace, its clock, and who hears its writes.
#[derive(Clone)]
pub struct Node {
    keyspace: Arc<Mutex<Keyspace>>,
    clock: Arc<dyn Clock>,
    sinks: Arc<Mutex<Vec<EffectsSink>>>,
    /// Replication delay and streaming replicas (see [`replication`]).
    repl: Arc<replication::Shared>,
    /// The last client id given out (see [`session`]).
    last_client_id: Arc<AtomicU64>,
    /// Clients blocked in `BLPOP`/`BRPOP` (see [`blocking`]).
    blocked: Arc<Mutex<blocking::Blocked>>,
}

impl Node {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self::from_keyspace(clock, Keyspace::default())
    }

    /// A node that starts from existing data (a restart from disk).
    pub fn from_keyspace(clock: Arc<dyn Clock>, keyspace: Keyspace) -> Self {
        Node {
            keyspace: Arc::new(Mutex::new(keyspace)),
            clock,
            sinks: Arc::new(Mutex::new(Vec::new())),
            repl: Arc::default(),
            last_client_id: Arc::default(),
            blocked: Arc::default(),
        }
    }

    /// A node of its own (keyspace, sinks) whose clients are numbered with
    /// this one's ids (the sentinel's listeners).
    pub(crate) fn sharing_ids(&self) -> Node {
        let mut n = Node::new(self.clock.clone());
        n.last_client_id = self.last_client_id.clone();
        n
    }

    /// A new client id: 1, 2, ... in order of connection, per node.
    pub fn next_client_id(&self) -> u64 {
        self.last_client_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Adds a receiver of every write's effects.
    pub fn add_effects_sink(&self, sink: EffectsSink) {
        self.sinks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(sink);
    }

    /// Runs one command at the node's current wall-clock time.
    pub fn execute(&self, args: &[Bytes]) -> Frame {
        self.execute_noting_writes(args, None).0
    }

    /// The wall clock now, in milliseconds and in microseconds within that
    /// millisecond (one reading of the node's clock).
    fn wall_now(&self) -> (i64, i64) {
        let ms = self.clock.wall_ms();
        let us = self.clock.wall_us().clamp(ms * 1000, ms * 1000 + 999);
        (ms, us)
    }

    /// [`Node::execute`] as client `client`'s command, with the
    /// replication offset after the command if it wrote (`WAIT` waits for
    /// the connection's last write).
    pub(crate) fn execute_noting_writes(
        &self,
        args: &[Bytes],
        client: Option<u64>,
    ) -> (Frame, Option<u64>) {
        let (now, us) = self.wall_now();
        self.with_keyspace(|ks| {
            ks.now_us = us;
            ks.clients.current = client;
            let before = ks.offset;
            let reply = command::dispatch(ks, args, now);
            (reply, (ks.offset != before).then_some(ks.offset))
        })
    }

    /// Runs `commands` as client `client`'s, one after the other under one
    /// lock of the keyspace (`EXEC`): their replies, and the replication
    /// offset after them if they wrote.
    pub(crate) fn execute_all(
        &self,
        commands: &[Vec<Bytes>],
        client: u64,
    ) -> (Vec<Frame>, Option<u64>) {
        let (now, us) = self.wall_now();
        self.with_keyspace(|ks| {
            ks.now_us = us;
            ks.clients.current = Some(client);
            let before = ks.offset;
            let replies = commands
                .iter()
                .map(|c| command::dispatch(ks, c, now))
                .collect();
            (replies, (ks.offset != before).then_some(ks.offset))
        })
    }

    /// Runs `f` on the keyspace, then hands the effects it produced to the
    /// sinks before anyone else can touch the keyspace.
    pub(crate) fn with_keyspace<T>(&self, f: impl FnOnce(&mut Keyspace) -> T) -> T {
        let mut guard = self.keyspace();
        let ks = &mut *guard;
        let out = f(ks);
        ks.tracking.broadcast(&ks.clients, &ks.pubsub);
        ks.clients.current = None;
        self.serve_blocked(ks);
        ks.tracking.broadcast(&ks.clients, &ks.pubsub);
        let effects = ks.take_effects();
        if !effects.is_empty() {
            for sink in self.sinks.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                sink(&effects);
            }
        }
        out
    }

    /// Serves the clients blocked on the keys the last command pushed to
    /// (their pops join its effects).
    fn serve_blocked(&self, ks: &mut Keyspace) {
        let mut blocked = self.blocked();
        if blocked.is_empty() {
            return;
        }
        // A master turned replica unblocks its waiters, as Redis's
        // replicationSetMaster does; a replica never pops for them.
        if ks.role != keyspace::Role::Master {
            blocked.unblock_all();
            return;
        }
        let ready = blocking::ready_keys(ks.pending_effects());
        if !ready.is_empty() {
            blocked.serve(ks, &ready, self.clock.wall_ms());
        }
    }

    /// The blocked clients (lock the keyspace first, as everything does).
    pub(crate) fn blocked(&self) -> MutexGuard<'_, blocking::Blocked> {
        self.blocked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Locks and returns the keyspace, for reading. Writes go through
    /// [`Node::with_keyspace`] so that their effects reach the sinks.
    pub fn keyspace(&self) -> MutexGuard<'_, Keyspace> {
        self.keyspace.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }
}

/// Something that accepts byte-stream connections.
pub trait Listener {
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    fn accept(&mut self) -> impl Future<Output = io::Result<Self::Stream>>;
}

impl Listener for tokio::net::TcpListener {
    type Stream = tokio::net::TcpStream;
    async fn accept(&mut self) -> io::Result<Self::Stream> {
        let (s, _) = tokio::net::TcpListener::accept(self).await?;
        s.set_nodelay(true)?;
        Ok(s)
    }
}

impl Listener for turmoil::net::TcpListener {
    type Stream = turmoil::net::TcpStream;
    async fn accept(&mut self) -> io::Result<Self::Stream> {
        let (s, _) = turmoil::net::TcpListener::accept(self).await?;
        Ok(s)
    }
}

/// Serves the node on `listener` until accepting fails. Each connection gets
/// its own task; the active expiry sweep runs beside them.
pub async fn serve<L: Listener>(node: Node, mut listener: L) -> io::Result<()> {
    let sweeper = tokio::spawn(active_expiry(node.clone()));
    let result = loop {
        match listener.accept().await {
            Ok(stream) => {
                tokio::spawn(handle_connection(node.clone(), stream));
            }
            Err(e) => break Err(e),
        }
    };
    sweeper.abort();
    result
}

/// Answers requests on one connection until the peer closes it, in the
/// connection's protocol (RESP2 until `HELLO 3`). A protocol error gets an
/// error reply, then the connection is closed, as Redis does. While it
/// waits for a request, it writes what the node pushes to its client
/// (messages, invalidations: [`clients`]).
pub async fn handle_connection<S>(node: Node, stream: S)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut conn = Connection::new(stream);
    let mut session = session::Session::new(node.next_client_id());
    let mut client = clients::Attached::new(&node, session.id);
    while let Some(args) = client.next_request(&mut conn, session.protocol).await {
        // A replica asking for the stream: the connection is its now.
        if replication::is_sync(&args) {
            drop(client);
            return replication::serve_sync(node, conn).await;
        }
        let (replies, close) = answer(&node, &mut conn, &mut session, &args).await;
        if !client
            .write_replies(&mut conn, &replies, session.protocol)
            .await
            || close
        {
            return;
        }
    }
}

/// The replies to one request, and whether the connection closes after
/// them.
async fn answer<S>(
    node: &Node,
    conn: &mut Connection<S>,
    session: &mut session::Session,
    args: &[Bytes],
) -> (Vec<Frame>, bool)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    if let Some(refused) = session::refusal(node, session, args) {
        return (vec![refused], false);
    }
    if let Some(replies) = multi::transaction(node, session, args) {
        session::after_command(node, session, args);
        return (replies, false);
    }
    if blocking::is_blocking_pop(args) {
        return match blocking::block(node, conn, args).await {
            // Unblocked by a change of role: the reply, then the close.
            Some(reply) if blocking::is_unblocked(&reply) => (vec![reply], true),
            Some(reply) => (vec![reply], false),
            None => (vec![], true),
        };
    }
    if wait::is_wait(args) {
        return match wait::wait(node, conn, args, session.woff).await {
            Some(reply) => (vec![reply], false),
            None => (vec![], true),
        };
    }
    // `QUIT`: +OK, then the server closes the connection.
    if session::is_quit(args) {
        return (vec![Frame::ok()], true);
    }
    (session::answer(node, session, args), false)
}

/// Deletes expired keys every [`EXPIRY_PERIOD`] of the node's clock.
pub async fn active_expiry(node: Node) {
    loop {
        node.clock.sleep(EXPIRY_PERIOD).await;
        let now = node.clock.wall_ms();
        node.with_keyspace(|ks| ks.expire_active(now));
    }
}
