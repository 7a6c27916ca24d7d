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
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// A byte stream a client can talk RESP over.
pub trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

pub type BoxStream = Box<dyn Stream>;
pub type ConnectFuture<'a> = Pin<Box<dyn Future<Output = io::Result<BoxStream>> + Send + 'a>>;

/// Opens streams to addresses (`host:port`).
pub trait Connector: Send + Sync {
    fn connect<'a>(&'a self, addr: &'a str) -> ConnectFuture<'a>;
}

/// Real TCP, through tokio.
pub struct TcpConnector;

impl Connector for TcpConnector {
    fn connect<'a>(&'a self, addr: &'a str) -> ConnectFuture<'a> {
        Box::pin(async move {
            let s = tokio::net::TcpStream::connect(addr).await?;
            s.set_nodelay(true)?;
            Ok(Box::new(s) as BoxStream)
        })
    }
}

/// turmoil's simulated TCP; addresses are `host:port` with turmoil host names.
pub struct SimConnector;

impl Connector for SimConnector {
    fn connect<'a>(&'a self, addr: &'a str) -> ConnectFuture<'a> {
        Box::pin(async move {
            let s = turmoil::net::TcpStream::connect(addr).await?;
            Ok(Box::new(s) as BoxStream)
        })
    }
}

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
pub const MIN_BACKOFF: Duration = Duration::from_millis(10);
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
