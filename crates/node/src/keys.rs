//! Keyspace commands: `DEL`, `EXISTS`, `EXPIRE`, `EXPIREAT`, `PEXPIRE`,
//! `PEXPIREAT` (with `NX`/`XX`/`GT`/`LT`), `PTTL`, `TTL`, `TYPE`, `FLUSHALL`,
//! `KEYS`; they work on a key of any type.

use super::errors::{is, not_an_integer, syntax_error};
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

/// Redis's `stringmatchlen`: `*`, `?`, `[...]` (with `^` and ranges) and
/// `\` escapes, case-sensitive. The pattern is read into tokens, each
/// `*` or one character's test, then matched with the last `*` as the only
/// backtracking point: time linear in the key times the pattern, whatever
/// the pattern (a recursive match is exponential in its stars).
pub(crate) fn glob_match(pattern: &[u8], s: &[u8]) -> bool {
    let tokens = tokenize(pattern);
    let (mut t, mut i) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        match tokens.get(t) {
            Some(Token::Star) => {
                star = Some((t, i));
                t += 1;
            }
            Some(Token::One(test)) if test.matches(s[i]) => {
                t += 1;
                i += 1;
            }
            _ => match star {
                Some((st, si)) => {
                    star = Some((st, si + 1));
                    t = st + 1;
                    i = si + 1;
                }
                None => return false,
            },
        }
    }
    tokens[t..].iter().all(|k| matches!(k, Token::Star))
}

enum Token {
    Star,
    One(CharTest),
}

/// What one character of the key must be.
enum CharTest {
    Any,
    Is(u8),
    Class { not: bool, items: Vec<(u8, u8)> },
}

impl CharTest {
    fn matches(&self, c: u8) -> bool {
        match self {
            CharTest::Any => true,
            CharTest::Is(x) => *x == c,
            CharTest::Class { not, items } => {
                items.iter().any(|(a, b)| (*a..=*b).contains(&c)) != *not
            }
        }
    }
}

fn tokenize(p: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            b'*' => {
                if !matches!(out.last(), Some(Token::Star)) {
                    out.push(Token::Star);
                }
                i += 1;
            }
            b'?' => {
                out.push(Token::One(CharTest::Any));
                i += 1;
            }
            b'[' => {
                let (test, used) = class(&p[i + 1..]);
                out.push(Token::One(test));
                i += 1 + used;
            }
            b'\\' if i + 1 < p.len() => {
                out.push(Token::One(CharTest::Is(p[i + 1])));
                i += 2;
            }
            c => {
                out.push(Token::One(CharTest::Is(c)));
                i += 1;
            }
        }
    }
    out
}

/// A `[...]` class after its `[`: its test and how many bytes it used,
/// its `]` included (an unclosed class runs to the end, as in Redis).
fn class(p: &[u8]) -> (CharTest, usize) {
    let (not, skip) = match p.first() {
        Some(b'^') => (true, 1),
        _ => (false, 0),
    };
    let body = &p[skip..];
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
    let used = skip + if i < body.len() { i + 1 } else { i };
    (CharTest::Class { not, items }, used)
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs_as_redis_reads_them() {
        for (p, s, want) in [
            ("*", "", true),
            ("lock:*", "lock:a", true),
            ("lock:?", "lock:ab", false),
            ("l[a-c]ck", "lbck", true),
            ("l[^a-c]ck", "lbck", false),
            ("x\\*y", "x*y", true),
            ("x\\*y", "xay", false),
            ("a*b*c", "aXXbYYc", true),
            ("a*b*c", "aXXbYY", false),
            ("[abc", "b", true),
            ("trail\\", "trail\\", true),
        ] {
            assert_eq!(glob_match(p.as_bytes(), s.as_bytes()), want, "{p} {s}");
        }
    }

    /// A pattern of many stars against a long key that almost matches: a
    /// recursive matcher takes exponential time here (Redis's CVE-2022-36021);
    /// this one answers at once.
    #[test]
    fn many_stars_do_not_explode() {
        let pattern = "*a".repeat(30) + "b";
        let key = "a".repeat(200);
        assert!(!glob_match(pattern.as_bytes(), key.as_bytes()));
        assert!(glob_match(pattern.as_bytes(), (key + "b").as_bytes()));
    }
}
