//! `EVAL`, `EVALSHA`, `SCRIPT LOAD|EXISTS|FLUSH`: Lua 5.1 scripts, run as
//! Redis 7.0 runs them.
//!
//! - [`interp`]: the Lua state, its sandbox and limits, the compiled-script
//!   cache, running one script;
//! - [`api`]: `redis.call`/`redis.pcall` and the other `redis.*` functions
//!   (with `prelude.lua`, the Lua side of the sandbox);
//! - [`convert`]: replies to Lua values and back, by Redis 7.0's rules.
//!
//! A node's scripts ([`Scripts`], in its keyspace) are the bodies
//! `SCRIPT EXISTS` knows and one Lua state, made on the first script and
//! dropped by `SCRIPT FLUSH`; neither is part of a snapshot or the
//! append-only file (a restarted Redis has no scripts either). A script runs
//! atomically at the one `now` of its `EVAL`: every command it calls sees
//! the same instant, and its writes are recorded as the script's effects.

mod api;
mod convert;
mod interp;

use super::errors::{is, not_an_integer, wrong_arity};
use super::keyspace::{parse_i64, Keyspace};
use bytes::Bytes;
use interp::Interp;
use redlock_proto::resp::Frame;
use redlock_proto::sha1::sha1_hex;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

/// The script cache of one node and its Lua state.
pub(crate) struct Scripts {
    /// SHA1 (lowercase hex) to body, for every script compiled.
    bodies: BTreeMap<String, Bytes>,
    lua: Option<Interp>,
    /// Redis's rand48 state behind `math.random`: lives as long as the node
    /// process, `SCRIPT FLUSH` included.
    rand: Arc<AtomicU64>,
}

impl Default for Scripts {
    fn default() -> Self {
        Scripts {
            bodies: BTreeMap::new(),
            lua: None,
            rand: Arc::new(AtomicU64::new(api::RAND48_INIT)),
        }
    }
}

impl std::fmt::Debug for Scripts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scripts")
            .field("bodies", &self.bodies.keys().collect::<Vec<_>>())
            .field("lua", &self.lua.is_some())
            .finish()
    }
}

impl Scripts {
    pub(crate) fn contains(&self, sha: &str) -> bool {
        self.bodies.contains_key(sha)
    }

    /// Compiles and caches `body` (the Lua state is made if there is none).
    fn load(&mut self, body: &Bytes) -> Result<String, Frame> {
        let sha = sha1_hex(body);
        if self.bodies.contains_key(&sha) {
            return Ok(sha);
        }
        if self.lua.is_none() {
            self.lua = Some(Interp::new(self.rand.clone()).map_err(Frame::Error)?);
        }
        let lua = self.lua.as_mut().expect("made above");
        lua.compile(&sha, body)?;
        self.bodies.insert(sha.clone(), body.clone());
        Ok(sha)
    }

    fn flush(&mut self) {
        self.bodies.clear();
        self.lua = None;
    }
}

pub(crate) fn eval(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    let Some((keys, argv)) = split_keys(args) else {
        return numkeys_error(&args[2], args.len());
    };
    let sha = match ks.scripts.load(&args[1]) {
        Ok(sha) => sha,
        Err(e) => return e,
    };
    run(ks, &sha, keys, argv, now)
}

pub(crate) fn evalsha(ks: &mut Keyspace, args: &[Bytes], now: i64) -> Frame {
    if args[1].len() != 40 {
        return Frame::err(NOSCRIPT);
    }
    let Some((keys, argv)) = split_keys(args) else {
        return numkeys_error(&args[2], args.len());
    };
    let sha = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
    if !ks.scripts.contains(&sha) {
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

/// Runs a cached script. The Lua state is taken out of the keyspace for the
/// run (the script's commands need the keyspace) and put back after.
fn run(ks: &mut Keyspace, sha: &str, keys: &[Bytes], argv: &[Bytes], now: i64) -> Frame {
    let Some(mut lua) = ks.scripts.lua.take() else {
        return Frame::err(NOSCRIPT);
    };
    let reply = lua.run(ks, sha, keys, argv, now);
    ks.scripts.lua = Some(lua);
    reply
}

/// `SCRIPT LOAD body`, `SCRIPT EXISTS sha...`, `SCRIPT FLUSH [ASYNC|SYNC]`.
pub(crate) fn script(ks: &mut Keyspace, args: &[Bytes], _now: i64) -> Frame {
    let sub = &args[1];
    let argc = args.len();
    if is(sub, "load") {
        if argc != 3 {
            return wrong_arity("script|load");
        }
        match ks.scripts.load(&args[2]) {
            Ok(sha) => Frame::bulk(sha),
            Err(e) => e,
        }
    } else if is(sub, "exists") {
        if argc < 3 {
            return wrong_arity("script|exists");
        }
        let known = |a: &Bytes| {
            let sha = String::from_utf8_lossy(a).to_ascii_lowercase();
            Frame::Integer(ks.scripts.contains(&sha) as i64)
        };
        Frame::Array(args[2..].iter().map(known).collect())
    } else if is(sub, "flush") {
        if argc > 3 || (argc == 3 && !is(&args[2], "sync") && !is(&args[2], "async")) {
            return Frame::err("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        }
        ks.scripts.flush();
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
