//! Pub/sub: `SUBSCRIBE`, `UNSUBSCRIBE`, `PSUBSCRIBE`, `PUNSUBSCRIBE`,
//! `PUBLISH`, `PUBSUB CHANNELS|NUMSUB|NUMPAT|SHARDCHANNELS|SHARDNUMSUB`, as
//! Redis 7.0 answers them (checked against `redis-server` by
//! `tests/redis/differential_pubsub.rs`).
//!
//! Redisson's unlock script publishes to `redisson_lock__channel:{name}`,
//! and its waiting `tryLock` subscribes there; sentinel clients subscribe
//! to the sentinel's events ([`super::sentinel`] answers those itself).
//!
//! - `(P)SUBSCRIBE` answers one `subscribe` frame per channel (pattern),
//!   with the client's count of channels and patterns after it;
//!   `(P)UNSUBSCRIBE` one per channel named, or per channel the client
//!   had (in channel order; Redis's is its dict's), or one with a null
//!   channel and 0 when it had none. Under RESP3 these are push frames
//!   (`>`), as every message is.
//! - `PUBLISH channel message` sends `message channel message` to each
//!   subscriber of the channel, then `pmessage pattern channel message` to
//!   each subscriber of each pattern that matches it (patterns in order),
//!   and answers how many it sent (a client subscribed twice counts twice).
//!   It is not passed on to replicas (Redis propagates it): the node's
//!   replication stream carries data only, and the simulation's traces
//!   count it.
//! - `PUBSUB CHANNELS` lists channels in order (Redis's order is its
//!   dict's); the node has no shard channels.
//!
//! The RESP2 subscribed mode (only `(P)(UN)SUBSCRIBE`, `PING`, `QUIT`,
//! `RESET`) is the session's ([`super::session`]).

use super::errors::{is, wrong_arity};
use super::glob::glob_match;
use super::keyspace::Keyspace;
use bytes::Bytes;
use redlock_proto::resp::Frame;

/// The frame confirming a (un)subscription: `kind`, the channel (null for
/// none) and the client's count after it.
fn confirm(kind: &str, name: Option<&Bytes>, count: usize) -> Frame {
    Frame::Push(vec![
        Frame::bulk(kind),
        name.map_or(Frame::Null, |n| Frame::Bulk(n.clone())),
        Frame::Integer(count as i64),
    ])
}

/// `SUBSCRIBE channel...` (`PSUBSCRIBE pattern...` if `pattern`) for
/// client `id` (arity checked by the caller).
pub(crate) fn subscribe(ks: &mut Keyspace, id: u64, args: &[Bytes], pattern: bool) -> Vec<Frame> {
    let kind = if pattern { "psubscribe" } else { "subscribe" };
    let mut out = Vec::new();
    for name in &args[1..] {
        ks.pubsub.subscribe(id, name, pattern);
        out.push(confirm(kind, Some(name), ks.pubsub.count(id)));
    }
    out
}

/// `UNSUBSCRIBE [channel...]` (`PUNSUBSCRIBE [pattern...]` if `pattern`)
/// for client `id`: the ones named, or all it has.
pub(crate) fn unsubscribe(ks: &mut Keyspace, id: u64, args: &[Bytes], pattern: bool) -> Vec<Frame> {
    let kind = if pattern {
        "punsubscribe"
    } else {
        "unsubscribe"
    };
    let names = match args.len() {
        1 => ks.pubsub.names(id, pattern),
        _ => args[1..].to_vec(),
    };
    if names.is_empty() {
        return vec![confirm(kind, None, ks.pubsub.count(id))];
    }
    let mut out = Vec::new();
    for name in &names {
        ks.pubsub.unsubscribe(id, name, pattern);
        out.push(confirm(kind, Some(name), ks.pubsub.count(id)));
    }
    out
}

/// Publishes `message` on `channel` (the sentinel's events); how many
/// clients received it.
pub(crate) fn publish_to(ks: &mut Keyspace, channel: &str, message: &str) -> usize {
    let (c, m) = (
        Bytes::from(channel.to_string()),
        Bytes::from(message.to_string()),
    );
    ks.pubsub.publish(&ks.clients, &c, &m)
}

/// `PUBLISH channel message`: how many clients received it.
pub(crate) fn publish(ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
    Frame::Integer(ks.pubsub.publish(&ks.clients, &args[1], &args[2]) as i64)
}

/// `PUBSUB CHANNELS [pattern]|NUMSUB [channel...]|NUMPAT|SHARDCHANNELS
/// [pattern]|SHARDNUMSUB [channel...]`.
pub(crate) fn pubsub(ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
    let sub = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    let ps = &ks.pubsub;
    match sub.as_str() {
        "channels" | "shardchannels" if args.len() > 3 => Frame::err(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try PUBSUB HELP.",
            String::from_utf8_lossy(&args[1])
        )),
        "channels" => Frame::Array(
            ps.channels()
                .filter(|c| args.get(2).is_none_or(|p| glob_match(p, c)))
                .map(|c| Frame::Bulk(c.clone()))
                .collect(),
        ),
        "shardchannels" => Frame::Array(Vec::new()),
        "numsub" | "shardnumsub" => {
            let shard = sub == "shardnumsub";
            let count = |c: &Bytes| if shard { 0 } else { ps.subscribers(c) as i64 };
            Frame::Array(
                args[2..]
                    .iter()
                    .flat_map(|c| [Frame::Bulk(c.clone()), Frame::Integer(count(c))])
                    .collect(),
            )
        }
        "numpat" if args.len() == 2 => Frame::Integer(ps.patterns() as i64),
        "numpat" => wrong_arity("pubsub|numpat"),
        _ if is(&args[1], "help") => {
            Frame::err("ERR PUBSUB HELP is not answered by redlock-sim's node")
        }
        _ => Frame::err(format!(
            "ERR unknown subcommand '{}'. Try PUBSUB HELP.",
            String::from_utf8_lossy(&args[1])
                .chars()
                .take(128)
                .collect::<String>()
        )),
    }
}
