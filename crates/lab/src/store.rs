//! The lab's store: the protected resource the drivers write to, and the
//! place they say what their library told them. It speaks RESP, so any
//! Redis client library sends its commands (`execute_command`,
//! `client.call`, `sendCommand`...):
//! - `LOCKKEY <resource> <key>`: the key the library keeps the lock under;
//! - `WRITE <client> <resource> [<fence>]`: one write, `+OK`, or
//!   `-REJECTED ...` when its fencing token is lower than the highest the
//!   store accepted for that resource (the simulation's store's rule);
//! - `HELD <client> <resource> <valid_ms>`, `RELEASED <client> <resource>`;
//! - `READY <client>`: answered `+OK` when the lab opens the gate
//!   ([`Store::open_ready`]: every client ready, the run's clock starts);
//!   a second `READY` of the same client is reported and answered with the
//!   first;
//! - `FENCE <client> <resource>`: a fencing token, strictly higher than
//!   every one handed out before (the scenario's "ideal consensus
//!   service", for `clients.fencing`), to send with the writes.
//!
//! Every other command (the handshake a library sends on connecting:
//! `HELLO`, `CLIENT SETINFO`, `PING`, `SELECT`, `INFO`...) is answered as
//! the node answers it. The store listens on one port per client and takes
//! the client from the port, not from the command: a command that names
//! another client, that it cannot read, or that it does not know, is
//! answered with an error and reported as [`StoreEvent::Bad`]; the run
//! goes on. A client gets [`MAX_COMMANDS`] store commands in a run; the
//! rest are refused, the first refusal reported.
//!
//! Each write carries when its client sent it, as the link it came through
//! measured ([`super::sent`]: the store's [`Store::send_times`], given to
//! the links to the store); none when it came straight in.

use super::gate::{gated, Gated};
use super::sent::SendTimes;
use bytes::Bytes;
use redlock_engine::fencing::{refusal, Admission, Fencing};
use redlock_node::{session, Node};
use redlock_proto::clock::SystemClock;
use redlock_proto::resp::{Connection, Frame};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// What a client did at the store, in the order the store did it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum StoreEvent {
    LockKey {
        client: String,
        resource: String,
        key: String,
        /// `BYCLIENT`: the library's token differs from master to master.
        by_client: bool,
    },
    /// A write, applied or (fencing) rejected; `highest` is the highest
    /// fencing token accepted for the resource before it; `sent`, when the
    /// link it came through read its first byte.
    Write {
        client: String,
        resource: String,
        fence: Option<u64>,
        applied: bool,
        highest: u64,
        sent: Option<Instant>,
    },
    /// `sent`, as for a write: the client's own word is timed when it
    /// said it, not when a slow link delivered it.
    Held {
        client: String,
        resource: String,
        valid_ms: u64,
        sent: Option<Instant>,
    },
    /// A fencing token the store handed out (`FENCE`): strictly higher
    /// than every one before, for any resource.
    Fence {
        client: String,
        resource: String,
        token: u64,
    },
    Released {
        client: String,
        resource: String,
        sent: Option<Instant>,
    },
    /// The client is ready (`READY`), and waits for the run's clock.
    Ready { client: String },
    /// A store command the client got wrong, as the store answered it.
    Bad { client: String, error: String },
}

impl StoreEvent {
    /// The event with its send time, where it has one.
    fn sent_at(mut self, at: Option<Instant>) -> StoreEvent {
        match &mut self {
            StoreEvent::Write { sent, .. }
            | StoreEvent::Held { sent, .. }
            | StoreEvent::Released { sent, .. } => *sent = at,
            StoreEvent::LockKey { .. }
            | StoreEvent::Fence { .. }
            | StoreEvent::Ready { .. }
            | StoreEvent::Bad { .. } => {}
        }
        self
    }

    /// When the link it came through read its first byte, for a write,
    /// `HELD` and `RELEASED` (`None` for a command that came through no
    /// link).
    pub(crate) fn sent(&self) -> Option<Instant> {
        match self {
            StoreEvent::Write { sent, .. }
            | StoreEvent::Held { sent, .. }
            | StoreEvent::Released { sent, .. } => *sent,
            StoreEvent::LockKey { .. }
            | StoreEvent::Fence { .. }
            | StoreEvent::Ready { .. }
            | StoreEvent::Bad { .. } => None,
        }
    }

    /// The client that sent it.
    pub(crate) fn client(&self) -> &str {
        match self {
            StoreEvent::LockKey { client, .. }
            | StoreEvent::Write { client, .. }
            | StoreEvent::Held { client, .. }
            | StoreEvent::Fence { client, .. }
            | StoreEvent::Released { client, .. }
            | StoreEvent::Ready { client }
            | StoreEvent::Bad { client, .. } => client,
        }
    }
}

/// Receives each store event as the store applies it.
pub(crate) type Sink = Arc<dyn Fn(StoreEvent) + Send + Sync>;

/// The running store; dropping it closes every port and connection.
pub(crate) struct Store {
    ports: Vec<(String, SocketAddr)>,
    paused: watch::Sender<bool>,
    /// Opened when the run's clock starts: every `READY` is answered.
    ready: watch::Sender<bool>,
    times: SendTimes,
    tasks: JoinSet<()>,
}

impl Store {
    /// Listens on a port of its own for each of `clients`.
    pub(crate) async fn start(clients: &[String], sink: Sink) -> io::Result<Store> {
        // One port per client: the client is known by its port.
        let mut names: Vec<&String> = clients.iter().collect();
        names.sort();
        names.dedup();
        assert_eq!(
            names.len(),
            clients.len(),
            "the store: a client named twice"
        );
        let (paused, _) = watch::channel(false);
        let (ready, _) = watch::channel(false);
        let fencing: Shared = Arc::default();
        let fences: Arc<Mutex<u64>> = Arc::default();
        // The handshake's answers come from a node nobody writes to.
        let node = Node::new(Arc::new(SystemClock::new()));
        let mut store = Store {
            ports: Vec::new(),
            paused,
            ready,
            times: SendTimes::default(),
            tasks: JoinSet::new(),
        };
        for client in clients {
            let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
            store.ports.push((client.clone(), listener.local_addr()?));
            let port = Port {
                client: client.clone(),
                sink: sink.clone(),
                fencing: fencing.clone(),
                node: node.clone(),
                sent: Arc::default(),
                fences: fences.clone(),
                times: store.times.clone(),
                go: store.ready.subscribe(),
                readied: Arc::default(),
            };
            let paused = store.paused.subscribe();
            store.tasks.spawn(accept(listener, port, paused));
        }
        Ok(store)
    }

    /// Where `client` reaches the store.
    pub(crate) fn addr(&self, client: &str) -> Option<SocketAddr> {
        self.ports
            .iter()
            .find(|(c, _)| c == client)
            .map(|(_, a)| *a)
    }

    /// Where the links to the store keep when they read each chunk, for
    /// the store to tell when each write was sent.
    pub(crate) fn send_times(&self) -> SendTimes {
        self.times.clone()
    }

    /// A paused store (a slow database) reads nothing; writes wait in its
    /// sockets and are applied, in order, when it resumes.
    pub(crate) fn set_paused(&self, paused: bool) {
        self.paused.send_replace(paused);
    }

    /// The run's clock starts: every `READY` waiting is answered, and every
    /// later one at once.
    pub(crate) fn open_ready(&self) {
        self.ready.send_replace(true);
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        self.tasks.abort_all();
    }
}

/// The store's fencing rule, shared by every port.
type Shared = Arc<Mutex<Fencing>>;

/// Store commands (`LOCKKEY`, `WRITE`, `HELD`, `RELEASED`) one client may
/// send in a run; the ones after are refused (not applied: the history
/// stays what the store did) and reported once. A client that floods the
/// store cannot grow the history without bound.
pub(crate) const MAX_COMMANDS: u64 = 200_000;

/// One client's port: who it is, and what the store shares.
#[derive(Clone)]
struct Port {
    client: String,
    sink: Sink,
    fencing: Shared,
    node: Node,
    /// Store commands this client sent so far.
    sent: Arc<std::sync::atomic::AtomicU64>,
    /// The last fencing token handed out (shared by every port).
    fences: Arc<Mutex<u64>>,
    /// When the links read what they forwarded.
    times: SendTimes,
    /// Open once the run's clock started.
    go: watch::Receiver<bool>,
    /// This client said `READY` already.
    readied: Arc<std::sync::atomic::AtomicBool>,
}

async fn accept(listener: TcpListener, port: Port, paused: watch::Receiver<bool>) {
    super::accept_each(listener, |stream| {
        serve(stream, paused.clone(), port.clone())
    })
    .await
}

/// One connection: store commands here, the rest as the node answers them.
async fn serve(stream: tokio::net::TcpStream, paused: watch::Receiver<bool>, port: Port) {
    let peer = stream.peer_addr().ok();
    let conn = Connection::new(gated(stream, paused));
    serve_requests(conn, &port, peer).await;
    if let Some(peer) = peer {
        port.times.close(peer);
    }
}

/// The requests of one connection, whose link end is `peer`, until it ends.
async fn serve_requests(
    mut conn: Connection<Gated<tokio::net::TcpStream>>,
    port: &Port,
    peer: Option<std::net::SocketAddr>,
) {
    let mut session = session::Session::new(port.node.next_client_id());
    loop {
        let start = conn.consumed();
        let args = match conn.read_request().await {
            Ok(Some(args)) if args.is_empty() => continue,
            Ok(Some(args)) => args,
            Ok(None) | Err(_) => return,
        };
        // The store reads forward, each request past `start`, its first
        // byte: `sent_at` forgets the chunks before it.
        let end = conn.consumed();
        assert!(end > start, "a request from byte {start} to {end}");
        let sent = peer.and_then(|p| port.times.sent_at(p, start));
        let reply = match store_command(port, &args, sent) {
            // READY waits for the run's clock (the store reads nothing more
            // from this connection meanwhile, as a blocked command's does).
            Some(reply) if is_ready(&args) && !matches!(reply, Frame::Error(_)) => {
                let mut go = port.go.clone();
                if go.wait_for(|open| *open).await.is_err() {
                    return;
                }
                reply
            }
            Some(reply) => reply,
            None if session::is_quit(&args) => {
                let _ = conn.write_frame_as(&Frame::ok(), session.protocol).await;
                return;
            }
            None => other_command(port, &mut session, &args),
        };
        if conn.write_frame_as(&reply, session.protocol).await.is_err() {
            return;
        }
    }
}

/// Any other command, as the node answers it; one it does not know is
/// garbage from the driver, reported.
fn other_command(port: &Port, session: &mut session::Session, args: &[Bytes]) -> Frame {
    let reply = session::execute(&port.node, session, args);
    if let Frame::Error(e) = &reply {
        if e.starts_with("ERR unknown command") {
            let client = port.client.clone();
            (port.sink)(StoreEvent::Bad {
                client,
                error: e.clone(),
            });
        }
    }
    reply
}

fn is_ready(args: &[Bytes]) -> bool {
    args.first()
        .is_some_and(|a| a.eq_ignore_ascii_case(b"READY"))
}

/// The reply to a store command (sent at `sent`), None for any other
/// command.
fn store_command(port: &Port, args: &[Bytes], sent: Option<Instant>) -> Option<Frame> {
    assert!(!args.is_empty(), "a store command with no name");
    let text: Vec<String> = args
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let name = text[0].to_ascii_uppercase();
    if !["LOCKKEY", "WRITE", "HELD", "RELEASED", "FENCE", "READY"].contains(&name.as_str()) {
        return None;
    }
    let n = port.sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    if n > MAX_COMMANDS {
        let error = format!(
            "flood: more than {MAX_COMMANDS} store commands from {}; the rest are refused",
            port.client
        );
        if n == MAX_COMMANDS + 1 {
            (port.sink)(StoreEvent::Bad {
                client: port.client.clone(),
                error: error.clone(),
            });
        }
        return Some(Frame::err(format!("ERR {error}")));
    }
    Some(match parse(&port.client, &name, &text[1..]) {
        Ok(event) => apply(port, event, sent),
        Err(error) => {
            let event = StoreEvent::Bad {
                client: port.client.clone(),
                error: error.clone(),
            };
            (port.sink)(event);
            Frame::err(format!("ERR {error}"))
        }
    })
}

/// A store command as an event (a write not yet judged by fencing).
fn parse(client: &str, name: &str, args: &[String]) -> Result<StoreEvent, String> {
    assert!(
        ["LOCKKEY", "WRITE", "HELD", "RELEASED", "FENCE", "READY"].contains(&name),
        "{name} parsed as a store command"
    );
    let usage = |u: &str| format!("wrong arguments for '{name}': usage {name} {u}");
    let own = |c: &String| {
        if c == client {
            Ok(c.clone())
        } else {
            Err(format!(
                "{name} names client '{c}' on {client}'s connection"
            ))
        }
    };
    let number = |s: &String, what: &str| {
        s.parse::<u64>()
            .map_err(|_| format!("{name}: {what} '{s}' is not a whole number"))
    };
    match (name, args) {
        ("LOCKKEY", [resource, key, rest @ ..])
            if rest.is_empty() || rest[0].eq_ignore_ascii_case("BYCLIENT") && rest.len() == 1 =>
        {
            Ok(StoreEvent::LockKey {
                client: client.to_string(),
                resource: resource.clone(),
                key: key.clone(),
                by_client: !rest.is_empty(),
            })
        }
        ("LOCKKEY", _) => Err(usage("<resource> <key> [BYCLIENT]")),
        ("WRITE", [c, resource, rest @ ..]) if rest.len() <= 1 => Ok(StoreEvent::Write {
            client: own(c)?,
            resource: resource.clone(),
            fence: rest.first().map(|f| number(f, "fence")).transpose()?,
            applied: false,
            highest: 0,
            sent: None,
        }),
        ("WRITE", _) => Err(usage("<client> <resource> [<fence>]")),
        ("HELD", [c, resource, valid]) => Ok(StoreEvent::Held {
            client: own(c)?,
            resource: resource.clone(),
            valid_ms: number(valid, "valid_ms")?,
            sent: None,
        }),
        ("HELD", _) => Err(usage("<client> <resource> <valid_ms>")),
        ("FENCE", [c, resource]) => Ok(StoreEvent::Fence {
            client: own(c)?,
            resource: resource.clone(),
            token: 0,
        }),
        ("RELEASED", [c, resource]) => Ok(StoreEvent::Released {
            client: own(c)?,
            resource: resource.clone(),
            sent: None,
        }),
        ("READY", [c]) => Ok(StoreEvent::Ready { client: own(c)? }),
        ("READY", _) => Err(usage("<client>")),
        _ => Err(usage("<client> <resource>")),
    }
}

/// Applies a parsed command: a fencing token handed out, fencing for a
/// write (sent at `sent`); reports it; the reply.
fn apply(port: &Port, event: StoreEvent, sent: Option<Instant>) -> Frame {
    if let StoreEvent::Fence {
        client, resource, ..
    } = event
    {
        // Reported under the lock: tokens reach the sink in order.
        let mut last = port.fences.lock().unwrap_or_else(|e| e.into_inner());
        *last += 1;
        let token = *last;
        (port.sink)(StoreEvent::Fence {
            client,
            resource,
            token,
        });
        return Frame::Integer(token as i64);
    }
    if let StoreEvent::Ready { client } = &event {
        // Twice: reported, and answered with the first.
        if port.readied.swap(true, std::sync::atomic::Ordering::SeqCst) {
            (port.sink)(StoreEvent::Bad {
                client: client.clone(),
                error: "READY sent twice: the first counts".into(),
            });
            return Frame::ok();
        }
    }
    let StoreEvent::Write {
        client,
        resource,
        fence,
        ..
    } = event
    else {
        (port.sink)(event.sent_at(sent));
        return Frame::ok();
    };
    let mut fencing = port.fencing.lock().unwrap_or_else(|e| e.into_inner());
    let Admission { applied, highest } = fencing.admit(&resource, fence);
    // Reported under the lock: the sink sees writes in the order applied.
    (port.sink)(StoreEvent::Write {
        client,
        resource,
        fence,
        applied,
        highest,
        sent,
    });
    match (applied, fence) {
        (true, _) => Frame::ok(),
        (false, f) => Frame::err(refusal(f.unwrap_or(0), highest)),
    }
}

#[cfg(test)]
mod tests;
