//! A `redis` crate connection ([`redis::aio::ConnectionLike`]) over the
//! project's client connection, so that lock code written against the
//! `redis` crate runs unchanged in the simulation and on real Redis.
//!
//! [`RedisConn`] sends each command (or pipeline) through a [`NodeConn`]:
//! one connection to one server, opened on demand through a [`Connector`]
//! (turmoil's network, with the paused host's sockets waiting out its
//! pauses, in the simulation; tokio TCP against `redis-server`), each request
//! under a timeout measured on the host's [`Clock`]. After a timeout or an
//! I/O error the connection is dropped and the next request reconnects
//! (turmoil's TCP does not retransmit). Replies are handed to the `redis`
//! crate's own RESP parser, so a reply means to the user's code exactly
//! what the same bytes from `redis-server` would: an error reply becomes a
//! [`redis::Value::ServerError`] of the right kind (`NOSCRIPT` is
//! `ServerErrorKind::NoScript`, which `redis::Script` reacts to), a timeout
//! an I/O error of kind `TimedOut`.

use redis::{RedisError, RedisFuture, Value};
use redlock_proto::clock::{Clock, SystemClock};
use redlock_proto::connection::{Connector, NodeConn, RequestError, TcpConnector};
use redlock_proto::resp::{self, Frame};
use std::io;
use std::sync::Arc;
use std::time::Duration;

/// A `redis` crate async connection to one server. Cloning it shares the
/// connection (requests wait their turn), as a `MultiplexedConnection` does.
#[derive(Clone)]
pub struct RedisConn {
    conn: Arc<NodeConn>,
    connector: Arc<dyn Connector>,
    clock: Arc<dyn Clock>,
    timeout: Duration,
}

impl RedisConn {
    /// A connection to `addr` (`host:port`) through `connector`, each
    /// request (connecting included) within `timeout` on `clock`.
    pub fn new(
        addr: impl Into<String>,
        connector: Arc<dyn Connector>,
        clock: Arc<dyn Clock>,
        timeout: Duration,
    ) -> Self {
        RedisConn {
            conn: Arc::new(NodeConn::new(addr)),
            connector,
            clock,
            timeout,
        }
    }

    /// A connection to a real server over tokio TCP, on the machine's clock.
    pub fn tcp(addr: impl Into<String>, timeout: Duration) -> Self {
        Self::new(
            addr,
            Arc::new(TcpConnector),
            Arc::new(SystemClock::new()),
            timeout,
        )
    }

    /// The server's address, `host:port`.
    pub fn addr(&self) -> &str {
        self.conn.addr()
    }

    /// The per-request timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Changes the per-request timeout of this handle (clones keep theirs).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    async fn send(&self, cmds: Vec<Frame>) -> redis::RedisResult<Vec<Value>> {
        let replies = self
            .conn
            .pipeline(&*self.connector, &*self.clock, &cmds, self.timeout)
            .await
            .map_err(|e| io_error(self.addr(), e))?;
        replies.iter().map(value_of).collect()
    }
}

/// A command of the `redis` crate as a request frame (its packed form,
/// parsed back: a cursor argument is already filled in there).
pub(crate) fn frame_of(cmd: &redis::Cmd) -> redis::RedisResult<Frame> {
    let packed = cmd.get_packed_command();
    match resp::parse(&packed) {
        Ok(Some((frame, used))) if used == packed.len() => Ok(frame),
        _ => Err(RedisError::from(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the command does not pack to one RESP array",
        ))),
    }
}

/// A reply frame as the `redis` crate reads the same bytes. A frame holds
/// what came over the wire: RESP3 types only after `HELLO 3`, so writing it
/// back as RESP3 gives the bytes the server sent (but `$-1` as `_`: both
/// are `Value::Nil`).
pub(crate) fn value_of(reply: &Frame) -> redis::RedisResult<Value> {
    redis::parse_redis_value(&reply.to_bytes_as(resp::Protocol::Resp3))
}

/// A request that got no reply, as an I/O error (`TimedOut` for a timeout).
fn io_error(addr: &str, e: RequestError) -> RedisError {
    let kind = match e {
        RequestError::Timeout => io::ErrorKind::TimedOut,
        RequestError::Backoff => io::ErrorKind::NotConnected,
        RequestError::Io(_) => io::ErrorKind::ConnectionReset,
    };
    RedisError::from(io::Error::new(kind, format!("{addr}: {e}")))
}

impl redis::aio::ConnectionLike for RedisConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a redis::Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let frame = frame_of(cmd)?;
            let mut values = self.send(vec![frame]).await?;
            Ok(values.pop().unwrap_or(Value::Nil))
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let mut frames = Vec::new();
            if pipeline.is_transaction() {
                frames.push(Frame::command(["MULTI"]));
            }
            for cmd in pipeline.cmd_iter() {
                frames.push(frame_of(cmd)?);
            }
            if pipeline.is_transaction() {
                frames.push(Frame::command(["EXEC"]));
            }
            let values = self.send(frames).await?;
            Ok(values.into_iter().skip(offset).take(count).collect())
        })
    }

    fn get_db(&self) -> i64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_replies_keep_their_kind() {
        let v = value_of(&Frame::err("NOSCRIPT No matching script. Please use EVAL.")).unwrap();
        let e = v.extract_error().unwrap_err();
        assert_eq!(
            e.kind(),
            redis::ErrorKind::Server(redis::ServerErrorKind::NoScript)
        );
        let v = value_of(&Frame::err("ERR syntax error")).unwrap();
        let e = v.extract_error().unwrap_err();
        assert_eq!(
            e.kind(),
            redis::ErrorKind::Server(redis::ServerErrorKind::ResponseError)
        );
        assert_eq!(value_of(&Frame::ok()).unwrap(), Value::Okay);
        assert_eq!(value_of(&Frame::Null).unwrap(), Value::Nil);
        assert_eq!(value_of(&Frame::Integer(3)).unwrap(), Value::Int(3));
        // After HELLO 3: RESP3 types as the redis crate reads them.
        let map = Frame::Map(vec![(Frame::bulk("proto"), Frame::Integer(3))]);
        assert_eq!(
            value_of(&map).unwrap(),
            Value::Map(vec![(Value::BulkString(b"proto".to_vec()), Value::Int(3))])
        );
        assert_eq!(
            value_of(&Frame::Boolean(true)).unwrap(),
            Value::Boolean(true)
        );
    }

    #[test]
    fn commands_become_arrays_of_bulk_strings() {
        let mut cmd = redis::cmd("SET");
        cmd.arg("k").arg("v").arg("NX").arg("PX").arg(10_000);
        assert_eq!(
            frame_of(&cmd).unwrap(),
            Frame::command(["SET", "k", "v", "NX", "PX", "10000"])
        );
    }

    #[test]
    fn a_timeout_is_an_io_timeout() {
        let e = io_error("n1:6379", RequestError::Timeout);
        assert!(e.is_timeout(), "{e}");
        assert!(io_error("n1:6379", RequestError::Io("reset".into())).is_connection_dropped());
    }
}
