//! How hosts open byte streams to each other, below both the node (a
//! replica connecting to its master) and the client: a [`Connector`] turns
//! an address into a stream, [`TcpConnector`] on real tokio TCP,
//! [`SimConnector`] on turmoil's simulated network (the simulation wraps
//! its own around it, in `sim::sockets` and `sim::pause`).

use std::future::Future;
use std::io;
use std::pin::Pin;
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
