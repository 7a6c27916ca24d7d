//! Keyspace commands: `DEL`, `EXISTS`, `EXPIRE`, `EXPIREAT`, `PEXPIRE`,
//! `PEXPIREAT` (with `NX`/`XX`/`GT`/`LT`), `PTTL`, `TTL`, `TYPE`, `FLUSHALL`,
//! `KEYS`; they work on a key of any type.

use super::errors::{is, not_an_integer, syntax_error};
use super::keyspace::{parse_i64, Keyspace, Role};
use crate::resp::Frame;
use bytes::Bytes;

pub fn del(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let mut n = 0;
    for key in &args[1..] {
        if ks.exists(key, now) && ks.remove(key) {
            n += 1;
        }
    }
    Frame::Integer(n)
}

pub fn exists(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    Frame::Integer(args[1..].iter().filter(|k| ks.exists(k, now)).count() as i64)
}

pub fn expire(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    expire_generic(ks, args, now, now, 1000)
}

pub fn expireat(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    expire_generic(ks, args, now, 0, 1000)
}

pub fn pexpire(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    expire_generic(ks, args, now, now, 1)
}

pub fn pexpireat(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    expire_generic(ks, args, now, 0, 1)
}

/// Redis 7.0's `expireGenericCommand`: options first, then the number (in
/// seconds when `unit` is 1000, refused if it overflows in milliseconds),
/// then the key; a time not after now deletes the key (on a master; a
/// replica keeps it and waits for the master's `DEL`).
fn expire_generic(ks: &mut Keyspace, args: &[Bytes], now: i64, base: i64, unit: i64) -> Frame {
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for opt in &args[3..] {
        if is(opt, "nx") {
            nx = true;
        } else if is(opt, "xx") {
            xx = true;
        } else if is(opt, "gt") {
            gt = true;
        } else if is(opt, "lt") {
            lt = true;
        } else {
            return Frame::err(format!(
                "ERR Unsupported option {}",
                String::from_utf8_lossy(opt)
            ));
        }
    }
    if nx && (xx || gt || lt) {
        return Frame::err("ERR NX and XX, GT or LT options at the same time are not compatible");
    }
    if gt && lt {
        return Frame::err("ERR GT and LT options at the same time are not compatible");
    }
    let Some(when) = parse_i64(&args[2]) else {
        return not_an_integer();
    };
    let invalid = || {
        Frame::err(format!(
            "ERR invalid expire time in '{}' command",
            String::from_utf8_lossy(&args[0]).to_ascii_lowercase()
        ))
    };
    let Some(when) = when.checked_mul(unit) else {
        return invalid();
    };
    let Some(when) = when.checked_add(base) else {
        return invalid();
    };
    let key = &args[1];
    let Some(entry) = ks.get(key, now) else {
        return Frame::Integer(0);
    };
    let current = entry.expires_at;
    let refused = (nx && current.is_some())
        || (xx && current.is_none())
        || (gt && current.is_none_or(|c| when <= c))
        || (lt && current.is_some_and(|c| when >= c));
    if refused {
        return Frame::Integer(0);
    }
    if when <= now && ks.role == Role::Master {
        ks.remove(key);
    } else {
        ks.set_expiry(key, when);
    }
    Frame::Integer(1)
}

/// Remaining milliseconds; -2 for no key, -1 for a key without expiry.
fn ttl_ms(ks: &mut Keyspace, key: &[u8], now: i64) -> i64 {
    match ks.get(key, now) {
        None => -2,
        Some(e) => e.expires_at.map_or(-1, |t| (t - now).max(0)),
    }
}

pub fn pttl(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    Frame::Integer(ttl_ms(ks, &args[1], now))
}

pub fn ttl(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let ms = ttl_ms(ks, &args[1], now);
    Frame::Integer(if ms < 0 { ms } else { (ms + 500) / 1000 })
}

/// `TYPE key`: `string`, `hash`, or `none`.
pub fn type_of(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let name = ks
        .get(&args[1], now)
        .map_or("none", |e| e.value.type_name());
    Frame::Simple(name.into())
}

pub fn flushall(ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
    match args.len() {
        1 => {}
        2 if is(&args[1], "sync") || is(&args[1], "async") => {}
        _ => return syntax_error(),
    }
    ks.flush();
    Frame::ok()
}

/// `KEYS pattern`: every live key matching the glob, in key order (Redis's
/// order is its hash table's; callers such as python-redis-lock's
/// `reset_all` do not depend on it).
pub fn keys(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let names: Vec<Bytes> = ks
        .entries()
        .filter(|(k, _)| glob_match(&args[1], k))
        .map(|(k, _)| k.clone())
        .collect();
    let live = names.into_iter().filter(|k| ks.exists(k, now));
    Frame::Array(live.map(Frame::Bulk).collect())
}

/// Redis's `stringmatchlen`: `*`, `?`, `[...]` (with `^` and ranges) and
/// `\` escapes, case-sensitive.
pub fn glob_match(pattern: &[u8], s: &[u8]) -> bool {
    match pattern.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => (0..=s.len()).any(|i| glob_match(rest, &s[i..])),
        Some((b'?', rest)) => !s.is_empty() && glob_match(rest, &s[1..]),
        Some((b'[', rest)) => match (s.split_first(), class(rest)) {
            (Some((&c, tail)), Some((set, after))) => set(c) && glob_match(after, tail),
            _ => false,
        },
        Some((b'\\', rest)) if !rest.is_empty() => {
            s.first() == Some(&rest[0]) && glob_match(&rest[1..], &s[1..])
        }
        Some((&p, rest)) => s.first() == Some(&p) && glob_match(rest, &s[1..]),
    }
}

/// A `[...]` class after its `[`: its test and the pattern after its `]`
/// (an unclosed class runs to the end, as in Redis).
fn class(p: &[u8]) -> Option<(impl Fn(u8) -> bool + '_, &[u8])> {
    let (not, body) = match p.split_first() {
        Some((b'^', rest)) => (true, rest),
        _ => (false, p),
    };
    let mut i = 0;
    let mut items: Vec<(u8, u8)> = Vec::new();
    while i < body.len() && body[i] != b']' {
        if body[i] == b'\\' && i + 1 < body.len() {
            items.push((body[i + 1], body[i + 1]));
            i += 2;
        } else if i + 2 < body.len() && body[i + 1] == b'-' && body[i + 2] != b']' {
            let (a, b) = (body[i], body[i + 2]);
            items.push((a.min(b), a.max(b)));
            i += 3;
        } else {
            items.push((body[i], body[i]));
            i += 1;
        }
    }
    let after = if i < body.len() {
        &body[i + 1..]
    } else {
        &body[i..]
    };
    Some((
        move |c: u8| items.iter().any(|(a, b)| (*a..=*b).contains(&c)) != not,
        after,
    ))
}
