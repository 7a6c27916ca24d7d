//! One link of the lab's network: a TCP forwarder on 127.0.0.1 between one
//! client and one server (a node, the sentinel, the store), where the
//! scenario's partitions and latencies act, each direction on its own.
//!
//! It gives the TCP behaviour the scenario format states under `[network]`:
//! - every chunk read from one end is due at its reading plus the
//!   direction's latency (drawn from its range), never before the chunk read
//!   before it: a connection stays in order whatever the latency does;
//! - a *held* direction carries nothing; what was read meanwhile (and what
//!   was on its way) waits, and arrives, in order, one hop after the heal;
//! - the end of a stream (a FIN) travels behind the data read before it;
//! - a connection's handshake is a round trip: it reaches the server once
//!   the client-to-server direction and then the other have carried for a
//!   hop each (a hold that comes back within the hop holds it again); the
//!   link connects to the server only then, so across a cut the server sees
//!   no connection until the heal;
//! - what the client writes before that point is kept and goes first, a hop
//!   after the connect; a client that closes before that point (it gave up
//!   on a connect real TCP would not have completed) sends nothing, and
//!   its server never sees a connection;
//! - [`Link::reset`] (its server crashed) ends every connection through it
//!   with a reset, and what was on its way is lost; a server that refuses
//!   the connect ends the client's stream with a reset too;
//! - [`Link::set_server`] points new connections at a server that came
//!   back on other ports;
//! - a link opened with [`SendTimes`] (the store's) keeps when it read
//!   each chunk from the client: when the client sent it.
//!
//! What loopback cannot do: the kernel completes the client's handshake with
//! the link's listener at once, so a connect across a held link returns at
//! once and the client waits on its first request instead: the timeout that
//! runs out is its read timeout, not its connect timeout (a client with a
//! read timeout and no connect timeout gives up where real TCP would still
//! be retrying its SYN). An end of stream before the handshake would have
//! completed counts as giving up, a half-close included. A reset the client
//! sends on an open connection is forwarded as the end of its stream,
//! after its data. Dropping the [`Link`] closes its listener and every
//! connection through it.
//!
//! Real kernel TCP (each host in a network namespace of its own, the cuts
//! as packet filters) was measured and not chosen: this machine's kernel
//! has no `netem` (no latency), six namespaces cost 130-175 ms to set up
//! and 170-215 ms to remove per run, and a kernel resends a held segment or
//! SYN on its own backoff (a SYN after 1 s, 3 s, ...), not a hop after the
//! heal as the simulation does.

use super::replies::{Pairing, ReplyTap};
use super::rewrite::{PortMap, Rewriter};
use super::sent::{Early, SendTimes, Stamper};
use bytes::{Bytes, BytesMut};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::{sleep_until, Instant};

/// What one direction of a link does now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setting {
    /// Carries nothing while true (a partition or an isolation).
    pub held: bool,
    /// Bounds of the one-way latency each chunk takes.
    pub latency: (Duration, Duration),
}

impl Setting {
    /// An open direction with a fixed latency.
    pub fn open(latency: Duration) -> Setting {
        Setting {
            held: false,
            latency: (latency, latency),
        }
    }
}

/// A listening forwarder; dropping it ends the listener and every
/// connection through it.
pub struct Link {
    /// Where the client connects.
    pub addr: SocketAddr,
    /// The client-to-server direction.
    pub up: watch::Sender<Setting>,
    /// The server-to-client direction.
    pub down: watch::Sender<Setting>,
    /// Where new connections go; `None` while the server is gone.
    server: watch::Sender<Option<SocketAddr>>,
    reset: Arc<watch::Sender<u64>>,
    tasks: JoinSet<()>,
}

/// Bytes one read may take, and chunks a direction keeps before it stops
/// reading (what the sender's kernel then buffers is TCP's own back
/// pressure).
const CHUNK: usize = 16 * 1024;
const QUEUE: usize = 64;

impl Link {
    /// Listens on a port chosen by the system and forwards every connection
    /// to `server`; `seed` draws the latencies.
    pub async fn open(server: SocketAddr, setting: Setting, seed: u64) -> io::Result<Link> {
        Link::open_timed(server, setting, seed, None).await
    }

    /// [`Link::open`], keeping in `sent` when it read each chunk from the
    /// client.
    pub async fn open_timed(
        server: SocketAddr,
        setting: Setting,
        seed: u64,
        sent: Option<SendTimes>,
    ) -> io::Result<Link> {
        let extra = Extra {
            sent,
            ..Extra::default()
        };
        Link::open_with(server, setting, seed, extra).await
    }

    /// [`Link::open`], with what `extra` adds.
    pub(crate) async fn open_with(
        server: SocketAddr,
        setting: Setting,
        seed: u64,
        extra: Extra,
    ) -> io::Result<Link> {
        let (lo, hi) = setting.latency;
        assert!(lo <= hi, "a link's latency runs backwards: {lo:?}..{hi:?}");
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (up, up_rx) = watch::channel(setting);
        let (down, down_rx) = watch::channel(setting);
        let (server, server_rx) = watch::channel(Some(server));
        let reset = Arc::new(watch::channel(0).0);
        let shared = Shared {
            up: up_rx,
            down: down_rx,
            server: server_rx,
            reset: reset.clone(),
            extra,
        };
        let mut tasks = JoinSet::new();
        tasks.spawn(accept_loop(listener, shared, seed));
        Ok(Link {
            addr,
            up,
            down,
            server,
            reset,
            tasks,
        })
    }

    /// Where new connections go from now on (a node that restarted on
    /// other ports).
    pub fn set_server(&self, server: SocketAddr) {
        self.server.send_replace(Some(server));
    }

    /// The server crashed: every connection through the link ends now
    /// with a reset ([`Link::reset`]), and new ones are refused (a reset)
    /// until [`Link::set_server`] names where it came back. The link
    /// never connects to the gone server's address: once freed, its port
    /// may be any other program's (another run's node, on a busy
    /// machine), which would answer in the server's place.
    pub fn server_gone(&self) {
        self.server.send_replace(None);
        self.reset();
    }

    /// The server is gone (a crash): every connection through the link
    /// ends now with a reset, and what was on its way is lost.
    pub fn reset(&self) {
        self.reset.send_modify(|n| *n += 1);
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.tasks.abort_all();
    }
}

/// Accepts connections for as long as the link lives; the connections'
/// tasks belong to it and end with it (each ends itself at a reset).
async fn accept_loop(listener: TcpListener, shared: Shared, seed: u64) {
    let mut n: u64 = 0;
    super::accept_each(listener, |client| {
        n += 1;
        let rng = ChaCha8Rng::seed_from_u64(seed ^ n.rotate_left(32));
        connection(client, shared.clone(), rng)
    })
    .await
}

/// What the link's tasks share: its directions, its server, its resets.
#[derive(Clone)]
struct Shared {
    up: watch::Receiver<Setting>,
    down: watch::Receiver<Setting>,
    server: watch::Receiver<Option<SocketAddr>>,
    reset: Arc<watch::Sender<u64>>,
    extra: Extra,
}

/// What a link may do besides forwarding.
#[derive(Clone, Default)]
pub(crate) struct Extra {
    /// Where the client's chunks' read times go.
    pub(crate) sent: Option<SendTimes>,
    /// Told the local address of each connection to the server (what the
    /// server sees as its peer: a real `redis-server`'s `MONITOR` names it).
    pub(crate) noted: Option<ConnectNote>,
    /// Ports rewritten in what the client sends, and in what it is sent
    /// ([`super::rewrite`]).
    pub(crate) rewrite_up: Option<PortMap>,
    pub(crate) rewrite_down: Option<PortMap>,
    /// Told each reply that says the server could not run a command
    /// ([`super::replies`]).
    pub(crate) replies: Option<ReplyTap>,
}

/// Told the local address of each connection a link makes to its server.
pub(crate) type ConnectNote = Arc<dyn Fn(SocketAddr) + Send + Sync>;

/// One forwarded connection. A server that refuses, or a reset of the
/// link, ends the client's stream with a reset (RST).
async fn connection(mut client: TcpStream, mut shared: Shared, mut rng: ChaCha8Rng) {
    let mut resets = shared.reset.subscribe();
    let refused = {
        let forwarded = forward(&mut client, &mut shared, &mut rng);
        tokio::select! {
            biased;
            _ = resets.changed() => true,
            refused = forwarded => refused,
        }
    };
    if refused {
        // The client's socket is still ours: its close below is a reset.
        abort_on_close(client.as_raw_fd());
    }
}

/// The handshake's round trip (the SYN up, the SYN-ACK down, each waiting
/// out a hold), the connect to the server, then both directions pumped
/// until both ends closed. True if the server refused.
async fn forward(client: &mut TcpStream, shared: &mut Shared, rng: &mut ChaCha8Rng) -> bool {
    let Some((early, early_reads)) = handshake(client, shared, rng).await else {
        return false;
    };
    // A server gone (crashed, not yet back) refuses, as its closed port
    // would: its address is not connected to.
    let Some(server) = *shared.server.borrow() else {
        return true;
    };
    let Ok(mut upstream) = TcpStream::connect(server).await else {
        return true;
    };
    let _ = upstream.set_nodelay(true);
    if let (Some(note), Ok(local)) = (&shared.extra.noted, upstream.local_addr()) {
        note(local);
    }
    let stamper = match (&shared.extra.sent, upstream.local_addr()) {
        (Some(times), Ok(peer)) => Some(Stamper::open(times, peer, &early_reads)),
        _ => None,
    };
    let (cr, cw) = client.split();
    let (sr, sw) = upstream.split();
    let up_rng = ChaCha8Rng::seed_from_u64(rng.random());
    let down_rng = ChaCha8Rng::seed_from_u64(rng.random());
    let (up, down) = (shared.up.clone(), shared.down.clone());
    let mut up_rw = shared.extra.rewrite_up.clone().map(Rewriter::new);
    let early = match &mut up_rw {
        Some(r) => r.feed(&early),
        None => early,
    };
    let down_rw = shared.extra.rewrite_down.clone().map(Rewriter::new);
    let pairing = shared.extra.replies.clone().map(Pairing::new);
    let tap = |up: bool| pairing.clone().map(|p| Tap { pairing: p, up });
    tokio::join!(
        pump(cr, sw, up, up_rng, (early, stamper, up_rw, tap(true))),
        pump(
            sr,
            cw,
            down,
            down_rng,
            (Bytes::new(), None, down_rw, tap(false))
        )
    );
    false
}

/// One direction's side of a connection's [`Pairing`].
struct Tap {
    pairing: Arc<std::sync::Mutex<Pairing>>,
    up: bool,
}

impl Tap {
    fn read(&self, bytes: &[u8]) {
        let mut p = self.pairing.lock().unwrap_or_else(|e| e.into_inner());
        if self.up {
            p.sent(bytes);
        } else {
            p.answered(bytes);
        }
    }
}

/// The handshake's round trip, reading what the client sends meanwhile
/// (the kernel let it connect to the link at once): returns it, to go
/// first once connected. `None` when the client closed first, having
/// given up on a connect that real TCP would not have completed: then
/// nothing it wrote is delivered, as nothing would have been sent. With
/// it, when each of its chunks was read.
async fn handshake(
    client: &mut TcpStream,
    shared: &mut Shared,
    rng: &mut ChaCha8Rng,
) -> Option<(Bytes, Early)> {
    let mut early = BytesMut::new();
    let mut reads = Early::default();
    let (up, down) = (&mut shared.up, &mut shared.down);
    let round_trip = async { carry(up, rng).await && carry(down, rng).await };
    tokio::pin!(round_trip);
    loop {
        if early.len() >= CHUNK * QUEUE {
            // Enough kept: TCP's back pressure holds the rest.
            return round_trip.await.then(|| (early.freeze(), reads));
        }
        early.reserve(CHUNK);
        tokio::select! {
            biased;
            done = &mut round_trip => return done.then(|| (early.freeze(), reads)),
            n = client.read_buf(&mut early) => match n {
                Ok(n) if n > 0 => {
                    reads.read(n);
                    // The chunks' offsets count the bytes kept.
                    assert_eq!(reads.offset(), early.len() as u64, "early reads miscounted");
                }
                _ => return None,
            },
        }
    }
}

/// Sets a zero linger on `fd`, so that closing it sends a reset. `fd` must
/// be a socket the caller still owns.
fn abort_on_close(fd: std::os::fd::RawFd) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `fd` is an open socket owned by the caller; the option value
    // is a valid `linger` of the size given.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}

/// Waits until `dir` carries and a hop has passed with it carrying (a
/// hold that comes back within the hop holds again); false if the link is
/// gone.
async fn carry(dir: &mut watch::Receiver<Setting>, rng: &mut ChaCha8Rng) -> bool {
    loop {
        if dir.wait_for(|s| !s.held).await.is_err() {
            return false;
        }
        let hop = draw(rng, dir.borrow().latency);
        if !hop.is_zero() {
            tokio::time::sleep(hop).await;
        }
        if !dir.borrow().held {
            return true;
        }
    }
}

/// A chunk on its way, or the end of the stream, due at `due`.
struct Segment {
    due: Instant,
    bytes: Option<Bytes>,
}

/// One direction: a reader stamps each chunk with its due time, in order
/// (and, with a [`Stamper`], keeps when it read it); a writer delivers it
/// when due and the direction carries.
async fn pump<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    from: R,
    to: W,
    dir: watch::Receiver<Setting>,
    mut rng: ChaCha8Rng,
    start: (Bytes, Option<Stamper>, Option<Rewriter>, Option<Tap>),
) {
    let (tx, rx) = mpsc::channel(QUEUE);
    let write_rng = ChaCha8Rng::seed_from_u64(rng.random());
    tokio::join!(
        read_side(from, tx, dir.clone(), rng, start),
        write_side(to, rx, dir, write_rng)
    );
}

async fn read_side<R: AsyncRead + Unpin>(
    mut from: R,
    tx: mpsc::Sender<Segment>,
    dir: watch::Receiver<Setting>,
    mut rng: ChaCha8Rng,
    (first, mut stamper, mut rewriter, tap): (
        Bytes,
        Option<Stamper>,
        Option<Rewriter>,
        Option<Tap>,
    ),
) {
    let mut last = Instant::now();
    if let Some(t) = &tap {
        t.read(&first);
    }
    if !first.is_empty() {
        last += draw(&mut rng, dir.borrow().latency);
        if tx
            .send(Segment {
                due: last,
                bytes: Some(first),
            })
            .await
            .is_err()
        {
            return;
        }
    }
    loop {
        let mut buf = BytesMut::with_capacity(CHUNK);
        let n = from.read_buf(&mut buf).await.unwrap_or(0);
        if let (Some(s), true) = (&mut stamper, n > 0) {
            s.read(n);
        }
        if let (Some(t), true) = (&tap, n > 0) {
            t.read(&buf);
        }
        let hop = draw(&mut rng, dir.borrow().latency);
        last = last.max(Instant::now() + hop);
        let bytes = match (&mut rewriter, n > 0) {
            (Some(r), true) => Some(r.feed(&buf)).filter(|b| !b.is_empty()),
            _ => (n > 0).then(|| buf.freeze()),
        };
        if bytes.is_none() && n > 0 {
            continue;
        }
        let end = bytes.is_none();
        let seg = Segment { due: last, bytes };
        if tx.send(seg).await.is_err() || end {
            return;
        }
    }
}

async fn write_side<W: AsyncWrite + Unpin>(
    mut to: W,
    mut rx: mpsc::Receiver<Segment>,
    mut dir: watch::Receiver<Setting>,
    mut rng: ChaCha8Rng,
) {
    let mut floor = Instant::now();
    let mut last_due: Option<Instant> = None;
    while let Some(seg) = rx.recv().await {
        // The reader stamps its chunks in the order it read them: a
        // connection stays in order whatever the latency does.
        assert!(
            last_due.is_none_or(|d| d <= seg.due),
            "a chunk due before the one read before it"
        );
        last_due = Some(seg.due);
        let mut at = seg.due.max(floor);
        // Held when due: it arrives a hop after the heal (drawn then), and
        // what follows after it; a hold that comes back meanwhile holds it
        // again.
        loop {
            // tokio's timers count whole milliseconds: a chunk already due
            // goes at once rather than at the next tick.
            if at > Instant::now() {
                sleep_until(at).await;
            }
            if !dir.borrow().held {
                break;
            }
            if dir.wait_for(|s| !s.held).await.is_err() {
                return;
            }
            at = Instant::now() + draw(&mut rng, dir.borrow().latency);
        }
        floor = at;
        let ok = match seg.bytes {
            Some(b) => to.write_all(&b).await.is_ok(),
            None => {
                let _ = to.shutdown().await;
                false
            }
        };
        if !ok {
            return;
        }
    }
}

/// A latency within `(lo, hi)`.
fn draw(rng: &mut ChaCha8Rng, (lo, hi): (Duration, Duration)) -> Duration {
    if hi <= lo {
        return lo;
    }
    lo + (hi - lo).mul_f64(rng.random::<f64>())
}

#[cfg(test)]
mod tests;
