//! A client's connection to the protected store, kept as a service keeps
//! its database connection (`[clients]` in the scenario format).
//!
//! The client opens it when it starts (its SYN leaves then) and keeps it: the
//! first write of an acquisition leaves at once on a connection that is
//! already open, so a fault placed at `cN:acquired` finds that write on the
//! wire. A client that gives up waiting for a write's answer closes the
//! connection (its end follows the write, as TCP sends it) and opens a new
//! one at once, for its next write. A write whose connection is still being
//! opened when the client gives up never left: [`Outcome::Abandoned`], and
//! the attempt is dropped (its SYN, if a partition held it, is ignored at
//! the heal) and a new one started.

use super::pause::PausingConnector;
use redlock_proto::clock::{Clock, SimClock};
use redlock_proto::connection::{BoxStream, Connector};
use redlock_proto::resp::{Connection, Frame};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// A connect under way.
type Opening = Pin<Box<dyn Future<Output = io::Result<BoxStream>> + Send>>;

/// What became of one write.
#[derive(Debug, PartialEq)]
pub(crate) enum Outcome {
    /// The store answered.
    Answered(Frame),
    /// Sent, but no answer came in time, or the connection broke: the
    /// connection was closed and a new one is being opened.
    Unanswered,
    /// The connection was still being opened (or failed to open) when the
    /// client gave up: the write never left.
    Abandoned,
}

/// The state of the connection.
enum State {
    /// A connect under way, its SYN sent.
    Opening(Opening),
    Open(Connection<BoxStream>),
}

/// One client's connection to the store.
pub(crate) struct StoreLink {
    addr: String,
    connector: Arc<PausingConnector>,
    state: State,
}

impl StoreLink {
    /// Starts opening a connection to `addr` at once.
    pub(crate) fn open(addr: &str, connector: PausingConnector) -> StoreLink {
        let connector = Arc::new(connector);
        StoreLink {
            state: State::Opening(connect(&connector, addr)),
            addr: addr.to_string(),
            connector,
        }
    }

    /// Sends `cmd` and waits for its answer, all within `wait` on `clock`
    /// (waiting for the connection to open included). `sent` is called just
    /// before the write leaves, and only if it does.
    pub(crate) async fn write(
        &mut self,
        clock: &SimClock,
        cmd: &Frame,
        wait: Duration,
        sent: impl FnOnce(),
    ) -> Outcome {
        let deadline = clock.sleep(wait);
        tokio::pin!(deadline);
        if let State::Opening(connecting) = &mut self.state {
            let opened = tokio::select! {
                biased;
                r = connecting => r.ok(),
                _ = &mut deadline => None,
            };
            match opened {
                Some(stream) => self.state = State::Open(Connection::new(stream)),
                None => {
                    self.reopen();
                    return Outcome::Abandoned;
                }
            }
        }
        let State::Open(conn) = &mut self.state else {
            unreachable!("opened above");
        };
        sent();
        let exchange = async {
            conn.write_frame(cmd).await.ok()?;
            conn.read_frame().await.ok()
        };
        let answer = tokio::select! {
            biased;
            a = exchange => a,
            _ = &mut deadline => None,
        };
        match answer {
            Some(frame) => Outcome::Answered(frame),
            None => {
                self.reopen();
                Outcome::Unanswered
            }
        }
    }

    /// Drops the connection (or the attempt: a SYN still held is ignored
    /// when it arrives) and starts opening a new one.
    fn reopen(&mut self) {
        self.state = State::Opening(connect(&self.connector, &self.addr));
    }
}

/// A connect to `addr`, polled once so that its SYN leaves now: the
/// handshake goes on while the client does other things, and the client's
/// task, once it waits for it, is woken by the SYN-ACK itself (a task of
/// its own would add a wake-up between two tasks, which lands in a later
/// step at a finer tick).
fn connect(connector: &Arc<PausingConnector>, addr: &str) -> Opening {
    let (connector, addr) = (connector.clone(), addr.to_string());
    let mut opening: Opening = Box::pin(async move { connector.connect(&addr).await });
    match opening
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(r) => Box::pin(std::future::ready(r)),
        Poll::Pending => opening,
    }
}
