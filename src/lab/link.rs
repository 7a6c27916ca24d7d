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
//! - a connection accepted while the client-to-server direction is held
//!   connects to the server only when it heals.
//!
//! What loopback cannot do: the kernel completes the client's handshake with
//! the link's listener at once, so a connect across a held link succeeds
//! and the client's first request waits instead (its read timeout, not its
//! connect timeout, runs out). A reset is forwarded as the end of the
//! stream, after the data. Dropping the [`Link`] closes its listener and
//! every connection through it.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
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
    tasks: JoinSet<()>,
}

/// Chunks one read may take, and chunks a direction keeps before it stops
/// reading (what the sender's kernel then buffers is TCP's own back
/// pressure).
const CHUNK: usize = 16 * 1024;
const QUEUE: usize = 64;

impl Link {
    /// Listens on a port chosen by the system and forwards every connection
    /// to `server`; `seed` draws the latencies.
    pub async fn open(server: SocketAddr, setting: Setting, seed: u64) -> io::Result<Link> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (up, up_rx) = watch::channel(setting);
        let (down, down_rx) = watch::channel(setting);
        let mut tasks = JoinSet::new();
        tasks.spawn(accept_loop(listener, server, [up_rx, down_rx], seed));
        Ok(Link {
            addr,
            up,
            down,
            tasks,
        })
    }

    /// Sets both directions.
    pub fn set(&self, setting: Setting) {
        self.up.send_replace(setting);
        self.down.send_replace(setting);
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.tasks.abort_all();
    }
}

/// Accepts connections for as long as the link lives; the connections'
/// tasks belong to it and end with it.
async fn accept_loop(
    listener: TcpListener,
    server: SocketAddr,
    dirs: [watch::Receiver<Setting>; 2],
    seed: u64,
) {
    let mut conns = JoinSet::new();
    let mut n: u64 = 0;
    loop {
        tokio::select! {
            biased;
            accepted = listener.accept() => {
                let Ok((client, _)) = accepted else {
                    // Out of descriptors, say: try again shortly.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                n += 1;
                let rng = ChaCha8Rng::seed_from_u64(seed ^ n.rotate_left(32));
                conns.spawn(connection(client, server, dirs.clone(), rng));
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
}

/// One forwarded connection: waits for the client-to-server direction to
/// carry (the SYN), connects to the server, then pumps both ways.
async fn connection(
    client: TcpStream,
    server: SocketAddr,
    [mut up, down]: [watch::Receiver<Setting>; 2],
    mut rng: ChaCha8Rng,
) {
    if up.wait_for(|s| !s.held).await.is_err() {
        return;
    }
    let hop = draw(&mut rng, up.borrow().latency);
    tokio::time::sleep(hop).await;
    let Ok(upstream) = TcpStream::connect(server).await else {
        return; // the server is down: the client's stream ends
    };
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let (cr, cw) = client.into_split();
    let (sr, sw) = upstream.into_split();
    let down_rng = ChaCha8Rng::seed_from_u64(rng.random());
    tokio::join!(pump(cr, sw, up, rng), pump(sr, cw, down, down_rng));
}

/// A chunk on its way, or the end of the stream, due at `due`.
struct Segment {
    due: Instant,
    /// The hop it took, taken again from a heal if it was held.
    hop: Duration,
    bytes: Option<Vec<u8>>,
}

/// One direction: a reader stamps each chunk with its due time, in order;
/// a writer delivers it when due and the direction carries.
async fn pump(
    from: OwnedReadHalf,
    to: OwnedWriteHalf,
    dir: watch::Receiver<Setting>,
    rng: ChaCha8Rng,
) {
    let (tx, rx) = mpsc::channel(QUEUE);
    tokio::join!(
        read_side(from, tx, dir.clone(), rng),
        write_side(to, rx, dir)
    );
}

async fn read_side(
    mut from: OwnedReadHalf,
    tx: mpsc::Sender<Segment>,
    dir: watch::Receiver<Setting>,
    mut rng: ChaCha8Rng,
) {
    let mut last = Instant::now();
    loop {
        let mut buf = vec![0u8; CHUNK];
        let n = from.read(&mut buf).await.unwrap_or(0);
        let hop = draw(&mut rng, dir.borrow().latency);
        last = last.max(Instant::now() + hop);
        buf.truncate(n);
        let bytes = (n > 0).then_some(buf);
        let end = bytes.is_none();
        let seg = Segment {
            due: last,
            hop,
            bytes,
        };
        if tx.send(seg).await.is_err() || end {
            return;
        }
    }
}

async fn write_side(
    mut to: OwnedWriteHalf,
    mut rx: mpsc::Receiver<Segment>,
    mut dir: watch::Receiver<Setting>,
) {
    let mut floor = Instant::now();
    while let Some(seg) = rx.recv().await {
        sleep_until(seg.due.max(floor)).await;
        if dir.borrow().held {
            // Held: it arrives one hop after the heal, and what follows
            // after it.
            if dir.wait_for(|s| !s.held).await.is_err() {
                return;
            }
            floor = Instant::now() + seg.hop;
            sleep_until(floor).await;
        }
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
