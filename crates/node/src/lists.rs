//! List commands: `LPUSH`, `RPUSH`, `LPUSHX`, `RPUSHX`, `LPOP`, `RPOP`,
//! `LLEN`, `LRANGE`, `LINDEX`, `LREM`, `LTRIM`, and `BLPOP`/`BRPOP` as a
//! caller that cannot block runs them (a script may not call them, as in
//! Redis 7.0): at once, an empty answer standing for the timeout. A
//! client's `BLPOP` that finds nothing blocks in [`super::blocking`]. Replies and errors as Redis 7.0 gives
//! them (checked against `redis-server` by `tests/redis/differential_types.rs`);
//! a list whose last element goes is deleted.
//!
//! The keyspace's list operations live here too; each records its effect
//! (`LPUSH k e...`, `RPUSH`, `LPOP k n`, `RPOP k n`, `LREM k n e`, `LTRIM k
//! a b`), which replicas and the append-only file apply as they come.

use super::errors::{not_an_integer, wrong_arity};
use super::keyspace::{parse_i64, Keyspace, Value};
use bytes::Bytes;
use redlock_proto::resp::Frame;
use std::collections::VecDeque;

impl Keyspace {
    /// A list key's elements; `WRONGTYPE` for a key of another type.
    pub(crate) fn get_list(
        &mut self,
        key: &[u8],
        now: i64,
    ) -> Result<Option<&VecDeque<Bytes>>, Frame> {
        self.get_as(key, now, Value::as_list)
    }

    /// Deletes `key` if it holds an empty list (Redis keeps none).
    fn drop_empty_list(&mut self, key: &[u8]) {
        if self
            .existing_mut(key, Value::as_list_mut)
            .is_some_and(|l| l.is_empty())
        {
            self.entries.remove(key);
        }
    }

    /// Pushes `elems` one by one at the head (`left`) or the tail; the
    /// length after.
    pub(crate) fn push(&mut self, key: &Bytes, left: bool, elems: &[Bytes]) -> usize {
        let l = self.value_or_new(key, || Value::List(VecDeque::new()), Value::as_list_mut);
        for e in elems {
            if left {
                l.push_front(e.clone());
            } else {
                l.push_back(e.clone());
            }
        }
        let len = l.len();
        let name = if left { "LPUSH" } else { "RPUSH" };
        let mut eff = vec![Bytes::from_static(name.as_bytes()), key.clone()];
        eff.extend(elems.iter().cloned());
        self.effect(eff);
        self.drop_empty_list(key);
        len
    }

    /// Pops up to `count` elements from the head (`left`) or the tail, in
    /// the order popped. No list at `key`: none.
    pub(crate) fn pop(&mut self, key: &[u8], left: bool, count: usize) -> Vec<Bytes> {
        let Some(l) = self.existing_mut(key, Value::as_list_mut) else {
            return Vec::new();
        };
        let n = count.min(l.len());
        let out: Vec<Bytes> = if left {
            l.drain(..n).collect()
        } else {
            let at = l.len() - n;
            l.drain(at..).rev().collect()
        };
        if n > 0 {
            let name = if left { "LPOP" } else { "RPOP" };
            self.effect(vec![
                Bytes::from_static(name.as_bytes()),
                Bytes::copy_from_slice(key),
                Bytes::from(n.to_string()),
            ]);
        }
        self.drop_empty_list(key);
        out
    }

    /// Removes elements equal to `elem`: the first `count` from the head
    /// (`count > 0`), from the tail (`count < 0`), or all (0). How many.
    pub(crate) fn lrem(&mut self, key: &[u8], count: i64, elem: &[u8]) -> usize {
        let Some(l) = self.existing_mut(key, Value::as_list_mut) else {
            return 0;
        };
        let limit = if count == 0 {
            usize::MAX
        } else {
            count.unsigned_abs() as usize
        };
        let mut idx: Vec<usize> = (0..l.len()).filter(|&i| l[i] == elem).collect();
        if count < 0 {
            idx.reverse();
        }
        idx.truncate(limit);
        idx.sort_unstable();
        for i in idx.iter().rev() {
            l.remove(*i);
        }
        if !idx.is_empty() {
            self.effect(vec![
                Bytes::from_static(b"LREM"),
                Bytes::copy_from_slice(key),
                Bytes::from(count.to_string()),
                Bytes::copy_from_slice(elem),
            ]);
        }
        self.drop_empty_list(key);
        idx.len()
    }

    /// Keeps the elements from `start` to `stop` (Redis's indexes).
    pub(crate) fn ltrim(&mut self, key: &[u8], start: i64, stop: i64) {
        let Some(l) = self.existing_mut(key, Value::as_list_mut) else {
            return;
        };
        match span(l.len(), start, stop) {
            Some((a, b)) => {
                l.truncate(b + 1);
                l.drain(..a);
            }
            None => l.clear(),
        }
        self.effect(vec![
            Bytes::from_static(b"LTRIM"),
            Bytes::copy_from_slice(key),
            Bytes::from(start.to_string()),
            Bytes::from(stop.to_string()),
        ]);
        self.drop_empty_list(key);
    }
}

/// Redis's range of indexes `start..=stop` over `len` elements (negative
/// counts from the end), clamped; `None` when empty.
pub(crate) fn span(len: usize, start: i64, stop: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    let mut start = if start < 0 { start + len } else { start };
    let mut stop = if stop < 0 { stop + len } else { stop };
    if start < 0 {
        start = 0;
    }
    if start > stop || start >= len {
        return None;
    }
    if stop >= len {
        stop = len - 1;
    }
    Some((start as usize, stop as usize))
}

/// `LPUSH key element [element ...]`: the length after.
pub(crate) fn lpush(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    push_generic(ks, args, now, true, false)
}

/// `RPUSH key element [element ...]`.
pub(crate) fn rpush(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    push_generic(ks, args, now, false, false)
}

/// `LPUSHX key element [element ...]`: only onto an existing list.
pub(crate) fn lpushx(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    push_generic(ks, args, now, true, true)
}

/// `RPUSHX key element [element ...]`.
pub(crate) fn rpushx(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    push_generic(ks, args, now, false, true)
}

fn push_generic(ks: &mut Keyspace, args: &[Bytes], now: i64, left: bool, x: bool) -> Frame {
    match ks.get_list(&args[1], now) {
        Err(e) => e,
        Ok(None) if x => Frame::Integer(0),
        Ok(_) => Frame::Integer(ks.push(&args[1], left, &args[2..]) as i64),
    }
}

/// `LPOP key [count]`.
pub(crate) fn lpop(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    pop_generic(ks, args, now, true)
}

/// `RPOP key [count]`.
pub(crate) fn rpop(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    pop_generic(ks, args, now, false)
}

/// Without a count: one element or a null. With one: an array, a null
/// array for no key, an empty array for a count of 0.
fn pop_generic(ks: &mut Keyspace, args: &[Bytes], now: i64, left: bool) -> Frame {
    if args.len() > 3 {
        return wrong_arity(if left { "lpop" } else { "rpop" });
    }
    // Redis's getPositiveLongFromObjectOrReply: one message for both.
    let count = match args.get(2).map(|c| parse_i64(c)) {
        None => None,
        Some(Some(n)) if n >= 0 => Some(n as usize),
        Some(_) => return Frame::err("ERR value is out of range, must be positive"),
    };
    match ks.get_list(&args[1], now) {
        Err(e) => return e,
        Ok(None) if count.is_some() => return Frame::NullArray,
        Ok(None) => return Frame::Null,
        Ok(Some(_)) => {}
    }
    match count {
        None => ks
            .pop(&args[1], left, 1)
            .pop()
            .map_or(Frame::Null, Frame::Bulk),
        Some(n) => Frame::Array(
            ks.pop(&args[1], left, n)
                .into_iter()
                .map(Frame::Bulk)
                .collect(),
        ),
    }
}

/// `LLEN key`.
pub(crate) fn llen(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    match ks.get_list(&args[1], now) {
        Err(e) => e,
        Ok(l) => Frame::Integer(l.map_or(0, |l| l.len()) as i64),
    }
}

/// `LRANGE key start stop`.
pub(crate) fn lrange(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let (Some(start), Some(stop)) = (parse_i64(&args[2]), parse_i64(&args[3])) else {
        return not_an_integer();
    };
    match ks.get_list(&args[1], now) {
        Err(e) => e,
        Ok(None) => Frame::Array(vec![]),
        Ok(Some(l)) => Frame::Array(match span(l.len(), start, stop) {
            Some((a, b)) => l.range(a..=b).cloned().map(Frame::Bulk).collect(),
            None => vec![],
        }),
    }
}

/// `LINDEX key index`: the element or a null.
pub(crate) fn lindex(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    // The key first, then the index (Redis 7.0's order).
    match ks.get_list(&args[1], now) {
        Err(e) => e,
        Ok(None) => Frame::Null,
        Ok(Some(l)) => {
            let Some(i) = parse_i64(&args[2]) else {
                return not_an_integer();
            };
            let i = if i < 0 { i + l.len() as i64 } else { i };
            usize::try_from(i)
                .ok()
                .and_then(|i| l.get(i))
                .map_or(Frame::Null, |e| Frame::Bulk(e.clone()))
        }
    }
}

/// `LREM key count element`: how many were removed.
pub(crate) fn lrem(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let Some(count) = parse_i64(&args[2]) else {
        return not_an_integer();
    };
    match ks.get_list(&args[1], now) {
        Err(e) => e,
        Ok(None) => Frame::Integer(0),
        Ok(Some(_)) => Frame::Integer(ks.lrem(&args[1], count, &args[3]) as i64),
    }
}

/// `LTRIM key start stop`.
pub(crate) fn ltrim(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let (Some(start), Some(stop)) = (parse_i64(&args[2]), parse_i64(&args[3])) else {
        return not_an_integer();
    };
    match ks.get_list(&args[1], now) {
        Err(e) => e,
        Ok(None) => Frame::ok(),
        Ok(Some(_)) => {
            ks.ltrim(&args[1], start, stop);
            Frame::ok()
        }
    }
}

/// `BLPOP key [key ...] timeout`, unable to block.
pub(crate) fn blpop(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    pop_or_timeout(ks, args, now, true)
}

/// `BRPOP key [key ...] timeout`, unable to block.
pub(crate) fn brpop(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    pop_or_timeout(ks, args, now, false)
}

/// A blocking pop that cannot wait: its first try, or its timeout's reply.
fn pop_or_timeout(ks: &mut Keyspace, args: &[Bytes], now: i64, left: bool) -> Frame {
    match try_blocking_pop(ks, args, now, left) {
        Ok(Some(f)) | Err(f) => f,
        Ok(None) => Frame::NullArray,
    }
}

/// A blocking pop's first try: the timeout checked, then each key in
/// order; `[key, element]` from the first non-empty list, `Ok(None)` when
/// it would block, or the error.
pub(crate) fn try_blocking_pop(
    ks: &mut Keyspace,
    args: &[Bytes],
    now: i64,
    left: bool,
) -> Result<Option<Frame>, Frame> {
    let (keys, timeout) = args[1..].split_at(args.len() - 2);
    timeout_ms(&timeout[0])?;
    for k in keys {
        if ks.get_list(k, now)?.is_some_and(|l| !l.is_empty()) {
            let e = ks.pop(k, left, 1).pop().expect("a non-empty list pops");
            return Ok(Some(Frame::Array(vec![
                Frame::Bulk(k.clone()),
                Frame::Bulk(e),
            ])));
        }
    }
    Ok(None)
}

/// A blocking command's timeout in seconds (a float), as whole
/// milliseconds rounded up (Redis 7.0's `getTimeoutFromObjectOrReply`); 0
/// waits for ever.
pub(crate) fn timeout_ms(arg: &[u8]) -> Result<u64, Frame> {
    let text = std::str::from_utf8(arg).ok();
    let secs = text
        .filter(|t| !t.is_empty() && !t.starts_with(char::is_whitespace))
        .and_then(|t| t.parse::<f64>().ok())
        .filter(|s| !s.is_nan())
        .ok_or_else(|| Frame::err("ERR timeout is not a float or out of range"))?;
    // A non-zero timeout too small for a double still waits (Redis reads a
    // long double and rounds up to 1 ms); it must not wait for ever.
    let mantissa = text.unwrap_or("").split(['e', 'E']).next().unwrap_or("");
    let tiny = secs == 0.0 && mantissa.bytes().any(|b| (b'1'..=b'9').contains(&b));
    let ms = if tiny { 1.0 } else { (secs * 1000.0).ceil() };
    // C's cast of a value past LLONG_MAX (inf included) gives LLONG_MIN on
    // the machines Redis runs on: "negative".
    if !(0.0..i64::MAX as f64).contains(&ms) {
        return Err(Frame::err("ERR timeout is negative"));
    }
    Ok(ms as u64)
}
