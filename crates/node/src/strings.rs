//! String commands: `GET`, `SET` (with `NX`/`XX`/`GET`/`EX`/`PX`/`EXAT`/
//! `PXAT`/`KEEPTTL`), `SETNX`, `GETSET`, `GETRANGE`, `INCR`. A string command on a key
//! of another type answers `WRONGTYPE`, as Redis does, but for `SET` without
//! `GET` (which overwrites any type) and `SETNX` (which only sees the key).

use super::errors::{is, not_an_integer, syntax_error};
use super::keyspace::{parse_i64, Keyspace};
use bytes::Bytes;
use redlock_proto::resp::Frame;

/// The string at `key` as a reply: bulk, null, or `WRONGTYPE` (`Err`).
fn value_or_null(ks: &mut Keyspace, key: &[u8], now: i64) -> Result<Frame, Frame> {
    Ok(ks
        .get_str(key, now)?
        .map_or(Frame::Null, |v| Frame::Bulk(v.clone())))
}

pub(crate) fn get(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    value_or_null(ks, &args[1], now).unwrap_or_else(|e| e)
}

#[derive(Clone, Copy, PartialEq)]
enum Unit {
    Ex,
    Px,
    ExAt,
    PxAt,
}

/// `SET key value [NX|XX] [GET] [EX s|PX ms|EXAT s|PXAT ms|KEEPTTL]`,
/// parsed as Redis 7.0's `parseExtendedStringArgumentsOrReply`: an option may
/// repeat, but never combine with a conflicting one.
pub(crate) fn set(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let (mut nx, mut xx, mut get, mut keepttl) = (false, false, false, false);
    let mut expire: Option<(Unit, &Bytes)> = None;
    let mut j = 3;
    while j < args.len() {
        let opt = &args[j];
        let next = args.get(j + 1);
        let unit = [
            ("ex", Unit::Ex),
            ("px", Unit::Px),
            ("exat", Unit::ExAt),
            ("pxat", Unit::PxAt),
        ]
        .into_iter()
        .find(|(w, _)| is(opt, w))
        .map(|(_, u)| u);
        if is(opt, "nx") && !xx {
            nx = true;
        } else if is(opt, "xx") && !nx {
            xx = true;
        } else if is(opt, "get") {
            get = true;
        } else if is(opt, "keepttl") && expire.is_none() {
            keepttl = true;
        } else if let (Some(u), Some(n)) = (unit, next) {
            if keepttl || expire.is_some_and(|(other, _)| other != u) {
                return syntax_error();
            }
            expire = Some((u, n));
            j += 1;
        } else {
            return syntax_error();
        }
        j += 1;
    }
    let expires_at = match expire {
        None => None,
        Some((unit, raw)) => match expiry_ms(unit, raw, now) {
            Ok(t) => Some(t),
            Err(reply) => return reply,
        },
    };
    let key = &args[1];
    // Redis 7.0 answers the GET part first: `WRONGTYPE` sets nothing.
    let old = if get {
        match value_or_null(ks, key, now) {
            Ok(f) => Some(f),
            Err(e) => return e,
        }
    } else {
        None
    };
    let found = ks.exists(key, now);
    if (nx && found) || (xx && !found) {
        return old.unwrap_or(Frame::Null);
    }
    ks.set(key.clone(), args[2].clone(), expires_at, keepttl);
    old.unwrap_or_else(Frame::ok)
}

fn expiry_ms(unit: Unit, raw: &[u8], now: i64) -> Result<i64, Frame> {
    let invalid = || Frame::err("ERR invalid expire time in 'set' command");
    let n = parse_i64(raw).ok_or_else(not_an_integer)?;
    if n <= 0 {
        return Err(invalid());
    }
    let ms = match unit {
        Unit::Ex | Unit::ExAt => n.checked_mul(1000).ok_or_else(invalid)?,
        Unit::Px | Unit::PxAt => n,
    };
    let at = match unit {
        Unit::Ex | Unit::Px => ms.checked_add(now).ok_or_else(invalid)?,
        Unit::ExAt | Unit::PxAt => ms,
    };
    Ok(at)
}

pub(crate) fn setnx(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    if ks.exists(&args[1], now) {
        return Frame::Integer(0);
    }
    ks.set(args[1].clone(), args[2].clone(), None, false);
    Frame::Integer(1)
}

pub(crate) fn getset(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let old = match value_or_null(ks, &args[1], now) {
        Ok(f) => f,
        Err(e) => return e,
    };
    ks.set(args[1].clone(), args[2].clone(), None, false);
    old
}

/// `GETRANGE key start end`, as Redis 7.0's `getrangeCommand`: the bytes
/// from `start` to `end` inclusive, negative offsets counted from the end,
/// clamped to the string; an empty bulk for a missing key or an empty
/// range (bsm/redislock's obtain script calls it).
pub(crate) fn getrange(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let (Some(mut start), Some(mut end)) = (parse_i64(&args[2]), parse_i64(&args[3])) else {
        return not_an_integer();
    };
    let value = match ks.get_str(&args[1], now) {
        Err(e) => return e,
        Ok(None) => return Frame::Bulk(Bytes::new()),
        Ok(Some(v)) => v.clone(),
    };
    let len = value.len() as i64;
    if start < 0 && end < 0 && start > end {
        return Frame::Bulk(Bytes::new());
    }
    if start < 0 {
        start = (len + start).max(0);
    }
    if end < 0 {
        end = (len + end).max(0);
    }
    end = end.min(len - 1);
    if start > end || len == 0 {
        return Frame::Bulk(Bytes::new());
    }
    Frame::Bulk(value.slice(start as usize..=end as usize))
}

pub(crate) fn incr(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let key = &args[1];
    let current = match ks.get_str(key, now) {
        Err(e) => return e,
        Ok(None) => 0,
        Ok(Some(v)) => match parse_i64(v) {
            Some(n) => n,
            None => return not_an_integer(),
        },
    };
    let Some(next) = current.checked_add(1) else {
        return Frame::err("ERR increment or decrement would overflow");
    };
    ks.set(key.clone(), Bytes::from(next.to_string()), None, true);
    Frame::Integer(next)
}
