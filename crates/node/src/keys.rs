//! Keyspace commands: `DEL`, `EXISTS`, `EXPIRE`, `EXPIREAT`, `PEXPIRE`,
//! `PEXPIREAT` (with `NX`/`XX`/`GT`/`LT`), `PTTL`, `TTL`, `TYPE`, `FLUSHALL`,
//! `KEYS`; they work on a key of any type.

use super::errors::{is, not_an_integer, syntax_error};
use super::glob::glob_match;
use super::keyspace::{parse_i64, Keyspace, Role};
use bytes::Bytes;
use redlock_proto::resp::Frame;

pub(crate) fn del(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let mut n = 0;
    for key in &args[1..] {
        if ks.exists(key, now) && ks.remove(key) {
            n += 1;
        }
    }
    Frame::Integer(n)
}

pub(crate) fn exists(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    Frame::Integer(args[1..].iter().filter(|k| ks.exists(k, now)).count() as i64)
}

pub(crate) fn expire(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    expire_generic(ks, args, now, now, 1000)
}

pub(crate) fn expireat(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    expire_generic(ks, args, now, 0, 1000)
}

pub(crate) fn pexpire(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    expire_generic(ks, args, now, now, 1)
}

pub(crate) fn pexpireat(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
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

pub(crate) fn pttl(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    Frame::Integer(ttl_ms(ks, &args[1], now))
}

pub(crate) fn ttl(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let ms = ttl_ms(ks, &args[1], now);
    Frame::Integer(if ms < 0 { ms } else { (ms + 500) / 1000 })
}

/// `TYPE key`: `string`, `hash`, or `none`.
pub(crate) fn type_of(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let name = ks
        .get(&args[1], now)
        .map_or("none", |e| e.value.type_name());
    Frame::Simple(name.into())
}

pub(crate) fn flushall(ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
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
/// Expired keys are left out, not deleted (Redis 7.0's `keysCommand` only
/// checks them).
pub(crate) fn keys(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let live = |e: &super::keyspace::Entry| e.expires_at.is_none_or(|t| now <= t);
    Frame::Array(
        ks.entries()
            .filter(|(k, e)| live(e) && glob_match(&args[1], k))
            .map(|(k, _)| Frame::Bulk(k.clone()))
            .collect(),
    )
}
