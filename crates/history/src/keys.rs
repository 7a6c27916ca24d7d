//! The history events of a node's writes: what a node's effects (`SET`,
//! `HSET`, `HDEL`, `ZADD`, `ZREM`, `PEXPIREAT`, `DEL`, `FLUSHALL`, as the
//! node code and Redis's replication stream write them) do to the *marks*
//! a lock key carries. A mark is whatever a lock library keeps there:
//! - a string's value (the token of `SET key token NX PX ttl`),
//! - a hash's field (Redisson's `uuid:threadId`),
//! - a sorted set's member, live until its score (a time in ms on the
//!   node's clock) has passed (Symfony Lock's token).
//!
//! The events, with their `detail`:
//! - `key_set`: a mark made (`key=lock token=t expires_at=…`, `field=f`,
//!   `member=m score=…`); a string's new value replaces the old one;
//! - `key_extended`: a key's expiry moved (`PEXPIREAT`, or a `SET` of the
//!   value it already holds), or a member's score raised or lowered;
//! - `key_removed`: a deletion (`DEL`, `HDEL` of a field, `ZREM` of a live
//!   member); `by=cN` when the lab knows whose command it was;
//! - `key_expired`: the key's time, or a member's score, ran out on the
//!   node's clock (`now > expires_at` for a key, `now >= score` for a
//!   member, as Redis and Symfony count them). In the simulation it is
//!   recorded when the node removes the key (Redis expires a key when a
//!   command touches it, or in its sweep ten times a second); the lab
//!   records it at the instant the time ran out ([`expire`]), and the
//!   node's later removal adds nothing.
//!
//! [`NodeKeys`] is what a node holds of the lock keys, as these events
//! leave it; the simulation's nodes and the lab's build it alike.

use super::EventKind;
use bytes::Bytes;
use std::collections::BTreeMap;

/// How a lock key keeps its marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shape {
    /// A string: its value is the one mark.
    String,
    /// A hash: each field is a mark.
    Hash,
    /// A sorted set: each member is a mark, live until its score.
    ZSet,
}

impl Shape {
    /// What the history calls its marks: `token`, `field`, `member`.
    pub fn mark_name(self) -> &'static str {
        match self {
            Shape::String => "token",
            Shape::Hash => "field",
            Shape::ZSet => "member",
        }
    }
}

/// What a node holds of one lock key.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyState {
    pub(crate) shape: Shape,
    /// Mark → its score (a sorted set's member) or `None`.
    pub(crate) marks: BTreeMap<String, Option<i64>>,
    /// The key's expiry on the node's clock, in ms.
    pub(crate) expires_at: Option<i64>,
}

/// Lock key → what the node holds of it.
pub type NodeKeys = BTreeMap<String, KeyState>;

/// `b` as the history writes a token: printable ASCII as it is, every
/// other byte (and the space, the comma, the quote and the backslash,
/// which would break `history.csv`'s columns or the `detail`'s pairs) as
/// `\xNN`. A library whose tokens are raw bytes (rueidislock's) gets one
/// line per event all the same.
pub fn printable(b: &[u8]) -> String {
    let mut out = String::with_capacity(b.len());
    for &c in b {
        if c.is_ascii_graphic() && !matches!(c, b',' | b'"' | b'\\') {
            out.push(c as char);
        } else {
            out.push_str(&format!("\\x{c:02x}"));
        }
    }
    out
}

/// A score (`%.17g`, or Rust's `f64` text) as whole milliseconds.
fn score_ms(b: &[u8]) -> Option<i64> {
    let s: f64 = std::str::from_utf8(b).ok()?.parse().ok()?;
    s.is_finite().then_some(s.floor() as i64)
}

/// Whether a member of score `score` has run out at `now` (ms).
fn member_passed(score: Option<i64>, now: i64) -> bool {
    score.is_some_and(|s| now >= s)
}

/// Whether a key expiring at `at` has run out at `now` (ms).
fn key_passed(at: Option<i64>, now: i64) -> bool {
    at.is_some_and(|t| now > t)
}

/// The history events of one effect `cmd` on a node holding `node` (which
/// it updates), made by `by`'s command, at `now` ms on the node's clock.
/// Only keys in `lock_keys` are followed.
pub fn key_events(
    lock_keys: &[String],
    node: &mut NodeKeys,
    cmd: &[Bytes],
    by: Option<&str>,
    now: i64,
) -> Vec<EventKind> {
    let text = |i: usize| cmd.get(i).map(|b| printable(b)).unwrap_or_default();
    let name = cmd
        .first()
        .map(|b| String::from_utf8_lossy(b).to_ascii_uppercase())
        .unwrap_or_default();
    let by = by.map(str::to_string);
    if name == "FLUSHALL" {
        let gone = std::mem::take(node).into_keys();
        return gone.map(|key| removed(key, None, by.clone())).collect();
    }
    let key = text(1);
    if !lock_keys.contains(&key) {
        return Vec::new();
    }
    match name.as_str() {
        "SET" => set(node, key, text(2), pxat(cmd), by),
        "HSET" => add_marks(node, &key, Shape::Hash, pairs(&cmd[2..], false), by),
        "ZADD" => add_marks(node, &key, Shape::ZSet, pairs(&cmd[2..], true), by),
        "HDEL" | "ZREM" => {
            let marks: Vec<String> = cmd[2..].iter().map(|b| printable(b)).collect();
            remove_marks(node, &key, &marks, by, now)
        }
        "PEXPIREAT" => {
            let at = std::str::from_utf8(cmd.get(2).map_or(&[][..], |b| b))
                .ok()
                .and_then(|s| s.parse().ok());
            extend_key(node, key, at, by)
        }
        "PERSIST" => extend_key(node, key, None, by),
        "DEL" | "UNLINK" => match node.remove(&key) {
            Some(k) if key_passed(k.expires_at, now) => vec![EventKind::KeyExpired {
                key,
                mark: None,
                expires_at: k.expires_at,
            }],
            Some(_) => vec![removed(key, None, by)],
            None => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// `PXAT t` of a `SET`, if any.
fn pxat(cmd: &[Bytes]) -> Option<i64> {
    let at = cmd.iter().position(|a| a.eq_ignore_ascii_case(b"PXAT"))?;
    std::str::from_utf8(cmd.get(at + 1)?).ok()?.parse().ok()
}

/// The (mark, score) pairs of `HSET k f v...` (fields) or `ZADD k s m...`
/// (members, with `scored`).
fn pairs(args: &[Bytes], scored: bool) -> Vec<(String, Option<i64>)> {
    args.chunks(2)
        .filter(|p| p.len() == 2)
        .map(|p| match scored {
            true => (printable(&p[1]), score_ms(&p[0])),
            false => (printable(&p[0]), None),
        })
        .collect()
}

fn removed(key: String, mark: Option<(Shape, String)>, by: Option<String>) -> EventKind {
    EventKind::KeyRemoved { key, mark, by }
}

/// A string set to `token`: a new mark, or the same one with a new expiry.
fn set(
    node: &mut NodeKeys,
    key: String,
    token: String,
    expires_at: Option<i64>,
    by: Option<String>,
) -> Vec<EventKind> {
    let state = KeyState {
        shape: Shape::String,
        marks: BTreeMap::from([(token.clone(), None)]),
        expires_at,
    };
    let before = node.insert(key.clone(), state);
    if before.is_some_and(|b| b.shape == Shape::String && b.marks.contains_key(&token)) {
        return vec![EventKind::KeyExtended {
            key,
            mark: None,
            expires_at,
            by,
        }];
    }
    vec![EventKind::KeySet {
        key,
        shape: Shape::String,
        token,
        expires_at,
        by,
    }]
}

/// Fields or members set: each new one a mark; a member's new score an
/// extension of that mark. A hash field set again (a reentrant lock's
/// count) changes nothing.
fn add_marks(
    node: &mut NodeKeys,
    key: &str,
    shape: Shape,
    marks: Vec<(String, Option<i64>)>,
    by: Option<String>,
) -> Vec<EventKind> {
    let state = node.entry(key.to_string()).or_insert_with(|| KeyState {
        shape,
        marks: BTreeMap::new(),
        expires_at: None,
    });
    if state.shape != shape {
        // The key changed type (it was deleted first, as Redis refuses
        // otherwise): start it again.
        *state = KeyState {
            shape,
            marks: BTreeMap::new(),
            expires_at: None,
        };
    }
    let mut out = Vec::new();
    for (token, score) in marks {
        match state.marks.insert(token.clone(), score) {
            None => out.push(EventKind::KeySet {
                key: key.to_string(),
                shape,
                token,
                expires_at: if shape == Shape::ZSet {
                    score
                } else {
                    state.expires_at
                },
                by: by.clone(),
            }),
            Some(before) if shape == Shape::ZSet && before != score => {
                out.push(EventKind::KeyExtended {
                    key: key.to_string(),
                    mark: Some((shape, token)),
                    expires_at: score,
                    by: by.clone(),
                })
            }
            Some(_) => {}
        }
    }
    out
}

/// Fields or members removed; a member whose score had passed expired. The
/// key goes with its last mark.
fn remove_marks(
    node: &mut NodeKeys,
    key: &str,
    marks: &[String],
    by: Option<String>,
    now: i64,
) -> Vec<EventKind> {
    let Some(state) = node.get_mut(key) else {
        return Vec::new();
    };
    let shape = state.shape;
    let mut out = Vec::new();
    for m in marks {
        let Some(score) = state.marks.remove(m) else {
            continue;
        };
        let mark = Some((shape, m.clone()));
        out.push(if member_passed(score, now) {
            EventKind::KeyExpired {
                key: key.to_string(),
                mark,
                expires_at: score,
            }
        } else {
            removed(key.to_string(), mark, by.clone())
        });
    }
    if state.marks.is_empty() {
        node.remove(key);
    }
    out
}

/// A key's expiry set (or taken away, `None`).
fn extend_key(
    node: &mut NodeKeys,
    key: String,
    expires_at: Option<i64>,
    by: Option<String>,
) -> Vec<EventKind> {
    let Some(state) = node.get_mut(&key) else {
        return Vec::new();
    };
    if state.expires_at == expires_at {
        return Vec::new();
    }
    state.expires_at = expires_at;
    vec![EventKind::KeyExtended {
        key,
        mark: None,
        expires_at,
        by,
    }]
}

/// What ran out on a node whose clock reads `now` ms: every lock key past
/// its expiry, every member past its score, each a `key_expired` (removed
/// from `node`). The lab calls it as its clock goes, to record an expiry
/// at the instant it happened rather than when the node noticed.
pub fn expire(node: &mut NodeKeys, now: i64) -> Vec<EventKind> {
    let next = next_expiry(node);
    let mut out = Vec::new();
    node.retain(|key, state| {
        if key_passed(state.expires_at, now) {
            out.push(EventKind::KeyExpired {
                key: key.clone(),
                mark: None,
                expires_at: state.expires_at,
            });
            return false;
        }
        let shape = state.shape;
        state.marks.retain(|m, score| {
            let live = !member_passed(*score, now);
            if !live {
                out.push(EventKind::KeyExpired {
                    key: key.clone(),
                    mark: Some((shape, m.clone())),
                    expires_at: *score,
                });
            }
            live
        });
        !state.marks.is_empty()
    });
    // The lab looks only when `next_expiry` says something is due: what
    // runs out here, it must have announced.
    assert!(
        out.is_empty() || next.is_some_and(|t| t <= now),
        "expire: at {now} ms, {} expiries where the next one was due at {next:?} ms",
        out.len()
    );
    out
}

/// The earliest time, in ms on the node's clock, at which something in
/// `node` runs out (a key's expiry, a member's score), if anything can.
pub fn next_expiry(node: &NodeKeys) -> Option<i64> {
    node.values()
        .flat_map(|s| {
            let members = s.marks.values().flatten().copied();
            s.expires_at
                .map(|t| t.saturating_add(1))
                .into_iter()
                .chain(members)
        })
        .min()
}

/// What `effects` (the commands that rebuild a node's keys: `SET`, `HSET`,
/// `ZADD`, `PEXPIREAT`, as a snapshot writes them) leave of the lock keys,
/// with the events that make them.
pub fn rebuilt(
    lock_keys: &[String],
    effects: &[Vec<Bytes>],
    now: i64,
) -> (NodeKeys, Vec<EventKind>) {
    let mut node = NodeKeys::new();
    let mut events = Vec::new();
    for cmd in effects {
        events.extend(key_events(lock_keys, &mut node, cmd, None, now));
    }
    // A node that starts from its snapshot only makes marks and sets
    // expiries: nothing it had is removed as it is rebuilt.
    let removal = events
        .iter()
        .find(|e| !matches!(e, EventKind::KeySet { .. } | EventKind::KeyExtended { .. }));
    assert!(
        removal.is_none(),
        "rebuilt: rebuilding a node's keys made {removal:?}"
    );
    (node, events)
}

/// The commands that rebuild the lock keys (of `lock_keys`) `node` holds
/// now, as a snapshot writes them (`SET k v [PXAT t]`, `HSET k f v...`,
/// `ZADD k s m...`, `PEXPIREAT k t`).
pub fn snapshot_of(node: &redlock_node::Node, lock_keys: &[String]) -> Vec<Vec<Bytes>> {
    let ks = node.keyspace();
    redlock_node::replication::snapshot(&ks, None)
        .into_iter()
        .filter(|cmd| {
            cmd.get(1)
                .is_some_and(|k| lock_keys.iter().any(|l| l.as_bytes() == &k[..]))
        })
        .collect()
}

#[cfg(test)]
mod tests;
