//! `EVAL`, `EVALSHA`, `SCRIPT LOAD|EXISTS|FLUSH`.
//!
//! The node has no Lua. It recognises the lock client's scripts by SHA1
//! (compare-and-delete, compare-and-pexpire, and the resurrecting extension
//! of the `extend-resurrects` client flaw: see `client::scripts`) and runs
//! them natively with the same effects; any other script is cached like Redis
//! caches it, but running it is an error that says why.

use super::errors::{is, not_an_integer, wrong_arity};
use super::keys;
use super::keyspace::{parse_i64, Keyspace};
use crate::client::scripts::{sha1_hex, EXTEND, EXTEND_RESURRECT, RELEASE};
use crate::resp::Frame;
use bytes::Bytes;

const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

pub fn eval(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let body = args[1].clone();
    let Some((keys, argv)) = split_keys(args) else {
        return numkeys_error(&args[2], args.len());
    };
    let sha = sha1_hex(&body);
    ks.scripts.insert(sha.clone(), body);
    run(ks, &sha, keys, argv, now)
}

pub fn evalsha(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    if args[1].len() != 40 {
        return Frame::err(NOSCRIPT);
    }
    let Some((keys, argv)) = split_keys(args) else {
        return numkeys_error(&args[2], args.len());
    };
    let sha = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    if !ks.scripts.contains_key(&sha) {
        return Frame::err(NOSCRIPT);
    }
    run(ks, &sha, keys, argv, now)
}

/// Splits `script numkeys key... arg...` into keys and args.
fn split_keys(args: &[Bytes]) -> Option<(&[Bytes], &[Bytes])> {
    let n = parse_i64(&args[2])?;
    let rest = &args[3..];
    (n >= 0 && n as usize <= rest.len()).then(|| rest.split_at(n as usize))
}

fn numkeys_error(raw: &[u8], argc: usize) -> Frame {
    match parse_i64(raw) {
        None => not_an_integer(),
        Some(n) if n < 0 => Frame::err("ERR Number of keys can't be negative"),
        Some(_) => {
            debug_assert!(argc >= 3);
            Frame::err("ERR Number of keys can't be greater than number of args")
        }
    }
}

fn run(ks: &mut Keyspace, sha: &str, keys: &[Bytes], argv: &[Bytes], now: i64) -> Frame {
    let script = if sha == sha1_hex(RELEASE.as_bytes()) {
        Known::Release
    } else if sha == sha1_hex(EXTEND.as_bytes()) {
        Known::Extend
    } else if sha == sha1_hex(EXTEND_RESURRECT.as_bytes()) {
        return extend_resurrect(ks, sha, keys, argv, now);
    } else {
        return Frame::err(format!(
            "ERR redlock-sim node runs only the lock scripts (compare-and-delete, \
             compare-and-pexpire, resurrecting extend); script {sha} is not one of them"
        ));
    };
    // Line 1 calls GET with KEYS[1]: no key is a Lua argument error. A missing
    // ARGV[1] is nil, which no reply of GET equals: the script returns 0.
    let Some(key) = keys.first() else {
        return script_error(LUA_ARGS_ERROR, sha, 1);
    };
    let holds = ks
        .get(key, now)
        .is_some_and(|e| argv.first() == e.value.as_str());
    if !holds {
        return Frame::Integer(0);
    }
    // Line 2 calls DEL or PEXPIRE; an error there is reported at line 2.
    match script {
        Known::Release => Frame::Integer(ks.remove(key) as i64),
        Known::Extend => {
            let Some(ms) = argv.get(1) else {
                return script_error(LUA_ARGS_ERROR, sha, 2);
            };
            let cmd = [Bytes::from_static(b"pexpire"), key.clone(), ms.clone()];
            match keys::pexpire(ks, &cmd, now) {
                Frame::Error(e) => script_error(&e, sha, 2),
                reply => reply,
            }
        }
    }
}

/// [`EXTEND_RESURRECT`]: GET (line 1); missing key: `SET key ARGV[1] PX
/// ARGV[2]` and 1 (line 3); our token: `PEXPIRE` (line 5); else -1.
fn extend_resurrect(
    ks: &mut Keyspace,
    sha: &str,
    keys: &[Bytes],
    argv: &[Bytes],
    now: i64,
) -> Frame {
    let Some(key) = keys.first() else {
        return script_error(LUA_ARGS_ERROR, sha, 1);
    };
    let current = ks.get(key, now).and_then(|e| e.value.as_str().cloned());
    match current {
        None => {
            let (Some(token), Some(ms)) = (argv.first(), argv.get(1)) else {
                return script_error(LUA_ARGS_ERROR, sha, 3);
            };
            let cmd = [
                Bytes::from_static(b"set"),
                key.clone(),
                token.clone(),
                Bytes::from_static(b"px"),
                ms.clone(),
            ];
            match super::strings::set(ks, &cmd, now) {
                Frame::Error(e) => script_error(&e, sha, 3),
                _ => Frame::Integer(1),
            }
        }
        Some(v) if argv.first() == Some(&v) => {
            let Some(ms) = argv.get(1) else {
                return script_error(LUA_ARGS_ERROR, sha, 5);
            };
            let cmd = [Bytes::from_static(b"pexpire"), key.clone(), ms.clone()];
            match keys::pexpire(ks, &cmd, now) {
                Frame::Error(e) => script_error(&e, sha, 5),
                reply => reply,
            }
        }
        Some(_) => Frame::Integer(-1),
    }
}

/// What Redis 7.0 replies when `redis.call` is given a nil argument.
const LUA_ARGS_ERROR: &str = "ERR Lua redis lib command arguments must be strings or integers";

/// An error raised inside a script, located as Redis 7.0 locates it.
fn script_error(e: &str, sha: &str, line: u32) -> Frame {
    Frame::err(format!("{e} script: {sha}, on @user_script:{line}."))
}

enum Known {
    Release,
    Extend,
}

/// `SCRIPT LOAD body`, `SCRIPT EXISTS sha...`, `SCRIPT FLUSH [ASYNC|SYNC]`.
pub fn script(ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
    let sub = &args[1];
    let argc = args.len();
    if is(sub, "load") {
        if argc != 3 {
            return wrong_arity("script|load");
        }
        let sha = sha1_hex(&args[2]);
        ks.scripts.insert(sha.clone(), args[2].clone());
        Frame::bulk(sha)
    } else if is(sub, "exists") {
        if argc < 3 {
            return wrong_arity("script|exists");
        }
        let known = |a: &Bytes| {
            let sha = String::from_utf8_lossy(a).to_ascii_lowercase();
            Frame::Integer(ks.scripts.contains_key(&sha) as i64)
        };
        Frame::Array(args[2..].iter().map(known).collect())
    } else if is(sub, "flush") {
        if argc > 3 || (argc == 3 && !is(&args[2], "sync") && !is(&args[2], "async")) {
            return Frame::err("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        }
        ks.scripts.clear();
        Frame::ok()
    } else {
        Frame::err(format!(
            "ERR unknown subcommand '{}'. Try SCRIPT HELP.",
            String::from_utf8_lossy(sub)
                .chars()
                .take(128)
                .collect::<String>()
        ))
    }
}
