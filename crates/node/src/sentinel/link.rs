//! The sentinel's command link to one instance, as Redis Sentinel's
//! `instanceLink` (its `cc`): one connection, commands written as they are
//! queued (never waiting for a reply), replies handed back in order, as
//! hiredis's callbacks are, to be processed between the sentinel's ticks.
//!
//! The link's times are Sentinel's: `act_ping_time` (the oldest
//! unanswered `PING`, what subjective down is measured from),
//! `last_ping_time`, `last_pong_time`, `last_avail_time`, and
//! `last_reconn_time` (a reconnect at most once per [`PING_PERIOD`]).
//! A connection that fails or closes leaves the link disconnected with its
//! times as they were; the commands queued on it get no reply.
//! Redis Sentinel also keeps a Pub/Sub link to each instance for the
//! sentinels' hellos; with a single sentinel it plays no part in timing
//! and is not modelled.

use redlock_proto::connection::Connector;
use redlock_proto::resp::{Connection, Frame};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

/// `SENTINEL_PING_PERIOD`: the longest ping period, and the shortest time
/// between two reconnects.
pub(crate) const PING_PERIOD: Duration = Duration::from_millis(1000);

/// What a command was, for the reply's callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sent {
    Ping,
    Info,
    /// A reply Sentinel discards (the `SLAVEOF` transaction's).
    Discard,
}

/// What a link's connection hands back.
#[derive(Debug)]
pub(crate) enum Delivery {
    Reply(Sent, Frame),
    /// The connection failed or closed: the link is disconnected.
    Closed,
}

/// A delivery, for instance `instance`'s link's connection `generation`.
#[derive(Debug)]
pub(crate) struct Arrival {
    pub(crate) instance: u64,
    pub(crate) generation: u64,
    pub(crate) delivery: Delivery,
}

/// Where the links' connections hand back what they read: the monitor,
/// which takes it between ticks.
pub(crate) type Deliver = UnboundedSender<Arrival>;

/// One live connection of a link: its queue and its task.
struct Live {
    queue: UnboundedSender<(Sent, Frame)>,
    task: tokio::task::JoinHandle<()>,
    generation: u64,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The command link to one instance, with Sentinel's times (on the
/// sentinel's monotonic clock).
pub(crate) struct Link {
    live: Option<Live>,
    generations: u64,
    pub(crate) act_ping_time: Option<Duration>,
    pub(crate) last_ping_time: Option<Duration>,
    pub(crate) last_pong_time: Duration,
    pub(crate) last_avail_time: Duration,
    pub(crate) last_reconn_time: Option<Duration>,
    pub(crate) cc_conn_time: Duration,
    pub(crate) pending: usize,
}

impl Link {
    /// A new link (`createInstanceLink`): disconnected, its ping pending
    /// since `now`.
    pub(crate) fn new(now: Duration) -> Link {
        Link {
            live: None,
            generations: 0,
            act_ping_time: Some(now),
            last_ping_time: None,
            last_pong_time: now,
            last_avail_time: now,
            last_reconn_time: None,
            cc_conn_time: now,
            pending: 0,
        }
    }

    pub(crate) fn disconnected(&self) -> bool {
        self.live.is_none()
    }

    /// Whether a delivery of connection `generation` is for the live one.
    pub(crate) fn is_live(&self, generation: u64) -> bool {
        self.live
            .as_ref()
            .is_some_and(|l| l.generation == generation)
    }

    /// Closes the connection (`instanceLinkCloseConnection`): the times
    /// stay.
    pub(crate) fn close(&mut self) {
        self.live = None;
        self.pending = 0;
    }

    /// `sentinelReconnectInstance`: a disconnected link whose last attempt
    /// is at least [`PING_PERIOD`] old connects again, and a `PING` is
    /// queued at once. Returns whether it tried.
    pub(crate) fn reconnect(
        &mut self,
        now: Duration,
        (instance, addr): (u64, &str),
        connector: &Arc<dyn Connector>,
        deliver: &Deliver,
    ) -> bool {
        if !self.disconnected() {
            return false;
        }
        if self
            .last_reconn_time
            .is_some_and(|t| now.saturating_sub(t) < PING_PERIOD)
        {
            return false;
        }
        self.last_reconn_time = Some(now);
        self.generations += 1;
        let generation = self.generations;
        let (queue, commands) = unbounded_channel();
        let task = tokio::spawn(run(
            connector.clone(),
            addr.to_string(),
            commands,
            (instance, generation),
            deliver.clone(),
        ));
        self.live = Some(Live {
            queue,
            task,
            generation,
        });
        self.cc_conn_time = now;
        self.pending = 0;
        self.send_ping(now);
        true
    }

    /// Queues `cmd`; false if the link is disconnected.
    pub(crate) fn send(&mut self, sent: Sent, cmd: Frame) -> bool {
        let Some(live) = &self.live else {
            return false;
        };
        if live.queue.send((sent, cmd)).is_err() {
            return false;
        }
        self.pending += 1;
        true
    }

    /// `sentinelSendPing`: the oldest unanswered ping's time is kept.
    pub(crate) fn send_ping(&mut self, now: Duration) -> bool {
        if !self.send(Sent::Ping, Frame::command(["PING"])) {
            return false;
        }
        self.last_ping_time = Some(now);
        if self.act_ping_time.is_none() {
            self.act_ping_time = Some(now);
        }
        true
    }

    /// `sentinelPingReplyCallback`: `PONG`, `LOADING` and `MASTERDOWN`
    /// make the instance available; any reply is a pong.
    pub(crate) fn ping_reply(&mut self, reply: &Frame, now: Duration) {
        let available = match reply {
            Frame::Simple(s) => s == "PONG",
            Frame::Error(e) => e.starts_with("LOADING") || e.starts_with("MASTERDOWN"),
            _ => false,
        };
        if available {
            self.act_ping_time = None;
            self.last_avail_time = now;
        }
        self.last_pong_time = now;
    }

    /// A reply arrived: one command less in flight.
    pub(crate) fn replied(&mut self) {
        self.pending = self.pending.saturating_sub(1);
    }
}

/// One connection: connect, then write each command as it is queued and
/// hand back each reply as it is read, until either side fails.
async fn run(
    connector: Arc<dyn Connector>,
    addr: String,
    mut commands: tokio::sync::mpsc::UnboundedReceiver<(Sent, Frame)>,
    (instance, generation): (u64, u64),
    deliver: Deliver,
) {
    let hand = |delivery| {
        let _ = deliver.send(Arrival {
            instance,
            generation,
            delivery,
        });
    };
    let Ok(stream) = connector.connect(&addr).await else {
        return hand(Delivery::Closed);
    };
    let mut conn = Connection::new(stream);
    let mut waiting = std::collections::VecDeque::new();
    loop {
        tokio::select! {
            biased;
            cmd = commands.recv() => {
                let Some((sent, frame)) = cmd else { return };
                if conn.write_frame(&frame).await.is_err() {
                    return hand(Delivery::Closed);
                }
                waiting.push_back(sent);
            }
            // Cancel-safe: what was read stays in the buffer.
            reply = conn.read_frame() => {
                let (Ok(frame), Some(sent)) = (reply, waiting.pop_front()) else {
                    return hand(Delivery::Closed);
                };
                hand(Delivery::Reply(sent, frame));
            }
        }
    }
}
