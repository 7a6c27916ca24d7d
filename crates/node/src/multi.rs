//! Transactions: `MULTI`, `EXEC`, `DISCARD`, as Redis 7.0 answers them
//! (checked against `redis-server` by `tests/redis/differential_multi.rs`).
//! rueidis reads through its client-side cache with `CLIENT CACHING YES`,
//! `MULTI`, `PTTL key`, `GET key`, `EXEC`.
//!
//! After `MULTI` every command but `EXEC`, `DISCARD`, `MULTI`, `WATCH`,
//! `QUIT` and `RESET` is queued (`+QUEUED`); one refused as it arrives (an
//! unknown command or subcommand, a wrong arity, a write on a replica) is
//! answered its error and the transaction is aborted at `EXEC` (`EXECABORT
//! Transaction discarded because of previous errors.`); an `EXEC` refused
//! so ends it (`EXECABORT Transaction discarded because of: <why>`). `EXEC` runs the
//! queue and answers an array of the replies (a blocking pop does not
//! block); a queue of the keyspace's commands runs under one lock of the
//! keyspace, with nothing between them, as in Redis; a queue with a
//! connection's own commands (`CLIENT`, `HELLO`, the subscriptions) runs
//! them in order, each as it would run outside. `MULTI` inside `MULTI` and
//! `WATCH` inside `MULTI` are errors that do not abort. The node has no
//! `WATCH`: it is an unknown command outside a transaction. `CLIENT
//! CACHING` given before `MULTI` holds for the whole transaction.

use super::command;
use super::errors::is;
use super::session::{self, Queued, Session};
use super::Node;
use bytes::Bytes;
use redlock_proto::resp::Frame;

/// The connection's own commands: they run through the session.
const CONNECTION: &[&str] = &[
    "client",
    "hello",
    "auth",
    "subscribe",
    "psubscribe",
    "unsubscribe",
    "punsubscribe",
];

/// Answers `MULTI`, `EXEC`, `DISCARD`, and every command while a
/// transaction is under way; `None`: a command for the session as usual.
pub(crate) fn transaction(node: &Node, s: &mut Session, args: &[Bytes]) -> Option<Vec<Frame>> {
    let name = &args[0];
    let word = |w: &str| is(name, w);
    if s.multi.is_none() {
        return match () {
            _ if word("multi") => Some(vec![start(s, args)]),
            _ if word("exec") => Some(vec![Frame::err("ERR EXEC without MULTI")]),
            _ if word("discard") => Some(vec![Frame::err("ERR DISCARD without MULTI")]),
            _ => None,
        };
    }
    if word("quit") || word("reset") {
        s.multi = None;
        return None;
    }
    if word("watch") {
        return Some(vec![Frame::err("ERR WATCH inside MULTI is not allowed")]);
    }
    let q = s.multi.as_mut().expect("a transaction under way");
    if let Some(e) = refused(node, args) {
        q.aborted = true;
        if !word("exec") {
            return Some(vec![e]);
        }
        // A refused `EXEC` ends the transaction, saying why.
        s.multi = None;
        let Frame::Error(why) = e else {
            return Some(vec![e]);
        };
        let why = why.strip_prefix("ERR ").unwrap_or(&why);
        let abort = format!("EXECABORT Transaction discarded because of: {why}");
        return Some(vec![Frame::err(abort)]);
    }
    Some(vec![match () {
        _ if word("exec") => exec(node, s),
        _ if word("discard") => {
            s.multi = None;
            Frame::ok()
        }
        _ if word("multi") => Frame::err("ERR MULTI calls can not be nested"),
        _ => {
            q.commands.push(args.to_vec());
            Frame::Simple("QUEUED".into())
        }
    }])
}

fn start(s: &mut Session, args: &[Bytes]) -> Frame {
    if args.len() != 1 {
        return super::errors::wrong_arity("multi");
    }
    s.multi = Some(Queued::default());
    Frame::ok()
}

/// Why a command is refused as it arrives (an unknown command or
/// subcommand, a wrong arity, a write on a replica), if it is.
fn refused(node: &Node, args: &[Bytes]) -> Option<Frame> {
    match command::refuse(&node.keyspace(), args) {
        Some(e) => Some(e),
        None if is(&args[0], "client") => session::client_subcommand(args).err(),
        None => None,
    }
}

/// `EXEC`: the queue's replies, or `EXECABORT`.
fn exec(node: &Node, s: &mut Session) -> Frame {
    let q = s.multi.take().expect("a transaction under way");
    if q.aborted {
        return Frame::err("EXECABORT Transaction discarded because of previous errors.");
    }
    let own = |c: &Vec<Bytes>| CONNECTION.iter().any(|w| is(&c[0], w));
    if q.commands.iter().any(own) {
        let replies = q
            .commands
            .iter()
            .flat_map(|c| session::answer(node, s, c))
            .collect();
        return Frame::Array(replies);
    }
    let (replies, wrote) = node.execute_all(&q.commands, s.id);
    if let Some(offset) = wrote {
        s.woff = offset;
    }
    Frame::Array(replies)
}
