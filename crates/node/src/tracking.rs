//! Client-side caching: `CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST]
//! [PREFIX p]... [OPTIN] [OPTOUT] [NOLOOP]`, `CLIENT CACHING YES|NO`,
//! `CLIENT GETREDIR`, `CLIENT TRACKINGINFO`, and the invalidation messages,
//! as Redis 7.0's `tracking.c` sends them (checked against `redis-server`
//! by `tests/redis/differential_tracking.rs`). rueidis turns it on at
//! connect (`CLIENT TRACKING ON OPTIN`; rueidislock `OPTOUT [NOLOOP]`) and
//! waits for a lock's key to be invalidated.
//!
//! - Default mode: the keys of every read-only command a tracking client
//!   runs, or a script it runs calls, are remembered for it (with `OPTIN`
//!   only right after `CLIENT CACHING YES`, with `OPTOUT` unless right
//!   after `CLIENT CACHING NO`). When a key is written (by any client, a
//!   script, the expiry of the key, or a replica applying its master's
//!   write: every effect, [`super::keyspace`]), each client that had read
//!   it is sent an invalidation (not the writer itself under `NOLOOP`) and
//!   forgets it. `FLUSHALL` invalidates everything, with a null.
//! - `BCAST`: every write of a key under one of the client's prefixes is
//!   announced to it, one message per prefix with its keys in order,
//!   after the command that wrote them (Redis: before it next sleeps).
//! - The message: under RESP3 a push `invalidate [key...]` on the
//!   tracking connection; with `REDIRECT id` on that client's connection,
//!   under RESP2 as a message of `__redis__:invalidate` if it is
//!   subscribed to anything; a redirect to a client that has gone is told
//!   (RESP3) as `tracking-redir-broken id`. An invalidation caused by the
//!   client's own command follows that command's reply.

use super::channels::PubSub;
use super::clients::Clients;
use super::errors::{is, not_an_integer, parse_i64, syntax_error};
use bytes::Bytes;
use redlock_proto::resp::Frame;
use std::collections::{BTreeMap, BTreeSet};

/// One tracking client's options.
#[derive(Clone, Debug, Default)]
struct Options {
    /// 0: none.
    redirect: u64,
    bcast: bool,
    optin: bool,
    optout: bool,
    noloop: bool,
    broken_redirect: bool,
    /// `CLIENT CACHING` given for the next command.
    caching: bool,
    /// `BCAST` prefixes, in order.
    prefixes: BTreeSet<Bytes>,
}

/// The tracking state of one node.
#[derive(Debug, Default)]
pub(crate) struct Tracking {
    clients: BTreeMap<u64, Options>,
    /// Each key read, and the clients that read it.
    table: BTreeMap<Bytes, BTreeSet<u64>>,
    /// Each `BCAST` prefix, and its clients.
    prefixes: BTreeMap<Bytes, BTreeSet<u64>>,
    /// Keys written since the last broadcast, per prefix, with their
    /// first writer.
    pending: BTreeMap<Bytes, BTreeMap<Bytes, Option<u64>>>,
}

impl Tracking {
    /// Tracking off for client `id` (`CLIENT TRACKING OFF`, `RESET`, gone).
    /// The keys it read stay in the table until written, as in Redis.
    pub(crate) fn forget(&mut self, id: u64) {
        let Some(o) = self.clients.remove(&id) else {
            return;
        };
        for p in &o.prefixes {
            if let Some(ids) = self.prefixes.get_mut(p) {
                ids.remove(&id);
                if ids.is_empty() {
                    self.prefixes.remove(p);
                    self.pending.remove(p);
                }
            }
        }
    }

    /// The next command of client `id` is not `CLIENT ...`: `CLIENT
    /// CACHING` no longer applies.
    pub(crate) fn command_done(&mut self, id: u64) {
        if let Some(o) = self.clients.get_mut(&id) {
            o.caching = false;
        }
    }

    /// Remembers `keys` for client `id`, if its mode says so.
    pub(crate) fn remember(&mut self, id: u64, keys: &[Bytes]) {
        let Some(o) = self.clients.get(&id) else {
            return;
        };
        if o.bcast || (o.optin && !o.caching) || (o.optout && o.caching) {
            return;
        }
        for k in keys {
            self.table.entry(k.clone()).or_default().insert(id);
        }
    }
}

/// The keys a read-only command reads, for the ones the node knows.
pub(crate) fn read_keys(args: &[Bytes]) -> &[Bytes] {
    const READS: &[&str] = &[
        "get",
        "getrange",
        "pttl",
        "ttl",
        "type",
        "hget",
        "hexists",
        "hlen",
        "hgetall",
        "llen",
        "lrange",
        "lindex",
        "zcard",
        "zscore",
        "zrank",
        "zrevrank",
        "zcount",
        "zrange",
        "zrangebyscore",
        "zrevrange",
        "zrevrangebyscore",
    ];
    match args.first() {
        Some(n) if is(n, "exists") => &args[1..],
        Some(n) if READS.iter().any(|r| is(n, r)) && args.len() > 1 => &args[1..2],
        _ => &[],
    }
}

impl Tracking {
    /// Client `id`'s next message: to it or to its redirect, in the form
    /// that connection can read; nothing if it cannot read any.
    fn send_invalidation(&mut self, clients: &Clients, pubsub: &PubSub, id: u64, keys: Frame) {
        let Some(o) = self.clients.get_mut(&id) else {
            return;
        };
        let mut to = id;
        if o.redirect != 0 {
            if !clients.exists(o.redirect) {
                o.broken_redirect = true;
                if clients.resp3(id) {
                    let broken = vec![
                        Frame::bulk("tracking-redir-broken"),
                        Frame::Integer(o.redirect as i64),
                    ];
                    clients.push(id, Frame::Push(broken), true);
                }
                return;
            }
            to = o.redirect;
        }
        let frame = if clients.resp3(to) {
            Frame::Push(vec![Frame::bulk("invalidate"), keys])
        } else if to != id && pubsub.subscribed(to) {
            let channel = Frame::bulk("__redis__:invalidate");
            Frame::Push(vec![Frame::bulk("message"), channel, keys])
        } else {
            return;
        };
        clients.push(to, frame, true);
    }

    /// `key` was written: the clients that read it are told (and it is
    /// noted for the `BCAST` prefixes it falls under).
    pub(crate) fn invalidate(&mut self, clients: &Clients, pubsub: &PubSub, key: &Bytes) {
        let writer = clients.current;
        for (p, keys) in self.pending.iter_mut() {
            if key.starts_with(p) {
                keys.entry(key.clone()).or_insert(writer);
            }
        }
        let Some(readers) = self.table.remove(key) else {
            return;
        };
        let told: Vec<u64> = readers
            .into_iter()
            .filter(|id| {
                self.clients
                    .get(id)
                    .is_some_and(|o| !(o.bcast || o.noloop && writer == Some(*id)))
            })
            .collect();
        for id in told {
            let keys = Frame::Array(vec![Frame::Bulk(key.clone())]);
            self.send_invalidation(clients, pubsub, id, keys);
        }
    }

    /// `FLUSHALL`: every tracking client is told, with a null; the table
    /// is emptied.
    pub(crate) fn invalidate_all(&mut self, clients: &Clients, pubsub: &PubSub) {
        self.table.clear();
        let ids: Vec<u64> = self.clients.keys().copied().collect();
        for id in ids {
            self.send_invalidation(clients, pubsub, id, Frame::Null);
        }
    }

    /// Sends the `BCAST` clients the keys written under their prefixes
    /// since the last call (after each command).
    pub(crate) fn broadcast(&mut self, clients: &Clients, pubsub: &PubSub) {
        if self.pending.values().all(|k| k.is_empty()) {
            return;
        }
        let mut sends = Vec::new();
        for (p, keys) in self.pending.iter_mut() {
            let keys = std::mem::take(keys);
            for id in self.prefixes.get(p).into_iter().flatten() {
                let noloop = self.clients.get(id).is_some_and(|o| o.noloop);
                let shown: Vec<Frame> = keys
                    .iter()
                    .filter(|(_, w)| !(noloop && **w == Some(*id)))
                    .map(|(k, _)| Frame::Bulk(k.clone()))
                    .collect();
                if !shown.is_empty() {
                    sends.push((*id, Frame::Array(shown)));
                }
            }
        }
        for (id, keys) in sends {
            self.send_invalidation(clients, pubsub, id, keys);
        }
    }
}

/// `CLIENT TRACKING`'s options, read as Redis 7.0's `clientCommand` reads
/// them, and the prefixes given.
fn parse_options(clients: &Clients, args: &[Bytes]) -> Result<(Options, Vec<Bytes>), Frame> {
    let mut o = Options::default();
    let mut prefixes = Vec::new();
    let mut j = 3;
    while j < args.len() {
        let more = j + 1 < args.len();
        let a = &args[j];
        if is(a, "redirect") && more {
            j += 1;
            if o.redirect != 0 {
                return Err(Frame::err(
                    "ERR A client can only redirect to a single other client",
                ));
            }
            let id = parse_i64(&args[j]).ok_or_else(not_an_integer)?;
            if id <= 0 || !clients.exists(id as u64) {
                return Err(Frame::err(
                    "ERR The client ID you want redirect to does not exist",
                ));
            }
            o.redirect = id as u64;
        } else if is(a, "bcast") {
            o.bcast = true;
        } else if is(a, "optin") {
            o.optin = true;
        } else if is(a, "optout") {
            o.optout = true;
        } else if is(a, "noloop") {
            o.noloop = true;
        } else if is(a, "prefix") && more {
            j += 1;
            prefixes.push(args[j].clone());
        } else {
            return Err(syntax_error());
        }
        j += 1;
    }
    Ok((o, prefixes))
}

fn overlap(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

fn check_prefixes(existing: Option<&Options>, given: &[Bytes]) -> Result<(), Frame> {
    let shown = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    for (i, p) in given.iter().enumerate() {
        for e in existing.iter().flat_map(|o| o.prefixes.iter()) {
            if overlap(e, p) {
                return Err(Frame::err(format!(
                    "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single client must not overlap.",
                    shown(p),
                    shown(e)
                )));
            }
        }
        if let Some(q) = given[i + 1..].iter().find(|q| overlap(p, q)) {
            return Err(Frame::err(format!(
                "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single client must not overlap.",
                shown(p),
                shown(q)
            )));
        }
    }
    Ok(())
}

/// `CLIENT TRACKING ON|OFF [options]` for client `id`.
pub(crate) fn client_tracking(
    t: &mut Tracking,
    clients: &Clients,
    id: u64,
    args: &[Bytes],
) -> Frame {
    let (mut o, given) = match parse_options(clients, args) {
        Ok(parsed) => parsed,
        Err(e) => return e,
    };
    if is(&args[2], "off") {
        t.forget(id);
        return Frame::ok();
    }
    if !is(&args[2], "on") {
        return syntax_error();
    }
    let old = t.clients.get(&id).cloned();
    if let Err(e) = check_on(&o, old.as_ref(), !given.is_empty()) {
        return e;
    }
    if o.bcast {
        if let Err(e) = check_prefixes(old.as_ref(), &given) {
            return e;
        }
        // Prefixes add up while tracking stays on, as in Redis.
        o.prefixes = old.map(|old| old.prefixes).unwrap_or_default();
        if given.is_empty() {
            o.prefixes.insert(Bytes::new());
        }
        o.prefixes.extend(given);
    }
    for p in &o.prefixes {
        t.prefixes.entry(p.clone()).or_default().insert(id);
        t.pending.entry(p.clone()).or_default();
    }
    t.clients.insert(id, o);
    Frame::ok()
}

/// Redis 7.0's checks before it turns tracking on, in its order.
fn check_on(o: &Options, old: Option<&Options>, prefixed: bool) -> Result<(), Frame> {
    if !o.bcast && prefixed {
        return Err(Frame::err(
            "ERR PREFIX option requires BCAST mode to be enabled",
        ));
    }
    if old.is_some_and(|old| old.bcast != o.bcast) {
        return Err(Frame::err("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."));
    }
    if o.bcast && (o.optin || o.optout) {
        return Err(Frame::err(
            "ERR OPTIN and OPTOUT are not compatible with BCAST",
        ));
    }
    if o.optin && o.optout {
        return Err(Frame::err(
            "ERR You can't specify both OPTIN mode and OPTOUT mode",
        ));
    }
    if old.is_some_and(|old| o.optin && old.optout || o.optout && old.optin) {
        return Err(Frame::err("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."));
    }
    Ok(())
}

/// `CLIENT CACHING YES|NO` for client `id`.
pub(crate) fn client_caching(t: &mut Tracking, id: u64, args: &[Bytes]) -> Frame {
    let Some(o) = t.clients.get_mut(&id) else {
        return Frame::err("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled");
    };
    if is(&args[2], "yes") {
        if !o.optin {
            return Frame::err(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
            );
        }
    } else if is(&args[2], "no") {
        if !o.optout {
            return Frame::err(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
            );
        }
    } else {
        return syntax_error();
    }
    o.caching = true;
    Frame::ok()
}

/// `CLIENT GETREDIR`: the redirect (0: none), -1 when not tracking.
pub(crate) fn client_getredir(t: &Tracking, id: u64) -> Frame {
    Frame::Integer(t.clients.get(&id).map_or(-1, |o| o.redirect as i64))
}

/// `CLIENT TRACKINGINFO`: `flags` (a set), `redirect`, `prefixes`.
pub(crate) fn client_trackinginfo(t: &Tracking, id: u64) -> Frame {
    let o = t.clients.get(&id);
    let mut flags = Vec::new();
    match o {
        None => flags.push("off"),
        Some(o) => {
            flags.push("on");
            let named = [
                (o.bcast, "bcast"),
                (o.optin, "optin"),
                (o.optin && o.caching, "caching-yes"),
                (o.optout, "optout"),
                (o.optout && o.caching, "caching-no"),
                (o.noloop, "noloop"),
                (o.broken_redirect, "broken_redirect"),
            ];
            flags.extend(named.iter().filter(|(on, _)| *on).map(|(_, n)| *n));
        }
    }
    let prefixes = o.map_or(Vec::new(), |o| {
        o.prefixes.iter().map(|p| Frame::Bulk(p.clone())).collect()
    });
    Frame::Map(vec![
        (
            Frame::bulk("flags"),
            Frame::Set(flags.into_iter().map(Frame::bulk).collect()),
        ),
        (
            Frame::bulk("redirect"),
            Frame::Integer(o.map_or(-1, |o| o.redirect as i64)),
        ),
        (Frame::bulk("prefixes"), Frame::Array(prefixes)),
    ])
}
