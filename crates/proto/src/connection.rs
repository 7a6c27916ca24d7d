//! Connections from the client to one node.
//!
//! A [`Connector`] turns an address into a byte stream: [`TcpConnector`] on
//! real tokio TCP, [`SimConnector`] on turmoil's simulated network. A
//! [`NodeConn`] keeps at most one connection to its node, opens it on demand,
//! and sends one request at a time under a timeout measured on the client's
//! clock. Any timeout or error drops the connection (a late reply must never
//! be read as the answer to the next request; turmoil's TCP does not
//! retransmit, so a segment lost to a partition kills the stream), and so does
//! a request cancelled after it was sent (its future dropped); the next
//! request reconnects, after a backoff that doubles while requests keep failing
//! (from [`MIN_BACKOFF`] to [`MAX_BACKOFF`]) and resets on the first reply.

use crate::clock::Clock;
use crate::resp::{Connection, Frame};
pub use crate::transport::{
    BoxStream, ConnectFuture, Connector, SimConnector, Stream, TcpConnector,
};
use std::time::Duration;

/// Why a request got no reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestError {
    /// No reply within the request timeout.
    Timeout,
    /// Connecting, writing or reading failed.
    Io(String),
    /// Still backing off after failed connects; nothing was sent.
    Backoff,
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::Timeout => write!(f, "timed out"),
            RequestError::Io(e) => write!(f, "{e}"),
            RequestError::Backoff => write!(f, "not reconnecting yet (backoff)"),
        }
    }
}

/// First wait after a failed connect; doubles up to [`MAX_BACKOFF`].
pub(crate) const MIN_BACKOFF: Duration = Duration::from_millis(10);
pub const MAX_BACKOFF: Duration = Duration::from_secs(1);

struct State {
    conn: Option<Connection<BoxStream>>,
    /// A request was sent and its reply not read yet. Still true when a
    /// request begins, the previous one was cancelled (its future dropped:
    /// an aborted watchdog, say) after sending: its reply may still arrive,
    /// and must never be read as the answer to the next request.
    in_flight: bool,
    /// No connect attempt before this time of the client's monotonic clock.
    retry_at: Duration,
    backoff: Duration,
}

/// The client's link to one node.
pub struct NodeConn {
    addr: String,
    state: tokio::sync::Mutex<State>,
    /// The longest wait before reconnecting.
    max_backoff: Duration,
}

impl NodeConn {
    /// A link whose reconnects back off up to [`MAX_BACKOFF`].
    pub fn new(addr: impl Into<String>) -> Self {
        NodeConn::with_max_backoff(addr, MAX_BACKOFF)
    }

    /// A link whose reconnects back off from [`MIN_BACKOFF`] up to `max`.
    pub fn with_max_backoff(addr: impl Into<String>, max: Duration) -> Self {
        NodeConn {
            addr: addr.into(),
            state: tokio::sync::Mutex::new(State {
                conn: None,
                in_flight: false,
                retry_at: Duration::ZERO,
                backoff: MIN_BACKOFF.min(max),
            }),
            max_backoff: max,
        }
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Sends `cmd` and waits for its reply, all within `timeout` (connecting
    /// included). Error replies (`-ERR ...`) are replies, returned as `Ok`.
    pub async fn request(
        &self,
        connector: &dyn Connector,
        clock: &dyn Clock,
        cmd: &Frame,
        timeout: Duration,
    ) -> Result<Frame, RequestError> {
        let mut replies = self
            .pipeline(connector, clock, std::slice::from_ref(cmd), timeout)
            .await?;
        Ok(replies.pop().expect("one reply per command"))
    }

    /// Sends `cmds` in one go (a pipeline) and waits for one reply each, all
    /// within `timeout`; any failure drops the connection, as for
    /// [`NodeConn::request`].
    pub async fn pipeline(
        &self,
        connector: &dyn Connector,
        clock: &dyn Clock,
        cmds: &[Frame],
        timeout: Duration,
    ) -> Result<Vec<Frame>, RequestError> {
        let mut st = self.state.lock().await;
        if st.in_flight {
            st.conn = None;
            st.in_flight = false;
        }
        let deadline = clock.sleep(timeout);
        let work = async {
            if st.conn.is_none() {
                if clock.now() < st.retry_at {
                    return Err(RequestError::Backoff);
                }
                let s = connector
                    .connect(&self.addr)
                    .await
                    .map_err(|e| RequestError::Io(format!("connect to {}: {e}", self.addr)))?;
                st.conn = Some(Connection::new(s));
            }
            st.in_flight = true;
            let conn = st.conn.as_mut().expect("connected above");
            for cmd in cmds {
                conn.write_frame(cmd)
                    .await
                    .map_err(|e| RequestError::Io(e.to_string()))?;
            }
            let mut replies = Vec::with_capacity(cmds.len());
            for _ in cmds {
                replies.push(
                    conn.read_frame()
                        .await
                        .map_err(|e| RequestError::Io(e.to_string()))?,
                );
            }
            Ok(replies)
        };
        let result = tokio::select! {
            biased;
            r = work => r,
            _ = deadline => Err(RequestError::Timeout),
        };
        st.in_flight = false;
        match &result {
            Ok(_) => st.backoff = MIN_BACKOFF.min(self.max_backoff),
            Err(RequestError::Backoff) => {}
            Err(_) => {
                st.conn = None;
                st.retry_at = clock.now() + st.backoff;
                st.backoff = (st.backoff * 2).min(self.max_backoff);
            }
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;
    use std::sync::{Arc, Mutex};

    /// A monotonic clock the test moves by hand; its timers never fire (a
    /// connect fails or succeeds at once here, so no request times out).
    #[derive(Clone, Default)]
    struct HandClock(Arc<Mutex<Duration>>);

    impl Clock for HandClock {
        fn now(&self) -> Duration {
            *self.0.lock().unwrap()
        }
        fn wall_ms(&self) -> i64 {
            self.now().as_millis() as i64
        }
        fn sleep(&self, _: Duration) -> crate::clock::Sleep {
            Box::pin(std::future::pending())
        }
    }

    /// A node that refuses connections until `up_at` on `clock`, then
    /// answers `+OK` to the first request; counts the connects tried.
    struct Node {
        clock: HandClock,
        up_at: Duration,
        tries: Mutex<Vec<Duration>>,
        /// The node's ends of the streams handed out (kept open).
        peers: Mutex<Vec<tokio::io::DuplexStream>>,
    }

    impl Connector for Node {
        fn connect<'a>(&'a self, _addr: &'a str) -> ConnectFuture<'a> {
            Box::pin(async move {
                let now = self.clock.now();
                self.tries.lock().unwrap().push(now);
                if now < self.up_at {
                    return Err(io::Error::new(io::ErrorKind::ConnectionRefused, "down"));
                }
                let (mine, mut theirs) = tokio::io::duplex(1024);
                tokio::io::AsyncWriteExt::write_all(&mut theirs, b"+OK\r\n").await?;
                self.peers.lock().unwrap().push(theirs);
                Ok(Box::new(mine) as BoxStream)
            })
        }
    }

    /// A client that sends a request every millisecond to a node down until
    /// 1.5 s, its reconnects backing off up to `max`: the times of its
    /// connect attempts, and when it first got a reply.
    fn reconnects(max: Duration) -> (Vec<Duration>, Duration) {
        let clock = HandClock::default();
        let node = Node {
            clock: clock.clone(),
            up_at: Duration::from_millis(1500),
            tries: Mutex::new(Vec::new()),
            peers: Mutex::new(Vec::new()),
        };
        let link = NodeConn::with_max_backoff("n1:6379", max);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let cmd = Frame::command(["PING"]);
        let answered = rt.block_on(async {
            for ms in 0..5000 {
                *clock.0.lock().unwrap() = Duration::from_millis(ms);
                let r = link
                    .request(&node, &clock, &cmd, Duration::from_millis(50))
                    .await;
                match r {
                    Ok(_) => return clock.now(),
                    Err(RequestError::Backoff) => {}
                    Err(RequestError::Io(_)) => {}
                    Err(e) => panic!("unexpected {e}"),
                }
            }
            panic!("no reply in 5 s");
        });
        let tries = node.tries.lock().unwrap().clone();
        (tries, answered)
    }

    #[test]
    fn the_wait_before_a_reconnect_doubles_from_10ms_up_to_the_longest() {
        let (tries, answered) = reconnects(Duration::from_millis(20));
        // 0, 10 (waited 10 ms), 30 (20 ms), then every 20 ms.
        assert_eq!(
            &tries[..4],
            &[
                Duration::from_millis(0),
                Duration::from_millis(10),
                Duration::from_millis(30),
                Duration::from_millis(50)
            ]
        );
        let gaps: Vec<Duration> = tries.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps[1..].iter().all(|g| *g == Duration::from_millis(20)),
            "{gaps:?}"
        );
        // The node is back at 1.5 s: the next try (every 20 ms) gets in.
        assert!(
            answered >= Duration::from_millis(1500) && answered < Duration::from_millis(1520),
            "{answered:?}"
        );

        let (tries, slow) = reconnects(Duration::from_millis(1000));
        let gaps: Vec<Duration> = tries.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(
            gaps,
            [10, 20, 40, 80, 160, 320, 640, 1000].map(Duration::from_millis),
            "tries at {tries:?}"
        );
        // Tries at 1270 ms, then 2270 ms: three quarters of a second late.
        assert_eq!(slow, Duration::from_millis(2270));
        assert!(slow > answered);

        // A longest wait under 10 ms is the only wait.
        let (tries, _) = reconnects(Duration::from_millis(4));
        let gaps: Vec<Duration> = tries.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps.iter().all(|g| *g == Duration::from_millis(4)),
            "{gaps:?}"
        );
    }
}
