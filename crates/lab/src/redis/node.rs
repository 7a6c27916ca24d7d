//! A node of the lab's world that is a real `redis-server`
//! ([`super::server`]) with its [`Observer`]: what the lab's faults do to
//! it, and what it came back with after a restart, read from the server.

use super::observe::{held_keys, query, Observer};
use super::server::RedisHost;
use crate::net::Peers;
use crate::record::LabRecorder;
use bytes::Bytes;
use redlock_proto::resp::Frame;
use std::io;
use std::net::SocketAddr;

pub(crate) struct RedisNode {
    pub(crate) server: RedisHost,
    observer: Option<Observer>,
    peers: Peers,
    rec: LabRecorder,
    /// What it came back with at its last restart: its key count, and the
    /// commands that rebuild the lock keys it held.
    came_back: (usize, Vec<Vec<Bytes>>),
}

impl RedisNode {
    /// `server`, started, observed from now on.
    pub(crate) async fn observe(
        server: RedisHost,
        peers: Peers,
        rec: LabRecorder,
    ) -> io::Result<RedisNode> {
        let mut node = RedisNode {
            server,
            observer: None,
            peers,
            rec,
            came_back: (0, Vec::new()),
        };
        node.watch().await?;
        Ok(node)
    }

    async fn watch(&mut self) -> io::Result<()> {
        let addr = self
            .addr()
            .ok_or_else(|| io::Error::other("a server that is down"))?;
        let name = self.server.name.clone();
        let o = Observer::start(&name, addr, self.peers.clone(), self.rec.clone()).await?;
        self.observer = Some(o);
        Ok(())
    }

    pub(crate) fn addr(&self) -> Option<SocketAddr> {
        self.server.addr()
    }

    /// SIGKILL; false if it was down.
    pub(crate) async fn crash(&mut self) -> bool {
        self.observer = None;
        self.server.crash().await
    }

    /// The server again, observed; what it came back with is read before
    /// any link leads to it.
    pub(crate) async fn restart(&mut self) -> io::Result<bool> {
        if !self.server.restart().await? {
            return Ok(false);
        }
        let addr = self.addr().expect("a server that restarted is up");
        let rebuild = held_keys(addr, &self.rec.lock_keys()).await?;
        let count = match query(addr, &["DBSIZE"]).await? {
            Frame::Integer(n) => usize::try_from(n).unwrap_or(0),
            _ => 0,
        };
        self.came_back = (count, rebuild);
        self.watch().await?;
        Ok(true)
    }

    pub(crate) fn came_back(&self) -> (usize, Vec<Vec<Bytes>>) {
        self.came_back.clone()
    }

    /// Its clock moved by `by_ms` (it has one of its own: [`super::refused`]
    /// made sure libfaketime is there).
    pub(crate) fn jump_clock(&mut self, by_ms: f64) {
        // A node a fault or the nemesis may move has a clock of its own
        // (`clock_needed`).
        assert!(
            self.server.clock.is_some(),
            "{}: a clock jump of a server with no clock of its own",
            self.server.name
        );
        if let Some(c) = &mut self.server.clock {
            c.jump(by_ms).expect("lab: rewriting a server's clock file");
        }
    }

    /// Its clock's rate set; the rate it had.
    pub(crate) fn set_clock_rate(&mut self, rate: f64) -> f64 {
        assert!(
            self.server.clock.is_some(),
            "{}: a clock rate for a server with no clock of its own",
            self.server.name
        );
        let Some(c) = &mut self.server.clock else {
            return 1.0;
        };
        let from = c.rate();
        c.set_rate(rate)
            .expect("lab: rewriting a server's clock file");
        from
    }

    pub(crate) async fn stop(&mut self) {
        self.observer = None;
        self.server.stop().await;
    }
}
