//! Hash commands: `HSET`, `HGET`, `HEXISTS`, `HINCRBY`, `HDEL`, `HLEN`,
//! `HGETALL`, as Redis 7.0 answers them (checked against `redis-server` by
//! `tests/differential_resp3.rs`). A hash command on a key of another type
//! answers `WRONGTYPE`; a hash whose last field is deleted is deleted.
//! `HGETALL` replies with a map (a flat array under RESP2), fields in the
//! hash's insertion order, as a small Redis hash (a listpack) keeps them.

use super::errors::{not_an_integer, wrong_arity};
use super::keyspace::{parse_i64, Keyspace};
use bytes::Bytes;
use redlock_proto::resp::Frame;

/// `HSET key field value [field value ...]`: the number of new fields.
pub(crate) fn hset(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    if args.len() % 2 == 1 {
        return wrong_arity("hset");
    }
    let key = &args[1];
    if let Err(e) = ks.get_hash(key, now) {
        return e;
    }
    let pairs: Vec<(Bytes, Bytes)> = args[2..]
        .chunks(2)
        .map(|p| (p[0].clone(), p[1].clone()))
        .collect();
    Frame::Integer(ks.hset(key, &pairs) as i64)
}

/// `HGET key field`: the value or null.
pub(crate) fn hget(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    match ks.get_hash(&args[1], now) {
        Err(e) => e,
        Ok(h) => h
            .and_then(|h| h.get(&args[2]))
            .map_or(Frame::Null, |v| Frame::Bulk(v.clone())),
    }
}

/// `HEXISTS key field`: 1 or 0.
pub(crate) fn hexists(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    match ks.get_hash(&args[1], now) {
        Err(e) => e,
        Ok(h) => Frame::Integer(h.is_some_and(|h| h.get(&args[2]).is_some()) as i64),
    }
}

/// `HINCRBY key field increment`: the new value. Redis checks, in order, the
/// increment, the key's type, the stored value, the overflow.
pub(crate) fn hincrby(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let Some(by) = parse_i64(&args[3]) else {
        return not_an_integer();
    };
    let key = &args[1];
    let current = match ks.get_hash(key, now) {
        Err(e) => return e,
        Ok(h) => match h.and_then(|h| h.get(&args[2])) {
            None => 0,
            Some(v) => match parse_i64(v) {
                Some(n) => n,
                None => return Frame::err("ERR hash value is not an integer"),
            },
        },
    };
    let Some(next) = current.checked_add(by) else {
        return Frame::err("ERR increment or decrement would overflow");
    };
    ks.hset(key, &[(args[2].clone(), Bytes::from(next.to_string()))]);
    Frame::Integer(next)
}

/// `HDEL key field [field ...]`: the number of fields removed.
pub(crate) fn hdel(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    match ks.get_hash(&args[1], now) {
        Err(e) => e,
        Ok(None) => Frame::Integer(0),
        Ok(Some(_)) => Frame::Integer(ks.hdel(&args[1], &args[2..]) as i64),
    }
}

/// `HLEN key`: the number of fields (0 for no key).
pub(crate) fn hlen(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    match ks.get_hash(&args[1], now) {
        Err(e) => e,
        Ok(h) => Frame::Integer(h.map_or(0, |h| h.len()) as i64),
    }
}

/// `HGETALL key`: fields and values as a map (empty for no key).
pub(crate) fn hgetall(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    match ks.get_hash(&args[1], now) {
        Err(e) => e,
        Ok(h) => Frame::Map(
            h.into_iter()
                .flat_map(|h| h.iter())
                .map(|(f, v)| (Frame::Bulk(f.clone()), Frame::Bulk(v.clone())))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyspace::Value;

    fn cmd(s: &str) -> Vec<Bytes> {
        s.split(' ')
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect()
    }

    #[test]
    fn insertion_order_and_effects() {
        let mut ks = Keyspace::default();
        assert_eq!(
            hset(&mut ks, &cmd("HSET h b 1 a 2 b 3"), 0),
            Frame::Integer(2)
        );
        assert_eq!(
            hincrby(&mut ks, &cmd("HINCRBY h c 5"), 0),
            Frame::Integer(5)
        );
        assert_eq!(hdel(&mut ks, &cmd("HDEL h b x"), 0), Frame::Integer(1));
        assert_eq!(hset(&mut ks, &cmd("HSET h b 9"), 0), Frame::Integer(1));
        let all = hgetall(&mut ks, &cmd("HGETALL h"), 0);
        let flat: Vec<u8> = all.to_bytes();
        assert_eq!(
            flat,
            b"*6\r\n$1\r\na\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n5\r\n$1\r\nb\r\n$1\r\n9\r\n"
        );
        let eff = ks.take_effects();
        assert_eq!(eff[0], cmd("HSET h b 1 a 2 b 3"));
        assert_eq!(eff[1], cmd("HSET h c 5"));
        assert_eq!(eff[2], cmd("HDEL h b x"));
        assert_eq!(hdel(&mut ks, &cmd("HDEL h a b c"), 0), Frame::Integer(3));
        assert_eq!(ks.take_effects().last().unwrap(), &cmd("DEL h"));
        assert!(!ks.exists(b"h", 0));
    }

    #[test]
    fn wrong_types_and_bad_numbers() {
        let mut ks = Keyspace::default();
        ks.set(Bytes::from("s"), Bytes::from("v"), None, false);
        for c in [
            "HSET s a 1",
            "HGET s a",
            "HEXISTS s a",
            "HINCRBY s a 1",
            "HDEL s a",
            "HLEN s",
            "HGETALL s",
        ] {
            assert_eq!(
                super::super::command::dispatch(&mut ks, &cmd(c), 0),
                super::super::errors::wrong_type(),
                "{c}"
            );
        }
        assert_eq!(hincrby(&mut ks, &cmd("HINCRBY s a x"), 0), not_an_integer());
        hset(&mut ks, &cmd("HSET h m 9223372036854775807 t 01"), 0);
        assert_eq!(
            hincrby(&mut ks, &cmd("HINCRBY h m 1"), 0),
            Frame::err("ERR increment or decrement would overflow")
        );
        assert_eq!(
            hincrby(&mut ks, &cmd("HINCRBY h t 1"), 0),
            Frame::err("ERR hash value is not an integer")
        );
        assert_eq!(hset(&mut ks, &cmd("HSET h a"), 0), wrong_arity("hset"));
        assert!(matches!(ks.get(b"h", 0).unwrap().value, Value::Hash(_)));
    }
}
