//! Command dispatch: the command table with Redis's arities, and the error
//! replies for unknown commands and wrong arity, worded as Redis 7 words them.
//! The connection's own commands (`HELLO`, `CLIENT`, `AUTH`, `RESET`, the
//! subscriptions) are in the table for their arity and for scripts, which
//! may not call them; the session answers them ([`super::session`]).

pub(crate) use super::errors::arity_ok;
use super::errors::{read_only, wrong_arity};
use super::keyspace::Keyspace;
use super::keyspace::Role;
use super::{
    cluster, hashes, keys, lists, pubsub, replication, scripting, server, strings, tracking, zsets,
};
use bytes::Bytes;
use redlock_proto::resp::Frame;

/// A command's implementation: the keyspace, the arguments (name first), and
/// the node's wall clock in milliseconds, read once per command.
pub(crate) type Handler = fn(&mut Keyspace, &[Bytes], i64) -> Frame;

/// Name, arity (positive: exactly; negative: at least), handler.
const TABLE: &[(&str, i32, Handler)] = &[
    ("ping", -1, server::ping),
    ("echo", 2, server::echo),
    ("info", -1, server::info),
    ("role", 1, server::role),
    ("command", -1, server::command),
    ("select", 2, server::select),
    ("time", 1, server::time),
    ("cluster", -2, cluster::cluster),
    ("readonly", 1, cluster::cluster_only),
    ("readwrite", 1, cluster::cluster_only),
    ("asking", 1, cluster::cluster_only),
    ("get", 2, strings::get),
    ("set", -3, strings::set),
    ("setnx", 3, strings::setnx),
    ("getset", 3, strings::getset),
    ("getrange", 4, strings::getrange),
    ("incr", 2, strings::incr),
    ("del", -2, keys::del),
    ("unlink", -2, keys::del),
    ("publish", 3, pubsub::publish),
    ("pubsub", -2, pubsub::pubsub),
    ("exists", -2, keys::exists),
    ("expire", -3, keys::expire),
    ("expireat", -3, keys::expireat),
    ("pexpire", -3, keys::pexpire),
    ("pexpireat", -3, keys::pexpireat),
    ("pttl", 2, keys::pttl),
    ("ttl", 2, keys::ttl),
    ("flushall", -1, keys::flushall),
    ("type", 2, keys::type_of),
    ("keys", 2, keys::keys),
    ("hset", -4, hashes::hset),
    ("hget", 3, hashes::hget),
    ("hexists", 3, hashes::hexists),
    ("hincrby", 4, hashes::hincrby),
    ("hdel", -3, hashes::hdel),
    ("hlen", 2, hashes::hlen),
    ("hgetall", 2, hashes::hgetall),
    ("lpush", -3, lists::lpush),
    ("rpush", -3, lists::rpush),
    ("lpushx", -3, lists::lpushx),
    ("rpushx", -3, lists::rpushx),
    ("lpop", -2, lists::lpop),
    ("rpop", -2, lists::rpop),
    ("llen", 2, lists::llen),
    ("lrange", 4, lists::lrange),
    ("lindex", 3, lists::lindex),
    ("lrem", 4, lists::lrem),
    ("ltrim", 4, lists::ltrim),
    ("blpop", -3, lists::blpop),
    ("brpop", -3, lists::brpop),
    ("zadd", -4, zsets::zadd),
    ("zrem", -3, zsets::zrem),
    ("zcard", 2, zsets::zcard),
    ("zscore", 3, zsets::zscore),
    ("zrank", 3, zsets::zrank),
    ("zcount", 4, zsets::zcount),
    ("zrange", -4, zsets::zrange),
    ("zrangebyscore", -4, zsets::zrangebyscore),
    ("zrevrange", -4, zsets::zrevrange),
    ("zrevrangebyscore", -4, zsets::zrevrangebyscore),
    ("zrevrank", 3, zsets::zrevrank),
    ("zremrangebyscore", 4, zsets::zremrangebyscore),
    ("eval", -3, scripting::eval),
    ("evalsha", -3, scripting::evalsha),
    ("script", -2, scripting::script),
    ("replicaof", 3, replication::replicaof),
    ("slaveof", 3, replication::replicaof),
    ("config", -2, server::config),
    // A connection's own: answered by the session, before the node.
    ("hello", -1, connection_only),
    ("client", -2, connection_only),
    ("auth", -2, connection_only),
    ("reset", 1, connection_only),
    ("quit", -1, connection_only),
    ("multi", 1, connection_only),
    ("exec", 1, connection_only),
    ("discard", 1, connection_only),
    ("subscribe", -2, connection_only),
    ("psubscribe", -2, connection_only),
    ("unsubscribe", -1, connection_only),
    ("punsubscribe", -1, connection_only),
];

/// The connection commands reach [`dispatch`] only without a connection
/// (the simulation's own calls): unknown there.
fn connection_only(_: &mut Keyspace, args: &[Bytes], _: i64) -> Frame {
    unknown_command(args)
}

/// Commands a replica refuses from clients (`-READONLY`). The scripts count
/// as writes: the lock scripts write when they do anything.
const WRITES: &[&str] = &[
    "set",
    "setnx",
    "getset",
    "incr",
    "del",
    "unlink",
    "expire",
    "expireat",
    "pexpire",
    "pexpireat",
    "flushall",
    "hset",
    "hincrby",
    "hdel",
    "lpush",
    "rpush",
    "lpushx",
    "rpushx",
    "lpop",
    "rpop",
    "lrem",
    "ltrim",
    "blpop",
    "brpop",
    "zadd",
    "zrem",
    "zremrangebyscore",
    "eval",
    "evalsha",
];

/// Commands Redis 7 flags `noscript`: a script may not call them.
const NOSCRIPT: &[&str] = &[
    "blpop",
    "brpop",
    "eval",
    "evalsha",
    "script",
    "replicaof",
    "slaveof",
    "config",
    "hello",
    "auth",
    "client",
    "multi",
    "exec",
    "discard",
    "watch",
    "subscribe",
    "psubscribe",
    "unsubscribe",
    "punsubscribe",
    "reset",
    "quit",
    "monitor",
    "sync",
    "psync",
];

/// What Redis 7.0's `scriptCall` refuses before running a command a script
/// calls, in its words (the caller adds `ERR `).
pub(crate) fn script_check(args: &[Bytes]) -> Result<(), &'static str> {
    let lname = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
    let Some((cname, arity, _)) = TABLE.iter().find(|(n, _, _)| *n == lname) else {
        return Err("Unknown Redis command called from script");
    };
    if !arity_ok(*arity, args.len()) {
        return Err("Wrong number of args calling Redis command from script");
    }
    if NOSCRIPT.contains(cname) {
        return Err("This Redis command is not allowed from script");
    }
    Ok(())
}

/// Runs one command and returns its reply. A read by a tracking client
/// (or by a script it runs) remembers the keys it read for it.
pub(crate) fn dispatch(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    match checked(ks, args) {
        Ok(handler) => {
            let reply = handler(ks, args, now);
            if let Some(id) = ks.clients.current {
                ks.tracking.remember(id, tracking::read_keys(args));
            }
            reply
        }
        Err(refused) => refused,
    }
}

/// The error reply when `args` is refused before it runs (unknown, wrong
/// arity, a write on a replica).
pub(crate) fn refuse(ks: &Keyspace, args: &[Bytes]) -> Option<Frame> {
    checked(ks, args).err()
}

fn checked(ks: &Keyspace, args: &[Bytes]) -> Result<Handler, Frame> {
    let Some(name) = args.first() else {
        return Err(Frame::err("ERR empty command"));
    };
    let lname = String::from_utf8_lossy(name).to_ascii_lowercase();
    let Some((cname, arity, handler)) = TABLE.iter().find(|(n, _, _)| *n == lname) else {
        return Err(unknown_command(args));
    };
    if !arity_ok(*arity, args.len()) {
        return Err(wrong_arity(cname));
    }
    if ks.role != Role::Master && WRITES.contains(cname) {
        return Err(read_only());
    }
    Ok(*handler)
}

pub(crate) fn unknown_command(args: &[Bytes]) -> Frame {
    let mut listed = String::new();
    for a in &args[1..] {
        if listed.len() >= 128 {
            break;
        }
        let room = 128 - listed.len();
        let s = String::from_utf8_lossy(a);
        let cut: String = s.chars().take(room).collect();
        listed.push_str(&format!("'{cut}' "));
    }
    let name: String = String::from_utf8_lossy(&args[0])
        .chars()
        .take(128)
        .collect();
    Frame::err(format!(
        "ERR unknown command '{name}', with args beginning with: {listed}"
    ))
}
