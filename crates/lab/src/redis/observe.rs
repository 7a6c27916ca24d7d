//! The history of a real server, read from the server itself: one task per
//! boot of a node, with three connections of the lab's own (straight to
//! the server, outside the scenario's network):
//! - `MONITOR`: every command it ran, with the address of the connection
//!   that sent it, which the lab's links map to the client they carry
//!   ([`crate::net::Peers`]);
//! - a replica's `PSYNC`: its replication stream, the effects of what it
//!   ran (a key set with its expiry as `PXAT`, an expiry as `DEL`, ...);
//! - a third that publishes the markers that cut both into segments
//!   ([`super::correlate`]).
//!
//! The lab is a replica the clients can see: it acknowledges what it was
//! sent every 10 ms (a master waits for a first acknowledgement before it
//! streams) and at once when the master asks (`REPLCONF GETACK`, which a
//! client's `WAIT` makes it send). So `WAIT` counts it as one more replica
//! that has everything: Redisson's lock asks `WAIT 0 0` how many replicas
//! there are and then waits for that many, the lab among them, so it still
//! waits for every real one; a single master gains one `WAIT` answered in
//! well under a millisecond. Sentinel lists it (at port 1, down, never
//! promoted). Each change is recorded at the instant its effect arrived.

use super::correlate::{Attributed, Correlator, CHANNEL};
use crate::net::Peers;
use crate::record::LabRecorder;
use bytes::{Buf, Bytes, BytesMut};
use redlock_proto::resp::{self, Frame};
use std::future::Future as _;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

/// A node's observer; it ends when dropped, or when its server goes.
pub(crate) struct Observer {
    task: JoinHandle<()>,
}

impl Drop for Observer {
    fn drop(&mut self) {
        // A reader that panicked (a broken invariant) must not end quietly
        // with its node's changes missing from the history: its panic goes
        // on here, and the run fails (exit 70) instead of being judged.
        if self.task.is_finished() && !std::thread::panicking() {
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            if let std::task::Poll::Ready(Err(e)) = std::pin::Pin::new(&mut self.task).poll(&mut cx)
            {
                if e.is_panic() {
                    std::panic::resume_unwind(e.into_panic());
                }
            }
        }
        self.task.abort();
    }
}

/// Where the replication stream stood, to continue it (`PSYNC id offset`).
#[derive(Clone, Debug, Default)]
struct Position {
    id: String,
    offset: u64,
}

impl Observer {
    /// Observes `node`, served at `addr`, into `rec`.
    pub(crate) async fn start(
        node: &str,
        addr: SocketAddr,
        peers: Peers,
        rec: LabRecorder,
    ) -> io::Result<Observer> {
        let mon = monitor(addr).await?;
        let (repl, pos, buf, _) = sync_within(addr, None, SYNC_LIMIT).await?;
        let marks = TcpStream::connect(addr).await?;
        let state = Watch {
            node: node.to_string(),
            addr,
            peers,
            rec,
            c: Correlator::new(node),
            pos,
        };
        let task = tokio::spawn(state.run(mon, repl, buf, marks));
        Ok(Observer { task })
    }
}

struct Watch {
    node: String,
    addr: SocketAddr,
    peers: Peers,
    rec: LabRecorder,
    c: Correlator,
    pos: Position,
}

impl Watch {
    async fn run(
        mut self,
        mut mon: TcpStream,
        mut repl: TcpStream,
        mut rbuf: BytesMut,
        mut marks: TcpStream,
    ) {
        let mut mbuf = BytesMut::new();
        let mut sent: u64 = 0;
        let mut busy = false;
        let mut ack = tokio::time::interval(Duration::from_millis(10));
        let mut tick = tokio::time::interval(Duration::from_millis(2));
        let mut quiet = 0u32;
        let mut sink = [0u8; 256];
        loop {
            tokio::select! {
                biased;
                n = mon.read_buf(&mut mbuf) => {
                    if matches!(n, Ok(k) if k > 0) {
                        busy |= self.monitor_lines(&mut mbuf);
                        continue;
                    }
                    // Killed (Sentinel's `CLIENT KILL TYPE normal` on a
                    // promotion): what it ran meanwhile has no client.
                    mbuf.clear();
                    match again(|| monitor(self.addr)).await {
                        Some(m) => mon = m,
                        None => return,
                    }
                }
                n = repl.read_buf(&mut rbuf) => {
                    match n {
                        Ok(k) if k > 0 => {
                            let (effects, asked) = self.stream_frames(&mut rbuf);
                            busy |= effects;
                            if asked {
                                let _ = repl.write_all(&self.ack()).await;
                            }
                        }
                        _ => match self.resync().await {
                            Some((r, b)) => { repl = r; rbuf = b; }
                            None => return,
                        },
                    }
                }
                n = marks.read(&mut sink) => {
                    if !matches!(n, Ok(k) if k > 0) {
                        match again(|| TcpStream::connect(self.addr)).await {
                            Some(m) => marks = m,
                            None => return,
                        }
                    }
                }
                _ = ack.tick() => {
                    // A failed write: the read side sees it next.
                    let _ = repl.write_all(&self.ack()).await;
                }
                _ = tick.tick() => {
                    quiet += 1;
                    if busy || quiet >= 25 {
                        sent += 1;
                        let m = self.c.marker(sent);
                        let cmd = Frame::command(["PUBLISH", CHANNEL, m.as_str()]);
                        // A failed write: the read side reconnects.
                        let _ = marks.write_all(&cmd.to_bytes()).await;
                        busy = false;
                        quiet = 0;
                    }
                }
            }
            let ready = self.c.ready(self.rec.now());
            self.emit(ready);
        }
    }

    fn emit(&self, out: Vec<Attributed>) {
        for (at, by, cmd) in out {
            self.rec
                .node_effects_at(at, &self.node, by.as_deref(), &[cmd]);
        }
    }

    /// Each whole line `MONITOR` sent; whether any was not a marker.
    fn monitor_lines(&mut self, buf: &mut BytesMut) -> bool {
        let mut any = false;
        while let Some(nl) = buf.iter().position(|&c| c == b'\n') {
            let line = buf.split_to(nl + 1);
            let Some((from, cmd)) = parse_monitor(&line) else {
                continue;
            };
            let script = from == "lua";
            let client = from
                .rsplit_once(':')
                .and_then(|(_, p)| p.parse::<u16>().ok())
                .and_then(|p| {
                    self.peers
                        .read()
                        .unwrap_or_else(|e| e.into_inner())
                        .get(&p)
                        .cloned()
                });
            if !is_marker(&cmd) {
                any = true;
            }
            self.c.monitor(script, client, cmd);
        }
        any
    }

    /// `REPLCONF ACK <offset>`: everything the lab was sent.
    fn ack(&self) -> Vec<u8> {
        let offset = self.pos.offset.to_string();
        Frame::command(["REPLCONF", "ACK", offset.as_str()]).to_bytes()
    }

    /// Each whole frame of the stream; whether any was an effect, and
    /// whether the master asked for an acknowledgement.
    fn stream_frames(&mut self, buf: &mut BytesMut) -> (bool, bool) {
        let mut any = false;
        let mut asked = false;
        loop {
            let Ok(Some((frame, used))) = resp::parse(buf) else {
                return (any, asked);
            };
            // A frame takes bytes, and no more than were read: the
            // offset acknowledged is what was read.
            assert!(
                used > 0 && used <= buf.len(),
                "{}: a frame of {used} bytes in {}",
                self.node,
                buf.len()
            );
            buf.advance(used);
            self.pos.offset += used as u64;
            let Frame::Array(items) = frame else { continue };
            let cmd: Vec<Bytes> = items
                .into_iter()
                .filter_map(|f| match f {
                    Frame::Bulk(b) => Some(b),
                    _ => None,
                })
                .collect();
            if cmd.is_empty() {
                continue;
            }
            let name = String::from_utf8_lossy(&cmd[0]).to_ascii_uppercase();
            asked |= name == "REPLCONF"
                && cmd
                    .get(1)
                    .is_some_and(|a| a.eq_ignore_ascii_case(b"GETACK"));
            if !matches!(name.as_str(), "PING" | "REPLCONF" | "SELECT") && !is_marker(&cmd) {
                any = true;
            }
            let now = self.rec.now();
            let out = self.c.stream(now, cmd);
            self.emit(out);
        }
    }

    /// The stream broke (the server dropped its replicas: a replica that
    /// resynced with its master, or one promoted): continue it, or sync
    /// again in full, which the history takes as the node's keys now.
    async fn resync(&mut self) -> Option<(TcpStream, BytesMut)> {
        for _ in 0..50 {
            if let Ok((s, pos, buf, full)) =
                sync_within(self.addr, Some(&self.pos), SYNC_LIMIT).await
            {
                if full {
                    self.full_resync().await;
                }
                self.pos = pos;
                return Some((s, buf));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        None
    }

    /// After a full resync: the lock keys the node holds now, as a flush
    /// and their values.
    async fn full_resync(&mut self) {
        self.c.resynced();
        let at = self.rec.now();
        let mut effects = vec![vec![Bytes::from("FLUSHALL")]];
        if let Ok(rebuild) = held_keys(self.addr, &self.rec.lock_keys()).await {
            effects.extend(rebuild);
        }
        for e in effects {
            self.rec.node_effects_at(at, &self.node, None, &[e]);
        }
    }
}

/// `connect` tried for a second, while the server may be restarting its
/// clients' connections; `None` if it never came.
async fn again<F, Fut>(connect: F) -> Option<TcpStream>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = io::Result<TcpStream>>,
{
    for _ in 0..100 {
        if let Ok(s) = connect().await {
            return Some(s);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}

fn is_marker(cmd: &[Bytes]) -> bool {
    cmd.len() == 3 && cmd[1] == CHANNEL.as_bytes() && cmd[0].eq_ignore_ascii_case(b"PUBLISH")
}

/// A connection in `MONITOR` mode.
async fn monitor(addr: SocketAddr) -> io::Result<TcpStream> {
    let mut s = TcpStream::connect(addr).await?;
    s.set_nodelay(true)?;
    s.write_all(b"MONITOR\r\n").await?;
    let mut ok = [0u8; 5];
    s.read_exact(&mut ok).await?;
    if &ok != b"+OK\r\n" {
        return Err(io::Error::other("MONITOR refused"));
    }
    Ok(s)
}

/// How long a server may take to answer a replica's handshake and send
/// its snapshot (empty, or a lock's few keys: milliseconds).
const SYNC_LIMIT: Duration = Duration::from_secs(10);

/// [`sync`], within `limit`: a master that starts a snapshot and never
/// sends it (seen once in about 4,000 runs of the real-Redis matrix:
/// redis-server 7.0.15's diskless transfer started, its child alive and
/// nothing on the socket for minutes) fails the sync instead of holding
/// the run, and the lab, forever.
async fn sync_within(
    addr: SocketAddr,
    from: Option<&Position>,
    limit: Duration,
) -> io::Result<(TcpStream, Position, BytesMut, bool)> {
    match tokio::time::timeout(limit, sync(addr, from)).await {
        Ok(synced) => synced,
        Err(_) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "redis-server at {addr} sent no snapshot to the lab's replica in {} ms",
                limit.as_millis()
            ),
        )),
    }
}

/// A replica's handshake and the initial sync: the connection, where the
/// stream starts, what was read past the snapshot, and whether it was a
/// full resync (a snapshot) rather than the stream continued.
async fn sync(
    addr: SocketAddr,
    from: Option<&Position>,
) -> io::Result<(TcpStream, Position, BytesMut, bool)> {
    let mut s = TcpStream::connect(addr).await?;
    s.set_nodelay(true)?;
    let mut buf = BytesMut::new();
    for cmd in [
        vec!["REPLCONF", "listening-port", "1"],
        vec!["REPLCONF", "capa", "eof", "capa", "psync2"],
    ] {
        s.write_all(&Frame::command(cmd).to_bytes()).await?;
        let line = read_line(&mut s, &mut buf).await?;
        if !line.starts_with('+') {
            return Err(io::Error::other(format!("REPLCONF: {line}")));
        }
    }
    let (id, off) = match from {
        Some(p) => (p.id.clone(), (p.offset + 1).to_string()),
        None => ("?".to_string(), "-1".to_string()),
    };
    s.write_all(&Frame::command(["PSYNC", id.as_str(), off.as_str()]).to_bytes())
        .await?;
    let line = read_line(&mut s, &mut buf).await?;
    let words: Vec<&str> = line.split(' ').collect();
    match words.first().copied() {
        Some("+CONTINUE") => {
            let mut pos = from.cloned().unwrap_or_default();
            if let Some(id) = words.get(1) {
                pos.id = id.to_string();
            }
            Ok((s, pos, buf, false))
        }
        Some("+FULLRESYNC") if words.len() == 3 => {
            let pos = Position {
                id: words[1].to_string(),
                offset: words[2].parse().map_err(io::Error::other)?,
            };
            skip_snapshot(&mut s, &mut buf).await?;
            Ok((s, pos, buf, true))
        }
        _ => Err(io::Error::other(format!("PSYNC: {line}"))),
    }
}

/// One `\r\n`-ended line (the keepalive newlines a master sends while it
/// prepares a snapshot are skipped).
async fn read_line(s: &mut TcpStream, buf: &mut BytesMut) -> io::Result<String> {
    loop {
        while buf.first() == Some(&b'\n') {
            buf.advance(1);
        }
        if let Some(nl) = buf.iter().position(|&c| c == b'\n') {
            let line = buf.split_to(nl + 1);
            return Ok(String::from_utf8_lossy(&line).trim_end().to_string());
        }
        if s.read_buf(buf).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
}

/// Reads past the snapshot: `$EOF:<40 bytes>` ... the same 40 bytes
/// (diskless), or `$<length>` and that many bytes.
async fn skip_snapshot(s: &mut TcpStream, buf: &mut BytesMut) -> io::Result<()> {
    let head = read_line(s, buf).await?;
    if let Some(mark) = head.strip_prefix("$EOF:") {
        let mark = mark.as_bytes().to_vec();
        loop {
            if let Some(i) = buf.windows(mark.len()).position(|w| w == mark.as_slice()) {
                buf.advance(i + mark.len());
                return Ok(());
            }
            if s.read_buf(buf).await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }
    let len: usize = head
        .strip_prefix('$')
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| io::Error::other(format!("a snapshot's header: {head}")))?;
    while buf.len() < len {
        if s.read_buf(buf).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
    buf.advance(len);
    Ok(())
}

/// A `MONITOR` line: `+<time> [<db> <address>] "arg" "arg" ...`, the
/// arguments quoted as Redis quotes them (`\"`, `\\`, `\n`, `\xHH`, ...).
pub(crate) fn parse_monitor(line: &[u8]) -> Option<(String, Vec<Bytes>)> {
    let open = line.iter().position(|&c| c == b'[')?;
    let close = open + line[open..].iter().position(|&c| c == b']')?;
    let inside = String::from_utf8_lossy(&line[open + 1..close]).into_owned();
    let from = inside.split_once(' ')?.1.to_string();
    let mut args = Vec::new();
    let mut i = close + 1;
    while i < line.len() {
        if line[i] != b'"' {
            i += 1;
            continue;
        }
        let mut arg = Vec::new();
        i += 1;
        while i < line.len() && line[i] != b'"' {
            if line[i] == b'\\' && i + 1 < line.len() {
                i += 1;
                match line[i] {
                    b'n' => arg.push(b'\n'),
                    b'r' => arg.push(b'\r'),
                    b't' => arg.push(b'\t'),
                    b'a' => arg.push(7),
                    b'b' => arg.push(8),
                    b'x' if i + 2 < line.len() => {
                        let hex = std::str::from_utf8(&line[i + 1..i + 3]).ok()?;
                        arg.push(u8::from_str_radix(hex, 16).ok()?);
                        i += 2;
                    }
                    c => arg.push(c),
                }
            } else {
                arg.push(line[i]);
            }
            i += 1;
        }
        args.push(Bytes::from(arg));
        i += 1;
    }
    Some((from, args))
}

/// Sends one command on a connection of its own and reads its reply.
pub(crate) async fn query(addr: SocketAddr, cmd: &[&str]) -> io::Result<Frame> {
    let mut s = TcpStream::connect(addr).await?;
    s.write_all(&Frame::command(cmd.iter().copied()).to_bytes())
        .await?;
    let mut buf = BytesMut::new();
    loop {
        if let Some((f, _)) = resp::parse(&buf).map_err(|e| io::Error::other(e.0))? {
            return Ok(f);
        }
        if s.read_buf(&mut buf).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
}

/// The commands that rebuild the lock keys among `keys` the server holds:
/// `SET k v`, `HSET k f v...` or `ZADD k s m...`, then `PEXPIREAT k t` when
/// it has an expiry (Redis 7.0's `PEXPIRETIME`).
pub(crate) async fn held_keys(addr: SocketAddr, keys: &[String]) -> io::Result<Vec<Vec<Bytes>>> {
    let mut rebuild = Vec::new();
    for k in keys {
        let cmd = match query(addr, &["TYPE", k]).await? {
            Frame::Simple(t) if t == "string" => match query(addr, &["GET", k]).await? {
                Frame::Bulk(v) => vec![Bytes::from("SET"), Bytes::from(k.clone()), v],
                _ => continue,
            },
            Frame::Simple(t) if t == "hash" => {
                let all = query(addr, &["HGETALL", k]).await?;
                with_pairs("HSET", k, all, false)
            }
            Frame::Simple(t) if t == "zset" => {
                let all = query(addr, &["ZRANGE", k, "0", "-1", "WITHSCORES"]).await?;
                with_pairs("ZADD", k, all, true)
            }
            _ => continue,
        };
        if cmd.len() < 3 {
            continue;
        }
        rebuild.push(cmd);
        if let Frame::Integer(t) = query(addr, &["PEXPIRETIME", k]).await? {
            if t >= 0 {
                let at = Bytes::from(t.to_string());
                rebuild.push(vec![Bytes::from("PEXPIREAT"), Bytes::from(k.clone()), at]);
            }
        }
    }
    Ok(rebuild)
}

/// `NAME key` then the pairs of a flat reply (`HGETALL`'s field, value;
/// with `scored`, `ZRANGE ... WITHSCORES`'s member, score, written score
/// first as `ZADD` takes it).
fn with_pairs(name: &str, key: &str, reply: Frame, scored: bool) -> Vec<Bytes> {
    let mut cmd = vec![Bytes::from(name.to_string()), Bytes::from(key.to_string())];
    let Frame::Array(items) = reply else {
        return cmd;
    };
    let bulk = |f: &Frame| match f {
        Frame::Bulk(b) => Some(b.clone()),
        Frame::Double(d) => Some(Bytes::from(d.clone())),
        _ => None,
    };
    for pair in items.chunks(2) {
        if let [a, b] = pair {
            let (Some(a), Some(b)) = (bulk(a), bulk(b)) else {
                continue;
            };
            if scored {
                cmd.extend([b, a]);
            } else {
                cmd.extend([a, b]);
            }
        }
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A master that answers the handshake, announces a diskless snapshot
    /// and sends nothing more: the sync fails at its limit, naming it.
    #[tokio::test]
    async fn a_snapshot_that_never_comes_fails_the_sync_at_its_limit() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let master = tokio::spawn(async move {
            let (mut s, _) = l.accept().await.unwrap();
            let mut buf = BytesMut::new();
            let mut asked = 0;
            while asked < 3 {
                if s.read_buf(&mut buf).await.unwrap() == 0 {
                    return;
                }
                // Each command is one array: REPLCONF, REPLCONF, PSYNC.
                while let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                    let line = buf.split_to(i + 2);
                    if line.starts_with(b"*") {
                        asked += 1;
                        let reply: &[u8] = match asked {
                            3 => b"+FULLRESYNC 0123 0\r\n$EOF:0123456789012345678901234567890123456789\r\n",
                            _ => b"+OK\r\n",
                        };
                        s.write_all(reply).await.unwrap();
                    }
                }
            }
            // Holds the connection open, silent.
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        let limit = Duration::from_millis(300);
        let Err(e) = sync_within(addr, None, limit).await else {
            panic!("a sync without a snapshot succeeded");
        };
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        assert!(e.to_string().contains("sent no snapshot"), "{e}");
        master.abort();
    }

    #[test]
    fn monitor_lines_parse_as_redis_quotes_them() {
        let line =
            br#"+1795787654.251143 [0 127.0.0.1:52904] "eval" "return \"a\\b\"" "1" "k\x00\n""#;
        let (from, args) = parse_monitor(line).expect("a line");
        assert_eq!(from, "127.0.0.1:52904");
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_ref()).collect();
        assert_eq!(args, [&b"eval"[..], b"return \"a\\b\"", b"1", b"k\x00\n"]);
        let (from, _) = parse_monitor(br#"+1.0 [0 lua] "del" "g""#).expect("a line");
        assert_eq!(from, "lua");
    }
}
