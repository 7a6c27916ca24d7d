//! Sorted-set commands: `ZADD` (with `NX`, `XX`, `GT`, `LT`, `CH`, `INCR`),
//! `ZREM`, `ZCARD`, `ZSCORE`, `ZRANK`, `ZREVRANK`, `ZCOUNT`, `ZRANGE` (by
//! rank or `BYSCORE`, `REV`, `LIMIT`, `WITHSCORES`; not `BYLEX`, which no
//! lock library sends), `ZRANGEBYSCORE`, `ZREVRANGE` (Symfony Lock's
//! `ZREVRANGE key 0 0 WITHSCORES`), `ZREVRANGEBYSCORE`, `ZREMRANGEBYSCORE`,
//! as Redis 7.0 answers
//! them (checked against `redis-server` by `tests/redis/differential_types.rs`).
//! Scores are written as Redis 7.0 writes them (`%.17g`, a RESP3 double);
//! a sorted set whose last member goes is deleted.
//!
//! The keyspace's sorted-set operations live here too. Their effects never
//! depend on the state they are applied to: `ZADD k score member...` with
//! the final scores, `ZREM k member...` for every removal (also
//! `ZREMRANGEBYSCORE`'s).

use super::errors::{is, not_an_integer, syntax_error};
use super::format::fmt_g17;
use super::keyspace::{parse_i64, Keyspace, Value, ZSet};
use bytes::Bytes;
use redlock_proto::resp::Frame;

impl Keyspace {
    /// A sorted-set key's value; `WRONGTYPE` for a key of another type.
    pub(crate) fn get_zset(&mut self, key: &[u8], now: i64) -> Result<Option<&ZSet>, Frame> {
        self.get_as(key, now, Value::as_zset)
    }

    /// Sets each member's score, creating the set (without expiry) if
    /// missing. Callers check the type first.
    pub(crate) fn zadd(&mut self, key: &Bytes, pairs: &[(f64, Bytes)]) {
        let z = self.value_or_new(key, || Value::ZSet(ZSet::default()), Value::as_zset_mut);
        let mut eff = vec![Bytes::from_static(b"ZADD"), key.clone()];
        for (s, m) in pairs {
            z.insert(m.clone(), *s);
            eff.push(Bytes::from(s.to_string()));
            eff.push(m.clone());
        }
        if z.is_empty() {
            self.entries.remove(key);
        }
        if !pairs.is_empty() {
            self.effect(eff);
        }
    }

    /// Removes members, and the key with the last one; how many were there.
    pub(crate) fn zrem(&mut self, key: &[u8], members: &[Bytes]) -> usize {
        let Some(z) = self.existing_mut(key, Value::as_zset_mut) else {
            return 0;
        };
        let gone: Vec<Bytes> = members.iter().filter(|m| z.remove(m)).cloned().collect();
        if z.is_empty() {
            self.entries.remove(key);
        }
        if !gone.is_empty() {
            let mut eff = vec![Bytes::from_static(b"ZREM"), Bytes::copy_from_slice(key)];
            eff.extend(gone.iter().cloned());
            self.effect(eff);
        }
        gone.len()
    }
}

/// A score argument, as Redis's `strtod` reads it: no NaN, no space.
pub(crate) fn parse_score(arg: &[u8]) -> Option<f64> {
    let t = std::str::from_utf8(arg).ok()?;
    if t.is_empty() || t.starts_with(char::is_whitespace) {
        return None;
    }
    let lower = t.to_ascii_lowercase();
    let bare = lower.trim_start_matches(['+', '-']);
    if bare.starts_with("nan") || bare.starts_with("infinity") && bare != "infinity" {
        return None;
    }
    // A finite literal past a double's range is Redis's ERANGE: refused.
    let spelled_inf = bare.starts_with("inf");
    t.parse::<f64>()
        .ok()
        .filter(|d| !d.is_nan() && (d.is_finite() || spelled_inf))
}

/// A score as Redis 7.0 replies with it.
fn score_frame(d: f64) -> Frame {
    Frame::Double(fmt_g17(d))
}

/// One end of a score range: `(` makes it exclusive.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bound {
    pub(crate) value: f64,
    pub(crate) open: bool,
}

/// `min max` as `ZRANGEBYSCORE` reads them.
pub(crate) fn parse_range(min: &[u8], max: &[u8]) -> Option<(Bound, Bound)> {
    let one = |a: &[u8]| match a.strip_prefix(b"(") {
        Some(rest) => parse_score(rest).map(|v| Bound {
            value: v,
            open: true,
        }),
        None => parse_score(a).map(|v| Bound {
            value: v,
            open: false,
        }),
    };
    Some((one(min)?, one(max)?))
}

fn in_range(s: f64, (lo, hi): (Bound, Bound)) -> bool {
    let above = if lo.open { s > lo.value } else { s >= lo.value };
    let below = if hi.open { s < hi.value } else { s <= hi.value };
    above && below
}

/// `ZADD`'s options.
#[derive(Default)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

/// `ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]`.
pub(crate) fn zadd(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let mut f = AddFlags::default();
    let mut i = 2;
    while let Some(a) = args.get(i) {
        let flag = match a.to_ascii_lowercase().as_slice() {
            b"nx" => &mut f.nx,
            b"xx" => &mut f.xx,
            b"gt" => &mut f.gt,
            b"lt" => &mut f.lt,
            b"ch" => &mut f.ch,
            b"incr" => &mut f.incr,
            _ => break,
        };
        *flag = true;
        i += 1;
    }
    let rest = &args[i..];
    if rest.is_empty() || rest.len() % 2 == 1 {
        return syntax_error();
    }
    if let Some(e) = flag_conflict(&f, rest.len() / 2) {
        return e;
    }
    let mut pairs = Vec::new();
    for p in rest.chunks(2) {
        let Some(s) = parse_score(&p[0]) else {
            return Frame::err("ERR value is not a valid float");
        };
        pairs.push((s, p[1].clone()));
    }
    let plan = match ks.get_zset(&args[1], now) {
        Err(e) => return e,
        Ok(z) => plan_adds(z, &pairs, &f),
    };
    match plan {
        Err(e) => e,
        Ok(p) => {
            ks.zadd(&args[1], &p.changes);
            p.reply(&f)
        }
    }
}

fn flag_conflict(f: &AddFlags, pairs: usize) -> Option<Frame> {
    if f.nx && f.xx {
        return Some(Frame::err(
            "ERR XX and NX options at the same time are not compatible",
        ));
    }
    if (f.gt || f.lt) && f.nx || f.gt && f.lt {
        return Some(Frame::err(
            "ERR GT, LT, and/or NX options at the same time are not compatible",
        ));
    }
    if f.incr && pairs > 1 {
        return Some(Frame::err(
            "ERR INCR option supports a single increment-element pair",
        ));
    }
    None
}

/// What a `ZADD` does: the scores to set, and its counts for the reply.
struct AddPlan {
    changes: Vec<(f64, Bytes)>,
    added: usize,
    updated: usize,
    processed: usize,
    /// The last score set or kept (the `INCR` reply).
    last: f64,
}

impl AddPlan {
    fn reply(&self, f: &AddFlags) -> Frame {
        if f.incr {
            return if self.processed > 0 {
                score_frame(self.last)
            } else {
                Frame::Null
            };
        }
        let n = if f.ch {
            self.added + self.updated
        } else {
            self.added
        };
        Frame::Integer(n as i64)
    }
}

/// Each pair as Redis's `zsetAdd` takes it against the set `z` (none for
/// no key) and the pairs before it; the NaN error of an `INCR`.
fn plan_adds(z: Option<&ZSet>, pairs: &[(f64, Bytes)], f: &AddFlags) -> Result<AddPlan, Frame> {
    let mut p = AddPlan {
        changes: Vec::new(),
        added: 0,
        updated: 0,
        processed: 0,
        last: 0.0,
    };
    for (s, m) in pairs {
        let earlier = p
            .changes
            .iter()
            .rev()
            .find(|(_, c)| c == m)
            .map(|(s, _)| *s);
        let cur = earlier.or_else(|| z.and_then(|z| z.score(m)));
        let mut new = *s;
        if cur.is_some() && f.nx || cur.is_none() && f.xx {
            continue;
        }
        if let (Some(c), true) = (cur, f.incr) {
            new += c;
            if new.is_nan() {
                return Err(Frame::err("ERR resulting score is not a number (NaN)"));
            }
        }
        if let Some(c) = cur {
            if (f.lt && new >= c) || (f.gt && new <= c) {
                continue;
            }
            p.updated += usize::from(new != c);
        } else {
            p.added += 1;
        }
        p.processed += 1;
        p.last = new;
        if cur != Some(new) {
            p.changes.push((new, m.clone()));
        }
    }
    Ok(p)
}

/// `ZREM key member [member ...]`.
pub(crate) fn zrem(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    match ks.get_zset(&args[1], now) {
        Err(e) => e,
        Ok(None) => Frame::Integer(0),
        Ok(Some(_)) => Frame::Integer(ks.zrem(&args[1], &args[2..]) as i64),
    }
}

/// `ZCARD key`.
pub(crate) fn zcard(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    match ks.get_zset(&args[1], now) {
        Err(e) => e,
        Ok(z) => Frame::Integer(z.map_or(0, |z| z.len()) as i64),
    }
}

/// `ZSCORE key member`: the score or a null.
pub(crate) fn zscore(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    match ks.get_zset(&args[1], now) {
        Err(e) => e,
        Ok(z) => z
            .and_then(|z| z.score(&args[2]))
            .map_or(Frame::Null, score_frame),
    }
}

/// `ZRANK key member`: the 0-based rank or a null.
pub(crate) fn zrank(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    match ks.get_zset(&args[1], now) {
        Err(e) => e,
        Ok(z) => z
            .and_then(|z| z.rank(&args[2]))
            .map_or(Frame::Null, |r| Frame::Integer(r as i64)),
    }
}

/// `ZREVRANK key member`: the 0-based rank from the highest, or a null.
pub(crate) fn zrevrank(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    match ks.get_zset(&args[1], now) {
        Err(e) => e,
        Ok(z) => z
            .and_then(|z| Some(z.len() - 1 - z.rank(&args[2])?))
            .map_or(Frame::Null, |r| Frame::Integer(r as i64)),
    }
}

/// `ZCOUNT key min max`.
pub(crate) fn zcount(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let Some(range) = parse_range(&args[2], &args[3]) else {
        return Frame::err("ERR min or max is not a float");
    };
    match ks.get_zset(&args[1], now) {
        Err(e) => e,
        Ok(z) => Frame::Integer(
            z.map_or(0, |z| z.iter().filter(|(_, s)| in_range(*s, range)).count()) as i64,
        ),
    }
}

/// `ZREMRANGEBYSCORE key min max`: how many were removed.
pub(crate) fn zremrangebyscore(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let Some(range) = parse_range(&args[2], &args[3]) else {
        return Frame::err("ERR min or max is not a float");
    };
    let members: Vec<Bytes> = match ks.get_zset(&args[1], now) {
        Err(e) => return e,
        Ok(None) => return Frame::Integer(0),
        Ok(Some(z)) => z
            .iter()
            .filter(|(_, s)| in_range(*s, range))
            .map(|(m, _)| m.clone())
            .collect(),
    };
    Frame::Integer(ks.zrem(&args[1], &members) as i64)
}

/// How a range is asked for.
struct RangeAsk {
    by_score: bool,
    rev: bool,
    withscores: bool,
    /// `LIMIT offset count` (`count < 0`: all).
    limit: Option<(i64, i64)>,
}

/// What a command fixes of its range before its options: the kind (by
/// score or by rank) and the direction; `None` leaves it to `BYSCORE` and
/// `REV` (`ZRANGE`).
#[derive(Clone, Copy)]
struct Fixed {
    by_score: Option<bool>,
    rev: Option<bool>,
}

/// `ZRANGE key start stop [BYSCORE] [REV] [LIMIT offset count] [WITHSCORES]`.
pub(crate) fn zrange(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let fixed = Fixed {
        by_score: None,
        rev: None,
    };
    range_generic(ks, args, now, fixed)
}

/// `ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]`.
pub(crate) fn zrangebyscore(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let fixed = Fixed {
        by_score: Some(true),
        rev: Some(false),
    };
    range_generic(ks, args, now, fixed)
}

/// `ZREVRANGE key start stop [WITHSCORES]`: by rank, highest first.
pub(crate) fn zrevrange(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let fixed = Fixed {
        by_score: Some(false),
        rev: Some(true),
    };
    range_generic(ks, args, now, fixed)
}

/// `ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]`.
pub(crate) fn zrevrangebyscore(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let fixed = Fixed {
        by_score: Some(true),
        rev: Some(true),
    };
    range_generic(ks, args, now, fixed)
}

/// Redis 7.0's `zrangeGenericCommand`: options, then the range, then the
/// key.
fn range_generic(ks: &mut Keyspace, args: &[Bytes], now: i64, fixed: Fixed) -> Frame {
    let ask = match range_options(&args[4..], fixed) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let (lo, hi) = if ask.rev && ask.by_score {
        (&args[3], &args[2])
    } else {
        (&args[2], &args[3])
    };
    let picked = if ask.by_score {
        let Some(range) = parse_range(lo, hi) else {
            return Frame::err("ERR min or max is not a float");
        };
        match ks.get_zset(&args[1], now) {
            Err(e) => return e,
            Ok(z) => by_score(z, range, &ask),
        }
    } else {
        let (Some(start), Some(stop)) = (parse_i64(lo), parse_i64(hi)) else {
            return not_an_integer();
        };
        match ks.get_zset(&args[1], now) {
            Err(e) => return e,
            Ok(z) => by_rank(z, start, stop, ask.rev),
        }
    };
    if ask.withscores {
        Frame::Pairs(
            picked
                .into_iter()
                .map(|(m, s)| (Frame::Bulk(m), score_frame(s)))
                .collect(),
        )
    } else {
        Frame::Array(picked.into_iter().map(|(m, _)| Frame::Bulk(m)).collect())
    }
}

fn range_options(opts: &[Bytes], fixed: Fixed) -> Result<RangeAsk, Frame> {
    let (mut by_score, mut rev) = (fixed.by_score, fixed.rev);
    let mut ask = RangeAsk {
        by_score: false,
        rev: false,
        withscores: false,
        limit: None,
    };
    let mut i = 0;
    while let Some(a) = opts.get(i) {
        if is(a, "withscores") {
            ask.withscores = true;
        } else if is(a, "limit") && opts.len() - i > 2 {
            let (Some(o), Some(c)) = (parse_i64(&opts[i + 1]), parse_i64(&opts[i + 2])) else {
                return Err(not_an_integer());
            };
            ask.limit = Some((o, c));
            i += 2;
        } else if rev.is_none() && is(a, "rev") {
            rev = Some(true);
        } else if by_score.is_none() && is(a, "byscore") {
            by_score = Some(true);
        } else if by_score.is_none() && is(a, "bylex") {
            return Err(Frame::err(
                "ERR BYLEX is not supported by redlock-sim's node",
            ));
        } else {
            return Err(syntax_error());
        }
        i += 1;
    }
    ask.by_score = by_score.unwrap_or(false);
    ask.rev = rev.unwrap_or(false);
    if ask.limit.is_some_and(|(_, c)| c != -1) && !ask.by_score {
        return Err(Frame::err(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    Ok(ask)
}

fn by_rank(z: Option<&ZSet>, start: i64, stop: i64, rev: bool) -> Vec<(Bytes, f64)> {
    let Some(z) = z else { return vec![] };
    let Some((a, b)) = super::lists::span(z.len(), start, stop) else {
        return vec![];
    };
    let all: Vec<(Bytes, f64)> = if rev {
        z.iter().rev().map(|(m, s)| (m.clone(), s)).collect()
    } else {
        z.iter().map(|(m, s)| (m.clone(), s)).collect()
    };
    all[a..=b].to_vec()
}

fn by_score(z: Option<&ZSet>, range: (Bound, Bound), ask: &RangeAsk) -> Vec<(Bytes, f64)> {
    let Some(z) = z else { return vec![] };
    let (offset, count) = ask.limit.unwrap_or((0, -1));
    if offset < 0 || offset > 0 && offset as usize >= z.len() {
        return vec![];
    }
    let hits = |(m, s): (&Bytes, f64)| in_range(s, range).then(|| (m.clone(), s));
    let all: Vec<(Bytes, f64)> = if ask.rev {
        z.iter().rev().filter_map(hits).collect()
    } else {
        z.iter().filter_map(hits).collect()
    };
    let take = if count < 0 {
        usize::MAX
    } else {
        count as usize
    };
    all.into_iter().skip(offset as usize).take(take).collect()
}
