//! When a client sent what the store read: measured from outside, by the
//! link between them. The link reads a client's bytes the moment the
//! client sends them (loopback), so it keeps, per connection, the time it
//! read each chunk and where that chunk starts in the connection's byte
//! stream; the store, which knows where in the stream each command it reads
//! starts, asks for the time the chunk holding that first byte was read
//! (a `write_sent`). A connection is known by the link's end of it (the
//! address the store sees as its peer).
//!
//! Exact to the link's read: a client whose link stopped reading (its
//! queue full, TCP's back pressure) sent later than it wrote, as real TCP
//! would. A command whose connection did not come through a link (a test
//! that talks to the store directly) has no send time.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The read times of every connection the links carry to the store.
/// Cheap to clone.
#[derive(Clone, Default)]
pub struct SendTimes {
    conns: Arc<Mutex<HashMap<SocketAddr, Chunks>>>,
}

/// One connection's chunks not yet passed by the store: `(first byte's
/// offset, read at)`, in order.
type Chunks = VecDeque<(u64, Instant)>;

impl SendTimes {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SocketAddr, Chunks>> {
        self.conns.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A link's new connection, known by `peer` (the link's end), with the
    /// chunks it read before it connected.
    pub(crate) fn open(&self, peer: SocketAddr, early: Vec<(u64, Instant)>) {
        assert!(
            early.windows(2).all(|w| w[0].0 < w[1].0),
            "a connection's early chunks out of stream order"
        );
        self.lock().insert(peer, early.into());
    }

    /// The link read a chunk starting at byte `offset` at `at`.
    pub(crate) fn read(&self, peer: SocketAddr, offset: u64, at: Instant) {
        if let Some(c) = self.lock().get_mut(&peer) {
            // Each chunk starts past the one before: the link reads forward.
            let last = c.back().map(|(o, _)| *o);
            assert!(
                last.is_none_or(|o| o < offset),
                "a chunk at byte {offset} read after one at {last:?}"
            );
            c.push_back((offset, at));
        }
    }

    /// When the byte at `offset` was read; the chunks before its own are
    /// forgotten (the store reads forward).
    pub(crate) fn sent_at(&self, peer: SocketAddr, offset: u64) -> Option<Instant> {
        let mut conns = self.lock();
        let chunks = conns.get_mut(&peer)?;
        while chunks.len() > 1 && chunks[1].0 <= offset {
            chunks.pop_front();
        }
        chunks
            .front()
            .filter(|(o, _)| *o <= offset)
            .map(|(_, t)| *t)
    }

    /// The store is done with the connection.
    pub(crate) fn close(&self, peer: SocketAddr) {
        self.lock().remove(&peer);
    }
}

/// What one link connection keeps: where it reports, and the offset of
/// the next byte it reads.
pub(crate) struct Stamper {
    times: SendTimes,
    peer: SocketAddr,
    offset: u64,
}

impl Stamper {
    /// Stamps for the connection whose link end is `peer`, `early` (the
    /// chunks read before the connect) first.
    pub(crate) fn open(times: &SendTimes, peer: SocketAddr, early: &Early) -> Stamper {
        times.open(peer, early.chunks.clone());
        Stamper {
            times: times.clone(),
            peer,
            offset: early.offset,
        }
    }

    /// `n` bytes read now.
    pub(crate) fn read(&mut self, n: usize) {
        assert!(n > 0, "a chunk read with no bytes");
        self.times.read(self.peer, self.offset, Instant::now());
        self.offset += n as u64;
    }
}

/// The chunks a link reads before it connects to the server.
#[derive(Default)]
pub(crate) struct Early {
    chunks: Vec<(u64, Instant)>,
    offset: u64,
}

impl Early {
    /// `n` bytes read now.
    pub(crate) fn read(&mut self, n: usize) {
        assert!(n > 0, "an early chunk read with no bytes");
        self.chunks.push((self.offset, Instant::now()));
        self.offset += n as u64;
    }

    /// The bytes read so far.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }
}

#[cfg(test)]
mod tests;
